//! The check every block read gets, checksums or not: each row must be a position the
//! evaluator can take (the board rules of `Position::from_parts` and the side-to-move
//! byte), and padding rows must be empty boards. A bit flipped past the checksums (or with
//! them turned off) then gives an error naming the position, never a score computed from
//! boards that are no position.
//!
//! The rules are the ones import enforces, so no DB that pawnstorm wrote fails them:
//! piece-type boards disjoint, colour boards disjoint, the pieces exactly the coloured
//! squares, one king a side, no pawn on rank 1 or 8, at most 16 pieces a side (the
//! evaluation's material signature has 4 bits a piece type), side to move 0 or 1. Castling
//! and en passant are left to [`super::Block::record`]: the evaluation does not read them.

use pawnstorm_kernels::simd::{LevelFn, Path, dispatch_level};
use pawnstorm_kernels::{Bitboard, Color, Square};

use super::Block;
use crate::position::board::PositionError;

const BACK_RANKS: u64 = 0xff00_0000_0000_00ff;

/// Nonzero when exactly one of `bb`'s bits is not set (none or several). Branch-free:
/// `bb - 1` clears the lowest bit (so `bb & (bb - 1)` keeps the others), and has the top
/// bit set outside `bb` only when `bb` is 0.
#[inline(always)]
fn not_one(bb: u64) -> u64 {
    let less = bb.wrapping_sub(1);
    (bb & less) | ((less & !bb) >> 63)
}

/// Nonzero when the row breaks one of the board rules. Only ANDs, ORs, XORs, subtractions,
/// shifts, popcounts and compares, so a loop over rows vectorises.
#[inline(always)]
fn row_flags(pieces: [u64; 6], [white, black]: [u64; 2]) -> u64 {
    let mut seen = pieces[0];
    let mut overlap = 0;
    for &bb in &pieces[1..] {
        overlap |= seen & bb;
        seen |= bb;
    }
    let kings = pieces[5];
    overlap
        | (white & black)
        | (seen ^ (white | black))
        | not_one(kings & white)
        | not_one(kings & black)
        | (pieces[0] & BACK_RANKS)
        | (white.count_ones() > 16) as u64
        | (black.count_ones() > 16) as u64
}

