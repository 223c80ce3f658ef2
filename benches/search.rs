//! The search: `bench`'s fixed positions at a fixed depth (nodes per second is the figure
//! engines compare) with the terms and with a network, the one-position evaluation it
//! calls at every node (the terms; the network's update from a parent and its full
//! refresh), and SEE.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::engine::search::bench::{POSITIONS, run};
use pawnstorm::engine::search::see::see;
use pawnstorm::movegen::{Board, MoveList, legal_moves};
use pawnstorm::nnue::simd::Level;
use pawnstorm::nnue::{Accumulators, Network, NnueEvaluator, boards_of};
use std::sync::Arc;

const DEPTH: i32 = 8;

fn bench_search(c: &mut Criterion) {
    pawnstorm_kernels::attacks::init();
    // The network's speed does not depend on what its weights know: a random one of the
    // default width stands in for a trained one.
    let network = Arc::new(Network::random(128, 1).expect("network"));
    let mut group = c.benchmark_group("search");
    group.sample_size(10);
    for (name, net) in [("terms", None), ("network 128", Some(network.clone()))] {
        let nodes = run(DEPTH, net.clone(), |_, _| {})
            .expect("bench positions parse")
            .nodes;
        group.throughput(Throughput::Elements(nodes));
        group.bench_function(
            format!("bench positions, depth {DEPTH}, {name} (nodes)"),
            |b| b.iter(|| run(DEPTH, net.clone(), |_, _| {}).expect("parse").nodes),
        );
    }
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
    // A move's update of both accumulators and the output, as the search pays it: each
    // child evaluated from its parent's accumulators.
    let children: Vec<(Board, Board)> = boards
        .iter()
        .flat_map(|board| {
            let mut list = MoveList::new();
            legal_moves(board, &mut list);
            list.iter()
                .map(|&mv| (board.clone(), board.play(mv)))
                .collect::<Vec<_>>()
        })
        .collect();
    group.throughput(Throughput::Elements(children.len() as u64));
    let mut nnue = NnueEvaluator::new(network.clone());
    group.bench_function("network: a child from its parent (positions)", |b| {
        b.iter(|| {
            children
                .iter()
                .map(|(parent, child)| {
                    let black = |b: &Board| b.side_to_move() == pawnstorm::Color::Black;
                    nnue.accumulate(&boards_of(parent.position()), 0);
                    nnue.evaluate(&boards_of(child.position()), black(child), 1)
                })
                .sum::<i32>()
        })
    });
    group.throughput(Throughput::Elements(boards.len() as u64));
    let mut refreshed = Accumulators::new(&network);
    group.bench_function("network: a full refresh and the output (positions)", |b| {
        b.iter(|| {
            boards
                .iter()
                .map(|board| {
                    refreshed.refresh(&network, Level::best(), &boards_of(board.position()));
                    refreshed.output(&network, Level::best(), false, 0)
                })
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
