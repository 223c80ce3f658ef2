//! Pawn-structure features for whole position DBs: the kernels of `pawnstorm-kernels` run
//! over each block's columns, `L::WIDTH` positions at a time, blocks spread over threads.
//!
//! The same generic function computes one position (`u64` lanes, the scalar reference) and
//! four or eight (the vector lanes of [`pawnstorm_kernels::simd`]); only the lane type
//! differs.

use pawnstorm_kernels::geometry::{distance_sum, king_distance_planes};
use pawnstorm_kernels::pawns::passed_detail;
use pawnstorm_kernels::{Bitboard, Color, Lanes};
use std::ops::Range;

use bytemuck::Pod;
use pawnstorm_kernels::simd::{LanesFn, dispatch};
use rayon::prelude::*;

use crate::db::{Block, Database, DbError};
use crate::io::table::{ColumnType, TableSource};
use crate::position::board::PieceType;

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
    let board = Board {
        pawns: pieces[PieceType::Pawn.index()],
        rooks: pieces[PieceType::Rook.index()],
        kings: pieces[PieceType::King.index()],
        white: colors[0],
        black: colors[1],
    };
    write_features(board, |column, value| out[column] = value);
    out
}

/// The boards the features read (the other piece types play no part).
#[derive(Clone, Copy)]
struct Board<L> {
    pawns: L,
    rooks: L,
    kings: L,
    white: L,
    black: L,
}

/// [`position_features`] handed to `put(column, value)` one column at a time, so that a
/// driver can store each value where it belongs without an intermediate array.
#[inline(always)]
fn write_features<L: Lanes>(board: Board<L>, mut put: impl FnMut(usize, L)) {
    let Board {
        pawns,
        rooks,
        kings,
        white,
        black,
    } = board;
    // Both colours together: fills and neighbour sets are shared between them.
    let structures = pawnstorm_kernels::pawns::structure_both(pawns & white, pawns & black);
    let occupied = white | black;
    for (color, s, (main, more)) in [
        (Color::White, &structures[0], (0, 16)),
        (Color::Black, &structures[1], (6, 22)),
    ] {
        let (own, enemy) = match color {
            Color::White => (white, black),
            Color::Black => (black, white),
        };
        let d = passed_detail(color, s.passed, occupied, rooks & own, rooks & enemy);
        put(main, s.passed);
        put(main + 1, s.isolated);
        put(main + 2, s.doubled);
        put(main + 3, s.backward);
        put(main + 4, s.supported);
        put(main + 5, s.phalanx);
        put(more, s.connected);
        put(more + 1, s.chain_base);
        put(more + 2, d.blocked);
        put(more + 3, d.free_path);
        put(more + 4, d.own_rook_behind);
        put(more + 5, d.enemy_rook_behind);
    }
    let (white_passed, black_passed) = (structures[0].passed, structures[1].passed);
    // Bit-sliced distances: three (weighted) popcounts a sum instead of one per
    // dilation; each colour has one king, so its planes need no dilations either.
    let white_king = king_distance_planes(kings & white);
    let black_king = king_distance_planes(kings & black);
    put(12, distance_sum(white_passed, &white_king));
    put(13, distance_sum(white_passed, &black_king));
    put(14, distance_sum(black_passed, &black_king));
    put(15, distance_sum(black_passed, &white_king));
}

/// Which lanes (and instruction set) the batch code runs on: see
/// [`pawnstorm_kernels::simd`].
pub use pawnstorm_kernels::simd::Path;

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
    struct Features<'a, 'b> {
        block: &'a Block<'b>,
        rows: Range<usize>,
        out: &'a mut [u64],
    }
    impl LanesFn for Features<'_, '_> {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            rows_features_with::<L>(self.block, self.rows, self.out)
        }
    }
    dispatch(path, Features { block, rows, out });
}

