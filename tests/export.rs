//! `pawnstorm export` to Parquet, `.plain` and bullet, end to end through the binary: how
//! the format is chosen, what is refused, filters and ranges, thread counts, damaged input.
//! (python/tests/test_export.py reads the files back with pyarrow, polars, DuckDB and
//! readers of its own.)

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use assert_cmd::prelude::*;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::RowAccessor;

use common::{fixture, read_fixture};

fn pawnstorm(args: &[&str]) -> Output {
    Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .output()
        .expect("runs")
}

fn ok(args: &[&str]) -> (Vec<u8>, String) {
    let output = pawnstorm(args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?}: {stderr}");
    (output.stdout, stderr)
}

fn fails(args: &[&str]) -> (Vec<u8>, String) {
    let output = pawnstorm(args);
    assert!(!output.status.success(), "{args:?} should fail");
    (
        output.stdout,
        String::from_utf8_lossy(&output.stderr).to_string(),
    )
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A DB of labelled positions, small blocks (so that ranges and chunks cross blocks):
/// games of the fixtures (result, game, ply; no score, no move), positions with a result
/// and a score but no move, then self-play games (score, result, move).
fn labelled_db(dir: &Path) -> PathBuf {
    let db = dir.join("labelled.psdb");
    let epd = dir.join("scored.epd");
    let scored: String = read_fixture("texel/labeled-from-fixture-pgns.epd")
        .lines()
        .take(300)
        .enumerate()
        .map(|(i, line)| format!("{line} ce {};\n", (i as i32 * 37) % 401 - 200))
        .collect();
    std::fs::write(&epd, scored).unwrap();
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        s(&epd),
        "-o",
        s(&db),
        "--block-size",
        "64",
        "--every",
        "7",
    ]);
    ok(&[
        "datagen",
        "-o",
        s(&db),
        "--append",
        "--games",
        "6",
        "--nodes",
        "200",
        "--threads",
        "1",
        "--seed",
        "5",
    ]);
    db
}

fn parquet_rows(path: &Path) -> Vec<u64> {
    let file = std::fs::File::open(path).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let rows = reader.metadata().file_metadata().num_rows();
    let indexes: Vec<u64> = reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| row.unwrap().get_ulong(0).unwrap())
        .collect();
    assert_eq!(indexes.len() as i64, rows);
    indexes
}

#[test]
fn the_format_comes_from_the_option_or_the_extension_and_contradictions_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(dir.path());
    let (epd, _) = ok(&["export", s(&db)]);
    let lines = epd.iter().filter(|&&b| b == b'\n').count();

    let by_extension = dir.path().join("x.parquet");
    ok(&["export", s(&db), "-o", s(&by_extension)]);
    let bytes = std::fs::read(&by_extension).unwrap();
    assert!(bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"));
    assert_eq!(parquet_rows(&by_extension).len(), lines);

    let named = dir.path().join("x.bin");
    ok(&["export", s(&db), "--format", "parquet", "-o", s(&named)]);
    assert_eq!(std::fs::read(&named).unwrap(), bytes);

    for name in ["x.bullet", "x.data"] {
        let path = dir.path().join(name);
        let (_, summary) = ok(&["export", s(&db), "-o", s(&path)]);
        assert!(summary.contains("as bullet"), "{summary}");
        assert_eq!(std::fs::metadata(&path).unwrap().len() % 32, 0);
    }
    let plain = dir.path().join("x.plain");
    let (_, summary) = ok(&["export", s(&db), "-o", s(&plain)]);
    assert!(summary.contains("as plain"), "{summary}");
    assert!(std::fs::read_to_string(&plain).unwrap().starts_with("fen "));
    let text = dir.path().join("x.txt");
    ok(&["export", s(&db), "-o", s(&text)]);
    assert_eq!(std::fs::read(&text).unwrap(), epd);

    let (_, error) = fails(&[
        "export",
        s(&db),
        "--format",
        "plain",
        "-o",
        s(&by_extension),
    ]);
    assert!(
        error.contains("--format plain") && error.contains("names parquet"),
        "{error}"
    );
    let (_, error) = fails(&["export", s(&db), "--format", "csv"]);
    assert!(
        error.contains("epd, parquet, plain, bullet or binpack"),
        "{error}"
    );
}

#[test]
fn parquet_needs_a_file_and_bullet_streams_to_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(dir.path());
    let (stdout, error) = fails(&["export", s(&db), "--format", "parquet"]);
    assert!(stdout.is_empty());
    assert!(error.contains("Parquet needs an output file"), "{error}");

    // Standard output is a pipe here, not a terminal: binary records may go there.
    let (piped, _) = ok(&["export", s(&db), "--format", "bullet"]);
    let file = dir.path().join("b.bullet");
    ok(&["export", s(&db), "-o", s(&file)]);
    assert!(!piped.is_empty());
    assert_eq!(piped, std::fs::read(&file).unwrap());
}

