//! `pawnstorm dedup`: counts against a set of FENs read back by shakmaty, the first, last
//! and mean rows kept, the partition pass on disk equal to the pass in memory, bad input.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use pawnstorm::db::Database;
use pawnstorm::position::labels::{GameResult, Record};
use shakmaty::fen::Fen;
use shakmaty::{CastlingMode, Chess, EnPassantMode};

use common::{fails, fixture, ok, s};

fn records(path: &Path) -> Vec<Record> {
    let db = Database::open(path).expect("opens");
    db.records(0..db.len()).map(|r| r.expect("valid")).collect()
}

/// The position's first four FEN fields as shakmaty writes them (en passant only when a
/// legal capture exists, as python-chess's `board.epd()`), from pawnstorm's FEN.
fn shakmaty_epd(record: &Record) -> String {
    let fen: Fen = record.position.to_fen().parse().expect("shakmaty reads it");
    let position: Chess = fen
        .into_position(CastlingMode::Chess960)
        .expect("a legal position");
    let fen = Fen::from_position(&position, EnPassantMode::Legal).to_string();
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

/// The number after `label` in the summary, e.g. `... 26846 unique`.
fn count_before(summary: &str, label: &str) -> u64 {
    let at = summary
        .find(label)
        .unwrap_or_else(|| panic!("{label} in {summary}"));
    summary[..at]
        .split_whitespace()
        .last()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("a count before {label} in {summary}"))
}

/// The lichess sample's games (openings repeat) as a DB of 64-row blocks.
fn lichess_db(dir: &Path) -> PathBuf {
    let db = dir.join("lichess.psdb");
    ok(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "--block-size",
        "64",
        "-o",
        s(&db),
    ]);
    db
}

#[test]
fn first_rows_of_each_position_as_a_set_of_fens_finds_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = lichess_db(dir.path());
    let input = records(&db);
    let mut seen = HashMap::new();
    let expected: Vec<&Record> = input
        .iter()
        .filter(|r| seen.insert(shakmaty_epd(r), ()).is_none())
        .collect();
    assert!(
        expected.len() * 100 < input.len() * 97,
        "the games repeat positions: {} of {}",
        expected.len(),
        input.len()
    );
    let out = dir.path().join("unique.psdb");
    let summary = ok(&["dedup", s(&db), "-o", s(&out)]);
    assert_eq!(count_before(&summary, "positions in"), input.len() as u64);
    assert_eq!(count_before(&summary, "unique"), expected.len() as u64);
    assert_eq!(
        count_before(&summary, "duplicates removed"),
        (input.len() - expected.len()) as u64
    );
    let got = records(&out);
    assert_eq!(got.len(), expected.len());
    for (i, (got, expected)) in got.iter().zip(&expected).enumerate() {
        assert_eq!(got, *expected, "row {i}");
    }
    let source = Database::open(&db).expect("opens");
    let written = Database::open(&out).expect("opens");
    assert_eq!(written.columns(), source.columns());
    assert_eq!(written.block_size(), source.block_size());
    written.verify().expect("every checksum right");
}

#[test]
fn the_partition_pass_on_disk_writes_what_the_pass_in_memory_writes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = lichess_db(dir.path());
    for keep in ["first", "last", "mean"] {
        let memory = dir.path().join(format!("{keep}-memory.psdb"));
        let disk = dir.path().join(format!("{keep}-disk.psdb"));
        let in_memory = ok(&["dedup", s(&db), "-o", s(&memory), "--keep", keep]);
        assert!(in_memory.contains("keys in memory"), "{in_memory}");
        let on_disk = ok(&[
            "dedup",
            s(&db),
            "-o",
            s(&disk),
            "--keep",
            keep,
            "--memory",
            "48K",
            "--threads",
            "2",
        ]);
        assert!(on_disk.contains("partitions on disk"), "{on_disk}");
        assert_eq!(records(&memory), records(&disk), "--keep {keep}");
        Database::open(&disk)
            .expect("opens")
            .verify()
            .expect("whole");
    }
    // The partition files are gone.
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".psdb"))
        .collect();
    left.sort();
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// An EPD file where a position repeats with different scores and results, and with a
/// different en-passant square (a different position as stored).
fn repeats_db(dir: &Path) -> PathBuf {
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -";
    let e4 = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -";
    let e4_ep = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3";
    let kings = "4k3/8/8/8/8/8/8/4K3 w - -";
    let lines = [
        format!("{start} ce 10; c9 \"1-0\"; ply 0;"),
        format!("{e4} ce -20; c9 \"1/2-1/2\"; ply 1;"),
        format!("{start} hmvc 5; ce 15; c9 \"1/2-1/2\"; ply 8;"),
        format!("{kings} c9 \"0-1\"; ply 3;"),
        format!("{e4_ep} ce 100; ply 2;"),
        format!("{start} c9 \"1-0\"; ply 9;"),
        format!("{e4} ce -31; c9 \"0-1\"; ply 4;"),
        format!("{kings} ce 7; c9 \"0-1\"; ply 5;"),
    ];
    let epd = dir.join("repeats.epd");
    std::fs::write(&epd, lines.join("\n") + "\n").expect("write");
    let db = dir.join("repeats.psdb");
    ok(&["import", s(&epd), "-o", s(&db)]);
    db
}

