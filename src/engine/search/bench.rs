//! `bench`: a fixed set of positions searched to a fixed depth with fresh tables. The
//! total node count is a signature of the search's behaviour (it changes only when the
//! search or the evaluation does), as Stockfish's `bench` is.

use std::time::Instant;

use super::{Control, Engine, Limits};
use crate::movegen::{Board, Move};
use crate::position::epd::parse_epd;
use crate::position::fen::FenError;

/// The depth `bench` searches to by default.
pub const DEFAULT_DEPTH: i32 = 10;
/// The table size `bench` uses, so the signature does not depend on options.
pub const HASH_MB: usize = 16;

/// Openings, middlegames and endgames, quiet and tactical, with and without castling
/// rights (Stockfish's bench set, most of it, and a few more endgames).
pub const POSITIONS: [&str; 42] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 11",
    "4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
    "r1bq1r1k/1pp1n1pp/1p1p4/4p2Q/4Pp2/1BNP4/PPP2PPP/3R1RK1 w - - 2 14",
    "r3r1k1/2p2ppp/p1p1bn2/8/1q2P3/2NPQN2/PPP3PP/R4RK1 b - - 2 15",
    "r1bbk1nr/pp3p1p/2n5/1N4p1/2Np1B2/8/PPP2PPP/2KR1B1R w kq - 0 13",
    "r1bq1rk1/ppp1nppp/4n3/3p3Q/3P4/1BP1B3/PP1N2PP/R4RK1 w - - 1 16",
    "4r1k1/r1q2ppp/ppp2n2/4P3/5Rb1/1N1BQ3/PPP3PP/R5K1 w - - 1 17",
    "2rqkb1r/ppp2p2/2npb1p1/1N1Nn2p/2P1PP2/8/PP2B1PP/R1BQK2R b KQ - 0 11",
    "r1bq1r1k/b1p1npp1/p2p3p/1p6/3PP3/1B2NN2/PP3PPP/R2Q1RK1 w - - 1 16",
    "3r1rk1/p5pp/bpp1pp2/8/q1PP1P2/b3P3/P2NQRPP/1R2B1K1 b - - 6 22",
    "r1q2rk1/2p1bppp/2Pp4/p6b/Q1PNp3/4B3/PP1R1PPP/2K4R w - - 2 18",
    "4k2r/1pb2ppp/1p2p3/1R1p4/3P4/2r1PN2/P4PPP/1R4K1 b - - 3 22",
    "3q2k1/pb3p1p/4pbp1/2r5/PpN2N2/1P2P2P/5PP1/Q2R2K1 b - - 4 26",
    "6k1/6p1/6Pp/ppp5/3pn2P/1P3K2/1PP2P2/3N4 b - - 0 1",
    "3b4/5kp1/1p1p1p1p/pP1PpP1P/P1P1P3/3KN3/8/8 w - - 0 1",
    "2K5/p7/7P/5pR1/8/5k2/r7/8 w - - 0 1",
    "8/6pk/1p6/8/PP3p1p/5P2/4KP1q/3Q4 w - - 0 1",
    "7k/3p2pp/4q3/8/4Q3/5Kp1/P6b/8 w - - 0 1",
    "8/2p5/8/2kPKp1p/2p4P/2P5/3P4/8 w - - 0 1",
    "8/1p3pp1/7p/5P1P/2k3P1/8/2K2P2/8 w - - 0 1",
    "8/pp2r1k1/2p1p3/3pP2p/1P1P1P1P/P5KR/8/8 w - - 0 1",
    "8/3p4/p1bk3p/Pp6/1Kp1PpPp/2P2P1P/2P5/5B2 b - - 0 1",
    "5k2/7R/4P2p/5K2/p1r2P1p/8/8/8 b - - 0 1",
    "6k1/6p1/P6p/r1N5/5p2/7P/1b3PP1/4R1K1 w - - 0 1",
    "1r3k2/4q3/2Pp3b/3Bp3/2Q2p2/1p1P2P1/1P2KP2/3N4 w - - 0 1",
    "6k1/4pp1p/3p2p1/P1pPb3/R7/1r2P1PP/3B1P2/6K1 w - - 0 1",
    "8/3p3B/5p2/5P2/p7/PP5b/k7/6K1 w - - 0 1",
    "5rk1/q6p/2p3bR/1pPp1rP1/1P1Pp3/P3B1Q1/1K3P2/R7 w - - 93 90",
    "4rrk1/1p1nq3/p7/2p1P1pp/3P2bp/3Q1Bn1/PPPB4/1K2R1NR w - - 40 21",
    "r3k2r/3nnpbp/q2pp1p1/p7/Pp1PPPP1/4BNN1/1P5P/R2Q1RK1 w kq - 0 16",
    "3Qb1k1/1r2ppb1/pN1n2q1/Pp1Pp1Pr/4P2p/4BP2/4B1R1/1R5K b - - 11 40",
    "8/8/8/8/5kp1/P7/8/1K1N4 w - - 0 1",
    "8/8/8/5N2/8/p7/8/2NK3k w - - 0 1",
    "8/3k4/8/8/8/4B3/4KB2/2B5 w - - 0 1",
    "8/8/1P6/5pr1/8/4R3/7k/2K5 w - - 0 1",
    "8/2p4P/8/kr6/6R1/8/8/1K6 w - - 0 1",
    "8/8/3P3k/8/1p6/8/1P6/1K3n2 b - - 0 1",
    "8/R7/2q5/8/6k1/8/1P5p/K6R w - - 0 124",
    "r2r1n2/pp2bk2/2p1p2p/3q4/3PN1QP/2P3R1/P4PP1/5RK1 w - - 0 1",
];

