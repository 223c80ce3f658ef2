//! Pawn-structure features for whole position DBs: the kernels of `pawnstorm-kernels` run
//! over each block's columns, `L::WIDTH` positions at a time, blocks spread over threads.
//!
//! The same generic function computes one position (`u64` lanes, the scalar reference) and
//! eight (`u64x8`); only the lane type differs.

use pawnstorm_kernels::geometry::{distance_planes, distance_sum, king_reach};
use pawnstorm_kernels::pawns::{passed_detail, structure};
use pawnstorm_kernels::{Color, Lanes};
use std::ops::Range;

use rayon::prelude::*;
use wide::{u64x4, u64x8};

use crate::board::PieceType;
use crate::db::{Block, Database, DbError};
use crate::table::{ColumnType, TableSource};

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
    let mut out = [L::splat(0); COLUMNS];
    let white_passed = color_features(Color::White, &pieces, colors, &mut out, 0, 16);
    let black_passed = color_features(Color::Black, &pieces, colors, &mut out, 6, 22);
    let [white, black] = colors;
    let kings = pieces[PieceType::King.index()];
    // Bit-sliced distances: three popcounts a sum instead of one per dilation.
    let white_king = distance_planes(&king_reach(kings & white));
    let black_king = distance_planes(&king_reach(kings & black));
    out[12] = distance_sum(white_passed, &white_king);
    out[13] = distance_sum(white_passed, &black_king);
    out[14] = distance_sum(black_passed, &black_king);
    out[15] = distance_sum(black_passed, &white_king);
    out
}

/// One colour's masks, written straight into their columns (no intermediate arrays:
/// moving them cost more than computing them). Returns the passed pawns.
#[inline(always)]
fn color_features<L: Lanes>(
    color: Color,
    pieces: &[L; 6],
    [white, black]: [L; 2],
    out: &mut [L; COLUMNS],
    main: usize,
    more: usize,
) -> L {
    let pawns = pieces[PieceType::Pawn.index()];
    let rooks = pieces[PieceType::Rook.index()];
    let (own, enemy) = match color {
        Color::White => (white, black),
        Color::Black => (black, white),
    };
    let s = structure(color, pawns & own, pawns & enemy);
    let d = passed_detail(color, s.passed, white | black, rooks & own, rooks & enemy);
    out[main] = s.passed;
    out[main + 1] = s.isolated;
    out[main + 2] = s.doubled;
    out[main + 3] = s.backward;
    out[main + 4] = s.supported;
    out[main + 5] = s.phalanx;
    out[more] = s.connected;
    out[more + 1] = s.chain_base;
    out[more + 2] = d.blocked;
    out[more + 3] = d.free_path;
    out[more + 4] = d.own_rook_behind;
    out[more + 5] = d.enemy_rook_behind;
    s.passed
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
    /// The widest lanes the build's vectors hold in one register: 8 with AVX-512, else 4
    /// (on AVX2 an 8-lane value takes two registers, and code with many live values, like
    /// the evaluation, spills).
    pub fn native() -> Path {
        if cfg!(all(target_arch = "x86_64", target_feature = "avx512f")) {
            Path::Simd8
        } else {
            Path::Simd4
        }
    }

    /// A name for summaries.
    pub fn describe(self) -> String {
        match self {
            Path::Scalar => "scalar (1 x u64)".to_string(),
            Path::Simd4 => format!(
                "SIMD 4 x u64 ({})",
                if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
                    "AVX2"
                } else {
                    "portable"
                }
            ),
            Path::Simd8 => format!("SIMD {}", pawnstorm_kernels::lanes::simd_path()),
        }
    }
}

/// Computes the features of one block into `out`: column `c` of row `r` at
/// `out[c * block_size + r]`. Padding rows are computed too (they are empty boards).
pub fn block_features(path: Path, block: &Block<'_>, out: &mut [u64]) {
    let n = block.pieces[0].len();
    rows_features(path, block, 0..n, out);
}

/// The batch drivers take rows in whole vectors of the widest lanes (8), and an output with
/// room for `width` values a row.
pub(crate) fn check_rows(rows: &Range<usize>, out_len: usize, width: usize) {
    assert!(
        rows.start.is_multiple_of(8) && rows.end.is_multiple_of(8),
        "rows in whole vectors"
    );
    assert!(
        out_len >= rows.len() * width,
        "output too small for the rows"
    );
}

