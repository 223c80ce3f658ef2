//! Perft (counting the leaf nodes of the legal move tree) and perft suites: EPD lines
//! `FEN ;D1 20 ;D2 400 ...` and the `id` / `epd` / `perft DEPTH COUNT` blocks of
//! shakmaty's `.perft` files.

use std::io::Write;
use std::time::Instant;

use crate::movegen::{Board, Move, MoveList, count_legal_moves, legal_moves};
use crate::position::fen::FenErrorKind;

/// The number of leaf nodes `depth` plies below `board`. The last ply is counted, not
/// played.
pub fn perft(board: &Board, depth: u32) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
    if pawnstorm_kernels::simd::level() >= pawnstorm_kernels::simd::Level::Avx2 {
        // SAFETY: the level says the CPU has x86-64-v3's sets.
        return unsafe { perft_v3(board, depth) };
    }
    perft_here(board, depth, perft)
}

/// [`perft`] compiled for x86-64-v3 (BMI1/2, LZCNT, POPCNT), the move generator inlined
/// into it: the default build targets any x86-64, where each bit scan, reset of the
/// lowest bit and population count of the generator is several instructions.
#[cfg(all(target_arch = "x86_64", not(target_feature = "bmi2")))]
#[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
unsafe fn perft_v3(board: &Board, depth: u32) -> u64 {
    // SAFETY: this function's own caller checked the CPU.
    perft_here(board, depth, |child, depth| unsafe {
        perft_v3(child, depth)
    })
}

#[inline(always)]
fn perft_here(board: &Board, depth: u32, recurse: impl Fn(&Board, u32) -> u64) -> u64 {
    match depth {
        0 => 1,
        1 => count_legal_moves(board),
        _ => {
            let mut moves = MoveList::new();
            legal_moves(board, &mut moves);
            moves
                .iter()
                .map(|&mv| {
                    // Made in place rather than by `play`: the board `play` returned was
                    // copied once more, 16 bytes at a time straight after `make_move`'s
                    // 8-byte stores, which the CPU cannot forward (about 5% of perft 6).
                    let mut child = board.clone();
                    child.make_move(mv);
                    recurse(&child, depth - 1)
                })
                .sum()
        }
    }
}

/// Perft below each legal move of `board` (`depth` counts the root move), in generation
/// order. Empty for depth 0.
pub fn divide(board: &Board, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut moves = MoveList::new();
    legal_moves(board, &mut moves);
    moves
        .iter()
        .map(|&mv| (mv, perft(&board.play(mv), depth - 1)))
        .collect()
}

/// One position of a perft suite and the counts expected at each depth.
#[derive(Clone, Debug)]
pub struct SuiteCase {
    /// 1-based line of the position (the `epd` line in `.perft` files).
    pub line: usize,
    /// The FEN as written.
    pub fen: String,
    /// The position.
    pub board: Board,
    /// (depth, expected count) pairs, in the file's order.
    pub checks: Vec<(u32, u64)>,
}

/// A suite line that could not be used, with its 1-based line number and text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SuiteLineError {
    pub line: usize,
    pub text: String,
    pub reason: String,
}

/// A parsed suite: the usable positions, the lines that are malformed, and the positions
/// that are well-formed FEN but that `Position` validation rejects (such as more than 16
/// pieces a side), which are skipped rather than failed.
#[derive(Clone, Debug, Default)]
pub struct Suite {
    pub cases: Vec<SuiteCase>,
    pub bad_lines: Vec<SuiteLineError>,
    pub invalid_positions: Vec<SuiteLineError>,
}

/// Parses a perft suite in either format (they may even be mixed): EPD lines
/// `FEN ;D1 20 ;D2 400`, or blocks of `id NAME`, `epd FEN`, `perft DEPTH COUNT` lines.
/// Blank lines and `#` comments are skipped.
pub fn parse_suite(text: &str) -> Suite {
    let mut suite = Suite::default();
    // The `epd` block that `perft` lines attach to; None after a rejected `epd` line, so
    // its `perft` lines are not blamed on the previous position.
    let mut block: Option<Option<usize>> = None;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let trimmed = raw.trim();
        let error = |reason: String| SuiteLineError {
            line,
            text: raw.to_owned(),
            reason,
        };
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let (keyword, rest) = trimmed
            .split_once(char::is_whitespace)
            .unwrap_or((trimmed, ""));
        match keyword {
            "id" => {}
            "epd" => {
                block = Some(None);
                match position(rest.trim(), line, raw) {
                    Ok(board) => {
                        suite.cases.push(SuiteCase {
                            line,
                            fen: rest.trim().to_owned(),
                            board,
                            checks: Vec::new(),
                        });
                        block = Some(Some(suite.cases.len() - 1));
                    }
                    Err(Rejection::Invalid(e)) => suite.invalid_positions.push(e),
                    Err(Rejection::Bad(e)) => suite.bad_lines.push(e),
                }
            }
            "perft" => match (block, depth_and_count(rest)) {
                (None, _) => suite
                    .bad_lines
                    .push(error("a perft line before any epd line".into())),
                (_, Err(reason)) => suite.bad_lines.push(error(reason)),
                (Some(Some(case)), Ok(check)) => suite.cases[case].checks.push(check),
                (Some(None), Ok(_)) => {}
            },
            _ => match epd_line(trimmed, line, raw) {
                Ok(case) => suite.cases.push(case),
                Err(Rejection::Invalid(e)) => suite.invalid_positions.push(e),
                Err(Rejection::Bad(e)) => suite.bad_lines.push(e),
            },
        }
    }
    suite
}

