//! The first layer's inputs: bullet's `Chess768`, or its king-bucketed, horizontally
//! mirrored form `ChessBucketsMirrored` (`docs/NNUE.md`, "King buckets").
//!
//! Each perspective sees the board from its own side (Black's flipped vertically,
//! `square ^ 56`). With king buckets, the perspective's own king square (in that view)
//! chooses one of K copies of the 768 inputs from a 32-entry map over files a–d, and when
//! that king stands on files e–h the whole board is mirrored left to right (`square ^ 7`),
//! so the king always lands on a–d (bullet's `if ksq % 8 > 3 { 7 } else { 0 }`). A feature
//! is then `bucket × 768 + Chess768(mirrored square)`.
//!
//! Both transformations fold into an [`Orientation`] per perspective: the bucket's offset
//! and one XOR mask for the square. A perspective's accumulator carries over from one
//! position to another only while its orientation stays the same; when its king crosses a
//! bucket boundary or the mirror line, that perspective is summed again.

/// Most king buckets a network may have.
pub const MAX_KING_BUCKETS: usize = 16;

/// Which inputs a network reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct InputLayout {
    /// The bucket of each king square (in the perspective's own view), expanded from the
    /// 32-entry map; all zero for plain `Chess768`.
    squares: [u8; 64],
    buckets: u8,
    mirrored: bool,
}

/// How one perspective reads the board: its king bucket's first input and the XOR mask
/// that turns an absolute square into the square it sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Orientation {
    pub base: u16,
    pub flip: u8,
}

/// The feature of a piece of `colour` (0 White, 1 Black) and `kind` (pawn 0 .. king 5) on
/// `square` for `perspective`, read in orientation `o` (from [`InputLayout::orientation`]).
#[inline(always)]
pub fn oriented_feature(
    o: Orientation,
    perspective: usize,
    colour: usize,
    kind: usize,
    square: usize,
) -> usize {
    o.base as usize
        + ((colour != perspective) as usize) * 384
        + kind * 64
        + (square ^ o.flip as usize)
}

/// The king buckets pawnstorm names by their count (`--arch king-buckets=K`), each a map
/// over files a–d, rank 1 first (the perspective's own back rank), as engines of the field
/// lay them out: the finest split where the king lives in the opening and middlegame.
#[rustfmt::skip]
const STANDARD_MAPS: [(usize, [u8; 32]); 5] = [
    (1, [0; 32]),
    (2, [
        0, 0, 0, 0,
        1, 1, 1, 1,
        1, 1, 1, 1,
        1, 1, 1, 1,
        1, 1, 1, 1,
        1, 1, 1, 1,
        1, 1, 1, 1,
        1, 1, 1, 1,
    ]),
    (4, [
        0, 0, 1, 1,
        2, 2, 2, 2,
        3, 3, 3, 3,
        3, 3, 3, 3,
        3, 3, 3, 3,
        3, 3, 3, 3,
        3, 3, 3, 3,
        3, 3, 3, 3,
    ]),
    (8, [
        0, 1, 2, 3,
        4, 4, 5, 5,
        6, 6, 6, 6,
        6, 6, 6, 6,
        7, 7, 7, 7,
        7, 7, 7, 7,
        7, 7, 7, 7,
        7, 7, 7, 7,
    ]),
    (16, [
         0,  1,  2,  3,
         4,  5,  6,  7,
         8,  9, 10, 11,
         8,  9, 10, 11,
        12, 12, 13, 13,
        12, 12, 13, 13,
        14, 14, 15, 15,
        14, 14, 15, 15,
    ]),
];

impl InputLayout {
    /// bullet's `Chess768`: one bucket, no mirroring.
    pub const CHESS768: InputLayout = InputLayout {
        squares: [0; 64],
        buckets: 1,
        mirrored: false,
    };

    /// bullet's `ChessBucketsMirrored` with `map` (32 entries: files a–d, rank 1 first);
    /// K is the largest bucket + 1, as bullet counts it.
    pub fn mirrored(map: [u8; 32]) -> Result<InputLayout, String> {
        let buckets = map.iter().max().map_or(1, |&m| m as usize + 1);
        if buckets > MAX_KING_BUCKETS {
            return Err(format!(
                "a king bucket map with bucket {}: at most {MAX_KING_BUCKETS} buckets (0 to {})",
                buckets - 1,
                MAX_KING_BUCKETS - 1
            ));
        }
        let squares = std::array::from_fn(|square| {
            let (rank, file) = (square / 8, square % 8);
            map[rank * 4 + [0, 1, 2, 3, 3, 2, 1, 0][file]]
        });
        Ok(InputLayout {
            squares,
            buckets: buckets as u8,
            mirrored: true,
        })
    }

    /// The standard map of `count` buckets (1, 2, 4, 8 or 16), mirrored.
    pub fn standard(count: usize) -> Option<InputLayout> {
        STANDARD_MAPS
            .iter()
            .find(|(k, _)| *k == count)
            .and_then(|(_, map)| InputLayout::mirrored(*map).ok())
    }

