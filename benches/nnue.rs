//! NNUE input features of a DB into memory (both perspectives, `arrays::nnue_features`)
//! on 1 and 2 threads, per feature set: the rate a trainer's in-memory path can reach,
//! apart from any file or Python.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::export::filters::Filter;
use pawnstorm::training::arrays;
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

criterion_group!(benches, nnue);
criterion_main!(benches);
