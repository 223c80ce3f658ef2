//! (mg, eg) pairs of term values, weighted and summed.
//!
//! The scalar path keeps two 64-bit values (one `imul` each). In vectors a pair is one
//! value: each 64-bit lane holds the mg value in its low 32 bits and the eg value in its
//! high 32 bits, weighted with one 32-bit multiply (`vpmulld`, both halves at once) and
//! summed with 32-bit adds, which never carry from one half into the other. That halves the
//! multiplies and the sums of the batch's ~80 weighted counts. Each half wraps as `i32`,
//! exactly as the low 32 bits of the separate 64-bit sums did (all that `finish` reads of
//! them), so scores are unchanged bit for bit.

use pawnstorm_kernels::Lanes;
use wide::{u64x4, u64x8};

use crate::eval::weights::Weight;

/// Lanes that can hold (mg, eg) pairs.
pub trait PairLanes: Lanes {
    type Pair: Copy + std::fmt::Debug;
    /// The pair (0, 0).
    fn pair_zero() -> Self::Pair;
    /// `count` (its low 32 bits, signed) times `weight`.
    fn weigh(count: Self, weight: Weight) -> Self::Pair;
    fn pair_add(a: Self::Pair, b: Self::Pair) -> Self::Pair;
    /// The pair of `mg` and `eg` (their low 32 bits).
    fn pair(mg: Self, eg: Self) -> Self::Pair;
    /// Back to `(mg, eg)`: the low 32 bits of each lane are the value (higher bits are
    /// unspecified).
    fn unpair(pair: Self::Pair) -> (Self, Self);
}

