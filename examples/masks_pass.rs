//! The masks pass on its own, for instruction counts under `valgrind --tool=callgrind`
//! (repeatable on a loaded machine, unlike timings): run it with `reps` 0 and N and divide
//! the difference by N times the positions.
//!
//! `cargo run --release --example masks_pass -- DB PATH THREADS REPS` where PATH is
//! `scalar`, `4` or `8` and THREADS 0 means whole blocks on the main thread; DB is built from the labelled fixture (16 times, as the bench does)
//! when it does not exist yet.

use std::hint::black_box;

use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::eval::features::{self, Path};
use pawnstorm::position::labels::parse_line;
use pawnstorm_kernels::simd::Width;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, db_path, path, threads, reps] = &args[..] else {
        panic!("usage: masks_pass DB scalar|4|8 THREADS REPS");
    };
    let db_path = std::path::Path::new(db_path);
    if !db_path.exists() {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/fixtures/texel/labeled-from-fixture-pgns.epd"
        ))
        .expect("fixture");
        let mut writer = DbWriter::create(db_path, 4096, Columns::NONE, false).expect("create");
        for _ in 0..16 {
            for line in text.lines() {
                let record = parse_line(line).expect("valid").expect("a record");
                writer.push(&record).expect("push");
            }
        }
        writer.finish().expect("finish");
    }
    let db = Database::open(db_path).expect("open");
    let path = match path.as_str() {
        "scalar" => Path::scalar(),
        "4" => Path::new(Path::native().level(), Width::Four).expect("the process's level"),
        "8" => Path::new(Path::native().level(), Width::Eight).expect("the process's level"),
        other => panic!("unknown path {other}"),
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.parse().expect("threads"))
        .build()
        .expect("pool");
    let reps: usize = reps.parse().expect("reps");
    // THREADS 0: whole blocks on this thread (`block_features`, as the features CLI).
    let mut out = vec![0u64; features::COLUMNS * db.block_size()];
    let start = std::time::Instant::now();
    for _ in 0..reps {
        if threads == "0" {
            for i in 0..db.block_count() {
                features::block_features(path, &db.block(i).expect("block"), &mut out);
                black_box(&out);
            }
            continue;
        }
        pool.install(|| {
            features::par_for_each_rows(&db, path, |_, out, rows| {
                black_box((out, rows));
            })
        })
        .expect("pass");
    }
    let seconds = start.elapsed().as_secs_f64();
    if reps > 0 {
        eprintln!(
            "{} positions x {reps}: {:.1}M positions/s",
            db.len(),
            (db.len() * reps as u64) as f64 / seconds / 1e6
        );
    }
}