#[test]
fn first_last_and_mean_keep_the_rows_they_say() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = repeats_db(dir.path());
    let input = records(&db);
    assert_eq!(input.len(), 8);
    let run = |keep: &str| {
        let out = dir.path().join(format!("{keep}.psdb"));
        let summary = ok(&["dedup", s(&db), "-o", s(&out), "--keep", keep]);
        assert_eq!(count_before(&summary, "unique"), 4, "{summary}");
        assert_eq!(count_before(&summary, "duplicates removed"), 4, "{summary}");
        records(&out)
    };
    // Positions: start (rows 0, 2, 5), e4 (1, 6), kings (3, 7), e4 with e3 stored (4).
    let first = run("first");
    assert_eq!(
        first,
        [0, 1, 3, 4].map(|i| input[i].clone()).to_vec(),
        "first rows, in DB order"
    );
    let last = run("last");
    assert_eq!(
        last,
        [4, 5, 6, 7].map(|i| input[i].clone()).to_vec(),
        "last rows, where they stand"
    );
    let mean = run("mean");
    let expect_mean = |i: usize, score: Option<i32>, result: Option<GameResult>| {
        let mut record = input[i].clone();
        record.labels.score = score;
        record.labels.result = result;
        record
    };
    assert_eq!(
        mean,
        vec![
            // Scores 10, 15 and none: 12.5 rounds away from zero; results 1, 0, 1: 2/3.
            expect_mean(0, Some(13), Some(GameResult::WhiteWin)),
            // EPD's `ce` is the side to move's: Black's -20 and -31 are stored as White's
            // 20 and 31, whose 25.5 rounds to 26; results 0 and -1: a tie, a draw.
            expect_mean(1, Some(26), Some(GameResult::Draw)),
            // No score, then 7; results -1, -1.
            expect_mean(3, Some(7), Some(GameResult::BlackWin)),
            // Alone: as it was.
            input[4].clone(),
        ]
    );
}

#[test]
fn the_output_may_replace_the_input() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = repeats_db(dir.path());
    let input = records(&db);
    ok(&["dedup", s(&db), "-o", s(&db)]);
    assert_eq!(
        records(&db),
        [0, 1, 3, 4].map(|i| input[i].clone()).to_vec()
    );
}

#[test]
fn a_missing_or_corrupt_input_is_an_error_naming_it_and_writes_nothing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out.psdb");
    let missing = dir.path().join("missing.psdb");
    let error = fails(&["dedup", s(&missing), "-o", s(&out)]);
    assert!(error.contains("missing.psdb"), "{error}");
    assert!(!out.exists());

    let db = lichess_db(dir.path());
    let mut bytes = std::fs::read(&db).expect("read");
    // A byte inside the third block's boards.
    let block_bytes = Database::open(&db).expect("opens").header().block_bytes as usize;
    bytes[128 + 2 * block_bytes + 100] ^= 0x10;
    let corrupt = dir.path().join("corrupt.psdb");
    std::fs::write(&corrupt, &bytes).expect("write");
    for memory in ["1G", "48K"] {
        let error = fails(&["dedup", s(&corrupt), "-o", s(&out), "--memory", memory]);
        assert!(
            error.contains("corrupt.psdb") && error.contains("block 2: checksum mismatch"),
            "{error}"
        );
        assert!(!out.exists());
    }
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        names.iter().all(|n| n.ends_with(".psdb")),
        "no temporary file left: {names:?}"
    );

    std::fs::write(&corrupt, b"not a database at all").expect("write");
    let error = fails(&["dedup", s(&corrupt), "-o", s(&out)]);
    assert!(
        error.contains("not a pawnstorm position database"),
        "{error}"
    );
    let error = fails(&["dedup", s(&db), "-o", s(&out), "--memory", "12X"]);
    assert!(error.contains("12X"), "{error}");
    let error = fails(&["dedup", s(&db), "-o", s(&out), "--memory", "1K"]);
    assert!(
        error.contains("lichess.psdb") && error.contains("too small") && error.contains("--memory"),
        "{error}"
    );
    assert!(!out.exists());
}
