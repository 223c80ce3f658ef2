//! FEN parsing, EPD import and PGN import throughput (positions per second, one core).

use std::path::PathBuf;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::db::{Columns, DbWriter};
use pawnstorm::fen::parse_fen;
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportOptions, Source};

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
            record: &mut |record| writer.push(record),
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

criterion_group!(benches, fen_parsing, epd_import, pgn_import);
criterion_main!(benches);
