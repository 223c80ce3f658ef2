//! "N bitboards at once": the one abstraction the kernels are written against.
//!
//! [`Lanes`] is implemented for `u64` (one position: the scalar reference, and what the
//! search uses) and for four and eight lanes per instruction set: portable arrays (the
//! compiler's vectorisation: SSE4 on x86-64, NEON on aarch64), AVX2 and AVX-512
//! intrinsics. A kernel written once as `fn k<L: Lanes>(...)` runs on all of them, so the
//! SIMD code is the scalar code. The vector types are private: kernels reach them through
//! [`crate::simd::dispatch`], which runs them only on CPUs that have their instructions.
//!
//! The lanes also hold (mg, eg) pairs of weighted sums ([`Lanes::Pair`]): the scalar path
//! keeps two 64-bit values; in vectors a pair is one value, each 64-bit lane holding the mg
//! value in its low 32 bits and the eg value in its high 32 bits, weighted with one 32-bit
//! multiply and summed with 32-bit adds that never carry from one half into the other.
//! Each half wraps as `i32`, exactly as the low 32 bits of separate 64-bit sums would.

use std::ops::{BitAnd, BitOr, BitXor, Not};

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86;

/// A vector of `WIDTH` independent 64-bit lanes (bitboards or counts).
pub trait Lanes:
    bytemuck::Pod
    + Send
    + Sync
    + PartialEq
    + std::fmt::Debug
    + BitAnd<Output = Self>
    + BitOr<Output = Self>
    + BitXor<Output = Self>
    + Not<Output = Self>
{
    /// How many positions one value holds.
    const WIDTH: usize;
    /// Every lane `value`.
    fn splat(value: u64) -> Self;
    /// Lanes from the first `WIDTH` values of `values`.
    fn load(values: &[u64]) -> Self;
    /// Writes the lanes to the first `WIDTH` slots of `out`.
    fn store(self, out: &mut [u64]);
    /// Each lane shifted left (toward h8) by `bits`, which is below 64.
    fn shl(self, bits: u32) -> Self;
    /// Each lane shifted right (toward a1) by `bits`, which is below 64.
    fn shr(self, bits: u32) -> Self;
    /// Each lane shifted left by the matching lane of `bits`, each below 64.
    fn shl_each(self, bits: Self) -> Self;
    /// Each lane shifted right by the matching lane of `bits`, each below 64.
    fn shr_each(self, bits: Self) -> Self;
    /// Lane-wise wrapping sum.
    fn add(self, other: Self) -> Self;
    /// Lane-wise wrapping difference.
    fn sub(self, other: Self) -> Self;
    /// Lane-wise product of the low 32 bits of each lane read as signed integers, as a
    /// 64-bit signed result: counts times weights, one instruction on AVX2 and AVX-512.
    fn mul_i32(self, other: Self) -> Self;
    /// Each lane's number of set bits.
    fn popcount(self) -> Self;
    /// All ones in lanes that are zero, zero elsewhere.
    fn zero_mask(self) -> Self;
    /// `popcount(self) + 2 popcount(twos) + 4 popcount(fours)`: the sum of a bit-sliced
    /// count given as three bit planes (a distance sum, say). The AVX2 lanes weight and add
    /// the three per-byte counts before their one horizontal sum.
    #[inline(always)]
    fn popcount_weighted(self, twos: Self, fours: Self) -> Self {
        self.popcount()
            .add(twos.popcount().shl(1))
            .add(fours.popcount().shl(2))
    }
    /// Lanes of `if_set` where `mask` is all ones, of `if_clear` where it is zero.
    #[inline(always)]
    fn select(mask: Self, if_set: Self, if_clear: Self) -> Self {
        (if_set & mask) | (if_clear & !mask)
    }
    /// Lanes equal to zero.
    #[inline(always)]
    fn is_empty_mask(self) -> Self {
        self.zero_mask()
    }
    /// The lanes as an array (the first `WIDTH` entries; the rest zero).
    #[inline(always)]
    fn to_array(self) -> [u64; 8] {
        let mut out = [0; 8];
        self.store(&mut out);
        out
    }

    /// An (mg, eg) pair per lane.
    type Pair: Copy + std::fmt::Debug;
    /// The pair (0, 0).
    fn pair_zero() -> Self::Pair;
    /// `count` (its low 32 bits, signed) times `(mg, eg)`.
    fn weigh(count: Self, mg: i32, eg: i32) -> Self::Pair;
    /// Lane-wise wrapping sum of pairs (each half as `i32`).
    fn pair_add(a: Self::Pair, b: Self::Pair) -> Self::Pair;
    /// The pair of `mg` and `eg` (their low 32 bits).
    fn pair(mg: Self, eg: Self) -> Self::Pair;
    /// Back to `(mg, eg)`: the low 32 bits of each lane are the value (higher bits are
    /// unspecified).
    fn unpair(pair: Self::Pair) -> (Self, Self);
}

