//! Perft: the six chessprogramming.org positions, the public suites (node-capped so the
//! suite stays fast), suite parsing, and the `perft` command's output.

mod common;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use assert_cmd::prelude::*;
use pawnstorm::engine::perft::{divide, parse_suite, perft, run_suite};
use pawnstorm::movegen::Board;

use common::read_fixture;

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

/// https://www.chessprogramming.org/Perft_Results, to depths that take well under a second.
const CPW_POSITIONS: [(&str, &[u64]); 7] = [
    (
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        &[20, 400, 8902, 197_281, 4_865_609],
    ),
    (KIWIPETE, &[48, 2039, 97_862, 4_085_603]),
    (
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        &[14, 191, 2812, 43_238, 674_624],
    ),
    (
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        &[6, 264, 9467, 422_333],
    ),
    (
        "r2q1rk1/pP1p2pp/Q4n2/bbp1p3/Np6/1B3NBn/pPPP1PPP/R3K2R b KQ - 0 1",
        &[6, 264, 9467, 422_333],
    ),
    (
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        &[44, 1486, 62_379, 2_103_487],
    ),
    (
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        &[46, 2079, 89_890, 3_894_594],
    ),
];

#[test]
fn the_six_chessprogramming_positions_count_right() {
    for (fen, counts) in CPW_POSITIONS {
        let board = Board::from_fen(fen).unwrap_or_else(|e| panic!("{fen}: {e}"));
        for (depth, &expected) in (1..).zip(counts) {
            assert_eq!(perft(&board, depth), expected, "{fen} depth {depth}");
        }
    }
}

#[test]
fn divide_sums_to_perft_and_lists_each_root_move_once() {
    let board = Board::from_fen(KIWIPETE).expect("valid");
    let divided = divide(&board, 3);
    assert_eq!(divided.len(), 48);
    let names: BTreeSet<String> = divided.iter().map(|(m, _)| m.to_string()).collect();
    assert_eq!(names.len(), 48);
    assert!(names.contains("e1g1") && names.contains("e1c1"));
    assert_eq!(divided.iter().map(|(_, n)| n).sum::<u64>(), 97_862);
    assert!(divide(&board, 0).is_empty());
    assert_eq!(perft(&board, 0), 1);
}

/// Runs a suite fixture with a node cap; returns (checks run, invalid positions).
fn run_fixture(name: &str, max_nodes: u64) -> (usize, usize) {
    let text = read_fixture(name);
    let suite = parse_suite(&text);
    assert_eq!(suite.bad_lines, [], "{name}");
    let mut mismatches = Vec::new();
    let summary = run_suite(&suite, max_nodes, |m| mismatches.push(m.clone()), |_| {});
    assert_eq!(mismatches, [], "{name}");
    assert_eq!(summary.mismatches, 0);
    (summary.checks_run, suite.invalid_positions.len())
}

#[test]
fn the_standard_perft_suite_matches_up_to_five_million_nodes_a_check() {
    let (checks, invalid) = run_fixture("perft/perftsuite.epd", 5_000_000);
    assert_eq!(invalid, 0);
    assert!(checks > 600, "{checks}");
}

#[test]
fn the_chess960_perft_suite_matches_up_to_two_million_nodes_a_check() {
    let (checks, invalid) = run_fixture("perft/frc-perftsuite.epd", 2_000_000);
    assert_eq!(invalid, 0);
    assert!(checks > 3000, "{checks}");
}

#[test]
fn the_tricky_positions_match_and_only_the_over_full_board_is_rejected() {
    let (checks, invalid) = run_fixture("perft/cpw-tricky.perft", u64::MAX);
    // "max-legals-too-much-material" has 28 white pieces; Position allows at most 16.
    assert_eq!(invalid, 1);
    assert!(checks > 80, "{checks}");
}

#[test]
fn suite_parsing_reports_bad_lines_with_their_numbers() {
    let text = "\
# comment
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 400

rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 twenty
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1 ;D1 20
rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
perft 1 20
id kings
epd 4k3/8/8/8/8/8/8/4K3 w - -
perft 1 5
perft 2
epd kBQQQQQQ/BR5Q/Q6Q/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - -
perft 1 99
";
    let suite = parse_suite(text);
    let bad: Vec<usize> = suite.bad_lines.iter().map(|b| b.line).collect();
    assert_eq!(bad, [4, 5, 6, 7, 11]);
    assert!(suite.bad_lines[0].reason.contains("twenty"));
    assert_eq!(suite.invalid_positions.len(), 1);
    assert_eq!(suite.invalid_positions[0].line, 12);
    assert_eq!(suite.cases.len(), 2);
    assert_eq!(suite.cases[0].checks, [(1, 20), (2, 400)]);
    assert_eq!(suite.cases[1].checks, [(1, 5)]);
    assert_eq!(suite.cases[1].line, 9);
    let summary = run_suite(&suite, 100, |_| {}, |_| {});
    assert_eq!((summary.checks_run, summary.skipped), (2, 1));
}

