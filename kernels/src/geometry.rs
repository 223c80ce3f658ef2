//! Set-wise geometry on lanes of bitboards: shifts that never wrap round the board, fills,
//! spans and king dilation. Every east/west step masks the file it would wrap into.

use crate::simd::inlined;
use crate::{Color, Lanes};

const FILE_A: u64 = 0x0101_0101_0101_0101;
const FILE_H: u64 = 0x8080_8080_8080_8080;

/// One rank toward rank 8.
#[inline(always)]
pub fn north<L: Lanes>(b: L) -> L {
    b.shl(8)
}

/// One rank toward rank 1.
#[inline(always)]
pub fn south<L: Lanes>(b: L) -> L {
    b.shr(8)
}

/// One file toward the h-file; nothing wraps from h to a.
#[inline(always)]
pub fn east<L: Lanes>(b: L) -> L {
    b.shl(1) & L::splat(!FILE_A)
}

/// One file toward the a-file; nothing wraps from a to h.
#[inline(always)]
pub fn west<L: Lanes>(b: L) -> L {
    b.shr(1) & L::splat(!FILE_H)
}

/// One step toward h8.
#[inline(always)]
pub fn north_east<L: Lanes>(b: L) -> L {
    east(north(b))
}

/// One step toward a8.
#[inline(always)]
pub fn north_west<L: Lanes>(b: L) -> L {
    west(north(b))
}

/// One step toward h1.
#[inline(always)]
pub fn south_east<L: Lanes>(b: L) -> L {
    east(south(b))
}

/// One step toward a1.
#[inline(always)]
pub fn south_west<L: Lanes>(b: L) -> L {
    west(south(b))
}

/// One rank toward `color`'s promotion rank.
#[inline(always)]
pub fn forward<L: Lanes>(color: Color, b: L) -> L {
    match color {
        Color::White => north(b),
        Color::Black => south(b),
    }
}

/// One rank toward `color`'s first rank.
#[inline(always)]
pub fn backward<L: Lanes>(color: Color, b: L) -> L {
    forward(!color, b)
}

/// Each square and every square north of it.
#[inline(always)]
pub fn north_fill<L: Lanes>(b: L) -> L {
    let b = b | b.shl(8);
    let b = b | b.shl(16);
    b | b.shl(32)
}

/// Each square and every square south of it.
#[inline(always)]
pub fn south_fill<L: Lanes>(b: L) -> L {
    let b = b | b.shr(8);
    let b = b | b.shr(16);
    b | b.shr(32)
}

/// Whole files of the squares.
#[inline(always)]
pub fn file_fill<L: Lanes>(b: L) -> L {
    north_fill(b) | south_fill(b)
}

/// Squares strictly ahead of each square, on its file, from `color`'s side.
#[inline(always)]
pub fn front_span<L: Lanes>(color: Color, b: L) -> L {
    match color {
        Color::White => north(north_fill(b)),
        Color::Black => south(south_fill(b)),
    }
}

/// Squares strictly behind each square, on its file, from `color`'s side.
#[inline(always)]
pub fn rear_span<L: Lanes>(color: Color, b: L) -> L {
    front_span(!color, b)
}

/// Squares a pawn of `color` on any of `b` could ever attack by advancing: the front spans
/// of the adjacent files.
#[inline(always)]
pub fn attack_span<L: Lanes>(color: Color, b: L) -> L {
    let front = front_span(color, b);
    east(front) | west(front)
}

/// Squares attacked by pawns of `color` standing on `b`.
#[inline(always)]
pub fn pawn_attacks<L: Lanes>(color: Color, b: L) -> L {
    let ahead = forward(color, b);
    east(ahead) | west(ahead)
}

/// The squares within one king step of `b` (`b` included).
#[inline(always)]
pub fn king_dilate<L: Lanes>(b: L) -> L {
    let b = b | east(b) | west(b);
    b | north(b) | south(b)
}

/// The squares within `steps` king steps of `b`.
#[inline(always)]
pub fn king_dilate_times<L: Lanes>(b: L, steps: u32) -> L {
    let mut b = b;
    for _ in 0..steps {
        b = king_dilate(b);
    }
    b
}

/// Sum over the squares of `set` of the Chebyshev (king-step) distance to `king`, a single
/// square per lane: the sum over d = 0..6 of popcount(set & !D_d(king)), D_d the king's
/// square dilated d times. Shifts, ANDs and popcounts only.
#[inline(always)]
pub fn king_distance_sum<L: Lanes>(set: L, king: L) -> L {
    let mut reach = king;
    let mut sum = (set & !reach).popcount();
    for _ in 1..7 {
        reach = king_dilate(reach);
        sum = sum.add((set & !reach).popcount());
    }
    sum
}

