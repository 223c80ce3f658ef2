//! NNUE input features of a DB into memory (both perspectives, `arrays::nnue_features`)
//! on 1 and 2 threads, per feature set: the rate a trainer's in-memory path can reach,
//! apart from any file or Python. And the network over a DB (`nnue::bulk`, `eval --eval
//! nnue`'s inner loop, no file written): its rows in game order and shuffled, one thread
//! at each SIMD level the CPU has, and 1 and 2 threads at the best.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::export::filters::Filter;
use pawnstorm::nnue::simd::Level;
use pawnstorm::nnue::{NnueEvaluator, bulk};
use pawnstorm::training::arrays;
use pawnstorm::training::loader::{Packed, Recycler, build_batch};
use pawnstorm::training::nnue::FeatureSet;

mod common;

fn nnue(c: &mut Criterion) {
    let (_dir, db, _) = common::database();
    let selection = arrays::select(&db, &Filter::default()).expect("selection");
    let mut group = c.benchmark_group("nnue_features");
    group.throughput(Throughput::Elements(db.len()));
    group.sample_size(10);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        for set in FeatureSet::ALL {
            group.bench_with_input(
                BenchmarkId::new(set.name(), format!("{threads}t")),
                &set,
                |b, &set| {
                    // The arrays are filled again each time, as a trainer's batch memory is.
                    let (mut ours, mut theirs) =
                        arrays::nnue_features(&db, &selection, set).expect("features");
                    b.iter(|| {
                        pool.install(|| {
                            arrays::nnue_features_into(&db, &selection, set, &mut ours, &mut theirs)
                        })
                        .expect("features")
                    })
                },
            );
        }
    }
    group.finish();
}

/// The Python `Loader`'s batches: the features of packed positions (32 bytes each, as the
/// shuffle buffer holds them) into a batch's arrays, one thread.
fn loader_batches(c: &mut Criterion) {
    let (_dir, _db, records) = common::database();
    let packed: Vec<Packed> = records.iter().map(Packed::of_record).collect();
    let recycler = Recycler::default();
    let mut group = c.benchmark_group("loader_batch");
    group.throughput(Throughput::Elements(packed.len() as u64));
    for set in FeatureSet::ALL {
        group.bench_with_input(BenchmarkId::from_parameter(set.name()), &set, |b, &set| {
            b.iter(|| {
                for chunk in packed.chunks(16_384) {
                    let batch = build_batch(chunk, set, &recycler);
                    recycler.give(batch.stm_features);
                    recycler.give(batch.nstm_features);
                }
            })
        });
    }
    group.finish();
}

/// The compiled-in network over the benchmark DB, in game order (a row's sums updated from
/// the row before's) and shuffled: one thread a level through `rows_scores` in stored
/// order (every shuffled row summed from the biases: the kernels' refresh rate), and 1 and
/// 2 threads through `db_scores`, the pass `eval` runs (a shuffled DB in its game-and-ply
/// order, `bulk::sorted_scores`).
fn bulk_eval(c: &mut Criterion) {
    let net = bulk::load(None).expect("the compiled-in network");
    let (_dir, games, shuffled) = common::games_databases();
    let mut group = c.benchmark_group("nnue_eval");
    group.throughput(Throughput::Elements(games.len()));
    group.sample_size(10);
    for (order, db) in [("games", &games), ("shuffled", &shuffled)] {
        let n = db.block_size();
        // The level picks the network's kernels; the loop around them is compiled at the
        // process's level either way, so `portable` is its plain loops as the compiler
        // vectorises them there, not a baseline x86-64 figure (`PAWNSTORM_SIMD` gives that).
        for level in Level::available() {
            let mut evaluator = NnueEvaluator::with_level(net.clone(), level);
            let mut out = vec![0i32; n];
            group.bench_function(
                BenchmarkId::new(order, format!("{}_1t", level.name())),
                |b| {
                    b.iter(|| {
                        for i in 0..db.block_count() {
                            let block = db.block(i).expect("block");
                            bulk::rows_scores(&mut evaluator, &block, 0..n, &mut out);
                            black_box(&out);
                        }
                    })
                },
            );
        }
        let prototype = NnueEvaluator::new(net.clone());
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            group.bench_function(BenchmarkId::new(order, format!("{threads}t")), |b| {
                b.iter(|| pool.install(|| black_box(bulk::db_scores(db, &prototype))))
            });
        }
    }
    group.finish();
}

criterion_group!(benches, nnue, loader_batches, bulk_eval);
criterion_main!(benches);
