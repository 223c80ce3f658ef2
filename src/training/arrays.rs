//! Training features into `.npz`: evaluation-term coefficients (`--kind terms`), network
//! input planes (`--kind planes`), and the labels that travel with them. `docs/TRAINING.md`
//! lists every array.
//!
//! Each big array is one pass over the DB: blocks are computed in parallel, a window of them
//! at a time, and appended to the archive in DB order. The filters run first, in a pass of
//! their own, because an `.npy` header states its row count before its rows.

use rayon::prelude::*;

use crate::db::{Block, Database, NO_GAME, NO_PLY, NO_RESULT, NO_SCORE};
use crate::eval::Prepared;
use crate::eval::coefficients::for_each_counted;
use crate::eval::endgame::Rule;
use crate::eval::features::{self, COLUMNS as MASK_COLUMNS, is_distance_column};
use crate::eval::weights::Weights;
use crate::io::npz::NpzWriter;
pub use crate::training::selection::{Selection, select, select_range, traits_of_row};
use pawnstorm_kernels::Lanes;
use pawnstorm_kernels::simd::{LanesFn, dispatch};

mod nnue;
pub use nnue::{nnue_features, nnue_features_into, write_nnue};

/// Blocks computed at once per worker thread before they are written.
const BLOCKS_PER_THREAD: usize = 2;

/// The score label where it is unknown (as in the DB).
pub const UNKNOWN_SCORE: i32 = NO_SCORE;

