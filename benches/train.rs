//! The trainer's step (forward and backward passes, AdamW) on batches of real self-play
//! positions already in memory, on 1 and 2 threads: `train-net`'s inner loop apart from its
//! loader, at the default net's size and at `768x8hm → 512` (factorised).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::export::filters::Filter;
use pawnstorm::nnue::InputLayout;
use pawnstorm::training::loader::{Batch, Loader, LoaderConfig};
use pawnstorm::training::mix::{Input, Split};
use pawnstorm::training::net::optimiser::{State, Trainer};
use pawnstorm::training::net::{Layout, Objective};
use pawnstorm::training::nnue::FeatureSet;

/// Batches of train-net's default size, four of them, from the first self-play shards in
/// the repository.
fn batches(set: FeatureSet) -> Vec<Batch> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/data/selfplay/gen8");
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .expect("data/selfplay/gen8")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "binpack"))
        .collect();
    paths.sort();
    let config = LoaderConfig {
        inputs: paths
            .into_iter()
            .take(2)
            .map(|path| Input { path, weight: 1.0 })
            .collect(),
        mixing: false,
        batch_size: 16_384,
        set,
        shuffle: true,
        shuffle_buffer: 1 << 18,
        seed: 1,
        threads: 2,
        filter: Filter::default(),
        split: Split::All,
    };
    let batches: Vec<Batch> = Loader::start(config)
        .expect("loader")
        .take(4)
        .map(|b| b.expect("batch"))
        .collect();
    assert_eq!(batches.len(), 4, "too few positions in data/selfplay/gen8");
    batches
}

fn train(c: &mut Criterion) {
    let king8 = InputLayout::standard(8).expect("8 king buckets");
    let nets = [
        ("768-128", Layout::single(128), FeatureSet::Chess768),
        (
            "768x8hm-512",
            Layout {
                hidden: 512,
                buckets: 1,
                inputs: king8,
                factoriser: true,
            },
            FeatureSet::KingBuckets(king8),
        ),
    ];
    let objective = Objective {
        wdl: 0.3,
        scale: 137.0,
    };
    let mut group = c.benchmark_group("train_step");
    group.sample_size(10);
    for (name, layout, set) in nets {
        let batches = batches(set);
        group.throughput(Throughput::Elements(
            batches.iter().map(|b| b.len as u64).sum(),
        ));
        for threads in [1, 2] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("pool");
            let mut trainer = Trainer::new(State::new(layout, 1), objective);
            group.bench_function(BenchmarkId::new(name, format!("{threads}t")), |b| {
                b.iter(|| {
                    pool.install(|| {
                        for batch in &batches {
                            trainer.step(batch, 1e-3);
                        }
                    })
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, train);
criterion_main!(benches);
