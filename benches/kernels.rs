//! The pawn kernels and the whole masks pass: scalar (1 x u64) against 4 and 8 lanes, one
//! thread against two, and a plain read of the same columns as the ceiling. Positions/s.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use pawnstorm::eval::features::{self, COLUMNS, Path};
use pawnstorm_kernels::simd::{LanesFn, dispatch};
use pawnstorm_kernels::{Color, Lanes, geometry, pawns};

mod common;

fn masks_pass(c: &mut Criterion) {
    let (_dir, db, _) = common::database();
    let n = db.block_size();
    let mut group = c.benchmark_group("masks_pass");
    group.sample_size(10);
    group.throughput(Throughput::Elements(db.len()));
    let mut out = vec![0u64; COLUMNS * n];
    for (name, path) in named_paths() {
        group.bench_function(BenchmarkId::new("one_thread", name), |b| {
            b.iter(|| {
                for i in 0..db.block_count() {
                    let block = db.block(i).expect("block");
                    features::block_features(path, &block, &mut out);
                }
                black_box(&out);
            })
        });
    }
    // The pass as a reduction (a consumer that reads every column, then moves on), in
    // pieces that stay in cache, blocks spread over 1 and 2 threads.
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        for (name, path) in named_paths() {
            group.bench_function(BenchmarkId::new(format!("{name}_threads"), threads), |b| {
                b.iter(|| {
                    pool.install(|| {
                        features::par_for_each_rows(&db, path, |_, out, rows| {
                            black_box((out, rows));
                        })
                    })
                    .expect("pass")
                })
            });
        }
    }
    // The ceiling: read the columns the pass reads (pawns, rooks, kings, both colours).
    group.bench_function("plain_read_of_the_same_columns", |b| {
        b.iter(|| {
            let mut acc = 0u64;
            for i in 0..db.block_count() {
                let block = db.block(i).expect("block");
                for column in [block.pieces[0], block.pieces[3], block.pieces[5]]
                    .into_iter()
                    .chain(block.colors)
                {
                    acc ^= column.iter().fold(0, |a, b| a ^ b.0);
                }
            }
            black_box(acc)
        })
    });
    group.finish();
}

/// Random boards laid out as columns, for kernels on their own.
fn columns(count: usize) -> [Vec<u64>; 4] {
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pawns_mask = 0x00ff_ffff_ffff_ff00u64;
    [(); 4].map(|_| (0..count).map(|_| next() & next() & pawns_mask).collect())
}

/// Every path this CPU has, named for criterion: `scalar` (one lane at the CPU's level),
/// then `avx2_x4`, `avx512_x8` and so on.
fn named_paths() -> Vec<(String, Path)> {
    Path::every()
        .into_iter()
        .filter(|p| p.lanes() > 1 || p.level() == Path::native().level())
        .map(|p| {
            let name = if p.lanes() == 1 {
                "scalar".to_string()
            } else {
                format!("{}_x{}", p.level().name(), p.lanes())
            };
            (name, p)
        })
        .collect()
}

#[derive(Clone, Copy)]
enum Kernel {
    Structure,
    PassedDetail,
    KingDistanceSum,
    PawnMoves,
}

/// One pass of a kernel over the columns, on the dispatched lanes.
#[derive(Clone, Copy)]
struct Pass<'a> {
    kernel: Kernel,
    data: &'a [Vec<u64>; 4],
}

impl LanesFn for Pass<'_> {
    type Output = [u64; 8];
    #[inline(always)]
    fn call<L: Lanes>(self) -> [u64; 8] {
        let data = self.data;
        let count = data[0].len();
        let load = |column: &Vec<u64>, i: usize| L::load(&column[i..]);
        let mut acc = L::splat(0);
        for i in (0..count).step_by(L::WIDTH) {
            acc = match self.kernel {
                Kernel::Structure => {
                    let s = pawns::structure(Color::White, load(&data[0], i), load(&data[1], i));
                    acc ^ s.passed ^ s.backward ^ s.doubled ^ s.isolated ^ s.chain_base
                }
                Kernel::PassedDetail => {
                    let d = pawns::passed_detail(
                        Color::White,
                        load(&data[0], i),
                        load(&data[1], i) | load(&data[2], i),
                        load(&data[2], i),
                        load(&data[3], i),
                    );
                    acc ^ d.blocked ^ d.free_path ^ d.own_rook_behind ^ d.enemy_rook_behind
                }
                Kernel::KingDistanceSum => {
                    let king = load(&data[2], i) & L::splat(1 << 28);
                    acc.add(geometry::king_distance_sum(load(&data[0], i), king))
                }
                Kernel::PawnMoves => {
                    let (own, empty) = (load(&data[0], i), !load(&data[1], i));
                    acc ^ pawns::single_pushes(Color::White, own, empty)
                        ^ pawns::double_pushes(Color::White, own, empty)
                        ^ pawns::captures_west(Color::White, own, load(&data[3], i))
                        ^ pawns::captures_east(Color::White, own, load(&data[3], i))
                }
            };
        }
        acc.to_array()
    }
}

fn kernels(c: &mut Criterion) {
    let data = columns(1 << 16);
    for (name, path) in named_paths() {
        let mut group = c.benchmark_group(format!("kernel/{name}"));
        group.throughput(Throughput::Elements(data[0].len() as u64));
        for (label, kernel) in [
            ("structure", Kernel::Structure),
            ("passed_detail", Kernel::PassedDetail),
            ("king_distance_sum", Kernel::KingDistanceSum),
            ("pawn_moves", Kernel::PawnMoves),
        ] {
            let pass = Pass {
                kernel,
                data: &data,
            };
            group.bench_function(label, |b| b.iter(|| black_box(dispatch(path, pass))));
        }
        group.finish();
    }
}

criterion_group!(benches, masks_pass, kernels);
criterion_main!(benches);
