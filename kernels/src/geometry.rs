//! Set-wise geometry on lanes of bitboards: shifts that never wrap round the board, fills,
//! spans and king dilation. Every east/west step masks the file it would wrap into.

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
    (0..steps).fold(b, |b, _| king_dilate(b))
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
    let ring = |d: usize| reach[d] & !reach[d - 1];
    [
        ring(1) | ring(3) | ring(5) | !reach[6],
        (reach[3] & !reach[1]) | !reach[5],
        !reach[3],
    ]
}

/// The sum over the squares of `set` of their distance to the king of `planes`.
#[inline(always)]
pub fn distance_sum<L: Lanes>(set: L, planes: &[L; 3]) -> L {
    (set & planes[0]).popcount_weighted(set & planes[1], set & planes[2])
}

#[cfg(test)]
mod tests {
    use super::*;
    use wide::u64x8;

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
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for king in 0..64u32 {
            let k = 1u64 << king;
            let planes = distance_planes(&king_reach(k));
            for set in (0..50).map(|_| next() & next()).chain([!0u64, 0]) {
                let expected: u64 = (0..64)
                    .filter(|s| set >> s & 1 == 1)
                    .map(|s| chebyshev(s, king))
                    .sum();
                assert_eq!(distance_sum(set, &planes), expected);
                assert_eq!(king_distance_sum(set, k), expected);
            }
            let sets: [u64; 8] = std::array::from_fn(|_| next());
            let lanes = distance_sum(
                u64x8::new(sets),
                &distance_planes(&king_reach(u64x8::splat(k))),
            );
            assert_eq!(lanes.to_array(), sets.map(|s| distance_sum(s, &planes)));
        }
    }
}