impl Lanes for u64 {
    const WIDTH: usize = 1;
    #[inline(always)]
    fn splat(value: u64) -> Self {
        value
    }
    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        values[0]
    }
    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        out[0] = self;
    }
    #[inline(always)]
    fn shl(self, bits: u32) -> Self {
        self << bits
    }
    #[inline(always)]
    fn shr(self, bits: u32) -> Self {
        self >> bits
    }
    #[inline(always)]
    fn shl_each(self, bits: Self) -> Self {
        self << bits
    }
    #[inline(always)]
    fn shr_each(self, bits: Self) -> Self {
        self >> bits
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        self.wrapping_sub(other)
    }
    #[inline(always)]
    fn mul_i32(self, other: Self) -> Self {
        ((self as i32 as i64) * (other as i32 as i64)) as u64
    }
    #[inline(always)]
    fn popcount(self) -> Self {
        // Not `simd::popcount`: one position's lanes run inside `simd::dispatch`'s
        // functions too (the search's evaluation), where the level's POPCNT is the
        // compiler's own and a run-time flag would only add a branch per count.
        self.count_ones() as u64
    }
    #[inline(always)]
    fn zero_mask(self) -> Self {
        0u64.wrapping_sub((self == 0) as u64)
    }

    type Pair = (u64, u64);
    #[inline(always)]
    fn pair_zero() -> (u64, u64) {
        (0, 0)
    }
    #[inline(always)]
    fn weigh(count: u64, mg: i32, eg: i32) -> (u64, u64) {
        (
            count.mul_i32(mg as i64 as u64),
            count.mul_i32(eg as i64 as u64),
        )
    }
    #[inline(always)]
    fn pair_add(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
        (a.0.wrapping_add(b.0), a.1.wrapping_add(b.1))
    }
    #[inline(always)]
    fn pair(mg: u64, eg: u64) -> (u64, u64) {
        (mg, eg)
    }
    #[inline(always)]
    fn unpair(pair: (u64, u64)) -> (u64, u64) {
        pair
    }
}

/// The packed pair operations written with plain lane operations: any width, any CPU.
pub(crate) mod packed {
    use super::Lanes;

    const LOW: u64 = 0xffff_ffff;
    /// The top bit of each half.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    const TOPS: u64 = 0x8000_0000_8000_0000;

    #[inline(always)]
    pub fn weigh<L: Lanes>(count: L, mg: i32, eg: i32) -> L {
        let mg = count.mul_i32(L::splat(mg as i64 as u64)) & L::splat(LOW);
        let eg = count.mul_i32(L::splat(eg as i64 as u64)).shl(32);
        mg | eg
    }