/// The summary line's number of exported positions.
fn exported(summary: &str) -> u64 {
    let words: Vec<&str> = summary.split_whitespace().collect();
    let at = words.iter().position(|&w| w == "exported").expect(summary);
    words[at + 1].parse().expect(summary)
}

#[test]
fn filters_and_ranges_apply_to_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(dir.path());
    let (all_epd, _) = ok(&["export", s(&db)]);
    let all = all_epd.iter().filter(|&&b| b == b'\n').count();
    let start = 100;
    let end = all - 100;
    let range = format!("{start}..{end}");
    let filters = ["--range", &range, "--pieces", "4..24", "--skip-check"];
    let with = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["export", s(&db)];
        args.extend(filters);
        args.extend(extra);
        args.into_iter().map(String::from).collect()
    };
    let run = |extra: &[&str]| {
        let args = with(extra);
        ok(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    let (epd, summary) = run(&[]);
    let epd = String::from_utf8(epd).unwrap();
    let kept: Vec<&str> = epd.lines().collect();
    assert!(kept.len() < end - start, "the filters drop something");
    assert!(summary.contains("dropped"), "{summary}");
    // What bullet and .plain can hold: a score and a result.
    let labelled = kept
        .iter()
        .filter(|l| l.contains(" ce ") && l.contains("c9 "))
        .count();
    assert!(labelled > 0 && labelled < kept.len());

    let parquet = dir.path().join("f.parquet");
    let (_, summary) = run(&["-o", s(&parquet)]);
    assert_eq!(exported(&summary), kept.len() as u64);
    let indexes = parquet_rows(&parquet);
    assert_eq!(indexes.len(), kept.len());
    assert!(indexes.windows(2).all(|w| w[0] < w[1]));
    assert!(
        indexes
            .iter()
            .all(|&i| (start as u64..end as u64).contains(&i))
    );

    let bullet = dir.path().join("f.bullet");
    let (_, summary) = run(&["-o", s(&bullet)]);
    assert_eq!(
        std::fs::metadata(&bullet).unwrap().len(),
        32 * labelled as u64
    );
    assert!(
        summary.contains(&format!("skipped {}", kept.len() - labelled)),
        "{summary}"
    );

    let plain = dir.path().join("f.plain");
    run(&["-o", s(&plain), "--null-move"]);
    let text = std::fs::read_to_string(&plain).unwrap();
    assert_eq!(text.lines().filter(|&l| l == "e").count(), labelled);
    // Without --null-move, the positions without a move are left out and counted.
    let (_, summary) = run(&["-o", s(&plain)]);
    let without = std::fs::read_to_string(&plain).unwrap();
    let blocks = without.lines().filter(|&l| l == "e").count();
    assert!(blocks < labelled, "the scored EPD positions have no moves");
    assert!(summary.contains("no move"), "{summary}");
    assert!(!without.contains("move 0000"));
    assert_eq!(exported(&summary), blocks as u64);
}

#[test]
fn every_format_is_the_same_whatever_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(dir.path());
    for name in ["t.parquet", "t.bullet", "t.plain", "t.epd"] {
        let one = dir.path().join(format!("1-{name}"));
        let two = dir.path().join(format!("2-{name}"));
        ok(&["export", s(&db), "-o", s(&one), "--threads", "1"]);
        ok(&["export", s(&db), "-o", s(&two), "--threads", "2"]);
        assert_eq!(
            std::fs::read(&one).unwrap(),
            std::fs::read(&two).unwrap(),
            "{name}"
        );
    }
}

#[test]
fn a_damaged_db_leaves_no_file_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = labelled_db(dir.path());
    let mut bytes = std::fs::read(&db).unwrap();
    // The last byte is the last block's CRC: every block before it reads.
    *bytes.last_mut().unwrap() ^= 1;
    let bad = dir.path().join("bad.psdb");
    std::fs::write(&bad, bytes).unwrap();
    let out = tempfile::tempdir().unwrap();
    for name in ["d.parquet", "d.bullet", "d.plain", "d.epd"] {
        let target = out.path().join(name);
        let (_, error) = fails(&["export", s(&bad), "-o", s(&target)]);
        assert!(error.contains("checksum mismatch"), "{name}: {error}");
        let left: Vec<_> = std::fs::read_dir(out.path()).unwrap().collect();
        assert!(left.is_empty(), "{name}: {left:?} left behind");
    }
}