/// Computes the features of rows `rows` of a block into `out`: column `c` of row
/// `rows.start + r` at `out[c * rows.len() + r]`. The range must start and end on a
/// multiple of 8 (blocks hold a power of two of at least 64 rows).
pub fn rows_features(path: Path, block: &Block<'_>, rows: Range<usize>, out: &mut [u64]) {
    check_rows(&rows, out.len(), COLUMNS);
    match path {
        Path::Scalar => rows_features_with::<u64>(block, rows, out),
        Path::Simd4 => rows_features_with::<u64x4>(block, rows, out),
        Path::Simd8 => rows_features_with::<u64x8>(block, rows, out),
    }
}

fn rows_features_with<L: Lanes>(block: &Block<'_>, rows: Range<usize>, out: &mut [u64]) {
    let stride = rows.len();
    let pieces: [&[u64]; 6] = block.pieces.map(bytemuck::cast_slice);
    let colors: [&[u64]; 2] = block.colors.map(bytemuck::cast_slice);
    for row in rows.clone().step_by(L::WIDTH) {
        let features = position_features(
            pieces.map(|c| L::load(&c[row..])),
            colors.map(|c| L::load(&c[row..])),
        );
        let at = row - rows.start;
        for (column, value) in features.iter().enumerate() {
            value.store(&mut out[column * stride + at..]);
        }
    }
}

/// Rows per piece of [`par_for_each_rows`]: the output of a piece (28 columns of 512
/// rows, 112 KiB) stays in a core's L2 cache until its consumer has read it.
pub const PIECE_ROWS: usize = 512;

/// Runs `sink` on the features of every block of `db`, a piece of rows at a time, blocks
/// spread over the rayon pool and in no particular order: for consumers that reduce the
/// features (counts, sums, scores) rather than store every column. `sink` gets the index
/// of the first row, the features (column-major, stride = rows) and the number of rows.
pub fn par_for_each_rows(
    db: &Database,
    path: Path,
    sink: impl Fn(u64, &[u64], usize) + Sync,
) -> Result<(), DbError> {
    let n = db.block_size();
    let piece = PIECE_ROWS.min(n);
    (0..db.block_count()).into_par_iter().try_for_each_init(
        || vec![0u64; COLUMNS * piece],
        |out, index| {
            let block = db.block(index)?;
            for start in (0..block.len).step_by(piece) {
                let rows = start..(start + piece).min(n);
                rows_features(path, &block, rows, out);
                let valid = (block.len - start).min(piece);
                sink((index * n + start) as u64, out, valid);
            }
            Ok(())
        },
    )
}

/// The masks of every position of a DB as a table: the index, then [`COLUMNS`]
/// values; one piece a DB block.
pub struct MaskTable<'a> {
    pub db: &'a Database,
    pub path: Path,
}

impl MaskTable<'_> {
    /// The table's columns: `index`, then [`column_names`] (distances as `u16`).
    pub fn columns(&self) -> Vec<(String, ColumnType)> {
        let mut columns = vec![("index".to_string(), ColumnType::U64)];
        columns.extend(column_names().into_iter().enumerate().map(|(i, name)| {
            let kind = if is_distance_column(i) {
                ColumnType::U16
            } else {
                ColumnType::U64
            };
            (name, kind)
        }));
        columns
    }
}

impl TableSource for MaskTable<'_> {
    /// The block's features (column-major, stride = block size), and the index of its first
    /// position.
    type Scratch = (Vec<u64>, u64);
    type Error = anyhow::Error;

    fn scratch(&self) -> Self::Scratch {
        (vec![0; COLUMNS * self.db.block_size()], 0)
    }

    fn compute(&self, (out, first): &mut Self::Scratch, piece: usize) -> anyhow::Result<usize> {
        let block = self.db.block(piece)?;
        block_features(self.path, &block, out);
        *first = (piece * self.db.block_size()) as u64;
        Ok(block.len)
    }

    #[inline]
    fn value(&self, (out, first): &Self::Scratch, row: usize, column: usize) -> u64 {
        match column {
            0 => first + row as u64,
            c => out[(c - 1) * self.db.block_size() + row],
        }
    }
}
