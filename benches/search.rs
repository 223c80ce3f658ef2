//! The search: `bench`'s fixed positions at a fixed depth (nodes per second is the figure
//! engines compare), the one-position evaluation it calls at every node, and SEE.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::engine::search::bench::{POSITIONS, run};
use pawnstorm::engine::search::see::see;
use pawnstorm::movegen::{Board, MoveList, legal_moves};

const DEPTH: i32 = 8;

fn bench_search(c: &mut Criterion) {
    pawnstorm_kernels::attacks::init();
    let nodes = run(DEPTH, |_, _| {}).expect("bench positions parse").nodes;
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    group.throughput(Throughput::Elements(nodes));
    group.bench_function(format!("bench positions, depth {DEPTH} (nodes)"), |b| {
        b.iter(|| run(DEPTH, |_, _| {}).expect("parse").nodes)
    });
    group.finish();

    let boards: Vec<Board> = POSITIONS
        .iter()
        .map(|fen| Board::from_fen(fen).expect("valid"))
        .collect();
    let mut group = c.benchmark_group("search parts");
    group.throughput(Throughput::Elements(boards.len() as u64));
    let mut evaluator = pawnstorm::eval::Evaluator::default();
    group.bench_function("evaluate with pawn hash (positions)", |b| {
        b.iter(|| {
            boards
                .iter()
                .map(|board| evaluator.evaluate_keyed(board.position(), board.pawn_key()))
                .sum::<i32>()
        })
    });
    let moves: Vec<(Board, MoveList)> = boards
        .iter()
        .map(|board| {
            let mut list = MoveList::new();
            legal_moves(board, &mut list);
            (board.clone(), list)
        })
        .collect();
    let count: usize = moves.iter().map(|(_, list)| list.len()).sum();
    group.throughput(Throughput::Elements(count as u64));
    group.bench_function("see of every legal move (moves)", |b| {
        b.iter(|| {
            moves
                .iter()
                .flat_map(|(board, list)| list.iter().map(|&mv| see(board.position(), mv)))
                .sum::<i32>()
        })
    });
    group.finish();
}

criterion_group!(benches, bench_search);
criterion_main!(benches);