/// What a bench run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchResult {
    pub positions: usize,
    pub nodes: u64,
    pub seconds: f64,
    pub pawn_probes: u64,
    pub pawn_hits: u64,
    /// With a network: how its accumulators were found.
    pub accumulators: Option<crate::nnue::accumulator::AccumulatorStats>,
}

impl BenchResult {
    pub fn nps(&self) -> u64 {
        (self.nodes as f64 / self.seconds.max(1e-9)) as u64
    }

    pub fn pawn_hit_rate(&self) -> f64 {
        self.pawn_hits as f64 / self.pawn_probes.max(1) as f64
    }
}

/// Searches every bench position to `depth` with a fresh engine (so the node count depends
/// on nothing but the code and the evaluator: `network`, or the hand-crafted terms),
/// calling `each` after each position with its index and nodes.
pub fn run(
    depth: i32,
    network: Option<std::sync::Arc<crate::nnue::Network>>,
    mut each: impl FnMut(usize, u64),
) -> Result<BenchResult, FenError> {
    let boards = POSITIONS
        .iter()
        .map(|fen| Board::from_fen(fen))
        .collect::<Result<Vec<_>, _>>()?;
    let mut engine = Engine::new(HASH_MB);
    engine.set_network(network);
    let control = Control::default();
    let limits = Limits::depth(depth);
    let start = Instant::now();
    let (mut nodes, mut pawn_probes, mut pawn_hits) = (0, 0, 0);
    for (i, board) in boards.iter().enumerate() {
        engine.clear();
        let result = engine.search(board, &[], &[], &limits, &control, &mut |_| {});
        let (probes, hits) = engine.pawn_hash_stats();
        nodes += result.nodes;
        pawn_probes += probes;
        pawn_hits += hits;
        each(i, result.nodes);
    }
    let seconds = start.elapsed().as_secs_f64();
    Ok(BenchResult {
        positions: boards.len(),
        nodes,
        seconds,
        pawn_probes,
        pawn_hits,
        accumulators: engine.accumulator_stats(),
    })
}

/// A test-suite position: the board, the moves that solve it (`bm`) or fail it (`am`),
/// and its `id`.
#[derive(Clone, Debug)]
pub struct SuitePosition {
    pub board: Board,
    pub best: Vec<Move>,
    pub avoid: Vec<Move>,
    pub id: String,
}

/// What a suite run found.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteResult {
    pub positions: usize,
    pub solved: usize,
    pub nodes: u64,
    pub seconds: f64,
}

