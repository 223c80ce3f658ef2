//! The `eval` and `features` commands' whole pipeline over a DB file: read the mapped
//! blocks, compute, write the `.npy` (sized up front, filled by the workers, synced and
//! renamed), on 1 and 2 threads, SIMD and scalar; beside a plain read of the DB's bytes and a
//! plain write of each output's bytes, the machine's limits. After the runs it prints each
//! pipeline's time as a ratio to those limits (from criterion's own estimates).

use std::hint::black_box;
use std::path::{Path as FsPath, PathBuf};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use memmap2::MmapMut;
use pawnstorm::db::Database;
use pawnstorm::eval::default_weights;
use pawnstorm::eval::features::{MaskTable, Path};
use pawnstorm::io::table::{TableSource, TableWriter};
use pawnstorm::scoring::ScoreTable;
use rayon::prelude::*;

mod common;

const GROUP: &str = "pipeline";

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("pool")
}

fn paths() -> [(&'static str, Path); 2] {
    [("simd", Path::native()), ("scalar", Path::scalar())]
}

/// Writes a table of `source` to `out` the way the commands do; returns the file's size.
fn write_table<S: TableSource<Error = anyhow::Error>>(
    out: &FsPath,
    columns: &[(String, pawnstorm::io::table::ColumnType)],
    source: &S,
    db: &Database,
) -> u64 {
    let table = TableWriter::create(out, columns, db.len()).expect("create");
    table.fill(source, db.block_size(), |_| {}).expect("fill");
    std::fs::metadata(out).expect("written").len()
}

/// `bytes` written through a fresh mapped file by every thread of the pool, synced: what a
/// table costs with no computing and no encoding.
fn plain_write(out: &FsPath, bytes: u64) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(out)
        .expect("create");
    file.set_len(bytes).expect("size");
    // SAFETY: our own new file, not truncated while mapped.
    let mut map = unsafe { MmapMut::map_mut(&file) }.expect("map");
    map.par_chunks_mut(1 << 20)
        .for_each(|chunk| chunk.fill(0x5a));
    map.flush().expect("flush");
    file.sync_all().expect("sync");
}

/// Every byte of the DB's blocks read by every thread of the pool.
fn plain_read(db_path: &FsPath) -> u64 {
    let file = std::fs::File::open(db_path).expect("open");
    // SAFETY: read-only map of a file nobody writes to during the bench.
    let map = unsafe { memmap2::Mmap::map(&file) }.expect("map");
    map.par_chunks(1 << 16)
        .map(|chunk| {
            chunk.chunks_exact(8).fold(0u64, |a, w| {
                a ^ u64::from_le_bytes(w.try_into().expect("8 bytes"))
            })
        })
        .reduce(|| 0, |a, b| a ^ b)
}

fn pipeline(c: &mut Criterion) {
    let (dir, db, _) = common::database();
    let db_path = db.path().to_path_buf();
    let prepared = default_weights();
    let out = dir.path().join("out.npy");
    let mut group = c.benchmark_group(GROUP);
    group.sample_size(10);
    group.throughput(Throughput::Elements(db.len()));
    // Each output's size, for the plain writes (one run of each, also a warm-up).
    let scores = ScoreTable {
        db: &db,
        path: Path::native(),
        prepared,
        breakdown: false,
        with_index: false,
        stm_pov: false,
        wdl: false,
        network: None,
        sorted: Default::default(),
    };
    let masks = MaskTable {
        db: &db,
        path: Path::native(),
    };
    let sizes = [
        ("eval", write_table(&out, &scores.columns(), &scores, &db)),
        ("features", write_table(&out, &masks.columns(), &masks, &db)),
    ];
    for threads in [1, 2] {
        let pool = pool(threads);
        for (name, path) in paths() {
            let scores = ScoreTable {
                db: &db,
                path,
                prepared,
                breakdown: false,
                with_index: false,
                stm_pov: false,
                wdl: false,
                network: None,
                sorted: Default::default(),
            };
            let columns = scores.columns();
            group.bench_function(BenchmarkId::new(format!("eval_{name}"), threads), |b| {
                b.iter(|| pool.install(|| write_table(&out, &columns, &scores, &db)))
            });
            let masks = MaskTable { db: &db, path };
            let columns = masks.columns();
            group.bench_function(BenchmarkId::new(format!("features_{name}"), threads), |b| {
                b.iter(|| pool.install(|| write_table(&out, &columns, &masks, &db)))
            });
        }
        group.bench_function(BenchmarkId::new("plain_read", threads), |b| {
            b.iter(|| pool.install(|| black_box(plain_read(&db_path))))
        });
        for (kind, bytes) in sizes {
            group.bench_function(
                BenchmarkId::new(format!("plain_write_{kind}_bytes"), threads),
                |b| b.iter(|| pool.install(|| plain_write(&out, bytes))),
            );
        }
    }
    group.finish();
    print_ratios(db.len());
}

/// The mean time of one benchmark, from criterion's `estimates.json` (None if absent).
fn mean_seconds(id: &str) -> Option<f64> {
    let target = std::env::var_os("CARGO_TARGET_DIR").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"),
        PathBuf::from,
    );
    let file = target
        .join("criterion")
        .join(GROUP)
        .join(id)
        .join("new/estimates.json");
    let text = std::fs::read_to_string(file).ok()?;
    let mean = &text[text.find("\"mean\"")?..];
    let value = &mean[mean.find("\"point_estimate\":")? + "\"point_estimate\":".len()..];
    let end = value.find([',', '}'])?;
    value[..end].trim().parse::<f64>().ok().map(|ns| ns * 1e-9)
}

fn print_ratios(positions: u64) {
    println!("\n{GROUP}: positions/s, and each pipeline's time over the plain read / write");
    for threads in [1, 2] {
        let read = mean_seconds(&format!("plain_read/{threads}"));
        for kind in ["eval", "features"] {
            let write = mean_seconds(&format!("plain_write_{kind}_bytes/{threads}"));
            for (name, _) in paths() {
                let Some(time) = mean_seconds(&format!("{kind}_{name}/{threads}")) else {
                    continue;
                };
                let ratio =
                    |limit: Option<f64>| limit.map_or("-".into(), |l| format!("{:.2}", l / time));
                println!(
                    "  {kind:<8} {name:<6} {threads} thread(s): {:>6.2} M positions/s, {} of the plain read's speed, {} of the plain write's",
                    positions as f64 / time / 1e6,
                    ratio(read),
                    ratio(write),
                );
            }
        }
    }
}

criterion_group!(benches, pipeline);
criterion_main!(benches);
