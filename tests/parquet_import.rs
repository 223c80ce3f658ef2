//! `pawnstorm import` of Parquet files, end to end through the binary: what `export
//! --format parquet` writes comes back as the same positions and labels; files of other
//! writers with a FEN column are read; a file without one is refused; bad rows are
//! rejected with their row number, the rest kept.

use crate::common;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use assert_cmd::prelude::*;
use parquet::data_type::{ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use common::{fails, fixture, ok, psdb_contents, s};
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportError, ImportOptions};

/// A DB with every label column: lichess games (ratings, time control, `[%eval]`
/// scores, moves), then positions with a score and a result and no game.
fn every_label_db(dir: &Path) -> PathBuf {
    let db = dir.join("labelled.psdb");
    ok(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        &fixture("texel/labeled-from-fixture-pgns.epd"),
        "-o",
        s(&db),
        "--block-size",
        "256",
    ]);
    db
}

/// One column of a test file: its schema line and its values (`None` a null).
enum Column {
    Text(&'static str, Vec<Option<&'static str>>),
    I32(&'static str, Vec<Option<i32>>),
    I64(&'static str, Vec<Option<i64>>),
    F64(&'static str, Vec<Option<f64>>),
}

/// Writes `columns` as a Parquet file of one row group, every column optional, with
/// the crate's own writer (another writer than the export's code).
fn write_parquet(path: &Path, columns: Vec<Column>) {
    let mut schema = String::from("message test {\n");
    for column in &columns {
        schema.push_str(&match column {
            Column::Text(name, _) => format!("OPTIONAL BYTE_ARRAY {name} (STRING);\n"),
            Column::I32(name, _) => format!("OPTIONAL INT32 {name};\n"),
            Column::I64(name, _) => format!("OPTIONAL INT64 {name};\n"),
            Column::F64(name, _) => format!("OPTIONAL DOUBLE {name};\n"),
        });
    }
    schema.push('}');
    let schema = Arc::new(parse_message_type(&schema).unwrap());
    let props = Arc::new(WriterProperties::builder().build());
    let mut writer = SerializedFileWriter::new(File::create(path).unwrap(), schema, props).unwrap();
    let mut group = writer.next_row_group().unwrap();
    fn split<T: Clone>(values: &[Option<T>]) -> (Vec<T>, Vec<i16>) {
        let defs = values.iter().map(|v| v.is_some() as i16).collect();
        (values.iter().flatten().cloned().collect(), defs)
    }
    for column in &columns {
        let mut out = group.next_column().unwrap().unwrap();
        match column {
            Column::Text(_, values) => {
                let (v, d) = split(values);
                let v: Vec<ByteArray> = v.into_iter().map(ByteArray::from).collect();
                out.typed::<ByteArrayType>()
                    .write_batch(&v, Some(&d), None)
                    .unwrap();
            }
            Column::I32(_, values) => {
                let (v, d) = split(values);
                out.typed::<Int32Type>()
                    .write_batch(&v, Some(&d), None)
                    .unwrap();
            }
            Column::I64(_, values) => {
                let (v, d) = split(values);
                out.typed::<Int64Type>()
                    .write_batch(&v, Some(&d), None)
                    .unwrap();
            }
            Column::F64(_, values) => {
                let (v, d) = split(values);
                out.typed::<DoubleType>()
                    .write_batch(&v, Some(&d), None)
                    .unwrap();
            }
        }
        out.close().unwrap();
    }
    group.close().unwrap();
    writer.close().unwrap();
}

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
const E4: &str = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1";
const ENDGAME: &str = "8/8/4k3/8/8/3K4/4P3/8 w - - 0 50";

#[test]
fn an_export_imports_back_to_the_same_positions_and_labels() {
    let dir = tempfile::tempdir().unwrap();
    let db = every_label_db(dir.path());
    let info = common::pawnstorm(&["info", s(&db)]);
    let labels = String::from_utf8_lossy(&info.stdout);
    for column in ["score", "result", "game_id", "ply", "white_elo", "move"] {
        assert!(labels.contains(column), "the DB has {column}: {labels}");
    }
    for codec in ["zstd", "none", "snappy"] {
        let parquet = dir.path().join(format!("x-{codec}.parquet"));
        ok(&["export", s(&db), "-o", s(&parquet), "--compression", codec]);
        let back = dir.path().join(format!("back-{codec}.psdb"));
        let summary = ok(&["import", s(&parquet), "-o", s(&back), "--block-size", "256"]);
        assert!(summary.contains("rejected 0 records"), "{summary}");
        assert_eq!(
            psdb_contents(&back),
            psdb_contents(&db),
            "{codec}: the same rows, labels and blocks"
        );
    }
    // Named otherwise, the format is told by --format; standard input is read whole.
    let parquet = dir.path().join("x-zstd.parquet");
    let renamed = dir.path().join("positions.bin");
    std::fs::copy(&parquet, &renamed).unwrap();
    let back = dir.path().join("renamed.psdb");
    ok(&[
        "import",
        s(&renamed),
        "--format",
        "parquet",
        "-o",
        s(&back),
        "--block-size",
        "256",
    ]);
    assert_eq!(psdb_contents(&back), psdb_contents(&db));
    // `.pq`, the export's other name for Parquet, is told by its name.
    let short = dir.path().join("positions.pq");
    std::fs::copy(&parquet, &short).unwrap();
    let back = dir.path().join("short.psdb");
    ok(&["import", s(&short), "-o", s(&back), "--block-size", "256"]);
    assert_eq!(psdb_contents(&back), psdb_contents(&db));
    let piped = dir.path().join("piped.psdb");
    let output = Command::cargo_bin("pawnstorm")
        .unwrap()
        .args([
            "import",
            "-",
            "--format",
            "parquet",
            "-o",
            s(&piped),
            "--block-size",
            "256",
        ])
        .stdin(File::open(&parquet).unwrap())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(psdb_contents(&piped), psdb_contents(&db));
}

#[test]
fn any_parquet_with_a_fen_column_is_read_with_its_labels() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("foreign.parquet");
    write_parquet(
        &path,
        vec![
            Column::I64("Score", vec![Some(35), None, Some(-120)]),
            Column::Text("FEN", vec![Some(START), Some(E4), Some(ENDGAME)]),
            Column::Text("result", vec![Some("1-0"), Some("1/2-1/2"), None]),
            Column::Text("comment", vec![Some("not read"), None, None]),
            Column::Text("move", vec![Some("e2e4"), None, Some("d3e4")]),
        ],
    );
    let db = dir.path().join("foreign.psdb");
    let summary = ok(&["import", s(&path), "-o", s(&db)]);
    assert!(
        summary.contains("imported 3 positions, rejected 0 records"),
        "{summary}"
    );
    let epd = dir.path().join("foreign.epd");
    ok(&["export", s(&db), "-o", s(&epd)]);
    let text = std::fs::read_to_string(&epd).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // EPD's `ce` is from the side to move; the Parquet score is White's.
    assert_eq!(
        lines,
        [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 c9 \"1-0\"; ce 35; move e2e4;",
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1 c9 \"1/2-1/2\";",
            "8/8/4k3/8/8/3K4/4P3/8 w - - 0 50 ce -120; move d3e4;",
        ]
    );
}

#[test]
fn a_file_without_a_fen_column_or_with_a_label_of_the_wrong_type_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let no_fen = dir.path().join("no-fen.parquet");
    write_parquet(
        &no_fen,
        vec![
            Column::Text("position", vec![Some(START)]),
            Column::I32("score", vec![Some(1)]),
        ],
    );
    let db = dir.path().join("out.psdb");
    let error = fails(&["import", s(&no_fen), "-o", s(&db)]);
    assert!(
        error.contains(s(&no_fen)) && error.contains("no column fen"),
        "{error}"
    );
    assert!(
        error.contains("position, score"),
        "lists the columns: {error}"
    );
    assert!(!db.exists(), "nothing written");

    let float_score = dir.path().join("float-score.parquet");
    write_parquet(
        &float_score,
        vec![
            Column::Text("fen", vec![Some(START)]),
            Column::F64("score", vec![Some(0.5)]),
        ],
    );
    let error = fails(&["import", s(&float_score), "-o", s(&db)]);
    assert!(
        error.contains(s(&float_score))
            && error.contains("\"score\" holds DOUBLE")
            && error.contains("integers"),
        "{error}"
    );
    let int_fen = dir.path().join("int-fen.parquet");
    write_parquet(&int_fen, vec![Column::I32("fen", vec![Some(1)])]);
    let error = fails(&["import", s(&int_fen), "-o", s(&db)]);
    assert!(error.contains("not text"), "{error}");
    let not_parquet = dir.path().join("text.parquet");
    std::fs::write(&not_parquet, format!("{START}\n")).unwrap();
    let error = fails(&["import", s(&not_parquet), "-o", s(&db)]);
    assert!(
        error.contains(s(&not_parquet)) && error.contains("not a readable Parquet file"),
        "{error}"
    );
    assert!(!db.exists(), "nothing written");
}

#[test]
fn bad_rows_are_rejected_with_their_row_number_and_the_rest_kept() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.parquet");
    write_parquet(
        &path,
        vec![
            Column::Text(
                "fen",
                vec![
                    Some(START),
                    Some("not a fen"),
                    None,
                    Some(E4),
                    Some("8/8/8/8/8/8/8/8 w - - 0 1"),
                    Some(ENDGAME),
                    Some(START),
                ],
            ),
            Column::I64(
                "score",
                vec![
                    Some(1),
                    Some(2),
                    Some(3),
                    Some(1 << 40),
                    None,
                    Some(6),
                    None,
                ],
            ),
            Column::Text(
                "move",
                vec![None, None, None, None, None, None, Some("e2e9")],
            ),
            Column::I32(
                "game_id",
                vec![Some(4), None, None, None, None, Some(5), None],
            ),
        ],
    );
    let db = dir.path().join("mixed.psdb");
    let summary = ok(&["import", s(&path), "-o", s(&db)]);
    assert!(
        summary.contains("imported 2 positions, rejected 5 records"),
        "{summary}"
    );
    let name = s(&path);
    // Rows counted from 0, as pyarrow, polars and DuckDB count them.
    for (row, reason) in [
        (1, "not a fen"),
        (2, "no FEN (null)"),
        (3, "score 1099511627776 is out of range"),
        (4, "king"),
        (6, "move \"e2e9\" is not a UCI move"),
    ] {
        let line = summary
            .lines()
            .find(|l| l.contains(&format!("{name}:{row}: row {row}:")))
            .unwrap_or_else(|| panic!("row {row} reported: {summary}"));
        assert!(line.contains(reason), "row {row}: {line}");
    }
    let epd = dir.path().join("mixed.epd");
    ok(&["export", s(&db), "-o", s(&epd)]);
    let text = std::fs::read_to_string(&epd).unwrap();
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ce 1; game 4;",
            "8/8/4k3/8/8/3K4/4P3/8 w - - 0 50 ce 6; game 5;",
        ]
    );
    // --strict: the first bad row stops the import, and nothing is written.
    let strict = dir.path().join("strict.psdb");
    let error = fails(&["import", s(&path), "-o", s(&strict), "--strict"]);
    assert!(error.contains(&format!("{name}:1: row 1:")), "{error}");
    assert!(!strict.exists(), "nothing written");
}