    /// Two 32-bit wrapping adds per lane: the halves' low 31 bits added without the top
    /// bits (so no carry crosses), then the top bits put back by xor.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    pub fn add<L: Lanes>(a: L, b: L) -> L {
        let low = (a & L::splat(!TOPS)).add(b & L::splat(!TOPS));
        low ^ ((a ^ b) & L::splat(TOPS))
    }

    #[inline(always)]
    pub fn pair<L: Lanes>(mg: L, eg: L) -> L {
        (mg & L::splat(LOW)) | eg.shl(32)
    }

    #[inline(always)]
    pub fn unpair<L: Lanes>(pair: L) -> (L, L) {
        (pair, pair.shr(32))
    }
}

/// Lanes as plain arrays, every operation a loop over them: the compiler vectorises them
/// for the function they are inlined into (SSE4 on x86-64, NEON on aarch64).
pub(crate) mod portable {
    use std::ops::{BitAnd, BitOr, BitXor, Not};

    use super::{Lanes, packed};

    macro_rules! portable_lanes {
        ($name:ident, $width:expr, $align:literal) => {
            /// Portable lanes.
            #[derive(Clone, Copy, Debug, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
            #[repr(C, align($align))]
            pub struct $name([u64; $width]);

            impl $name {
                #[inline(always)]
                fn map(self, f: impl Fn(u64) -> u64) -> Self {
                    $name(self.0.map(f))
                }
                #[inline(always)]
                fn zip(self, other: Self, f: impl Fn(u64, u64) -> u64) -> Self {
                    $name(std::array::from_fn(
                        #[inline(always)]
                        |i| f(self.0[i], other.0[i]),
                    ))
                }
            }

            impl BitAnd for $name {
                type Output = Self;
                #[inline(always)]
                fn bitand(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a & b,
                    )
                }
            }
            impl BitOr for $name {
                type Output = Self;
                #[inline(always)]
                fn bitor(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a | b,
                    )
                }
            }
            impl BitXor for $name {
                type Output = Self;
                #[inline(always)]
                fn bitxor(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a ^ b,
                    )
                }
            }
            impl Not for $name {
                type Output = Self;
                #[inline(always)]
                fn not(self) -> Self {
                    self.map(
                        #[inline(always)]
                        |a| !a,
                    )
                }
            }

            impl Lanes for $name {
                const WIDTH: usize = $width;
                #[inline(always)]
                fn splat(value: u64) -> Self {
                    $name([value; $width])
                }
                #[inline(always)]
                fn load(values: &[u64]) -> Self {
                    $name(values[..$width].try_into().expect("WIDTH values"))
                }
                #[inline(always)]
                fn store(self, out: &mut [u64]) {
                    out[..$width].copy_from_slice(&self.0);
                }
                #[inline(always)]
                fn shl(self, bits: u32) -> Self {
                    self.map(
                        #[inline(always)]
                        |a| a << bits,
                    )
                }
                #[inline(always)]
                fn shr(self, bits: u32) -> Self {
                    self.map(
                        #[inline(always)]
                        |a| a >> bits,
                    )
                }
                #[inline(always)]
                fn shl_each(self, bits: Self) -> Self {
                    self.zip(
                        bits,
                        #[inline(always)]
                        |a, b| a << b,
                    )
                }
                #[inline(always)]
                fn shr_each(self, bits: Self) -> Self {
                    self.zip(
                        bits,
                        #[inline(always)]
                        |a, b| a >> b,
                    )
                }
                #[inline(always)]
                fn add(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a.wrapping_add(b),
                    )
                }
                #[inline(always)]
                fn sub(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a.wrapping_sub(b),
                    )
                }
                #[inline(always)]
                fn mul_i32(self, other: Self) -> Self {
                    self.zip(
                        other,
                        #[inline(always)]
                        |a, b| a.mul_i32(b),
                    )
                }
                #[inline(always)]
                fn popcount(self) -> Self {
                    self.map(
                        #[inline(always)]
                        |a| a.count_ones() as u64,
                    )
                }
                #[inline(always)]
                fn zero_mask(self) -> Self {
                    self.map(
                        #[inline(always)]
                        |a| a.zero_mask(),
                    )
                }

                type Pair = Self;
                #[inline(always)]
                fn pair_zero() -> Self {
                    Self::splat(0)
                }
                #[inline(always)]
                fn weigh(count: Self, mg: i32, eg: i32) -> Self {
                    packed::weigh(count, mg, eg)
                }
                #[inline(always)]
                fn pair_add(a: Self, b: Self) -> Self {
                    // Two i32 adds a lane, written as such: the compiler's 32-bit vector add.
                    a.zip(
                        b,
                        #[inline(always)]
                        |a, b| {
                            let low = (a as u32).wrapping_add(b as u32) as u64;
                            let high = ((a >> 32) as u32).wrapping_add((b >> 32) as u32) as u64;
                            low | high << 32
                        },
                    )
                }
                #[inline(always)]
                fn pair(mg: Self, eg: Self) -> Self {
                    packed::pair(mg, eg)
                }
                #[inline(always)]
                fn unpair(pair: Self) -> (Self, Self) {
                    packed::unpair(pair)
                }
            }
        };
    }

    portable_lanes!(P4, 4, 32);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{LanesFn, Path, dispatch};

    fn check<L: Lanes>(values: &[u64]) {
        let lanes = L::load(values);
        let mut out = vec![0; L::WIDTH];
        lanes.popcount().store(&mut out);
        let expected: Vec<u64> = values[..L::WIDTH]
            .iter()
            .map(|v| v.count_ones() as u64)
            .collect();
        assert_eq!(out, expected);
        lanes.zero_mask().store(&mut out);
        let expected: Vec<u64> = values[..L::WIDTH]
            .iter()
            .map(|&v| if v == 0 { !0 } else { 0 })
            .collect();
        assert_eq!(out, expected);
        lanes.shl(9).store(&mut out);
        assert_eq!(
            out,
            values[..L::WIDTH]
                .iter()
                .map(|v| v << 9)
                .collect::<Vec<_>>()
        );
        let weights = L::load(&[3, (-7i64) as u64, 0, 1 << 40 | 5, 9, 2, (-1i64) as u64, 11]);
        let mut w = vec![0; L::WIDTH];
        weights.store(&mut w);
        lanes.mul_i32(weights).store(&mut out);
        let expected: Vec<u64> = values[..L::WIDTH]
            .iter()
            .zip(&w)
            .map(|(&v, &w)| ((v as i32 as i64) * (w as i32 as i64)) as u64)
            .collect();
        assert_eq!(out, expected);
        lanes.sub(weights).store(&mut out);
        let expected: Vec<u64> = values[..L::WIDTH]
            .iter()
            .zip(&w)
            .map(|(&v, &w)| v.wrapping_sub(w))
            .collect();
        assert_eq!(out, expected);
        let (twos, fours) = (L::load(&values[1..]), L::load(&values[2..]));
        lanes.popcount_weighted(twos, fours).store(&mut out);
        let expected: Vec<u64> = (0..L::WIDTH)
            .map(|i| {
                (values[i].count_ones()
                    + 2 * values[i + 1].count_ones()
                    + 4 * values[i + 2].count_ones()) as u64
            })
            .collect();
        assert_eq!(out, expected);
        let counts = L::load(&[0, 63, 1, 8, 56, 7, 32, 9]);
        let mut c = vec![0; L::WIDTH];
        counts.store(&mut c);
        lanes.shl_each(counts).store(&mut out);
        let expected: Vec<u64> = (0..L::WIDTH).map(|i| values[i] << c[i]).collect();
        assert_eq!(out, expected);
        lanes.shr_each(counts).store(&mut out);
        let expected: Vec<u64> = (0..L::WIDTH).map(|i| values[i] >> c[i]).collect();
        assert_eq!(out, expected);
        lanes.shr(7).store(&mut out);
        assert_eq!(
            out,
            values[..L::WIDTH]
                .iter()
                .map(|v| v >> 7)
                .collect::<Vec<_>>()
        );
    }

    struct Arithmetic<'a>(&'a [u64]);
    impl LanesFn for Arithmetic<'_> {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            for start in 0..self.0.len() - 10 {
                check::<L>(&self.0[start..]);
            }
        }
    }

    /// Every lane type of every level this CPU has, against `u64` arithmetic.
    #[test]
    fn every_lane_type_matches_u64_arithmetic() {
        let values = [
            0,
            !0,
            1,
            1 << 63,
            0x0123_4567_89ab_cdef,
            0x8080_8080_8080_8080,
            7,
            0xff00,
            0xdead_beef_0000_ffff,
            !0 >> 3,
            0x5555,
            1,
            0xffff_ffff,
            0x8000_0000,
            3,
        ];
        for path in Path::every() {
            dispatch(path, Arithmetic(&values));
        }
    }

    fn check_pairs<L: Lanes>(counts: &[u64], weights: &[(i32, i32)]) {
        let mut total = L::pair_zero();
        let mut expected = [(0i32, 0i32); 8];
        for (i, &(mg, eg)) in weights.iter().enumerate() {
            let count = L::load(&counts[i..]);
            total = L::pair_add(total, L::weigh(count, mg, eg));
            for (lane, sum) in expected.iter_mut().enumerate().take(L::WIDTH) {
                let c = counts[i + lane] as i32;
                sum.0 = sum.0.wrapping_add(c.wrapping_mul(mg));
                sum.1 = sum.1.wrapping_add(c.wrapping_mul(eg));
            }
        }
        let extra: Vec<u64> = (0..9).map(|i| (i as i64 * -12345) as u64).collect();
        total = L::pair_add(total, L::pair(L::load(&extra), L::load(&extra[1..])));
        let (mg, eg) = L::unpair(total);
        let (mg_out, eg_out) = (mg.to_array(), eg.to_array());
        for lane in 0..L::WIDTH {
            let (m, e) = expected[lane];
            let (m, e) = (
                m.wrapping_add(extra[lane] as i32),
                e.wrapping_add(extra[lane + 1] as i32),
            );
            assert_eq!(
                (mg_out[lane] as i32, eg_out[lane] as i32),
                (m, e),
                "lane {lane}"
            );
        }
    }

    struct Pairs<'a>(&'a [u64], &'a [(i32, i32)]);
    impl LanesFn for Pairs<'_> {
        type Output = ();
        #[inline(always)]
        fn call<L: Lanes>(self) {
            check_pairs::<L>(self.0, self.1);
            // The packed operations on plain lane arithmetic give what each type does.
            let (mut total, mut reference) = (L::splat(0), L::pair_zero());
            for (i, &(mg, eg)) in self.1.iter().enumerate() {
                let count = L::load(&self.0[i..]);
                total = packed::add(total, packed::weigh(count, mg, eg));
                reference = L::pair_add(reference, L::weigh(count, mg, eg));
            }
            let (a, b) = (L::unpair(L::pair(total, total)).0, L::unpair(reference).0);
            let low = |x: L| x.to_array().map(|v| v as u32);
            assert_eq!(low(a), low(b));
        }
    }

    /// Every width on every level against plain wrapping `i32` sums, with negative counts,
    /// large weights and overflow.
    #[test]
    fn pairs_sum_like_i32() {
        let mut state = 0x0123_4567_89ab_cdefu64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let counts: Vec<u64> = (0..64)
            .map(|i| match i % 3 {
                0 => (next() % 129) as i64 - 64,
                1 => next() as i32 as i64,
                _ => next() as i64,
            } as u64)
            .collect();
        let weights: Vec<(i32, i32)> = (0..50)
            .map(|i| {
                let mg = if i % 2 == 0 {
                    next() as i32
                } else {
                    (next() % 2001) as i32 - 1000
                };
                (mg, next() as i32 >> (i % 20))
            })
            .collect();
        for path in Path::every() {
            dispatch(path, Pairs(&counts, &weights));
        }
    }
}
