//! NNUE input features of a DB into memory (both perspectives, `arrays::nnue_features`)
//! on 1 and 2 threads, per feature set: the rate a trainer's in-memory path can reach,
//! apart from any file or Python.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::export::filters::Filter;
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

criterion_group!(benches, nnue, loader_batches);
criterion_main!(benches);
