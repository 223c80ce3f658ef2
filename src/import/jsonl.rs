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
//! A scanner made for this one shape ([`scan`]) reads the lines, checking their whole JSON
//! structure but building nothing it does not need (`line`, `knodes`, the other PVs);
//! what it is unsure of (escapes, non-ASCII text, odd number forms, errors) serde_json
//! reads, the reference, whose messages are the ones reported. Batches of lines are read
//! straight into a buffer and parsed in parallel, in order.

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
use crate::position::fen::parse_fen;
use crate::position::labels::{Labels, Record};

/// Bytes of lines parsed together (about 7000 lichess lines): enough that a batch
/// outweighs handing it to the workers.
const BATCH_BYTES: usize = 4 << 20;

type Parsed = Vec<Result<Option<Record>, String>>;

/// lichess evaluation lines, on `threads` workers (`None`: one per core).
pub(super) fn import_evals(
    input: &mut Input,
    handlers: &mut Handlers<'_>,
    threads: Option<usize>,
) -> Result<Counts, ImportError> {
    import_lines_in_parallel(input, handlers, threads, parse_eval_line)
}

/// Reads, parses (with `parse`, one line to at most one record) and stores in a pipeline of
/// three batches: while the workers parse one, this thread stores the one parsed before
/// (and reports its bad lines, in input order), then reads (and decompresses) the next.
pub(super) fn import_lines_in_parallel(
    input: &mut Input,
    handlers: &mut Handlers<'_>,
    threads: Option<usize>,
    parse: fn(&[u8]) -> Result<Option<Record>, String>,
) -> Result<Counts, ImportError> {
    let pool = crate::io::workers::pool(threads).map_err(|e| ImportError::Io {
        file: input.name.clone(),
        error: std::io::Error::other(e),
    })?;
    let mut counts = Counts::default();
    let mut done = (Batch::default(), Parsed::new());
    let mut parsing = (Batch::default(), Parsed::new());
    let mut reading = Batch::default();
    parsing.0.read(input, BATCH_BYTES)?;
    while !parsing.0.is_empty() || !done.0.is_empty() {
        let mut stored = Ok(());
        let mut read = Ok(());
        pool.in_place_scope(|scope| {
            let (batch, parsed) = &mut parsing;
            scope.spawn(|_| {
                (0..batch.len())
                    .into_par_iter()
                    .with_min_len(256)
                    .map(|i| parse(batch.line(i)))
                    .collect_into_vec(parsed);
            });
            stored = store(&mut done, input, handlers, &mut counts);
            read = reading.read(input, BATCH_BYTES);
        });
        stored?;
        read?;
        std::mem::swap(&mut done, &mut parsing);
        std::mem::swap(&mut parsing.0, &mut reading);
    }
    Ok(counts)
}

/// Stores a parsed batch's records and reports its bad lines, in order.
fn store(
    (batch, parsed): &mut (Batch, Parsed),
    input: &Input,
    handlers: &mut Handlers<'_>,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    for (i, result) in parsed.drain(..).enumerate() {
        match result {
            Ok(Some(record)) => {
                (handlers.records)(std::slice::from_ref(&record))?;
                counts.positions += 1;
            }
            Ok(None) => {}
            Err(reason) => {
                let line = batch.first_line + i as u64;
                let text = shorten(batch.line(i));
                super::reject(&input.name, handlers, line, reason, &text, counts)?;
            }
        }
    }
    if !batch.is_empty() {
        (handlers.progress)(input.bytes_read());
    }
    Ok(())
}

/// Consecutive whole lines of the input, read straight into one buffer and handed out as
/// slices of it: no line is copied but one cut by the end of a read, and none is checked
/// to be UTF-8 (the scanner checks the bytes it reads; serde_json the strings it reads).
#[derive(Default)]
struct Batch {
    /// The lines, then bytes left from earlier batches.
    text: Vec<u8>,
    /// Each line's start and end (line ending left out) in `text`.
    lines: Vec<(usize, usize)>,
    /// The line number of the first line.
    first_line: u64,
}