fn pawnstorm(args: &[&str]) -> Output {
    Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .output()
        .expect("runs")
}

fn stdout_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn perft_prints_what_stockfish_prints() {
    let output = pawnstorm(&["perft", "3"]);
    assert!(output.status.success());
    assert_eq!(stdout_of(&output), "Nodes searched: 8902\n\n");
    assert!(String::from_utf8_lossy(&output.stderr).contains("Mnps"));

    let output = pawnstorm(&["perft", "2", "--divide"]);
    assert!(output.status.success());
    let text = stdout_of(&output);
    let lines: Vec<&str> = text.split('\n').collect();
    assert_eq!(lines.len(), 24, "{text}");
    assert_eq!(&lines[20..], ["", "Nodes searched: 400", "", ""]);
    let moves: BTreeSet<&str> = lines[..20].iter().copied().collect();
    assert!(
        moves.contains("e2e4: 20") && moves.contains("g1f3: 20"),
        "{text}"
    );
    assert!(lines[..20].iter().all(|l| l.ends_with(": 20")));
}

#[test]
fn perft_divide_writes_castling_as_stockfish_or_as_chess960_asks() {
    let standard = stdout_of(&pawnstorm(&["perft", "1", "--divide", "--fen", KIWIPETE]));
    assert!(standard.contains("e1g1: 1\n") && standard.contains("e1c1: 1\n"));
    assert!(standard.ends_with("\nNodes searched: 48\n\n"));
    let chess960 = stdout_of(&pawnstorm(&[
        "perft",
        "1",
        "--divide",
        "--chess960",
        "--fen",
        KIWIPETE,
    ]));
    assert!(chess960.contains("e1h1: 1\n") && chess960.contains("e1a1: 1\n"));
    // Castling rights off the standard squares switch to Chess960 notation by themselves.
    let frc = stdout_of(&pawnstorm(&[
        "perft",
        "1",
        "--divide",
        "--fen",
        "4k3/8/8/8/8/8/8/RK6 w A - 0 1",
    ]));
    assert!(
        frc.contains("b1a1: 1\n") && frc.contains("b1c1: 1\n"),
        "{frc}"
    );
}

#[test]
fn perft_rejects_a_bad_fen_with_the_column() {
    let output = pawnstorm(&[
        "perft",
        "2",
        "--fen",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("invalid FEN") && stderr.contains('^'),
        "{stderr}"
    );
    assert!(!pawnstorm(&["perft"]).status.success());
    assert!(
        !pawnstorm(&["perft", "2", "--epd", "x.epd"])
            .status
            .success()
    );
}

#[test]
fn perft_suite_reports_mismatches_bad_lines_and_fails() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("suite.epd");
    std::fs::write(
        &path,
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66 ;D3 1198\nnot a fen ;D1 3\n",
    )
    .expect("write suite");
    let output = pawnstorm(&["perft", "--epd", path.to_str().expect("utf-8 path")]);
    assert!(!output.status.success());
    let stdout = stdout_of(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stdout.contains("4k3/8/8/8/8/8/8/4K2R w K - 0 1 depth 3 expected 1198 got 1197"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 positions, 3 checks run, 0 skipped"),
        "{stdout}"
    );
    assert!(stdout.contains("1 bad lines, 1 mismatches"), "{stdout}");
    assert!(
        stderr.contains("suite.epd:2:") && stderr.contains("not a fen"),
        "{stderr}"
    );

    std::fs::write(
        &path,
        "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15 ;D2 66 ;D3 1197\n",
    )
    .expect("write suite");
    let output = pawnstorm(&[
        "perft",
        "--epd",
        path.to_str().expect("utf-8 path"),
        "--max-nodes",
        "100",
    ]);
    assert!(output.status.success());
    assert!(stdout_of(&output).contains("2 checks run, 1 skipped"));
    let missing = pawnstorm(&["perft", "--epd", "/nonexistent/suite.epd"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/suite.epd"));
}
