//! Perft (legal generation, copy-make and bulk counting together) and move generation
//! alone over a fixed set of positions.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::engine::perft::perft;
use pawnstorm::movegen::{Board, MoveList, legal_moves};

const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

fn suite_positions() -> Vec<Board> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/perft/perftsuite.epd");
    let text = std::fs::read_to_string(path).expect("perft suite fixture");
    text.lines()
        .filter_map(|line| line.split(';').next())
        .filter_map(|fen| Board::from_fen(fen.trim()).ok())
        .collect()
}

fn bench_perft(c: &mut Criterion) {
    pawnstorm_kernels::attacks::init();
    let mut group = c.benchmark_group("perft");
    group.sample_size(10);
    for (name, board, depth, nodes) in [
        ("startpos depth 4", Board::startpos(), 4, 197_281u64),
        (
            "kiwipete depth 3",
            Board::from_fen(KIWIPETE).expect("valid"),
            3,
            97_862,
        ),
    ] {
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(name, |b| b.iter(|| perft(&board, depth)));
    }
    group.finish();
}

fn bench_generation(c: &mut Criterion) {
    pawnstorm_kernels::attacks::init();
    let positions = suite_positions();
    let mut group = c.benchmark_group("movegen");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.bench_function("legal moves, perftsuite positions", |b| {
        b.iter(|| {
            let mut total = 0;
            for board in &positions {
                let mut moves = MoveList::new();
                legal_moves(board, &mut moves);
                total += moves.len();
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench_perft, bench_generation);
criterion_main!(benches);