/// An EPD suite as read: the positions kept and, for each line that could not be read,
/// why (with its line number and text).
#[derive(Clone, Debug)]
pub struct Suite {
    pub positions: Vec<SuitePosition>,
    pub rejected: Vec<String>,
}

/// Reads an EPD suite: every line with a `bm` or `am` operation (SAN, as the suites write
/// them). A line that cannot be read is rejected with its number and text; the others are
/// kept.
pub fn read_suite(text: &str) -> Suite {
    let mut suite = Suite {
        positions: Vec::new(),
        rejected: Vec::new(),
    };
    for (number, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match read_suite_line(line, number + 1) {
            Ok(Some(position)) => suite.positions.push(position),
            Ok(None) => {}
            Err(e) => suite
                .rejected
                .push(format!("line {}: {e}: {line}", number + 1)),
        }
    }
    suite
}

fn read_suite_line(line: &str, number: usize) -> Result<Option<SuitePosition>, String> {
    let epd = parse_epd(line).map_err(|e| e.to_string())?;
    let board = Board::new(epd.position.clone());
    // The suites write SAN; shakmaty reads it (one conversion of the board per line).
    let fen: shakmaty::fen::Fen = board.to_fen().parse().map_err(|e| format!("{e}"))?;
    let chess: shakmaty::Chess = fen
        .into_position(shakmaty::CastlingMode::Standard)
        .map_err(|e| format!("{e}"))?;
    let moves = |opcode: &str| -> Result<Vec<Move>, String> {
        epd.operation(opcode)
            .unwrap_or_default()
            .iter()
            .flat_map(|operand| operand.split_whitespace())
            .map(|san| san_to_move(&board, &chess, san).map_err(|e| format!("{opcode} {san}: {e}")))
            .collect()
    };
    let (best, avoid) = (moves("bm")?, moves("am")?);
    if best.is_empty() && avoid.is_empty() {
        return Ok(None);
    }
    let id = epd
        .operation("id")
        .and_then(|ops| ops.first().cloned())
        .unwrap_or_else(|| format!("line {number}"));
    Ok(Some(SuitePosition {
        board,
        best,
        avoid,
        id,
    }))
}

/// A SAN move (`Nxe5`, `O-O`, `f7+`) of `chess`, the same position as `board`.
fn san_to_move(board: &Board, chess: &shakmaty::Chess, san: &str) -> Result<Move, String> {
    let san: shakmaty::san::SanPlus = san.parse().map_err(|e| format!("{e}"))?;
    let mv = san.san.to_move(chess).map_err(|e| format!("{e}"))?;
    let uci = mv.to_uci(shakmaty::CastlingMode::Standard).to_string();
    Move::from_uci(&uci, board, false).map_err(|e| e.to_string())
}

/// Searches every suite position to `nodes` nodes on one thread with fresh tables (so the
/// count depends on nothing but the code), calling `each` with each position and whether
/// the move found solves it: one of `bm`, none of `am`. `network` as for [`run`].
pub fn run_suite(
    positions: &[SuitePosition],
    nodes: u64,
    network: Option<std::sync::Arc<crate::nnue::Network>>,
    mut each: impl FnMut(&SuitePosition, Option<Move>, bool),
) -> SuiteResult {
    let mut engine = Engine::new(HASH_MB);
    engine.set_network(network);
    let control = Control::default();
    let limits = Limits {
        nodes: Some(nodes),
        ..Limits::default()
    };
    let start = Instant::now();
    let (mut solved, mut total_nodes) = (0, 0);
    for position in positions {
        engine.clear();
        let result = engine.search(&position.board, &[], &[], &limits, &control, &mut |_| {});
        total_nodes += result.nodes;
        let ok = result.best.is_some_and(|mv| {
            (position.best.is_empty() || position.best.contains(&mv))
                && !position.avoid.contains(&mv)
        });
        solved += ok as usize;
        each(position, result.best, ok);
    }
    SuiteResult {
        positions: positions.len(),
        solved,
        nodes: total_nodes,
        seconds: start.elapsed().as_secs_f64(),
    }
}