impl Batch {
    /// Replaces the batch with the next lines of `input`, about `bytes` of them (none at
    /// its end).
    fn read(&mut self, input: &mut Input, bytes: usize) -> Result<(), ImportError> {
        self.first_line = input.line + 1;
        let len = input.read_lines(&mut self.text, bytes)?;
        self.lines.clear();
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', &self.text[..len]) {
            self.lines.push((start, end));
            start = end + 1;
        }
        if start < len {
            // The last line of an input that does not end with a newline.
            self.lines.push((start, len));
        }
        input.line += self.lines.len() as u64;
        Ok(())
    }

    fn len(&self) -> usize {
        self.lines.len()
    }

    fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// A line without its line ending (`\n` or `\r\n`).
    fn line(&self, i: usize) -> &[u8] {
        let (start, end) = self.lines[i];
        let line = &self.text[start..end];
        line.strip_suffix(b"\r").unwrap_or(line)
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

/// Asserts that both parsers agree on `line` (the same record or the same error) and that
/// whatever the scanner reads, serde_json reads the same way; whether the scanner read it.
/// The differential tests and the fuzz target call it.
pub fn agrees_with_serde(line: &[u8]) -> bool {
    let text = String::from_utf8_lossy(line);
    assert_eq!(parse_eval_line(line), parse_eval_line_serde(line), "{text}");
    let scanned = scan::scan(line);
    if let Some((fen, first_pv)) = scanned {
        let parsed: EvalLine<'_> = serde_json::from_slice(line)
            .unwrap_or_else(|e| panic!("the scanner took what serde_json refuses ({e}): {text}"));
        assert_eq!((fen, first_pv), (&*parsed.fen, parsed.evals.0), "{text}");
    }
    scanned.is_some()
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
    use crate::position::score::MATE;

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

    /// Hands out its text a few bytes at a time, as a decoder or a pipe may.
    struct Dribble(std::io::Cursor<Vec<u8>>, usize);

    impl std::io::Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            self.1 = self.1 * 7 % 13 + 1;
            let n = buf.len().min(self.1);
            self.0.read(&mut buf[..n])
        }
    }

    fn input(text: &[u8]) -> Input {
        Input {
            name: "test".to_string(),
            lines: super::super::LineReader::new(Box::new(Dribble(
                std::io::Cursor::new(text.to_vec()),
                1,
            ))),
            bytes_read: Default::default(),
            line: 0,
        }
    }

    #[test]
    fn batches_hold_the_lines_of_the_text() {
        let long = "x".repeat(100);
        for text in [
            format!("a\nbb\r\n\n{long}\nccc\r\n\r\nd"),
            format!("{long}\n\n\na b\r\n"),
            "\n".to_string(),
            String::new(),
            "no newline".to_string(),
        ] {
            // The lines as `str::lines` cuts them: at `\n`, a `\r` before it dropped, no
            // empty line after a final newline.
            let expected: Vec<(u64, Vec<u8>)> = text
                .lines()
                .enumerate()
                .map(|(i, line)| (i as u64 + 1, line.as_bytes().to_vec()))
                .collect();
            // Batches smaller than some lines, and larger than the whole text.
            for bytes in [1, 5, 64, 1 << 20] {
                let mut reader = input(text.as_bytes());
                let mut batch = Batch::default();
                let mut got = Vec::new();
                loop {
                    batch.read(&mut reader, bytes).unwrap();
                    if batch.is_empty() {
                        break;
                    }
                    for i in 0..batch.len() {
                        got.push((batch.first_line + i as u64, batch.line(i).to_vec()));
                    }
                }
                assert_eq!(got, expected, "{text:?} in batches of {bytes} bytes");
                assert_eq!(reader.line, expected.len() as u64);
            }
        }
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
