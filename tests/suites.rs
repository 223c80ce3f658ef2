//! Test-suite solve counts at a fixed node count, one thread, fresh tables for each
//! position: deterministic, so each floor is the count measured when it was set, and a
//! search change that loses solutions fails here (raise the floor when one gains).
//! `pawnstorm bench --suite FILE --nodes N` prints the same counts and what was missed.

mod common;

use common::fixture;
use pawnstorm::search::bench::{read_suite, run_suite};

const NODES: u64 = 20_000;
/// Counts measured at 20,000 nodes when the floors were set (bench signature 690064).
const WAC_FLOOR: usize = 199;
const ECM_FLOOR: usize = 277;
const ARASAN_FLOOR: usize = 8;

fn solved(file: &str) -> (usize, usize) {
    let text = std::fs::read_to_string(fixture(file)).expect("suite readable");
    let positions = read_suite(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let result = run_suite(&positions, NODES, |_, _, _| {});
    println!(
        "{file}: solved {}/{} at {NODES} nodes",
        result.solved, result.positions
    );
    (result.solved, result.positions)
}

#[test]
fn win_at_chess() {
    let (solved, total) = solved("epd/wac.epd");
    assert_eq!(total, 300);
    assert!(solved >= WAC_FLOOR, "WAC: {solved} < {WAC_FLOOR}");
}

#[test]
fn encyclopedia_of_chess_middlegames() {
    let (solved, total) = solved("epd/ecm.epd");
    assert_eq!(total, 879);
    assert!(solved >= ECM_FLOOR, "ECM: {solved} < {ECM_FLOOR}");
}

#[test]
fn arasan_2021() {
    let (solved, total) = solved("epd/arasan21.epd");
    assert_eq!(total, 200);
    assert!(solved >= ARASAN_FLOOR, "Arasan: {solved} < {ARASAN_FLOOR}");
}

#[test]
fn suite_moves_are_read_from_san() {
    let positions = read_suite(
        "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - bm Qxf7#; id \"mate\";\n\
         4k3/8/8/8/8/8/8/4K2R w K - am O-O; id \"castle\";",
    )
    .expect("readable");
    assert_eq!(positions.len(), 2);
    assert_eq!(positions[0].best[0].uci(false).to_string(), "h5f7");
    assert_eq!(positions[1].avoid[0].uci(false).to_string(), "e1g1");
    assert_eq!(positions[1].id, "castle");
    // A move that is not legal there names its line.
    let error = read_suite("4k3/8/8/8/8/8/8/4K3 w - - bm Qh5; id \"x\";").unwrap_err();
    assert!(error.contains("line 1") && error.contains("Qh5"), "{error}");
    // The mate in one is solved.
    let result = run_suite(&positions[..1], 2_000, |_, _, _| {});
    assert_eq!(result.solved, 1);
}