/// lichess-like positions (Elo, time control, move) with a score on each and, when
/// `clocks`, a clock on most of those with a move: the clock as `clk N`.
fn clock_epd(dir: &Path, clocks: bool) -> PathBuf {
    let text: String = read_fixture("db/lichess-labels.epd")
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let clock = if clocks && line.contains("move ") && i % 7 != 3 {
                format!(" clk {};", 300 - i as i32 % 290)
            } else {
                String::new()
            };
            format!("{line} ce {};{clock}\n", (i as i32 * 53) % 301 - 150)
        })
        .collect();
    let path = dir.join(if clocks { "clocks.epd" } else { "plain.epd" });
    std::fs::write(&path, text).unwrap();
    path
}

/// The `clock` column of a Parquet export, row by row (`None` for null).
fn parquet_clocks(path: &Path) -> Vec<Option<u16>> {
    let file = std::fs::File::open(path).unwrap();
    let reader = SerializedFileReader::new(file).unwrap();
    let fields = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .to_vec();
    let at = fields
        .iter()
        .position(|c| c.name() == "clock")
        .expect("a clock column");
    assert_eq!(fields.last().unwrap().name(), "clock", "the last column");
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|row| {
            let row = row.unwrap();
            let (name, field) = row.get_column_iter().nth(at).unwrap();
            assert_eq!(name, "clock");
            match field {
                parquet::record::Field::Null => None,
                parquet::record::Field::UShort(v) => Some(*v),
                other => panic!("clock {other:?} is not a u16"),
            }
        })
        .collect()
}

#[test]
fn clocks_travel_through_epd_and_parquet_and_no_other_format_changes() {
    let dir = tempfile::tempdir().unwrap();
    let epd = clock_epd(dir.path(), true);
    let db = dir.path().join("clocks.psdb");
    ok(&["import", s(&epd), "-o", s(&db), "--block-size", "64"]);
    let expected: Vec<Option<u16>> = read_fixture("db/lichess-labels.epd")
        .lines()
        .enumerate()
        .map(|(i, line)| {
            (line.contains("move ") && i % 7 != 3).then_some((300 - i as i32 % 290) as u16)
        })
        .collect();
    assert!(expected.iter().any(Option::is_none) && expected.iter().any(Option::is_some));

    let (info, _) = ok(&["info", s(&db)]);
    let info = String::from_utf8(info).unwrap();
    assert!(info.contains(", move, clock\n"), "{info}");
    let row = expected.iter().position(Option::is_some).unwrap();
    let (shown, _) = ok(&["show", s(&db), "--index", &row.to_string()]);
    let shown = String::from_utf8(shown).unwrap();
    let clock = format!("clock {} s", expected[row].unwrap());
    assert!(shown.contains(&clock), "{shown}");

    // EPD: the `clk` operation on exactly the rows with a clock, and read back to the same DB.
    let (text, _) = ok(&["export", s(&db)]);
    let text = String::from_utf8(text).unwrap();
    let written: Vec<Option<u16>> = text
        .lines()
        .map(|line| {
            line.split(';')
                .find_map(|op| op.trim().strip_prefix("clk "))
                .map(|n| n.parse().unwrap())
        })
        .collect();
    assert_eq!(written, expected);
    let exported = dir.path().join("exported.epd");
    std::fs::write(&exported, &text).unwrap();
    let again = dir.path().join("again.psdb");
    ok(&[
        "import",
        s(&exported),
        "-o",
        s(&again),
        "--block-size",
        "64",
    ]);
    let (twice, _) = ok(&["export", s(&again)]);
    assert_eq!(String::from_utf8(twice).unwrap(), text);

    // Parquet: a nullable uint16 `clock` column, after `move`.
    let parquet = dir.path().join("clocks.parquet");
    ok(&["export", s(&db), "-o", s(&parquet)]);
    assert_eq!(parquet_clocks(&parquet), expected);

    // The training formats have no clock: the same bytes as from the DB without clocks.
    let plain_db = dir.path().join("plain.psdb");
    let plain_epd = clock_epd(dir.path(), false);
    ok(&[
        "import",
        s(&plain_epd),
        "-o",
        s(&plain_db),
        "--block-size",
        "64",
    ]);
    for name in ["t.plain", "t.bullet", "t.binpack"] {
        let with = dir.path().join(format!("with-{name}"));
        let without = dir.path().join(format!("without-{name}"));
        ok(&["export", s(&db), "-o", s(&with)]);
        ok(&["export", s(&plain_db), "-o", s(&without)]);
        let bytes = std::fs::read(&with).unwrap();
        assert!(!bytes.is_empty(), "{name}");
        assert_eq!(bytes, std::fs::read(&without).unwrap(), "{name}");
    }
}