enum Rejection {
    Bad(SuiteLineError),
    Invalid(SuiteLineError),
}

fn position(fen: &str, line: usize, raw: &str) -> Result<Board, Rejection> {
    Board::from_fen(fen).map_err(|e| {
        let error = SuiteLineError {
            line,
            text: raw.to_owned(),
            reason: e.to_string(),
        };
        if matches!(e.kind, FenErrorKind::Invalid(_)) {
            Rejection::Invalid(error)
        } else {
            Rejection::Bad(error)
        }
    })
}

/// `FEN ;D1 20 ;D2 400 ...`
fn epd_line(text: &str, line: usize, raw: &str) -> Result<SuiteCase, Rejection> {
    let bad = |reason: String| {
        Rejection::Bad(SuiteLineError {
            line,
            text: raw.to_owned(),
            reason,
        })
    };
    let mut fields = text.split(';');
    let fen = fields.next().unwrap_or_default().trim();
    let mut checks = Vec::new();
    for field in fields {
        let field = field.trim();
        if field.is_empty() {
            continue;
        }
        let Some(depth_and_count_text) = field.strip_prefix('D') else {
            return Err(bad(format!(
                "{field:?} is not a depth field like \"D3 8902\""
            )));
        };
        checks.push(depth_and_count(depth_and_count_text).map_err(bad)?);
    }
    if checks.is_empty() {
        return Err(bad("no \";D<depth> <count>\" fields".into()));
    }
    let board = position(fen, line, raw)?;
    Ok(SuiteCase {
        line,
        fen: fen.to_owned(),
        board,
        checks,
    })
}

/// `DEPTH COUNT`, two unsigned numbers.
fn depth_and_count(text: &str) -> Result<(u32, u64), String> {
    let mut words = text.split_whitespace();
    let (Some(depth), Some(count), None) = (words.next(), words.next(), words.next()) else {
        return Err(format!("{:?} is not \"<depth> <count>\"", text.trim()));
    };
    let depth = depth
        .parse()
        .map_err(|_| format!("depth {depth:?} is not a number"))?;
    let count = count
        .parse()
        .map_err(|_| format!("count {count:?} is not a number"))?;
    Ok((depth, count))
}

/// A depth whose count differs from the suite's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    pub line: usize,
    pub fen: String,
    pub depth: u32,
    pub expected: u64,
    pub got: u64,
}

/// What a suite run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SuiteSummary {
    /// Positions with checks.
    pub positions: usize,
    /// Depths counted.
    pub checks_run: usize,
    /// Depths left out because their expected count exceeds the node limit.
    pub skipped: usize,
    pub mismatches: usize,
    /// Leaf nodes counted over all checks.
    pub nodes: u64,
    pub seconds: f64,
}

/// Runs every check of `suite` whose expected count is at most `max_nodes`, calling
/// `on_mismatch` for each wrong count as it is found.
pub fn run_suite(
    suite: &Suite,
    max_nodes: u64,
    mut on_mismatch: impl FnMut(&Mismatch),
    mut on_checked: impl FnMut(u64),
) -> SuiteSummary {
    let started = Instant::now();
    let mut summary = SuiteSummary {
        positions: suite.cases.len(),
        ..SuiteSummary::default()
    };
    for case in &suite.cases {
        for &(depth, expected) in &case.checks {
            if expected > max_nodes {
                summary.skipped += 1;
                continue;
            }
            let got = perft(&case.board, depth);
            summary.checks_run += 1;
            summary.nodes += got;
            on_checked(expected);
            if got != expected {
                summary.mismatches += 1;
                on_mismatch(&Mismatch {
                    line: case.line,
                    fen: case.fen.clone(),
                    depth,
                    expected,
                    got,
                });
            }
        }
    }
    summary.seconds = started.elapsed().as_secs_f64();
    summary
}

/// Millions of nodes per second, 0 for no time.
pub fn mnps(nodes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        nodes as f64 / seconds / 1e6
    } else {
        0.0
    }
}

/// Writes perft's standard output as Stockfish's `go perft` does: with `divided`, one
/// `move: count` line per root move, then a blank line; then `Nodes searched: N` and a
/// blank line.
pub fn write_perft_report(
    out: &mut impl Write,
    divided: Option<(&[(Move, u64)], bool)>,
    nodes: u64,
) -> std::io::Result<()> {
    if let Some((moves, chess960)) = divided {
        for (mv, count) in moves {
            writeln!(out, "{}: {count}", mv.uci(chess960))?;
        }
        writeln!(out)?;
    }
    writeln!(out, "Nodes searched: {nodes}")?;
    writeln!(out)
}
