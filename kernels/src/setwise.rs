//! Set-wise attacks: the squares attacked by *all* pieces of a set at once, with no per-piece
//! loop and no table lookups, so they run on any number of lanes. Sliding attacks use
//! Kogge-Stone occluded fills (three shift-and-mask steps per direction).
//!
//! The union loses how many pieces attack a square; evaluation terms built on these
//! (mobility) count attacked squares, not attacks.
//!
//! ```
//! use pawnstorm_kernels::setwise::rook_attacks;
//! // A rook on a1 on an empty board attacks the a-file and the first rank.
//! assert_eq!(rook_attacks(1u64, !1u64), 0x0101_0101_0101_01fe);
//! ```

use crate::Lanes;

const NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
const NOT_FILE_H: u64 = !0x8080_8080_8080_8080;
const NOT_FILES_AB: u64 = !0x0303_0303_0303_0303;
const NOT_FILES_GH: u64 = !0xc0c0_c0c0_c0c0_c0c0;

/// A ray direction as a shift (positive: toward h8) and the squares a one-step shift may
/// land on (the file it wraps onto is cut).
#[derive(Clone, Copy)]
struct Direction {
    shift: i32,
    lands_on: u64,
}

const NORTH: Direction = Direction {
    shift: 8,
    lands_on: !0,
};
const SOUTH: Direction = Direction {
    shift: -8,
    lands_on: !0,
};
const EAST: Direction = Direction {
    shift: 1,
    lands_on: NOT_FILE_A,
};
const WEST: Direction = Direction {
    shift: -1,
    lands_on: NOT_FILE_H,
};
const NORTH_EAST: Direction = Direction {
    shift: 9,
    lands_on: NOT_FILE_A,
};
const NORTH_WEST: Direction = Direction {
    shift: 7,
    lands_on: NOT_FILE_H,
};
const SOUTH_EAST: Direction = Direction {
    shift: -7,
    lands_on: NOT_FILE_A,
};
const SOUTH_WEST: Direction = Direction {
    shift: -9,
    lands_on: NOT_FILE_H,
};

#[inline(always)]
fn shift<L: Lanes>(b: L, by: i32) -> L {
    if by > 0 {
        b.shl(by as u32)
    } else {
        b.shr((-by) as u32)
    }
}

/// Squares attacked along `dir` by the sliders `from`, stopping at (and including) the first
/// occupied square: the occluded fill of `from` through `empty`, shifted one step.
#[inline(always)]
fn ray_attacks<L: Lanes>(from: L, empty: L, dir: Direction) -> L {
    let lands_on = L::splat(dir.lands_on);
    // The propagator also carries the wrap mask, so that every step of a fill is cut where
    // a single step would be.
    let mut propagator = empty & lands_on;
    let mut filled = from;
    filled = filled | (propagator & shift(filled, dir.shift));
    propagator = propagator & shift(propagator, dir.shift);
    filled = filled | (propagator & shift(filled, 2 * dir.shift));
    propagator = propagator & shift(propagator, 2 * dir.shift);
    filled = filled | (propagator & shift(filled, 4 * dir.shift));
    shift(filled, dir.shift) & lands_on
}

/// Squares attacked by the bishops (or any diagonal sliders) `from`; `empty` is the set of
/// unoccupied squares. Attacks include the first occupied square of each ray.
#[inline(always)]
pub fn bishop_attacks<L: Lanes>(from: L, empty: L) -> L {
    ray_attacks(from, empty, NORTH_EAST)
        | ray_attacks(from, empty, NORTH_WEST)
        | ray_attacks(from, empty, SOUTH_EAST)
        | ray_attacks(from, empty, SOUTH_WEST)
}

/// Squares attacked by the rooks (or any orthogonal sliders) `from`; see [`bishop_attacks`].
#[inline(always)]
pub fn rook_attacks<L: Lanes>(from: L, empty: L) -> L {
    ray_attacks(from, empty, NORTH)
        | ray_attacks(from, empty, SOUTH)
        | ray_attacks(from, empty, EAST)
        | ray_attacks(from, empty, WEST)
}

/// Squares attacked by the queens `from`: rook and bishop attacks together.
#[inline(always)]
pub fn queen_attacks<L: Lanes>(from: L, empty: L) -> L {
    rook_attacks(from, empty) | bishop_attacks(from, empty)
}

/// Squares attacked by the knights `from`, with the wrapped files cut.
///
/// ```
/// use pawnstorm_kernels::setwise::knight_attacks;
/// // b1 attacks a3, c3 and d2.
/// assert_eq!(knight_attacks(1u64 << 1), (1 << 16) | (1 << 18) | (1 << 11));
/// ```
#[inline(always)]
pub fn knight_attacks<L: Lanes>(from: L) -> L {
    let east_one = from.shl(1) & L::splat(NOT_FILE_A);
    let west_one = from.shr(1) & L::splat(NOT_FILE_H);
    let east_two = from.shl(2) & L::splat(NOT_FILES_AB);
    let west_two = from.shr(2) & L::splat(NOT_FILES_GH);
    let one = east_one | west_one;
    let two = east_two | west_two;
    one.shl(16) | one.shr(16) | two.shl(8) | two.shr(8)
}

