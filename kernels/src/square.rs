use std::fmt;

/// A file (column) of the board, a = 0 .. h = 7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct File(u8);

/// A rank (row) of the board, rank 1 = 0 .. rank 8 = 7.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Rank(u8);

/// One of the 64 squares, a1 = 0, b1 = 1, ..., h8 = 63.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Square(u8);

impl File {
    /// The file with this index, if it is below 8.
    pub const fn new(index: u8) -> Option<File> {
        if index < 8 { Some(File(index)) } else { None }
    }
    /// The file named by a letter `a`..`h` (lower case only, as FEN and SAN write it).
    pub const fn from_char(c: char) -> Option<File> {
        match c {
            'a'..='h' => Some(File(c as u8 - b'a')),
            _ => None,
        }
    }
    /// 0 for the a-file .. 7 for the h-file.
    pub const fn index(self) -> u8 {
        self.0
    }
    /// The lower-case letter of this file.
    pub const fn to_char(self) -> char {
        (b'a' + self.0) as char
    }
}

impl Rank {
    /// The rank with this index (0 = rank 1), if it is below 8.
    pub const fn new(index: u8) -> Option<Rank> {
        if index < 8 { Some(Rank(index)) } else { None }
    }
    /// The rank named by a digit `1`..`8`.
    pub const fn from_char(c: char) -> Option<Rank> {
        match c {
            '1'..='8' => Some(Rank(c as u8 - b'1')),
            _ => None,
        }
    }
    /// 0 for rank 1 .. 7 for rank 8.
    pub const fn index(self) -> u8 {
        self.0
    }
    /// The digit of this rank.
    pub const fn to_char(self) -> char {
        (b'1' + self.0) as char
    }
}

impl Square {
    /// The square with this index, if it is below 64.
    pub const fn new(index: u8) -> Option<Square> {
        if index < 64 {
            Some(Square(index))
        } else {
            None
        }
    }
    /// The square on this file and rank.
    pub const fn from_coords(file: File, rank: Rank) -> Square {
        Square(rank.0 * 8 + file.0)
    }
    /// Parses a square name such as `e4`.
    pub fn from_name(name: &str) -> Option<Square> {
        let mut chars = name.chars();
        let file = File::from_char(chars.next()?)?;
        let rank = Rank::from_char(chars.next()?)?;
        if chars.next().is_some() {
            return None;
        }
        Some(Square::from_coords(file, rank))
    }
    /// 0 for a1 .. 63 for h8.
    #[inline]
    pub const fn index(self) -> u8 {
        self.0
    }
    /// The file of this square.
    #[inline]
    pub const fn file(self) -> File {
        File(self.0 & 7)
    }
    /// The rank of this square.
    #[inline]
    pub const fn rank(self) -> Rank {
        Rank(self.0 >> 3)
    }
    /// The same file, the rank mirrored (a1 <-> a8): the square as the other side sees it.
    #[inline]
    pub const fn flip_vertical(self) -> Square {
        Square(self.0 ^ 56)
    }
    /// The square `ranks` ranks to the north (negative: south), if it is on the board.
    pub const fn offset_ranks(self, ranks: i8) -> Option<Square> {
        let rank = self.0 as i8 / 8 + ranks;
        if rank < 0 || rank > 7 {
            None
        } else {
            Some(Square((rank * 8) as u8 + (self.0 & 7)))
        }
    }
    /// All 64 squares, a1 first.
    pub fn all() -> impl Iterator<Item = Square> {
        (0..64).map(Square)
    }
}

impl fmt::Display for Square {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.file().to_char(), self.rank().to_char())
    }
}

impl fmt::Display for File {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_char())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_on_every_square() {
        for sq in Square::all() {
            assert_eq!(Square::from_name(&sq.to_string()), Some(sq));
        }
        assert_eq!(Square::from_name("a1").map(Square::index), Some(0));
        assert_eq!(Square::from_name("h8").map(Square::index), Some(63));
        for bad in ["", "a", "i1", "a9", "a0", "A1", "a11"] {
            assert_eq!(Square::from_name(bad), None, "{bad}");
        }
    }

    #[test]
    fn rank_offsets_stop_at_the_edge() {
        let a2 = Square::from_name("a2").unwrap();
        assert_eq!(a2.offset_ranks(1), Square::from_name("a3"));
        assert_eq!(a2.offset_ranks(-1), Square::from_name("a1"));
        assert_eq!(a2.offset_ranks(-2), None);
        assert_eq!(a2.offset_ranks(7), None);
    }
}