#[inline(always)]
fn rows_features_with<L: Lanes + Pod>(block: &Block<'_>, rows: Range<usize>, out: &mut [u64]) {
    // The pieces of `par_for_each_rows` get a copy compiled for their constant stride:
    // then each of the 28 stores is one instruction at a fixed offset from one pointer,
    // rather than needing its column's address reloaded from the stack.
    if rows.len() == PIECE_ROWS {
        return rows_features_strided::<L>(block, rows, out, PIECE_ROWS);
    }
    // Longer ranges (whole blocks of 4096 rows) in pieces through a scratch that stays in
    // L1, each column of a piece then copied out in one run: written straight to columns
    // 32 KiB apart, the 28 stores of a step all fall in one set of the 8-way L1 and
    // evict each other. Whole blocks, 4 lanes, one loaded core, 5 interleaved runs:
    // median 18.2M positions/s straight to the columns, 27.1M through the scratch.
    let stride = rows.len();
    let mut scratch = [0u64; COLUMNS * PIECE_ROWS];
    let mut start = rows.start;
    while start + PIECE_ROWS <= rows.end {
        rows_features_strided::<L>(block, start..start + PIECE_ROWS, &mut scratch, PIECE_ROWS);
        let at = start - rows.start;
        for (column, values) in scratch.chunks_exact(PIECE_ROWS).enumerate() {
            out[column * stride + at..][..PIECE_ROWS].copy_from_slice(values);
        }
        start += PIECE_ROWS;
    }
    if start < rows.end {
        // The last rows (fewer than a piece, whole vectors of 8).
        let rest = rows.end - start;
        rows_features_strided::<L>(block, start..rows.end, &mut scratch, rest);
        let at = start - rows.start;
        for (column, values) in scratch.chunks_exact(rest).take(COLUMNS).enumerate() {
            out[column * stride + at..][..rest].copy_from_slice(values);
        }
    }
}

/// [`rows_features_with`] with the output's stride (= `rows.len()`) given apart.
#[inline(always)]
fn rows_features_strided<'a, L: Lanes + Pod>(
    block: &Block<'a>,
    rows: Range<usize>,
    out: &mut [u64],
    stride: usize,
) {
    assert_eq!(stride, rows.len());
    // Loads and stores go through raw pointers: with a bounds check on each of the 8 loads
    // and 28 stores of a step, the checks cost about as many instructions as the masks.
    assert_eq!(size_of::<L>(), 8 * L::WIDTH, "lanes are WIDTH packed u64");
    assert!(stride.is_multiple_of(L::WIDTH) && out.len() >= COLUMNS * stride);
    let column = |c: &'a [Bitboard]| -> &'a [u64] { &bytemuck::cast_slice(c)[rows.clone()] };
    let pawns = column(block.pieces[PieceType::Pawn.index()]);
    let rooks = column(block.pieces[PieceType::Rook.index()]);
    let kings = column(block.pieces[PieceType::King.index()]);
    let [white, black] = block.colors.map(column);
    let out = out.as_mut_ptr();
    for at in (0..stride).step_by(L::WIDTH) {
        // SAFETY: every column slice holds `stride` values (the range indexing above
        // checked it) and at + WIDTH <= stride; L is Pod, so any bytes are a valid L.
        let load = |column: &[u64]| unsafe { column.as_ptr().add(at).cast::<L>().read_unaligned() };
        let board = Board {
            pawns: load(pawns),
            rooks: load(rooks),
            kings: load(kings),
            white: load(white),
            black: load(black),
        };
        write_features(board, |column, value| {
            // SAFETY: column < COLUMNS and at + WIDTH <= stride, so the write lies within
            // the COLUMNS * stride values asserted above.
            unsafe {
                out.add(column * stride + at)
                    .cast::<L>()
                    .write_unaligned(value)
            }
        });
    }
}

/// Rows per piece of [`par_for_each_rows`]: the output of a piece (28 columns of 64 rows,
/// 14 KiB) stays in a core's L1 data cache (32 KiB here) while it is written and until its
/// consumer has read it. Measured on this Zen 3: 512 rows (112 KiB, written through to L2)
/// ran the pass at about a third of the speed of 64 or 128 rows; 256 in between.
pub const PIECE_ROWS: usize = 64;

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