/// Squares attacked by the kings `from`.
#[inline(always)]
pub fn king_attacks<L: Lanes>(from: L) -> L {
    let sideways = (from.shl(1) & L::splat(NOT_FILE_A)) | (from.shr(1) & L::splat(NOT_FILE_H));
    let row = from | sideways;
    sideways | row.shl(8) | row.shr(8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{LanesFn, Path, dispatch};

    /// Square-by-square reference: walk each ray until the board edge or a blocker.
    fn walk(from: u64, occupied: u64, steps: &[(i32, i32)]) -> u64 {
        let mut attacks = 0;
        for sq in 0..64 {
            if from >> sq & 1 == 0 {
                continue;
            }
            for &(df, dr) in steps {
                let (mut f, mut r) = (sq % 8, sq / 8);
                loop {
                    f += df;
                    r += dr;
                    if !(0..8).contains(&f) || !(0..8).contains(&r) {
                        break;
                    }
                    attacks |= 1 << (r * 8 + f);
                    if occupied >> (r * 8 + f) & 1 == 1 {
                        break;
                    }
                }
            }
        }
        attacks
    }

    fn jumps(from: u64, steps: &[(i32, i32)]) -> u64 {
        let mut attacks = 0;
        for sq in 0..64 {
            if from >> sq & 1 == 0 {
                continue;
            }
            for &(df, dr) in steps {
                let (f, r) = (sq % 8 + df, sq / 8 + dr);
                if (0..8).contains(&f) && (0..8).contains(&r) {
                    attacks |= 1 << (r * 8 + f);
                }
            }
        }
        attacks
    }

    const ROOK: [(i32, i32); 4] = [(0, 1), (0, -1), (1, 0), (-1, 0)];
    const BISHOP: [(i32, i32); 4] = [(1, 1), (-1, 1), (1, -1), (-1, -1)];
    const KNIGHT: [(i32, i32); 8] = [
        (1, 2),
        (2, 1),
        (2, -1),
        (1, -2),
        (-1, -2),
        (-2, -1),
        (-2, 1),
        (-1, 2),
    ];
    const KING: [(i32, i32); 8] = [
        (0, 1),
        (1, 1),
        (1, 0),
        (1, -1),
        (0, -1),
        (-1, -1),
        (-1, 0),
        (-1, 1),
    ];

    fn xorshift(state: &mut u64) -> u64 {
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        *state
    }

    /// Sparse random sets (a few pieces, a board of blockers), every single square (edge
    /// files included), and the same on 4 and 8 lanes.
    #[test]
    fn setwise_attacks_match_ray_walks() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut cases: Vec<(u64, u64)> = (0..64)
            .map(
                #[inline(always)]
                |sq| (1u64 << sq, 0),
            )
            .collect();
        cases.extend((0..64).map(
            #[inline(always)]
            |sq| (1u64 << sq, 0x00ff_0000_0000_ff00),
        ));
        for _ in 0..20_000 {
            let from = xorshift(&mut state) & xorshift(&mut state) & xorshift(&mut state);
            let blockers = xorshift(&mut state) & xorshift(&mut state);
            cases.push((from, blockers | from));
        }
        for &(from, occupied) in &cases {
            let empty = !occupied;
            assert_eq!(rook_attacks(from, empty), walk(from, occupied, &ROOK));
            assert_eq!(bishop_attacks(from, empty), walk(from, occupied, &BISHOP));
            assert_eq!(
                queen_attacks(from, empty),
                walk(from, occupied, &ROOK) | walk(from, occupied, &BISHOP)
            );
            assert_eq!(knight_attacks(from), jumps(from, &KNIGHT));
            assert_eq!(king_attacks(from), jumps(from, &KING));
        }
        for path in Path::every() {
            dispatch(path, OnLanes(&cases));
        }
    }

    struct OnLanes<'a>(&'a [(u64, u64)]);
    impl LanesFn for OnLanes<'_> {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            for chunk in self.0.chunks_exact(L::WIDTH) {
                let from: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |c| c.0,
                    )
                    .collect();
                let empty: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |c| !c.1,
                    )
                    .collect();
                let expected: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |c| queen_attacks(c.0, !c.1),
                    )
                    .collect();
                let out = queen_attacks(L::load(&from), L::load(&empty)).to_array();
                assert_eq!(&out[..L::WIDTH], expected.as_slice());
                let knights: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |c| knight_attacks(c.0),
                    )
                    .collect();
                let out = knight_attacks(L::load(&from)).to_array();
                assert_eq!(&out[..L::WIDTH], knights.as_slice());
                let kings: Vec<u64> = chunk
                    .iter()
                    .map(
                        #[inline(always)]
                        |c| king_attacks(c.0),
                    )
                    .collect();
                let out = king_attacks(L::load(&from)).to_array();
                assert_eq!(&out[..L::WIDTH], kings.as_slice());
            }
        }
    }
}