impl PairLanes for u64 {
    type Pair = (u64, u64);
    #[inline(always)]
    fn pair_zero() -> (u64, u64) {
        (0, 0)
    }
    #[inline(always)]
    fn weigh(count: u64, weight: Weight) -> (u64, u64) {
        (
            count.mul_i32(weight.mg as i64 as u64),
            count.mul_i32(weight.eg as i64 as u64),
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

/// The packed pair operations with plain lane operations: any width, any CPU.
mod portable {
    use super::*;

    const LOW: u64 = 0xffff_ffff;
    /// The top bit of each half.
    const TOPS: u64 = 0x8000_0000_8000_0000;

    #[inline(always)]
    pub fn weigh<L: Lanes>(count: L, weight: Weight) -> L {
        let mg = count.mul_i32(L::splat(weight.mg as i64 as u64)) & L::splat(LOW);
        let eg = count.mul_i32(L::splat(weight.eg as i64 as u64)).shl(32);
        mg | eg
    }

    /// Two 32-bit wrapping adds per lane: the halves' low 31 bits added without the top
    /// bits (so no carry crosses), then the top bits put back by xor.
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

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod avx2 {
    use std::arch::x86_64::*;

    use super::*;

    /// (mg, eg) as the two 32-bit halves of one word. Only this path multiplies by a
    /// packed pair (the portable one multiplies each half on its own).
    #[inline(always)]
    fn packed_weight(weight: Weight) -> u64 {
        (weight.mg as u32 as u64) | (weight.eg as u32 as u64) << 32
    }

    #[inline(always)]
    pub fn weigh(count: u64x4, weight: Weight) -> u64x4 {
        let count: __m256i = bytemuck::cast(count);
        let weight = packed_weight(weight) as i64;
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        bytemuck::cast(unsafe {
            // The count's low half into both halves, times (mg, eg).
            let both = _mm256_shuffle_epi32(count, 0b10_10_00_00);
            _mm256_mullo_epi32(both, _mm256_set1_epi64x(weight))
        })
    }

    #[inline(always)]
    pub fn add(a: u64x4, b: u64x4) -> u64x4 {
        let (a, b): (__m256i, __m256i) = (bytemuck::cast(a), bytemuck::cast(b));
        // SAFETY: as above.
        bytemuck::cast(unsafe { _mm256_add_epi32(a, b) })
    }

    #[inline(always)]
    pub fn pair(mg: u64x4, eg: u64x4) -> u64x4 {
        let (mg, eg): (__m256i, __m256i) = (bytemuck::cast(mg), bytemuck::cast(eg));
        // SAFETY: as above.
        bytemuck::cast(unsafe { _mm256_blend_epi32(mg, _mm256_slli_epi64(eg, 32), 0b1010_1010) })
    }
}

/// The four-lane code of this build.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
use avx2 as four;
#[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
use portable as four;

impl PairLanes for u64x4 {
    type Pair = u64x4;
    #[inline(always)]
    fn pair_zero() -> u64x4 {
        u64x4::splat(0)
    }
    #[inline(always)]
    fn weigh(count: u64x4, weight: Weight) -> u64x4 {
        four::weigh(count, weight)
    }
    #[inline(always)]
    fn pair_add(a: u64x4, b: u64x4) -> u64x4 {
        four::add(a, b)
    }
    #[inline(always)]
    fn pair(mg: u64x4, eg: u64x4) -> u64x4 {
        four::pair(mg, eg)
    }
    #[inline(always)]
    fn unpair(pair: u64x4) -> (u64x4, u64x4) {
        portable::unpair(pair)
    }
}

/// Eight lanes: two four-lane halves where the CPU has AVX2 but not AVX-512 (how `wide`
/// stores them anyway), plain lane operations otherwise.
impl PairLanes for u64x8 {
    type Pair = u64x8;
    #[inline(always)]
    fn pair_zero() -> u64x8 {
        u64x8::splat(0)
    }
    #[inline(always)]
    fn weigh(count: u64x8, weight: Weight) -> u64x8 {
        if HALVES {
            let [low, high]: [u64x4; 2] = bytemuck::cast(count);
            bytemuck::cast([u64x4::weigh(low, weight), u64x4::weigh(high, weight)])
        } else {
            portable::weigh(count, weight)
        }
    }
    #[inline(always)]
    fn pair_add(a: u64x8, b: u64x8) -> u64x8 {
        if HALVES {
            let [a_low, a_high]: [u64x4; 2] = bytemuck::cast(a);
            let [b_low, b_high]: [u64x4; 2] = bytemuck::cast(b);
            bytemuck::cast([
                u64x4::pair_add(a_low, b_low),
                u64x4::pair_add(a_high, b_high),
            ])
        } else {
            portable::add(a, b)
        }
    }
    #[inline(always)]
    fn pair(mg: u64x8, eg: u64x8) -> u64x8 {
        if HALVES {
            let [mg_low, mg_high]: [u64x4; 2] = bytemuck::cast(mg);
            let [eg_low, eg_high]: [u64x4; 2] = bytemuck::cast(eg);
            bytemuck::cast([u64x4::pair(mg_low, eg_low), u64x4::pair(mg_high, eg_high)])
        } else {
            portable::pair(mg, eg)
        }
    }
    #[inline(always)]
    fn unpair(pair: u64x8) -> (u64x8, u64x8) {
        portable::unpair(pair)
    }
}

/// Whether eight lanes are two AVX2 halves.
const HALVES: bool = cfg!(all(
    target_arch = "x86_64",
    target_feature = "avx2",
    not(target_feature = "avx512f")
));

#[cfg(test)]
mod tests {
    use super::*;

    fn check<L: PairLanes>(counts: &[u64], weights: &[Weight]) {
        let mut total = L::pair_zero();
        let mut expected = [(0i32, 0i32); 8];
        for (i, weight) in weights.iter().enumerate() {
            let count = L::load(&counts[i..]);
            total = L::pair_add(total, L::weigh(count, *weight));
            for (lane, sum) in expected.iter_mut().enumerate().take(L::WIDTH) {
                let c = counts[i + lane] as i32;
                sum.0 = sum.0.wrapping_add(c.wrapping_mul(weight.mg));
                sum.1 = sum.1.wrapping_add(c.wrapping_mul(weight.eg));
            }
        }
        let extra: Vec<u64> = (0..9).map(|i| (i as i64 * -12345) as u64).collect();
        total = L::pair_add(total, L::pair(L::load(&extra), L::load(&extra[1..])));
        let (mg, eg) = L::unpair(total);
        let (mut mg_out, mut eg_out) = ([0u64; 8], [0u64; 8]);
        mg.store(&mut mg_out);
        eg.store(&mut eg_out);
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

    /// Every width and the portable code on eight lanes (what AVX-512 builds run) against
    /// plain wrapping `i32` sums, with negative counts, large weights and overflow.
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
        let weights: Vec<Weight> = (0..50)
            .map(|i| Weight {
                mg: if i % 2 == 0 {
                    next() as i32
                } else {
                    (next() % 2001) as i32 - 1000
                },
                eg: next() as i32 >> (i % 20),
            })
            .collect();
        check::<u64>(&counts, &weights);
        check::<u64x4>(&counts, &weights);
        check::<u64x8>(&counts, &weights);
        // The portable eight-lane code, whatever this build uses.
        let mut total = u64x8::splat(0);
        let mut reference = u64x8::pair_zero();
        for (i, weight) in weights.iter().enumerate() {
            let count = u64x8::load(&counts[i..]);
            total = portable::add(total, portable::weigh(count, *weight));
            reference = u64x8::pair_add(reference, u64x8::weigh(count, *weight));
        }
        assert_eq!(total, reference);
        let (mg, eg) = (u64x8::load(&counts), u64x8::load(&counts[8..]));
        assert_eq!(portable::pair(mg, eg), u64x8::pair(mg, eg));
    }
}