/// [`king_distance_sum`] for two sets and two kings at once, each king dilated once for
/// both sets: `result[i][j]` is the distance sum of `sets[i]` to `kings[j]`.
#[inline(always)]
pub fn king_distance_sums<L: Lanes>(sets: [L; 2], kings: [L; 2]) -> [[L; 2]; 2] {
    let mut reach = kings;
    let mut sums = [[L::splat(0); 2]; 2];
    for step in 0..7 {
        if step > 0 {
            reach = reach.map(king_dilate);
        }
        for (set, sum) in sets.iter().zip(sums.iter_mut()) {
            for (king_reach, s) in reach.iter().zip(sum.iter_mut()) {
                *s = s.add((*set & !*king_reach).popcount());
            }
        }
    }
    sums
}

/// The squares within 0, 1, ..., 7 king steps of `king` (`reach[d]` is `king` dilated `d`
/// times): computed once, shared by every distance term of that king.
#[inline(always)]
pub fn king_reach<L: Lanes>(king: L) -> [L; 8] {
    let mut reach = [king; 8];
    for d in 1..8 {
        reach[d] = king_dilate(reach[d - 1]);
    }
    reach
}

/// The king distance of every square, bit-sliced: square s is in `planes[b]` when bit b of
/// its Chebyshev distance to the king (0..=7) is set. A set's distance sum is then three
/// popcounts ([`distance_sum`]) instead of seven.
#[inline(always)]
pub fn distance_planes<L: Lanes>(reach: &[L; 8]) -> [L; 3] {
    let ring = inlined(
        #[inline(always)]
        |d: usize| reach[d] & !reach[d - 1],
    );
    [
        ring(1) | ring(3) | ring(5) | !reach[6],
        (reach[3] & !reach[1]) | !reach[5],
        !reach[3],
    ]
}

/// [`distance_planes`]`(&`[`king_reach`]`(king))` for a king given as at most one square
/// per lane, without the six dilations: the Chebyshev distance is the larger of the file
/// and rank distances, whose bit planes are whole files and whole ranks read off
/// constants by per-lane shifts by the king's file and rank. About 50 lane operations
/// instead of about 72. A lane with no king gets distance 7 everywhere, as the
/// dilations give; a lane with several kings is outside the contract (use
/// [`distance_planes`]).
#[inline(always)]
pub fn king_distance_planes<L: Lanes>(king: L) -> [L; 3] {
    // The king's square index: the squares below it, counted (64 for no king).
    let index = king.sub(L::splat(1)).popcount();
    let file8 = (index & L::splat(7)).shl(3);
    let rank8 = index & L::splat(56);
    // Bit b of every file's distance to the king's file, as whole files: byte `file` of
    // a constant, repeated on every rank (the multiply makes four copies, the shift
    // eight). Bit 0 is the files of the other colour of square: odd files for a king on
    // an even file.
    let files = inlined(
        #[inline(always)]
        |table: u64| {
            let byte = L::splat(table).shr_each(file8) & L::splat(0xff);
            let four = byte.mul_i32(L::splat(0x0101_0101));
            four | four.shl(32)
        },
    );
    let f0 = L::splat(0xaaaa_aaaa_aaaa_aaaa).shr_each(index & L::splat(1));
    let (f1, f2) = (files(FILE_DISTANCE_BITS[1]), files(FILE_DISTANCE_BITS[2]));
    // Bit b of every rank's distance to the king's rank, as whole ranks: the ranks at
    // and above the king's from a constant laid out upward from rank 1, shifted up; those
    // at and below from one laid out downward from rank 8, shifted down.
    let down = L::splat(56).sub(rank8);
    let ranks =
        |[up, below]: [u64; 2]| L::splat(up).shl_each(rank8) | L::splat(below).shr_each(down);
    let r0 = L::splat(0xff00_ff00_ff00_ff00).shr_each(index & L::splat(8));
    let (r1, r2) = (ranks(RANK_DISTANCE_BITS[1]), ranks(RANK_DISTANCE_BITS[2]));
    // max(file distance, rank distance), bit-sliced: where the file distance is larger,
    // its bits, else the rank distance's; bit 2 of the larger is either's bit 2.
    let file_larger = (f2 & !r2) | (!(f2 ^ r2) & ((f1 & !r1) | (!(f1 ^ r1) & f0 & !r0)));
    let larger = inlined(
        #[inline(always)]
        |f: L, r: L| (f & file_larger) | (r & !file_larger),
    );
    let no_king = king.zero_mask();
    [
        larger(f0, r0) | no_king,
        larger(f1, r1) | no_king,
        f2 | r2 | no_king,
    ]
}