/// Damaged files (bytes changed, the end cut off) are refused with the file's name or
/// imported with their bad rows rejected; never a panic. The parquet crate panics on some
/// damage (found by changing bytes: a dictionary page whose lengths run past its end),
/// which the import turns into an error: the trials below meet such damage, and the
/// binary's exit status on one is checked too.
#[test]
fn damaged_files_give_an_error_not_a_panic() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    ok(&["import", &fixture("pgn/famous-games.pgn"), "-o", s(&db)]);
    let parquet = dir.path().join("games.parquet");
    ok(&[
        "export",
        s(&db),
        "--range",
        "0..3000",
        "--compression",
        "none",
        "-o",
        s(&parquet),
    ]);
    let bytes = std::fs::read(&parquet).unwrap();
    let mut rng = common::Rng(0x5eed);
    let (mut read, mut refused, mut panicked) = (0, 0, None);
    for trial in 0..1000 {
        let mut copy = bytes.clone();
        for _ in 0..[1, 2, 8, 50][trial % 4] {
            let at = rng.below(copy.len());
            copy[at] = rng.next() as u8;
        }
        if trial % 3 == 0 {
            copy.truncate(rng.below(copy.len()));
        }
        let outcome = import::import_reader(
            "damaged.parquet".to_string(),
            Box::new(std::io::Cursor::new(copy.clone())),
            Arc::new(AtomicU64::new(0)),
            Format::Parquet,
            &ImportOptions::default(),
            &mut 0,
            &mut Handlers {
                records: &mut |_| Ok(()),
                reject: &mut |_| AfterRejection::Continue,
                progress: &mut |_| {},
            },
        );
        match outcome {
            Ok(_) => read += 1,
            Err(ImportError::Invalid { file, reason }) => {
                assert_eq!(file, "damaged.parquet");
                assert!(
                    reason.starts_with("not a readable Parquet file"),
                    "{reason}"
                );
                refused += 1;
                if reason.contains("damaged (") && panicked.is_none() {
                    panicked = Some(copy);
                }
            }
            Err(other) => panic!("trial {trial}: {other}"),
        }
    }
    assert!(
        refused > 100 && read > 100,
        "{refused} refused, {read} read"
    );
    let copy = panicked.expect("some damage makes the parquet crate panic");
    let damaged = dir.path().join("damaged.parquet");
    std::fs::write(&damaged, copy).unwrap();
    let out = dir.path().join("out.psdb");
    let error = fails(&["import", s(&damaged), "-o", s(&out)]);
    assert!(
        error.contains(s(&damaged)) && error.contains("damaged (") && !error.contains("panicked"),
        "{error}"
    );
    assert!(!out.exists());
}