/// One array as a pass over the selected rows: `fill` appends the bytes of one block's
/// selected rows and returns what else the caller keeps from it.
fn stream<T: Send>(
    db: &Database,
    selection: &Selection,
    npz: &mut NpzWriter,
    array: (&str, &str, &[u64]),
    fill: impl Fn(usize, &Block<'_>, &[u32], &mut Vec<u8>) -> T + Sync,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<Vec<T>> {
    let mut kept = Vec::with_capacity(db.block_count());
    stream_each(db, selection, npz, array, fill, progress, |extra| {
        kept.push(extra);
        Ok(())
    })?;
    Ok(kept)
}

/// [`stream`], handing each block's extra value to `each` in DB order as soon as its bytes
/// are written instead of keeping them all.
fn stream_each<T: Send>(
    db: &Database,
    selection: &Selection,
    npz: &mut NpzWriter,
    (name, descr, shape): (&str, &str, &[u64]),
    fill: impl Fn(usize, &Block<'_>, &[u32], &mut Vec<u8>) -> T + Sync,
    progress: &(dyn Fn(u64) + Sync),
    mut each: impl FnMut(T) -> anyhow::Result<()> + Send,
) -> anyhow::Result<()> {
    npz.start_array(name, descr, shape)?;
    let blocks = db.block_count();
    let window = rayon::current_num_threads() * BLOCKS_PER_THREAD;
    // Each block's bytes with their CRC-32, computed where they are made, into buffers
    // handed back by the write before last: two windows' buffers, allocated once and
    // reused. The memory held is then the same two windows whatever the timing; buffers
    // freed and allocated anew were held for as long as the write took, anywhere between
    // one window and two (a slow disk's writeback made it two, a fast one less).
    let compute = |first: usize, spare: Vec<Vec<u8>>| -> anyhow::Result<Vec<(Vec<u8>, u32, T)>> {
        let indices = first..(first + window).min(blocks);
        let mut buffers = spare;
        buffers.resize_with(indices.len(), Vec::new);
        indices
            .into_par_iter()
            .zip(buffers)
            .map(|(index, mut bytes)| -> anyhow::Result<(Vec<u8>, u32, T)> {
                let block = db.block(index)?;
                let rows = selection.rows_of(index, &block);
                bytes.clear();
                let extra = fill(index, &block, &rows, &mut bytes);
                progress(rows.len() as u64);
                let crc = crc32fast::hash(&bytes);
                Ok((bytes, crc, extra))
            })
            .collect()
    };
    // The next window is computed while this thread writes the last one (the copy into
    // the file is serial): the two took turns before. `join` keeps
    // both in the pool this runs in, and this thread joins the computing when it is done.
    let mut pieces = if blocks > 0 {
        compute(0, Vec::new())?
    } else {
        Vec::new()
    };
    let mut spare = Vec::new();
    let mut first = window;
    while !pieces.is_empty() {
        let write = || -> anyhow::Result<Vec<Vec<u8>>> {
            let mut written = Vec::with_capacity(pieces.len());
            for (bytes, crc, extra) in pieces {
                npz.write_with_crc(&bytes, crc)?;
                each(extra)?;
                written.push(bytes);
            }
            Ok(written)
        };
        let (written, next) = rayon::join(write, || {
            if first < blocks {
                compute(first, spare)
            } else {
                Ok(Vec::new())
            }
        });
        spare = written?;
        pieces = next?;
        first += window;
    }
    Ok(())
}

/// The per-row extras of a terms pass, spilled to anonymous temporary files as the blocks
/// are done (a few bytes a position, but held whole for 10M positions they were 165 MB),
/// then copied into the archive. The files have no name: nothing is left behind.
struct ExtrasSpill {
    files: [std::fs::File; 6],
}

/// The spilled arrays: name and numpy type, in the order of [`ExtrasSpill::files`].
const EXTRAS: [(&str, &str); 6] = [
    ("phase", "|u1"),
    ("scale", "|u1"),
    ("scale_white", "|u1"),
    ("scale_black", "|u1"),
    ("rule", "|u1"),
    ("rule_score", "<i4"),
];

impl ExtrasSpill {
    fn new() -> std::io::Result<ExtrasSpill> {
        let file = tempfile::tempfile;
        Ok(ExtrasSpill {
            files: [file()?, file()?, file()?, file()?, file()?, file()?],
        })
    }

    fn append(&mut self, extras: &TermExtras) -> std::io::Result<()> {
        use std::io::Write;
        let parts: [&[u8]; 6] = [
            &extras.phase,
            &extras.scale,
            &extras.scale_white,
            &extras.scale_black,
            &extras.rule,
            bytemuck::cast_slice(&extras.rule_score),
        ];
        for (file, bytes) in self.files.iter_mut().zip(parts) {
            file.write_all(bytes)?;
        }
        Ok(())
    }

    fn write_to(self, npz: &mut NpzWriter, n: u64) -> anyhow::Result<()> {
        use std::io::{Read, Seek};
        let mut chunk = vec![0u8; 1 << 20];
        for (mut file, (name, descr)) in self.files.into_iter().zip(EXTRAS) {
            npz.start_array(name, descr, &[n])?;
            file.rewind()?;
            loop {
                let got = file.read(&mut chunk)?;
                if got == 0 {
                    break;
                }
                npz.write(&chunk[..got])?;
            }
        }
        Ok(())
    }
}

/// The `rule` array's codes.
pub fn rule_code(rule: Rule) -> u8 {
    crate::eval::batch::rule_code(rule) as u8
}

/// The small per-position arrays of a terms pass.
#[derive(Default)]
struct TermExtras {
    phase: Vec<u8>,
    scale: Vec<u8>,
    scale_white: Vec<u8>,
    scale_black: Vec<u8>,
    rule: Vec<u8>,
    rule_score: Vec<i32>,
    /// Sparse form: non-zeros per row.
    nonzeros: Vec<u32>,
}

/// The coefficients of `rows` of `block`, `L::WIDTH` positions at a time: dense rows into
/// `dense` (`rows.len()` x W zeros), or, when `sparse`, the non-zeros appended to `indices`
/// and `values` (with per-row counts in the extras).
#[inline(always)]
fn block_terms<L: Lanes>(
    prepared: &Prepared,
    block: &Block<'_>,
    rows: &[u32],
    sparse: bool,
    dense: &mut [i16],
    indices: &mut Vec<i32>,
    values: &mut Vec<i16>,
) -> TermExtras {
    let w = Weights::COUNT;
    let mut extras = TermExtras::default();
    let boards_of = |&row: &u32| block.boards(row as usize);
    for_each_counted::<L, u32>(prepared, rows, boards_of, |i, counts, e, eg| {
        extras.phase.push(e.phase);
        // The scale the file's weights pick: by the sign of their eg sum.
        extras
            .scale
            .push(if eg >= 0 { e.scale[0] } else { e.scale[1] });
        extras.scale_white.push(e.scale[0]);
        extras.scale_black.push(e.scale[1]);
        extras.rule.push(rule_code(e.rule));
        extras.rule_score.push(e.rule_score);
        if sparse {
            let before = indices.len();
            for (place, &count) in counts.iter().enumerate() {
                if count != 0 {
                    indices.push(place as i32);
                    values.push(count);
                }
            }
            extras.nonzeros.push((indices.len() - before) as u32);
        } else {
            dense[i * w..(i + 1) * w].copy_from_slice(counts);
        }
    });
    extras
}

/// [`block_terms`] on the widest lanes `path` allows.
#[allow(clippy::too_many_arguments)]
fn block_terms_on(
    path: features::Path,
    prepared: &Prepared,
    block: &Block<'_>,
    rows: &[u32],
    sparse: bool,
    dense: &mut [i16],
    indices: &mut Vec<i32>,
    values: &mut Vec<i16>,
) -> TermExtras {
    struct Terms<'a, 'b> {
        prepared: &'a Prepared,
        block: &'a Block<'b>,
        rows: &'a [u32],
        sparse: bool,
        dense: &'a mut [i16],
        indices: &'a mut Vec<i32>,
        values: &'a mut Vec<i16>,
    }
    impl LanesFn for Terms<'_, '_> {
        type Output = TermExtras;
        #[inline(always)]
        fn call<L: Lanes>(self) -> TermExtras {
            block_terms::<L>(
                self.prepared,
                self.block,
                self.rows,
                self.sparse,
                self.dense,
                self.indices,
                self.values,
            )
        }
    }
    dispatch(
        path,
        Terms {
            prepared,
            block,
            rows,
            sparse,
            dense,
            indices,
            values,
        },
    )
}

/// How `--kind terms` stores the coefficients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `coefficients`: (N, W) int16.
    Dense,
    /// `indptr` (N + 1) int64, `indices` int32, `values` int16: scipy's CSR.
    Sparse,
}

/// Writes the terms arrays (coefficients, phase, scales, rules, weights and their names).
pub fn write_terms(
    db: &Database,
    selection: &Selection,
    prepared: &Prepared,
    layout: Layout,
    path: features::Path,
    npz: &mut NpzWriter,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<()> {
    let w = Weights::COUNT;
    let values = prepared.weights.values();
    let n = selection.count;
    let compute =
        |block: &Block<'_>, rows: &[u32], out: &mut Vec<u8>, sparse: Option<&mut Vec<u8>>| {
            let (mut indices, mut nonzero_values) = (Vec::new(), Vec::new());
            let Some(values_out) = sparse else {
                // Dense rows are counted in place, in the output bytes (glibc's allocations are
                // 16-byte aligned; a misaligned one would go through a copy).
                let start = out.len();
                out.resize(start + rows.len() * w * 2, 0);
                return match bytemuck::try_cast_slice_mut::<u8, i16>(&mut out[start..]) {
                    Ok(dense) => block_terms_on(
                        path,
                        prepared,
                        block,
                        rows,
                        false,
                        dense,
                        &mut indices,
                        &mut nonzero_values,
                    ),
                    Err(_) => {
                        let mut dense = vec![0i16; rows.len() * w];
                        let extras = block_terms_on(
                            path,
                            prepared,
                            block,
                            rows,
                            false,
                            &mut dense,
                            &mut indices,
                            &mut nonzero_values,
                        );
                        out[start..].copy_from_slice(bytemuck::cast_slice(&dense));
                        extras
                    }
                };
            };
            let extras = block_terms_on(
                path,
                prepared,
                block,
                rows,
                true,
                &mut [],
                &mut indices,
                &mut nonzero_values,
            );
            out.extend_from_slice(bytemuck::cast_slice(&indices));
            values_out.extend_from_slice(bytemuck::cast_slice(&nonzero_values));
            extras
        };
    let mut spill = ExtrasSpill::new()?;
    match layout {
        Layout::Dense => stream_each(
            db,
            selection,
            npz,
            ("coefficients", "<i2", &[n, w as u64]),
            |_, block, rows, out| compute(block, rows, out, None),
            progress,
            |extras| Ok(spill.append(&extras)?),
        )?,
        Layout::Sparse => {
            // The non-zero count is known only once every row is done: the sparse arrays are
            // gathered in memory (about 70 non-zeros, 420 bytes, a position), then written.
            let window = rayon::current_num_threads() * BLOCKS_PER_THREAD;
            let mut gathered = Vec::with_capacity(db.block_count());
            let mut first = 0;
            while first < db.block_count() {
                let last = (first + window).min(db.block_count());
                let pieces: Vec<(TermExtras, Vec<u8>, Vec<u8>)> = (first..last)
                    .into_par_iter()
                    .map(|index| -> anyhow::Result<_> {
                        let block = db.block(index)?;
                        let rows = selection.rows_of(index, &block);
                        let (mut indices, mut nonzero_values) = (Vec::new(), Vec::new());
                        let extras =
                            compute(&block, &rows, &mut indices, Some(&mut nonzero_values));
                        progress(rows.len() as u64);
                        Ok((extras, indices, nonzero_values))
                    })
                    .collect::<anyhow::Result<_>>()?;
                gathered.extend(pieces);
                first = last;
            }
            let nnz: u64 = gathered.iter().map(|(_, i, _)| i.len() as u64 / 4).sum();
            let mut indptr = Vec::with_capacity(n as usize + 1);
            indptr.push(0i64);
            for (extras, _, _) in &gathered {
                for &count in &extras.nonzeros {
                    let last = *indptr.last().unwrap_or(&0);
                    indptr.push(last + count as i64);
                }
            }
            npz.array("indptr", "<i8", &[n + 1], &indptr)?;
            npz.start_array("indices", "<i4", &[nnz])?;
            for (_, indices, _) in &gathered {
                npz.write(indices)?;
            }
            npz.start_array("values", "<i2", &[nnz])?;
            for (e, _, nonzero_values) in gathered {
                npz.write(&nonzero_values)?;
                spill.append(&e)?;
            }
            npz.array("shape", "<i8", &[2], &[n as i64, w as i64])?;
        }
    }
    spill.write_to(npz, n)?;
    let flat: Vec<i32> = values.iter().flat_map(|v| [v.mg, v.eg]).collect();
    npz.array("weights", "<i4", &[w as u64, 2], &flat)?;
    npz.strings("weight_names", &Weights::names())?;
    Ok(())
}

/// The 12 piece boards of a position: P N B R Q K of White, then of Black.
#[inline(always)]
fn piece_planes(block: &Block<'_>, row: usize) -> [u64; 12] {
    // Written out: as a loop, the compiler kept it (with a division by 6 and two bounds
    // checks a board) where the caller was large.
    let [p, n, b, r, q, k] = block.pieces;
    let [p, n, b, r, q, k] = [p[row].0, n[row].0, b[row].0, r[row].0, q[row].0, k[row].0];
    let (white, black) = (block.colors[0][row].0, block.colors[1][row].0);
    [
        p & white,
        n & white,
        b & white,
        r & white,
        q & white,
        k & white,
        p & black,
        n & black,
        b & black,
        r & black,
        q & black,
        k & black,
    ]
}

/// Each bit of `board` as one byte, a1 first (rank by rank): an 8 x 8 plane, `[rank][file]`.
fn unpack(board: u64, out: &mut Vec<u8>) {
    for square in 0..64 {
        out.push((board >> square & 1) as u8);
    }
}

/// The pawn-structure mask columns (the king-distance sums are not planes).
pub fn mask_plane_names() -> Vec<String> {
    features::column_names()
        .into_iter()
        .enumerate()
        .filter(|(c, _)| !is_distance_column(*c))
        .map(|(_, name)| name)
        .collect()
}

/// Writes `planes` ((N, 12) u64, or (N, 12, 8, 8) u8 unpacked), `masks` (the pawn-structure
/// masks, same form) and `mask_names`.
pub fn write_planes(
    db: &Database,
    selection: &Selection,
    unpacked: bool,
    path: features::Path,
    npz: &mut NpzWriter,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<()> {
    let n = selection.count;
    let (descr, shape) = if unpacked {
        ("|u1", vec![n, 12, 8, 8])
    } else {
        ("<u8", vec![n, 12])
    };
    stream(
        db,
        selection,
        npz,
        ("planes", descr, &shape),
        |_, block, rows, out| {
            out.reserve(rows.len() * if unpacked { 768 } else { 96 });
            for &row in rows {
                let planes = piece_planes(block, row as usize);
                if unpacked {
                    for plane in planes {
                        unpack(plane, out);
                    }
                } else {
                    out.extend_from_slice(bytemuck::cast_slice(&planes));
                }
            }
        },
        &|_| {},
    )?;
    let masks: Vec<usize> = (0..MASK_COLUMNS)
        .filter(|c| !is_distance_column(*c))
        .collect();
    let m = masks.len() as u64;
    let (descr, shape) = if unpacked {
        ("|u1", vec![n, m, 8, 8])
    } else {
        ("<u8", vec![n, m])
    };
    stream(
        db,
        selection,
        npz,
        ("masks", descr, &shape),
        |_, block, rows, out| {
            let size = block.pieces[0].len();
            let mut columns = vec![0u64; size * MASK_COLUMNS];
            features::block_features(path, block, &mut columns);
            for &row in rows {
                for &c in &masks {
                    let mask = columns[c * size + row as usize];
                    if unpacked {
                        unpack(mask, out);
                    } else {
                        out.extend_from_slice(&mask.to_le_bytes());
                    }
                }
            }
        },
        progress,
    )?;
    npz.strings("mask_names", &mask_plane_names())?;
    Ok(())
}

/// Whose point of view `score` and `result` take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pov {
    White,
    /// The side to move's, as network trainers feed them.
    SideToMove,
}

/// Writes `index` (the DB row), `stm` (0 White, 1 Black), `result` (float32: 1, 0.5, 0 from
/// `pov`'s side, NaN unknown), `score` (int32 centipawns, `pov`'s side, [`UNKNOWN_SCORE`]
/// unknown), `game` (int64, -1 unknown) and `ply` (int32, -1 unknown).
pub fn write_labels(
    db: &Database,
    selection: &Selection,
    pov: Pov,
    npz: &mut NpzWriter,
) -> anyhow::Result<()> {
    let n = selection.count;
    let block_size = db.block_size() as u64;
    /// One label array: its name, numpy type, and the bytes of row `r` of `block` (the
    /// block's index given).
    type Fill = dyn Fn(u64, &Block<'_>, usize, &mut Vec<u8>) + Sync;
    // Black's view of a White's-view label: turned round.
    let turn =
        move |block: &Block<'_>, r: usize| pov == Pov::SideToMove && block.side_to_move[r] != 0;
    let arrays: [(&str, &str, Box<Fill>); 6] = [
        (
            "index",
            "<u8",
            Box::new(move |index, _, r, out| {
                out.extend_from_slice(&(index * block_size + r as u64).to_le_bytes())
            }),
        ),
        (
            "stm",
            "|u1",
            Box::new(|_, block, r, out| out.push(block.side_to_move[r])),
        ),
        (
            "result",
            "<f4",
            Box::new(move |_, block, r, out| {
                let turn = turn(block, r);
                let result: f32 = match block.result.map(|c| c[r]) {
                    Some(0) => 0.5,
                    Some(1) => (!turn) as u8 as f32,
                    Some(-1) => turn as u8 as f32,
                    Some(NO_RESULT) | None | Some(_) => f32::NAN,
                };
                out.extend_from_slice(&result.to_le_bytes());
            }),
        ),
        (
            "score",
            "<i4",
            Box::new(move |_, block, r, out| {
                let score = match block.score.map(|c| c[r]) {
                    Some(score) if score != UNKNOWN_SCORE && turn(block, r) => -score,
                    Some(score) => score,
                    None => UNKNOWN_SCORE,
                };
                out.extend_from_slice(&score.to_le_bytes());
            }),
        ),
        (
            "game",
            "<i8",
            Box::new(|_, block, r, out| {
                let game: i64 = match block.game_id.map(|c| c[r]) {
                    Some(NO_GAME) | None => -1,
                    Some(id) => id as i64,
                };
                out.extend_from_slice(&game.to_le_bytes());
            }),
        ),
        (
            "ply",
            "<i4",
            Box::new(|_, block, r, out| {
                let ply: i32 = match block.ply.map(|c| c[r]) {
                    Some(NO_PLY) | None => -1,
                    Some(ply) => ply as i32,
                };
                out.extend_from_slice(&ply.to_le_bytes());
            }),
        ),
    ];
    // One pass per array, each streamed as it is computed: the labels are a few bytes a
    // position, but held whole for 10M positions they were hundreds of megabytes.
    for (name, descr, fill) in &arrays {
        stream(
            db,
            selection,
            npz,
            (name, descr, &[n]),
            |index, block, rows, out| {
                for &row in rows {
                    fill(index as u64, block, row as usize, out);
                }
            },
            &|_| {},
        )?;
    }
    Ok(())
}