/// For each bit b, the byte of each king file (byte `k` for file k) holding the files
/// whose distance to file k has bit b set.
const FILE_DISTANCE_BITS: [u64; 3] = {
    let mut tables = [0u64; 3];
    let mut bit = 0;
    while bit < 3 {
        let mut king = 0;
        while king < 8 {
            let mut file = 0;
            while file < 8 {
                let distance = if file > king {
                    file - king
                } else {
                    king - file
                };
                if distance >> bit & 1 == 1 {
                    tables[bit] |= 1 << (8 * king + file);
                }
                file += 1;
            }
            king += 1;
        }
        bit += 1;
    }
    tables
};

/// For each bit b, `[up, down]`: rank j (up) or rank 7 - j (down) full where bit b of j
/// is set, j = 0..=7 the distance from the king's rank.
const RANK_DISTANCE_BITS: [[u64; 2]; 3] = {
    let mut tables = [[0u64; 2]; 3];
    let mut bit = 0;
    while bit < 3 {
        let mut j = 0;
        while j < 8 {
            if j >> bit & 1 == 1 {
                tables[bit][0] |= 0xff << (8 * j);
                tables[bit][1] |= 0xff << (8 * (7 - j));
            }
            j += 1;
        }
        bit += 1;
    }
    tables
};

/// The sum over the squares of `set` of their distance to the king of `planes`.
#[inline(always)]
pub fn distance_sum<L: Lanes>(set: L, planes: &[L; 3]) -> L {
    (set & planes[0]).popcount_weighted(set & planes[1], set & planes[2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{LanesFn, Path, dispatch};

    fn chebyshev(a: u32, b: u32) -> u64 {
        let file = (a % 8).abs_diff(b % 8);
        let rank = (a / 8).abs_diff(b / 8);
        file.max(rank) as u64
    }

    /// Every king square against random sets (and the full board): the bit-sliced sum, the
    /// dilation sum and the square-by-square sum agree, on one lane and on eight.
    #[test]
    fn distance_planes_sum_distances() {
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = inlined(
            #[inline(always)]
            || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            },
        );
        for king in 0..64u32 {
            let k = 1u64 << king;
            let planes = distance_planes(&king_reach(k));
            for set in (0..50)
                .map(
                    #[inline(always)]
                    |_| next() & next(),
                )
                .chain([!0u64, 0])
            {
                let expected: u64 = (0..64)
                    .filter(
                        #[inline(always)]
                        |s| set >> s & 1 == 1,
                    )
                    .map(
                        #[inline(always)]
                        |s| chebyshev(s, king),
                    )
                    .sum();
                assert_eq!(distance_sum(set, &planes), expected);
                assert_eq!(king_distance_sum(set, k), expected);
            }
            assert_eq!(king_distance_planes(k), planes, "king on {king}");
            let sets: [u64; 8] = std::array::from_fn(
                #[inline(always)]
                |_| next(),
            );
            for path in Path::every() {
                dispatch(path, DistanceOnLanes { sets, king: k });
            }
        }
    }

    /// The dilation-free planes on 4 and 8 lanes: every king square and no king, mixed
    /// across lanes.
    #[test]
    fn king_distance_planes_on_lanes() {
        assert_eq!(
            king_distance_planes(0u64),
            distance_planes(&king_reach(0u64))
        );
        for path in Path::every() {
            dispatch(path, PlanesOnLanes);
        }
    }

    struct DistanceOnLanes {
        sets: [u64; 8],
        king: u64,
    }
    impl LanesFn for DistanceOnLanes {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            let planes = distance_planes(&king_reach(self.king));
            let lanes = distance_sum(
                L::load(&self.sets),
                &distance_planes(&king_reach(L::splat(self.king))),
            );
            let expected = self.sets.map(
                #[inline(always)]
                |s| distance_sum(s, &planes),
            );
            assert_eq!(lanes.to_array()[..L::WIDTH], expected[..L::WIDTH]);
        }
    }

    struct PlanesOnLanes;
    impl LanesFn for PlanesOnLanes {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            let kings: Vec<u64> = (0..64)
                .map(
                    #[inline(always)]
                    |s| 1u64 << s,
                )
                .chain([0, 0, 0, 0])
                .collect();
            for start in 0..kings.len() - 8 {
                let lanes: [u64; 8] = std::array::from_fn(
                    #[inline(always)]
                    |i| kings[(start + 3 * i) % kings.len()],
                );
                let expected = lanes.map(
                    #[inline(always)]
                    |k| distance_planes(&king_reach(k)),
                );
                let planes = king_distance_planes(L::load(&lanes));
                for (i, want) in expected.iter().enumerate().take(L::WIDTH) {
                    for b in 0..3 {
                        assert_eq!(planes[b].to_array()[i], want[b]);
                    }
                }
            }
        }
    }
}
