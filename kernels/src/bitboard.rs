use std::fmt;
use std::ops::{BitAnd, BitAndAssign, BitOr, BitOrAssign, BitXor, BitXorAssign, Not};

use bytemuck::{Pod, Zeroable};

use crate::{File, Rank, Square};

/// A set of squares, one bit a square (a1 = bit 0).
///
/// `#[repr(transparent)]` and `Pod`, so a column of a position database can be read as
/// `&[Bitboard]` with no copy.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash, Pod, Zeroable)]
#[repr(transparent)]
pub struct Bitboard(pub u64);

impl Bitboard {
    /// No squares.
    pub const EMPTY: Bitboard = Bitboard(0);
    /// All 64 squares.
    pub const FULL: Bitboard = Bitboard(!0);
    /// The a-file.
    pub const FILE_A: Bitboard = Bitboard(0x0101_0101_0101_0101);
    /// The h-file.
    pub const FILE_H: Bitboard = Bitboard(0x8080_8080_8080_8080);
    /// Rank 1.
    pub const RANK_1: Bitboard = Bitboard(0xff);
    /// Rank 8.
    pub const RANK_8: Bitboard = Bitboard(0xff << 56);

    /// The one square `sq`.
    #[inline]
    pub const fn from_square(sq: Square) -> Bitboard {
        Bitboard(1 << sq.index())
    }
    /// Every square of this file.
    #[inline]
    pub const fn file(file: File) -> Bitboard {
        Bitboard(Self::FILE_A.0 << file.index())
    }
    /// Every square of this rank.
    #[inline]
    pub const fn rank(rank: Rank) -> Bitboard {
        Bitboard(Self::RANK_1.0 << (8 * rank.index()))
    }
    /// Whether `sq` is in the set.
    #[inline]
    pub const fn contains(self, sq: Square) -> bool {
        self.0 & (1 << sq.index()) != 0
    }
    /// Whether the set is empty.
    #[inline]
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
    /// The number of squares in the set.
    #[inline(always)]
    pub fn count(self) -> u32 {
        crate::simd::popcount(self.0)
    }
    /// The lowest square of the set, if any.
    #[inline]
    pub const fn first(self) -> Option<Square> {
        if self.0 == 0 {
            None
        } else {
            Square::new(self.0.trailing_zeros() as u8)
        }
    }
    /// Every square one rank to the north (squares on rank 8 fall off).
    #[inline]
    pub const fn north(self) -> Bitboard {
        Bitboard(self.0 << 8)
    }
    /// Every square one rank to the south (squares on rank 1 fall off).
    #[inline]
    pub const fn south(self) -> Bitboard {
        Bitboard(self.0 >> 8)
    }
    /// Every square one file to the east; the h-file does not wrap round to the a-file.
    #[inline]
    pub const fn east(self) -> Bitboard {
        Bitboard((self.0 << 1) & !Self::FILE_A.0)
    }
    /// Every square one file to the west; the a-file does not wrap round to the h-file.
    #[inline]
    pub const fn west(self) -> Bitboard {
        Bitboard((self.0 >> 1) & !Self::FILE_H.0)
    }
    /// The set mirrored top to bottom (rank 1 <-> rank 8).
    #[inline]
    pub const fn flip_vertical(self) -> Bitboard {
        Bitboard(self.0.swap_bytes())
    }
    /// The squares of the set, a1 first.
    #[inline]
    pub fn squares(self) -> Squares {
        Squares(self.0)
    }
}

/// The squares of a [`Bitboard`], lowest first.
#[derive(Clone, Debug)]
pub struct Squares(u64);

impl Iterator for Squares {
    type Item = Square;
    #[inline]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        let index = self.0.trailing_zeros() as u8;
        self.0 &= self.0 - 1;
        Square::new(index)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.0.count_ones() as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Squares {}

impl From<Square> for Bitboard {
    fn from(sq: Square) -> Bitboard {
        Bitboard::from_square(sq)
    }
}

impl FromIterator<Square> for Bitboard {
    fn from_iter<I: IntoIterator<Item = Square>>(iter: I) -> Bitboard {
        iter.into_iter()
            .fold(Bitboard::EMPTY, |bb, sq| bb | Bitboard::from(sq))
    }
}

macro_rules! bit_op {
    ($trait:ident, $method:ident, $assign_trait:ident, $assign:ident, $op:tt) => {
        impl $trait for Bitboard {
            type Output = Bitboard;
            #[inline]
            fn $method(self, rhs: Bitboard) -> Bitboard {
                Bitboard(self.0 $op rhs.0)
            }
        }
        impl $assign_trait for Bitboard {
            #[inline]
            fn $assign(&mut self, rhs: Bitboard) {
                self.0 = self.0 $op rhs.0;
            }
        }
    };
}

bit_op!(BitAnd, bitand, BitAndAssign, bitand_assign, &);
bit_op!(BitOr, bitor, BitOrAssign, bitor_assign, |);
bit_op!(BitXor, bitxor, BitXorAssign, bitxor_assign, ^);

impl Not for Bitboard {
    type Output = Bitboard;
    #[inline]
    fn not(self) -> Bitboard {
        Bitboard(!self.0)
    }
}

/// A diagram, rank 8 at the top, `x` for a member square and `.` for the others.
impl fmt::Debug for Bitboard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "Bitboard({:#018x})", self.0)?;
        for rank in (0..8).rev() {
            for file in 0..8 {
                let bit = self.0 >> (rank * 8 + file) & 1;
                write!(f, "{}", if bit == 1 { 'x' } else { '.' })?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Bitboard {
        Bitboard::from(Square::from_name(name).unwrap())
    }

    #[test]
    fn east_and_west_do_not_wrap_across_the_edge_files() {
        assert_eq!(sq("h4").east(), Bitboard::EMPTY);
        assert_eq!(sq("a4").west(), Bitboard::EMPTY);
        assert_eq!(sq("g4").east(), sq("h4"));
        assert_eq!(sq("b4").west(), sq("a4"));
        assert_eq!(Bitboard::FILE_H.east(), Bitboard::EMPTY);
        assert_eq!(Bitboard::FILE_A.west(), Bitboard::EMPTY);
    }

    #[test]
    fn north_and_south_fall_off_the_board() {
        assert_eq!(Bitboard::RANK_8.north(), Bitboard::EMPTY);
        assert_eq!(Bitboard::RANK_1.south(), Bitboard::EMPTY);
        assert_eq!(sq("e4").north(), sq("e5"));
    }

    #[test]
    fn squares_iterate_in_order_and_collect_back() {
        let set = sq("a1") | sq("h8") | sq("e4");
        let squares: Vec<String> = set.squares().map(|s| s.to_string()).collect();
        assert_eq!(squares, ["a1", "e4", "h8"]);
        assert_eq!(set.squares().collect::<Bitboard>(), set);
        assert_eq!(set.count(), 3);
    }

    #[test]
    fn flip_vertical_mirrors_ranks() {
        assert_eq!(sq("c2").flip_vertical(), sq("c7"));
        assert_eq!(Bitboard::RANK_1.flip_vertical(), Bitboard::RANK_8);
    }
}
