//! The full evaluation of a position DB in memory: scalar (1 x u64) against 4 and 8 lanes on
//! one thread, and 8 lanes on 1 and 2 threads; the scalar `evaluate` with and without the
//! pawn hash table. Positions/s.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::eval::batch::{db_scores, rows_scores};
use pawnstorm::eval::features::Path;
use pawnstorm::eval::{Evaluator, Prepared, default_weights, evaluate};

mod common;

fn batch(c: &mut Criterion) {
    let (_dir, db, records) = common::database();
    let positions: Vec<pawnstorm::Position> = records.into_iter().map(|r| r.position).collect();
    let prepared = default_weights();
    let n = db.block_size();
    let mut group = c.benchmark_group("eval_db");
    group.sample_size(10);
    group.throughput(Throughput::Elements(db.len()));
    let mut out = vec![0i32; n];
    for path in Path::every() {
        let name = format!("{}_x{}", path.level().name(), path.lanes());
        group.bench_function(BenchmarkId::new("one_thread", name), |b| {
            b.iter(|| {
                for i in 0..db.block_count() {
                    let block = db.block(i).expect("block");
                    rows_scores(path, prepared, &block, 0..n, &mut out);
                    black_box(&out);
                }
            })
        });
    }
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        group.bench_function(BenchmarkId::new("native_threads", threads), |b| {
            b.iter(|| pool.install(|| black_box(db_scores(&db, Path::native(), prepared))))
        });
    }
    group.finish();

    let mut group = c.benchmark_group("eval_one");
    group.throughput(Throughput::Elements(positions.len() as u64));
    group.sample_size(10);
    group.bench_function("evaluate", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(evaluate)
                .fold(0i64, |s, v| s + v as i64)
        })
    });
    let mut evaluator = Evaluator::new(Prepared::default(), 1 << 16);
    group.bench_function("evaluator_with_pawn_table", |b| {
        b.iter(|| {
            positions
                .iter()
                .map(|p| evaluator.evaluate(p))
                .fold(0i64, |s, v| s + v as i64)
        })
    });
    group.finish();
}

criterion_group!(benches, batch);
criterion_main!(benches);
