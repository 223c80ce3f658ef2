//! lichess's evaluation database (`lichess_db_eval.jsonl`): one JSON object a line,
//!
//! ```text
//! {"fen": "<4-field FEN>", "evals": [{"pvs": [{"cp": 311, "line": "g2e4 ..."}, ...],
//!                                     "knodes": 206765, "depth": 36}, ...]}
//! ```
//!
//! Each line becomes one position (clocks `0 1`) whose score label is the first PV's score
//! of the deepest evaluation (the first of equally deep ones), as database.lichess.org
//! recommends. lichess gives `cp`, or `mate` in moves, from White's point of view, as
//! every lichess evaluation is; a mate becomes the engine's mate score
//! ([`super::lichess::mate_score`]).
//!
//! Parsing borrows from the line and skips what it does not need (`line`, `knodes`, the
//! other PVs) without building it; batches of lines are parsed in parallel, in order.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};

use super::lichess::{MAX_CENTIPAWNS, mate_score};
use rayon::prelude::*;

mod scan;

#[cfg(test)]
mod differential;

use super::{Counts, Handlers, ImportError, Input};
use crate::fen::parse_fen;
use crate::labels::{Labels, Record};

/// Lines parsed together: enough that a batch outweighs handing it to the workers.
const BATCH_LINES: usize = 8192;

/// Reads, parses and stores in a pipeline: while the workers parse one batch of lines,
/// this thread reads (and decompresses) the next; the parsed batch is then stored, and
/// bad lines reported, in input order.
pub(super) fn import_evals(
    input: &mut Input,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let mut counts = Counts::default();
    let mut current = Batch::default();
    let mut next = Batch::default();
    let mut parsed: Vec<Result<Option<Record>, String>> = Vec::new();
    current.read(input)?;
    while !current.is_empty() {
        let mut read = Ok(());
        rayon::in_place_scope(|scope| {
            scope.spawn(|_| {
                (0..current.len())
                    .into_par_iter()
                    .with_min_len(256)
                    .map(|i| parse_eval_line(current.line(i)))
                    .collect_into_vec(&mut parsed);
            });
            read = next.read(input);
        });
        read?;
        for (i, result) in parsed.drain(..).enumerate() {
            match result {
                Ok(Some(record)) => {
                    (handlers.record)(&record)?;
                    counts.positions += 1;
                }
                Ok(None) => {}
                Err(reason) => {
                    let line = current.first_line + i as u64;
                    let text = shorten(current.line(i));
                    input.reject(handlers, line, reason, &text, &mut counts)?;
                }
            }
        }
        (handlers.progress)(input.bytes_read());
        std::mem::swap(&mut current, &mut next);
    }
    Ok(counts)
}

/// Consecutive lines of the input, copied into one buffer.
#[derive(Default)]
struct Batch {
    text: Vec<u8>,
    /// Where each line ends in `text`.
    ends: Vec<usize>,
    /// The line number of the first line.
    first_line: u64,
}

impl Batch {
    /// Replaces the batch with the next lines of `input` (none at its end).
    fn read(&mut self, input: &mut Input) -> Result<(), ImportError> {
        self.text.clear();
        self.ends.clear();
        self.first_line = input.line + 1;
        while self.ends.len() < BATCH_LINES {
            let Some(line) = input.next_line()? else {
                break;
            };
            self.text.extend_from_slice(line);
            self.ends.push(self.text.len());
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    fn line(&self, i: usize) -> &[u8] {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        &self.text[start..self.ends[i]]
    }
}

/// The text of a bad line as a rejection shows it: lines run to kilobytes, and the start
/// is enough to find it.
fn shorten(line: &[u8]) -> String {
    const SHOWN: usize = 160;
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    match text.char_indices().nth(SHOWN) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_string(),
    }
}

/// One line: `Ok(None)` for a blank one. The scanner reads the lines it is sure of; the
/// rest, bad ones among them, serde_json (whose messages are then the reasons given).
pub fn parse_eval_line(line: &[u8]) -> Result<Option<Record>, String> {
    if line.trim_ascii().is_empty() {
        return Ok(None);
    }
    match scan::scan(line) {
        Some((fen, first_pv)) => record(fen, first_pv).map(Some),
        None => parse_eval_line_serde(line),
    }
}

/// [`parse_eval_line`] by serde_json alone: the reference the scanner is held to.
fn parse_eval_line_serde(line: &[u8]) -> Result<Option<Record>, String> {
    if line.trim_ascii().is_empty() {
        return Ok(None);
    }
    let parsed: EvalLine<'_> = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    record(&parsed.fen, parsed.evals.0).map(Some)
}

/// The record of a line's FEN and the first PV of its deepest evaluation.
fn record(fen: &str, first_pv: Option<Pv>) -> Result<Record, String> {
    let position = parse_fen(fen).map_err(|e| format!("fen {fen:?}: {e}"))?;
    let score = match first_pv {
        None => return Err("no evaluation in \"evals\"".to_string()),
        Some(Pv {
            cp: Some(_),
            mate: Some(_),
        }) => {
            return Err("the first PV has both \"cp\" and \"mate\"".to_string());
        }
        Some(Pv { cp: Some(cp), .. }) => cp.clamp(-MAX_CENTIPAWNS, MAX_CENTIPAWNS),
        Some(Pv {
            mate: Some(mate), ..
        }) => mate_score(mate, position.side_to_move()),
        Some(Pv { .. }) => return Err("the first PV has neither \"cp\" nor \"mate\"".to_string()),
    };
    Ok(Record {
        position,
        labels: Labels {
            score: Some(score),
            ..Labels::default()
        },
    })
}

#[derive(Deserialize)]
struct EvalLine<'a> {
    #[serde(borrow)]
    fen: Cow<'a, str>,
    evals: Deepest,
}

