//! FEN parsing, EPD import, PGN import (plain and zstd) and lichess JSONL import
//! throughput (positions per second; all but the JSONL import on one core).

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::db::{Columns, DbWriter};
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportOptions, Source};
use pawnstorm::position::fen::parse_fen;

fn fixture(relative: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(relative)
}

/// Imports `source` into a fresh DB in a temporary directory; returns the positions.
fn import_into_db(source: &Source, format: Format) -> u64 {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut writer = DbWriter::create(dir.path().join("bench.psdb"), 4096, Columns::NONE, false)
        .expect("create DB");
    let mut game_id = 0;
    let counts = import::import(
        source,
        format,
        &ImportOptions::default(),
        &mut game_id,
        &mut Handlers {
            records: &mut |records| writer.push_all(records),
            reject: &mut |_| AfterRejection::Continue,
            progress: &mut |_| {},
        },
    )
    .expect("import");
    writer.finish().expect("finish");
    counts.positions
}

fn fen_parsing(c: &mut Criterion) {
    let text = std::fs::read_to_string(fixture("texel/labeled-from-fixture-pgns.epd"))
        .expect("texel fixture");
    let fens: Vec<String> = text
        .lines()
        .map(|l| format!("{} 0 1", l.split(" c9").next().unwrap_or(l)))
        .collect();
    let mut group = c.benchmark_group("fen");
    group.throughput(Throughput::Elements(fens.len() as u64));
    group.bench_function("parse", |b| {
        b.iter(|| fens.iter().filter(|fen| parse_fen(fen).is_ok()).count())
    });
    let positions: Vec<_> = fens.iter().filter_map(|f| parse_fen(f).ok()).collect();
    group.bench_function("write", |b| {
        b.iter(|| positions.iter().map(|p| p.to_fen().len()).sum::<usize>())
    });
    group.finish();
}

fn epd_import(c: &mut Criterion) {
    // Ten copies of the labelled set (637k lines), so that creating and syncing the DB
    // weighs in as it does on a real import rather than dominating a small one.
    let text = std::fs::read(fixture("texel/labeled-from-fixture-pgns.epd")).expect("fixture");
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("ten-copies.epd");
    std::fs::write(&path, text.repeat(10)).expect("write input");
    let source = Source::File(path);
    let lines = import_into_db(&source, Format::Lines);
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(lines));
    group.bench_function("epd_lines_to_db", |b| {
        b.iter(|| import_into_db(&source, Format::Lines))
    });
    group.finish();
}

fn pgn_import(c: &mut Criterion) {
    let source = Source::File(fixture("pgn/lichess-2025-05-sample.pgn"));
    let positions = import_into_db(&source, Format::Pgn);
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(positions));
    group.bench_function("pgn_positions_to_db", |b| {
        b.iter(|| import_into_db(&source, Format::Pgn))
    });
    group.finish();
}

/// The lichess sample's games, each move followed by an `[%eval]` and a `[%clk]` comment
/// as lichess writes analysed games, compressed with zstd.
fn pgn_zst_import(c: &mut Criterion) {
    let text = std::fs::read_to_string(fixture("pgn/lichess-2025-05-sample.pgn")).expect("fixture");
    let mut analysed = String::with_capacity(text.len() * 2);
    let mut n = 0u32;
    for line in text.lines() {
        if line.starts_with('[') || line.is_empty() {
            analysed.push_str(line);
        } else {
            // Every existing `{ [%clk ...] }` gains an eval beside it.
            for part in line.split("{ [%clk") {
                if !analysed.ends_with('\n') && !analysed.is_empty() && !part.is_empty() {
                    n = n.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                    let pawns = (n >> 16) % 600;
                    analysed.push_str(&format!(
                        "{{ [%eval {}.{:02}] [%clk",
                        pawns / 100,
                        pawns % 100
                    ));
                }
                analysed.push_str(part);
            }
        }
        analysed.push('\n');
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("analysed.pgn.zst");
    std::fs::write(
        &path,
        zstd::encode_all(analysed.as_bytes(), 19).expect("zstd"),
    )
    .expect("write");
    let source = Source::File(path);
    let positions = import_into_db(&source, Format::Pgn);
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(positions));
    group.bench_function("pgn_zst_positions_to_db", |b| {
        b.iter(|| import_into_db(&source, Format::Pgn))
    });
    group.finish();
}

/// 200k lines in the shape of lichess's evaluation database (1-3 evals of 1-5 PVs of ten
/// moves), over the labelled fixture's positions.
fn jsonl_import(c: &mut Criterion) {
    let text =
        std::fs::read_to_string(fixture("texel/labeled-from-fixture-pgns.epd")).expect("fixture");
    let fens: Vec<String> = text
        .lines()
        .map(|l| l.split_whitespace().take(4).collect::<Vec<_>>().join(" "))
        .collect();
    let mut n = 7u64;
    let mut next = |m: u64| {
        n ^= n << 13;
        n ^= n >> 7;
        n ^= n << 17;
        n % m
    };
    let mut lines = String::new();
    for i in 0..200_000 {
        let mut evals = Vec::new();
        for _ in 0..1 + next(3) {
            let pvs: Vec<String> = (0..1 + next(5))
                .map(|_| {
                    let moves: Vec<String> = (0..10)
                        .map(|_| {
                            let sq =
                                |s: u64| format!("{}{}", (b'a' + (s % 8) as u8) as char, 1 + s / 8);
                            format!("{}{}", sq(next(64)), sq(next(64)))
                        })
                        .collect();
                    format!(
                        r#"{{"cp":{},"line":"{}"}}"#,
                        next(600) as i64 - 300,
                        moves.join(" ")
                    )
                })
                .collect();
            evals.push(format!(
                r#"{{"pvs":[{}],"knodes":{},"depth":{}}}"#,
                pvs.join(","),
                next(500_000),
                20 + next(40)
            ));
        }
        lines.push_str(&format!(
            r#"{{"fen":"{}","evals":[{}]}}"#,
            fens[i % fens.len()],
            evals.join(",")
        ));
        lines.push('\n');
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("evals.jsonl");
    std::fs::write(&path, lines).expect("write");
    let source = Source::File(path);
    let positions = import_into_db(&source, Format::Jsonl);
    let mut group = c.benchmark_group("import");
    group.sample_size(20);
    group.throughput(Throughput::Elements(positions));
    group.bench_function("jsonl_lines_to_db", |b| {
        b.iter(|| import_into_db(&source, Format::Jsonl))
    });
    group.finish();
}

criterion_group!(
    benches,
    fen_parsing,
    epd_import,
    pgn_import,
    pgn_zst_import,
    jsonl_import
);
criterion_main!(benches);