/// The columns a check reads, as `u64`, cut to `rows`.
struct Boards<'a> {
    pieces: [&'a [u64]; 6],
    colors: [&'a [u64]; 2],
}

impl<'a> Boards<'a> {
    fn of(block: &Block<'a>, rows: std::ops::Range<usize>) -> Boards<'a> {
        let cut = |c: &'a [Bitboard]| -> &'a [u64] { bytemuck::cast_slice(&c[rows.clone()]) };
        Boards {
            pieces: [
                cut(block.pieces[0]),
                cut(block.pieces[1]),
                cut(block.pieces[2]),
                cut(block.pieces[3]),
                cut(block.pieces[4]),
                cut(block.pieces[5]),
            ],
            colors: [cut(block.colors[0]), cut(block.colors[1])],
        }
    }

    #[inline(always)]
    fn row(&self, i: usize) -> ([u64; 6], [u64; 2]) {
        let p = &self.pieces;
        (
            [p[0][i], p[1][i], p[2][i], p[3][i], p[4][i], p[5][i]],
            [self.colors[0][i], self.colors[1][i]],
        )
    }

    /// The OR of every row's flags: zero when every row is a position. Through
    /// [`dispatch`], so that the loop is compiled per SIMD level: it vectorises, popcounts
    /// included (VPOPCNTQ on AVX-512); compiled for plain x86-64 it took 4.8% of `features
    /// --kind nnue` against a `target-cpu=native` build's 1.3%.
    fn flags(&self) -> u64 {
        struct Flags<'a, 'b>(&'a Boards<'b>);
        impl LevelFn for Flags<'_, '_> {
            type Output = u64;
            #[inline(always)]
            fn call(self) -> u64 {
                self.0.flags_inlined()
            }
        }
        dispatch_level(Path::native(), Flags(self))
    }

    #[inline(always)]
    fn flags_inlined(&self) -> u64 {
        let n = self.pieces[0].len();
        // Every column cut to the same length, so that the loop has no bounds checks.
        let [p0, p1, p2, p3, p4, p5] = self.pieces.map(|c| &c[..n]);
        let [w, b] = self.colors.map(|c| &c[..n]);
        let mut acc = 0;
        for i in 0..n {
            acc |= row_flags([p0[i], p1[i], p2[i], p3[i], p4[i], p5[i]], [w[i], b[i]]);
        }
        acc
    }

    /// The OR of every board of every row: zero when all are empty.
    fn occupied(&self) -> u64 {
        let mut acc = 0;
        for column in self.pieces.iter().chain(&self.colors) {
            acc |= column.iter().fold(0, |a, &bb| a | bb);
        }
        acc
    }
}

/// What is wrong with row `row` of a block, in the order `Position::from_parts` checks, and
/// with its words; `None` when the row passes.
fn describe(pieces: [u64; 6], colors: [u64; 2], side_to_move: u8) -> Option<String> {
    let inconsistent = |what| Some(PositionError::InconsistentBoards(what).to_string());
    let mut seen = 0;
    for bb in pieces {
        if seen & bb != 0 {
            return inconsistent("a square holds two piece types");
        }
        seen |= bb;
    }
    let [white, black] = colors;
    if white & black != 0 {
        return inconsistent("a square holds both colours");
    }
    if seen != white | black {
        return inconsistent("the colour boards do not cover exactly the pieces");
    }
    for color in Color::ALL {
        let count = (pieces[5] & colors[color.index()]).count_ones();
        if count != 1 {
            return Some(PositionError::KingCount { color, count }.to_string());
        }
    }
    let stray = pieces[0] & BACK_RANKS;
    if stray != 0 {
        let square = Square::new(stray.trailing_zeros() as u8).expect("a bit of a u64");
        return Some(PositionError::PawnOnBackRank { square }.to_string());
    }
    for color in Color::ALL {
        let count = colors[color.index()].count_ones();
        if count > 16 {
            return Some(PositionError::TooManyPieces { color, count }.to_string());
        }
    }
    if side_to_move > 1 {
        return Some(format!("side to move byte is {side_to_move}, not 0 or 1"));
    }
    None
}

/// What a block's check found wrong.
pub(crate) enum Problem {
    /// Row `row` (of the block) is no position, for the reason given.
    Row(usize, String),
    /// A padding row (past the last position) holds pieces.
    Padding,
}

/// Checks every row of `block` before `block.len` and the padding after it. One pass of
/// ORs over the boards; only when it finds something is the first bad row looked for.
pub(crate) fn check_block(block: &Block<'_>) -> Result<(), Problem> {
    let n = block.pieces[0].len();
    let rows = Boards::of(block, 0..block.len);
    let side_to_move = &block.side_to_move[..block.len];
    let bad_side = side_to_move.iter().fold(0u8, |a, &s| a | s) & !1;
    if rows.flags() != 0 || bad_side != 0 {
        for (row, &side) in side_to_move.iter().enumerate() {
            let (pieces, colors) = rows.row(row);
            if row_flags(pieces, colors) != 0 || side > 1 {
                let reason = describe(pieces, colors, side)
                    .unwrap_or_else(|| "the boards are no position".to_string());
                return Err(Problem::Row(row, reason));
            }
        }
    }
    if block.len < n && Boards::of(block, block.len..n).occupied() != 0 {
        return Err(Problem::Padding);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The branch-free flags and the explained check agree, on boards made to break each
    /// rule and on random boards.
    #[test]
    fn flags_agree_with_the_explained_rules() {
        let start: ([u64; 6], [u64; 2]) = (
            [
                0x00ff_0000_0000_ff00,
                0x4200_0000_0000_0042,
                0x2400_0000_0000_0024,
                0x8100_0000_0000_0081,
                0x0800_0000_0000_0008,
                0x1000_0000_0000_0010,
            ],
            [0xffff, 0xffff_0000_0000_0000],
        );
        assert_eq!(row_flags(start.0, start.1), 0);
        assert_eq!(describe(start.0, start.1, 0), None);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut cases = 0;
        for trial in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (mut pieces, mut colors) = start;
            // One bit of one board flipped: every kind of damage a flip does.
            let board = (x % 8) as usize;
            let bit = 1u64 << ((x >> 8) % 64);
            if board < 6 {
                pieces[board] ^= bit;
            } else {
                colors[board - 6] ^= bit;
            }
            if trial % 2 == 0 {
                // Also a second flip, anywhere.
                let board = ((x >> 20) % 8) as usize;
                let bit = 1u64 << ((x >> 28) % 64);
                if board < 6 {
                    pieces[board] ^= bit;
                } else {
                    colors[board - 6] ^= bit;
                }
            }
            let flagged = row_flags(pieces, colors) != 0;
            let described = describe(pieces, colors, 0);
            assert_eq!(flagged, described.is_some(), "{pieces:x?} {colors:x?}");
            cases += flagged as u32;
        }
        assert!(cases > 10_000, "flips seldom flagged: {cases}");
        // Rules the flips above may not reach on their own.
        let mut kingless = start;
        kingless.0[5] &= !0x10;
        kingless.1[0] &= !0x10;
        assert!(row_flags(kingless.0, kingless.1) != 0);
        assert!(
            describe(kingless.0, kingless.1, 0)
                .unwrap()
                .contains("0 kings")
        );
        // The white queen on d1 turned into a pawn: only the back-rank rule is broken.
        let mut pawn = start;
        pawn.0[4] &= !(1 << 3);
        pawn.0[0] |= 1 << 3;
        assert!(row_flags(pawn.0, pawn.1) != 0);
        assert!(describe(pawn.0, pawn.1, 0).unwrap().contains("pawn on d1"));
        // A 17th white piece: a knight on e4.
        let mut crowded = start;
        crowded.0[1] |= 1 << 28;
        crowded.1[0] |= 1 << 28;
        assert!(row_flags(crowded.0, crowded.1) != 0);
        assert!(
            describe(crowded.0, crowded.1, 0)
                .unwrap()
                .contains("white has 17 pieces")
        );
        crowded.0[1] &= !2;
        crowded.1[0] &= !2;
        assert_eq!(row_flags(crowded.0, crowded.1), 0);
        assert!(
            describe(start.0, start.1, 2)
                .unwrap()
                .contains("side to move byte is 2")
        );
    }
}
