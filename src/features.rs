//! Pawn-structure features for whole position DBs: the kernels of `pawnstorm-kernels` run
//! over each block's columns, `L::WIDTH` positions at a time, blocks spread over threads.
//!
//! The same generic function computes one position (`u64` lanes, the scalar reference) and
//! eight (`u64x8`); only the lane type differs.

use pawnstorm_kernels::geometry::king_distance_sum;
use pawnstorm_kernels::pawns::{passed_detail, structure};
use pawnstorm_kernels::{Color, Lanes};
use rayon::prelude::*;
use wide::{u64x4, u64x8};

use crate::db::{Block, Database, DbError};

/// Mask columns per colour, in output order (the first six are the fixed order).
pub const COLOR_MASKS: [&str; 12] = [
    "passed",
    "isolated",
    "doubled",
    "backward",
    "supported",
    "phalanx",
    "connected",
    "chain_base",
    "passed_blocked",
    "passed_free",
    "passed_own_rook_behind",
    "passed_enemy_rook_behind",
];

/// King-distance sums, in output order.
pub const KING_DISTANCES: [&str; 4] = [
    "white_kdist_own",
    "white_kdist_their",
    "black_kdist_own",
    "black_kdist_their",
];

/// How many values a position gets (all but `index`).
pub const COLUMNS: usize = 2 * COLOR_MASKS.len() + KING_DISTANCES.len();

/// The column names after `index`, in output order: the six fixed masks of each colour,
/// the king distances, then the further masks of each colour.
pub fn column_names() -> Vec<String> {
    let mut names = Vec::with_capacity(COLUMNS);
    for color in ["white", "black"] {
        for mask in &COLOR_MASKS[..6] {
            names.push(format!("{color}_{mask}"));
        }
    }
    names.extend(KING_DISTANCES.iter().map(|s| s.to_string()));
    for color in ["white", "black"] {
        for mask in &COLOR_MASKS[6..] {
            names.push(format!("{color}_{mask}"));
        }
    }
    names
}

/// Whether a column holds a king-distance sum (small) rather than a mask (64 bits).
pub fn is_distance_column(column: usize) -> bool {
    (12..16).contains(&column)
}

/// Every feature of `L::WIDTH` positions given as piece-type and colour boards, in the
/// order of [`column_names`].
#[inline(always)]
pub fn position_features<L: Lanes>(pieces: [L; 6], colors: [L; 2]) -> [L; COLUMNS] {
    let [pawns, _, _, rooks, _, kings] = pieces;
    let [white, black] = colors;
    let occupied = white | black;
    let per_color = |color: Color| {
        let (own, enemy) = match color {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        let s = structure(color, pawns & own, pawns & enemy);
        let d = passed_detail(color, s.passed, occupied, rooks & own, rooks & enemy);
        let own_distance = king_distance_sum(s.passed, kings & own);
        let their_distance = king_distance_sum(s.passed, kings & enemy);
        (
            [
                s.passed,
                s.isolated,
                s.doubled,
                s.backward,
                s.supported,
                s.phalanx,
            ],
            [
                s.connected,
                s.chain_base,
                d.blocked,
                d.free_path,
                d.own_rook_behind,
                d.enemy_rook_behind,
            ],
            [own_distance, their_distance],
        )
    };
    let (white_main, white_more, white_distance) = per_color(Color::White);
    let (black_main, black_more, black_distance) = per_color(Color::Black);
    let mut out = [L::splat(0); COLUMNS];
    out[..6].copy_from_slice(&white_main);
    out[6..12].copy_from_slice(&black_main);
    out[12..14].copy_from_slice(&white_distance);
    out[14..16].copy_from_slice(&black_distance);
    out[16..22].copy_from_slice(&white_more);
    out[22..28].copy_from_slice(&black_more);
    out
}

/// Which lanes the batch code runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Path {
    /// One position at a time (`u64`): the reference.
    Scalar,
    /// Four at a time (`u64x4`).
    Simd4,
    /// Eight at a time (`u64x8`): AVX-512 where the build has it.
    Simd8,
}

impl Path {
    /// A name for summaries.
    pub fn describe(self) -> String {
        match self {
            Path::Scalar => "scalar (1 x u64)".to_string(),
            Path::Simd4 => "SIMD 4 x u64".to_string(),
            Path::Simd8 => format!("SIMD {}", pawnstorm_kernels::lanes::simd_path()),
        }
    }
}

/// Computes the features of one block into `out`: column `c` of row `r` at
/// `out[c * block_size + r]`. Padding rows are computed too (they are empty boards).
pub fn block_features(path: Path, block: &Block<'_>, out: &mut [u64]) {
    match path {
        Path::Scalar => block_features_with::<u64>(block, out),
        Path::Simd4 => block_features_with::<u64x4>(block, out),
        Path::Simd8 => block_features_with::<u64x8>(block, out),
    }
}

fn block_features_with<L: Lanes>(block: &Block<'_>, out: &mut [u64]) {
    let n = block.pieces[0].len();
    assert!(out.len() >= COLUMNS * n, "output too small for a block");
    let pieces: [&[u64]; 6] = block.pieces.map(bytemuck::cast_slice);
    let colors: [&[u64]; 2] = block.colors.map(bytemuck::cast_slice);
    // Blocks hold a power of two of at least 64 rows: whole vectors, no remainder.
    for row in (0..n).step_by(L::WIDTH) {
        let features = position_features(
            pieces.map(|c| L::load(&c[row..])),
            colors.map(|c| L::load(&c[row..])),
        );
        for (column, value) in features.into_iter().enumerate() {
            value.store(&mut out[column * n + row..]);
        }
    }
}

/// Runs `sink` on the features of every block of `db`, in block order, computing up to
/// `chunk` blocks at a time on the rayon pool.
pub fn for_each_block(
    db: &Database,
    path: Path,
    chunk: usize,
    mut sink: impl FnMut(usize, &[u64], usize) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let n = db.block_size();
    let blocks = db.block_count();
    let mut buffers: Vec<Vec<u64>> = Vec::new();
    for first in (0..blocks).step_by(chunk.max(1)) {
        let last = (first + chunk.max(1)).min(blocks);
        buffers.resize_with(last - first, || vec![0; COLUMNS * n]);
        let lens: Vec<Result<usize, DbError>> = buffers
            .par_iter_mut()
            .enumerate()
            .map(|(i, buffer)| {
                let block = db.block(first + i)?;
                block_features(path, &block, buffer);
                Ok(block.len)
            })
            .collect();
        for (i, len) in lens.into_iter().enumerate() {
            sink(first + i, &buffers[i], len?)?;
        }
    }
    Ok(())
}