    /// `K` (a standard map) or 32 hexadecimal digits, one bucket per square of files a–d,
    /// rank 1 first (`0011222233333333…`); `_` and `/` may separate them.
    pub fn parse_king_buckets(text: &str) -> Result<InputLayout, String> {
        if let Ok(count) = text.parse::<usize>()
            && text.len() <= 2
        {
            return InputLayout::standard(count).ok_or_else(|| {
                format!(
                    "king-buckets={text}: a count names a standard map (1, 2, 4, 8 or 16); \
                     other layouts are given as 32 hexadecimal digits, files a–d, rank 1 first"
                )
            });
        }
        let digits: Vec<u8> = text
            .chars()
            .filter(|c| !matches!(c, '_' | '/'))
            .map(|c| c.to_digit(16).map(|d| d as u8))
            .collect::<Option<_>>()
            .ok_or_else(|| {
                format!("king-buckets={text}: not hexadecimal digits (one bucket a square)")
            })?;
        let map: [u8; 32] = digits.try_into().map_err(|d: Vec<u8>| {
            format!(
                "king-buckets={text}: {} squares; the map has 32 (files a–d, ranks 1–8)",
                d.len()
            )
        })?;
        InputLayout::mirrored(map)
    }

    /// Inputs per perspective: 768 × K.
    pub fn inputs(&self) -> usize {
        768 * self.buckets as usize
    }

    /// K (1 for plain `Chess768`).
    pub fn king_buckets(&self) -> usize {
        self.buckets as usize
    }

    /// Whether this is `ChessBucketsMirrored` (of any K, 1 included) rather than `Chess768`.
    pub fn is_mirrored(&self) -> bool {
        self.mirrored
    }

    /// The 32-entry map (files a–d, rank 1 first).
    pub fn map(&self) -> [u8; 32] {
        std::array::from_fn(|i| self.squares[(i / 4) * 8 + i % 4])
    }

    /// The map as [`Self::parse_king_buckets`] reads it, ranks separated by `/`.
    pub fn map_text(&self) -> String {
        self.map()
            .chunks(4)
            .map(|rank| rank.iter().map(|b| format!("{b:x}")).collect::<String>())
            .collect::<Vec<_>>()
            .join("/")
    }

    /// `768` or `768x4hm` (bullet's shorthand: K buckets, horizontally mirrored).
    pub fn shorthand(&self) -> String {
        if self.mirrored {
            format!("768x{}hm", self.buckets)
        } else {
            "768".to_string()
        }
    }

    /// How `perspective` (0 White, 1 Black) reads a board whose own king stands on
    /// `king_square` (absolute, a1 = 0).
    #[inline(always)]
    pub fn orientation(&self, perspective: usize, king_square: usize) -> Orientation {
        let vertical = if perspective == 1 { 56 } else { 0 };
        let horizontal = if self.mirrored && king_square & 7 > 3 {
            7
        } else {
            0
        };
        Orientation {
            base: self.squares[(king_square ^ vertical) & 63] as u16 * 768,
            flip: (vertical ^ horizontal) as u8,
        }
    }

    /// Both perspectives' orientations for piece boards `boards` (colour × 6 + type). A
    /// board without a king reads as if it stood on a1 (no position the engine reaches).
    #[inline(always)]
    pub fn orientations(&self, boards: &[u64; 12]) -> [Orientation; 2] {
        std::array::from_fn(|p| {
            self.orientation(p, (boards[6 * p + 5].trailing_zeros() & 63) as usize)
        })
    }

    /// Every feature active in `boards` for `perspective`, in board order (colour × 6 +
    /// type, then square).
    pub fn features(&self, boards: &[u64; 12], perspective: usize) -> Vec<usize> {
        let o = self.orientations(boards)[perspective];
        let mut out = Vec::with_capacity(32);
        for (piece, &board) in boards.iter().enumerate() {
            let mut bits = board;
            while bits != 0 {
                let square = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                out.push(oriented_feature(
                    o,
                    perspective,
                    piece / 6,
                    piece % 6,
                    square,
                ));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chess768_orientation_is_the_plain_feature() {
        for p in 0..2 {
            for king in [0, 4, 7, 60, 63] {
                let o = InputLayout::CHESS768.orientation(p, king);
                for square in 0..64 {
                    assert_eq!(
                        oriented_feature(o, p, 1, 3, square),
                        crate::nnue::feature(p, 1, 3, square)
                    );
                }
            }
        }
    }

    #[test]
    fn mirrored_buckets_follow_bullets_rule() {
        let layout = InputLayout::standard(4).unwrap();
        assert_eq!(layout.king_buckets(), 4);
        // White king e1 (file 4): mirrored, e1 reads as d1, bucket 1 of the map.
        let o = layout.orientation(0, 4);
        assert_eq!((o.base, o.flip), (768, 7));
        // White king g1 reads as b1: bucket 0; a piece on h2 is seen on a2.
        let o = layout.orientation(0, 6);
        assert_eq!(oriented_feature(o, 0, 0, 0, 15), 8);
        // Black king g8: its own view is g1, mirrored to b1, bucket 0; Black's pawn on h7
        // is "our" pawn on h2 in its view, mirrored to a2.
        let o = layout.orientation(1, 62);
        assert_eq!(o.base, 0);
        assert_eq!(oriented_feature(o, 1, 1, 0, 55), 8);
        // Black king d7: own view d2, bucket 2, not mirrored.
        let o = layout.orientation(1, 51);
        assert_eq!((o.base, o.flip), (2 * 768, 56));
    }

    #[test]
    fn maps_parse_and_print_back() {
        for k in [1, 2, 4, 8, 16] {
            let layout = InputLayout::standard(k).unwrap();
            assert_eq!(layout.king_buckets(), k);
            assert_eq!(
                InputLayout::parse_king_buckets(&layout.map_text()).unwrap(),
                layout
            );
            assert_eq!(
                InputLayout::parse_king_buckets(&k.to_string()).unwrap(),
                layout
            );
        }
        assert!(InputLayout::parse_king_buckets("3").is_err());
        assert!(InputLayout::parse_king_buckets("0011").is_err());
        assert!(InputLayout::parse_king_buckets(&"g".repeat(32)).is_err());
    }
}