#[derive(Deserialize)]
struct Eval {
    depth: u32,
    pvs: FirstPv,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
struct Pv {
    cp: Option<i32>,
    mate: Option<i32>,
}

/// The first PV of a list (`None` if it is empty); the rest are skipped.
struct FirstPv(Option<Pv>);

/// The first PV of the deepest evaluation of a list (`None` if no evaluation has a PV).
struct Deepest(Option<Pv>);

impl<'de> Deserialize<'de> for FirstPv {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct First;
        impl<'de> Visitor<'de> for First {
            type Value = FirstPv;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of PVs")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstPv, A::Error> {
                let first = seq.next_element::<Pv>()?;
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(FirstPv(first))
            }
        }
        deserializer.deserialize_seq(First)
    }
}

impl<'de> Deserialize<'de> for Deepest {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Deepest_;
        impl<'de> Visitor<'de> for Deepest_ {
            type Value = Deepest;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a list of evaluations")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Deepest, A::Error> {
                let mut best: Option<(u32, Pv)> = None;
                while let Some(eval) = seq.next_element::<Eval>()? {
                    if let Some(pv) = eval.pvs.0
                        && best.is_none_or(|(depth, _)| eval.depth > depth)
                    {
                        best = Some((eval.depth, pv));
                    }
                }
                Ok(Deepest(best.map(|(_, pv)| pv)))
            }
        }
        deserializer.deserialize_seq(Deepest_)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::search::score::MATE;

    fn score(line: &str) -> Result<Option<i32>, String> {
        parse_eval_line(line.as_bytes()).map(|r| r.and_then(|r| r.labels.score))
    }

    #[test]
    fn the_deepest_evaluations_first_pv_is_the_score() {
        let line = r#"{"fen": "2bq1rk1/pr3ppn/1p2p3/7P/2pP1B1P/2P5/PPQ2PB1/R3R1K1 w - -", "evals": [{"pvs": [{"cp": 292, "line": "g2e4 f7f5"}, {"cp": 277, "line": "f4g3"}], "knodes": 92958, "depth": 34}, {"pvs": [{"cp": 311, "line": "g2e4 f7f5 e4b7"}], "knodes": 206765, "depth": 36}, {"pvs": [{"cp": 190, "line": "h5h6"}], "knodes": 162122, "depth": 31}]}"#;
        assert_eq!(score(line), Ok(Some(311)));
        let record = parse_eval_line(line.as_bytes()).unwrap().unwrap();
        assert_eq!(
            record.position.to_fen(),
            "2bq1rk1/pr3ppn/1p2p3/7P/2pP1B1P/2P5/PPQ2PB1/R3R1K1 w - - 0 1"
        );
    }

    #[test]
    fn mates_become_mate_scores() {
        let line = r#"{"fen": "6k1/5ppp/8/8/8/8/5PPP/3R2K1 b - -", "evals": [{"pvs": [{"mate": 2, "line": "a b"}], "knodes": 1, "depth": 20}]}"#;
        // White mates in 2 moves with Black to move: 4 plies.
        assert_eq!(score(line), Ok(Some(MATE - 4)));
    }

    #[test]
    fn bad_lines_say_what_is_wrong() {
        for (line, expected) in [
            (r#"{"fen": "8/8/8/8/8/8/8/8 w - -", "evals": []}"#, "king"),
            (
                r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": []}"#,
                "no evaluation",
            ),
            (r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -"}"#, "evals"),
            (
                r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": [{"pvs": [{"line": ""}], "depth": 3}]}"#,
                "neither",
            ),
            (
                r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": [{"pvs": [{"cp": 1}]}]}"#,
                "depth",
            ),
            (
                r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": [{"pvs""#,
                "EOF",
            ),
        ] {
            let error = score(line).expect_err(line);
            assert!(error.contains(expected), "{line}: {error}");
        }
        assert_eq!(score("  "), Ok(None));
    }
}
