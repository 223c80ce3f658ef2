//! "N bitboards at once": the one abstraction the kernels are written against.
//!
//! [`Lanes`] is implemented for `u64` (one position: the scalar reference, and what the
//! search uses), for `wide::u64x4` (AVX2) and for `wide::u64x8` (AVX-512, or two AVX2
//! halves where the CPU lacks it). A kernel written once as `fn k<L: Lanes>(...)` runs on
//! all three, so the SIMD code is the scalar code.

use std::ops::{BitAnd, BitOr, BitXor, Not};

use wide::{u64x4, u64x8};

/// A vector of `WIDTH` independent 64-bit lanes (bitboards or counts).
pub trait Lanes:
    Copy
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
        self.count_ones() as u64
    }
    #[inline(always)]
    fn zero_mask(self) -> Self {
        0u64.wrapping_sub((self == 0) as u64)
    }
}

macro_rules! wide_lanes {
    ($t:ty, $width:expr, $popcount:path, $weighted:path, $mul:path, $shift:ident) => {
        impl Lanes for $t {
            const WIDTH: usize = $width;
            #[inline(always)]
            fn splat(value: u64) -> Self {
                <$t>::splat(value)
            }
            #[inline(always)]
            fn load(values: &[u64]) -> Self {
                bytemuck::pod_read_unaligned(bytemuck::cast_slice(&values[..$width]))
            }
            #[inline(always)]
            fn store(self, out: &mut [u64]) {
                // A plain copy of the vector's bytes: one unaligned vector store.
                out[..$width].copy_from_slice(bytemuck::cast_slice(std::slice::from_ref(&self)));
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
                $shift::shl(self, bits)
            }
            #[inline(always)]
            fn shr_each(self, bits: Self) -> Self {
                $shift::shr(self, bits)
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                self - other
            }
            #[inline(always)]
            fn mul_i32(self, other: Self) -> Self {
                $mul(self, other)
            }
            #[inline(always)]
            fn popcount(self) -> Self {
                $popcount(self)
            }
            #[inline(always)]
            fn zero_mask(self) -> Self {
                self.simd_eq(<$t>::splat(0))
            }
            #[inline(always)]
            fn popcount_weighted(self, twos: Self, fours: Self) -> Self {
                $weighted(self, twos, fours)
            }
        }
    };
}

wide_lanes!(
    u64x4,
    4,
    popcount::x4,
    popcount::weighted_x4,
    multiply::x4,
    shift_x4
);
wide_lanes!(
    u64x8,
    8,
    popcount::x8,
    popcount::weighted_x8,
    multiply::x8,
    shift_x8
);

/// Per-lane shifts (`vpsllvq`, `vpsrlvq`). `wide`'s operators mask every count to 63
/// first, an instruction the callers (counts below 64 by contract) do not need.
mod shift_x4 {
    use wide::u64x4;

    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    #[inline(always)]
    pub fn shl(a: u64x4, bits: u64x4) -> u64x4 {
        use std::arch::x86_64::{__m256i, _mm256_sllv_epi64};
        let (a, bits): (__m256i, __m256i) = (bytemuck::cast(a), bytemuck::cast(bits));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        bytemuck::cast(unsafe { _mm256_sllv_epi64(a, bits) })
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    #[inline(always)]
    pub fn shr(a: u64x4, bits: u64x4) -> u64x4 {
        use std::arch::x86_64::{__m256i, _mm256_srlv_epi64};
        let (a, bits): (__m256i, __m256i) = (bytemuck::cast(a), bytemuck::cast(bits));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        bytemuck::cast(unsafe { _mm256_srlv_epi64(a, bits) })
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    #[inline(always)]
    pub fn shl(a: u64x4, bits: u64x4) -> u64x4 {
        a << bits
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    #[inline(always)]
    pub fn shr(a: u64x4, bits: u64x4) -> u64x4 {
        a >> bits
    }
}

/// Per-lane shifts on 8 lanes: one instruction with AVX-512, two AVX2 halves otherwise.
mod shift_x8 {
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    use wide::u64x4;
    use wide::u64x8;

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    #[inline(always)]
    pub fn shl(a: u64x8, bits: u64x8) -> u64x8 {
        use std::arch::x86_64::{__m512i, _mm512_sllv_epi64};
        let (a, bits): (__m512i, __m512i) = (bytemuck::cast(a), bytemuck::cast(bits));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX-512F.
        bytemuck::cast(unsafe { _mm512_sllv_epi64(a, bits) })
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    #[inline(always)]
    pub fn shr(a: u64x8, bits: u64x8) -> u64x8 {
        use std::arch::x86_64::{__m512i, _mm512_srlv_epi64};
        let (a, bits): (__m512i, __m512i) = (bytemuck::cast(a), bytemuck::cast(bits));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX-512F.
        bytemuck::cast(unsafe { _mm512_srlv_epi64(a, bits) })
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    #[inline(always)]
    pub fn shl(a: u64x8, bits: u64x8) -> u64x8 {
        let [a0, a1]: [u64x4; 2] = bytemuck::cast(a);
        let [b0, b1]: [u64x4; 2] = bytemuck::cast(bits);
        bytemuck::cast([super::shift_x4::shl(a0, b0), super::shift_x4::shl(a1, b1)])
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    #[inline(always)]
    pub fn shr(a: u64x8, bits: u64x8) -> u64x8 {
        let [a0, a1]: [u64x4; 2] = bytemuck::cast(a);
        let [b0, b1]: [u64x4; 2] = bytemuck::cast(bits);
        bytemuck::cast([super::shift_x4::shr(a0, b0), super::shift_x4::shr(a1, b1)])
    }
}

/// Signed 32 x 32 -> 64-bit lane products (`vpmuldq`); `wide`'s 64-bit multiply goes lane by
/// lane through memory, which the eval's weighted sums cannot afford.
mod multiply {
    use wide::{u64x4, u64x8};

    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    #[inline(always)]
    pub fn x4(a: u64x4, b: u64x4) -> u64x4 {
        use std::arch::x86_64::{__m256i, _mm256_mul_epi32};
        let (a, b): (__m256i, __m256i) = (bytemuck::cast(a), bytemuck::cast(b));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        bytemuck::cast(unsafe { _mm256_mul_epi32(a, b) })
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    #[inline(always)]
    pub fn x4(a: u64x4, b: u64x4) -> u64x4 {
        let (a, b) = (a.to_array(), b.to_array());
        u64x4::new(std::array::from_fn(|i| {
            ((a[i] as i32 as i64) * (b[i] as i32 as i64)) as u64
        }))
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512f"))]
    #[inline(always)]
    pub fn x8(a: u64x8, b: u64x8) -> u64x8 {
        use std::arch::x86_64::{__m512i, _mm512_mul_epi32};
        let (a, b): (__m512i, __m512i) = (bytemuck::cast(a), bytemuck::cast(b));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX-512F.
        bytemuck::cast(unsafe { _mm512_mul_epi32(a, b) })
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512f")))]
    #[inline(always)]
    pub fn x8(a: u64x8, b: u64x8) -> u64x8 {
        let [a_low, a_high]: [u64x4; 2] = bytemuck::cast(a);
        let [b_low, b_high]: [u64x4; 2] = bytemuck::cast(b);
        bytemuck::cast([x4(a_low, b_low), x4(a_high, b_high)])
    }
}

/// Per-lane popcount: the CPU's vector popcount (AVX-512 VPOPCNTDQ) where the build has it,
/// a nibble-table popcount (`vpshufb`, `vpsadbw`) on AVX2, lane by lane elsewhere.
mod popcount {
    use wide::{u64x4, u64x8};

    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx512vpopcntdq",
        target_feature = "avx512vl"
    ))]
    #[inline(always)]
    pub fn x4(v: u64x4) -> u64x4 {
        use std::arch::x86_64::{__m256i, _mm256_popcnt_epi64};
        let raw: __m256i = bytemuck::cast(v);
        // SAFETY: the cfg above guarantees the build targets CPUs with these features.
        bytemuck::cast(unsafe { _mm256_popcnt_epi64(raw) })
    }

    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        not(all(target_feature = "avx512vpopcntdq", target_feature = "avx512vl"))
    ))]
    #[inline(always)]
    pub fn x4(v: u64x4) -> u64x4 {
        use std::arch::x86_64::*;
        let raw: __m256i = bytemuck::cast(v);
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        let counts = unsafe {
            let table = _mm256_setr_epi8(
                0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3,
                2, 3, 3, 4,
            );
            let low_nibbles = _mm256_set1_epi8(0x0f);
            let low = _mm256_and_si256(raw, low_nibbles);
            let high = _mm256_and_si256(_mm256_srli_epi16(raw, 4), low_nibbles);
            let bytes = _mm256_add_epi8(
                _mm256_shuffle_epi8(table, low),
                _mm256_shuffle_epi8(table, high),
            );
            _mm256_sad_epu8(bytes, _mm256_setzero_si256())
        };
        bytemuck::cast(counts)
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    #[inline(always)]
    pub fn x4(v: u64x4) -> u64x4 {
        u64x4::new(v.to_array().map(|lane| lane.count_ones() as u64))
    }

    /// `popcount(a) + 2 popcount(b) + 4 popcount(c)` with nibble tables: a table per
    /// weight (counts times 1, 2 and 4), so the three per-byte counts add up (at most
    /// 8 + 16 + 32 a byte) before the one `vpsadbw`. 21 instructions instead of 25.
    #[cfg(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        not(all(target_feature = "avx512vpopcntdq", target_feature = "avx512vl"))
    ))]
    #[inline(always)]
    pub fn weighted_x4(a: u64x4, b: u64x4, c: u64x4) -> u64x4 {
        use std::arch::x86_64::*;
        let (a, b, c): (__m256i, __m256i, __m256i) =
            (bytemuck::cast(a), bytemuck::cast(b), bytemuck::cast(c));
        // SAFETY: the cfg above guarantees the build targets CPUs with AVX2.
        let sums = unsafe {
            let table = |w: i8| {
                _mm256_setr_epi8(
                    0,
                    w,
                    w,
                    2 * w,
                    w,
                    2 * w,
                    2 * w,
                    3 * w,
                    w,
                    2 * w,
                    2 * w,
                    3 * w,
                    2 * w,
                    3 * w,
                    3 * w,
                    4 * w,
                    0,
                    w,
                    w,
                    2 * w,
                    w,
                    2 * w,
                    2 * w,
                    3 * w,
                    w,
                    2 * w,
                    2 * w,
                    3 * w,
                    2 * w,
                    3 * w,
                    3 * w,
                    4 * w,
                )
            };
            let low_nibbles = _mm256_set1_epi8(0x0f);
            let counts = |v: __m256i, table: __m256i| {
                let low = _mm256_and_si256(v, low_nibbles);
                let high = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_nibbles);
                _mm256_add_epi8(
                    _mm256_shuffle_epi8(table, low),
                    _mm256_shuffle_epi8(table, high),
                )
            };
            let bytes = _mm256_add_epi8(
                _mm256_add_epi8(counts(a, table(1)), counts(b, table(2))),
                counts(c, table(4)),
            );
            _mm256_sad_epu8(bytes, _mm256_setzero_si256())
        };
        bytemuck::cast(sums)
    }

    /// Three lane popcounts where the CPU counts lanes itself (or, without AVX2, one lane
    /// at a time anyway).
    #[cfg(not(all(
        target_arch = "x86_64",
        target_feature = "avx2",
        not(all(target_feature = "avx512vpopcntdq", target_feature = "avx512vl"))
    )))]
    #[inline(always)]
    pub fn weighted_x4(a: u64x4, b: u64x4, c: u64x4) -> u64x4 {
        x4(a) + (x4(b) << 1) + (x4(c) << 2)
    }

    #[cfg(all(target_arch = "x86_64", target_feature = "avx512vpopcntdq"))]
    #[inline(always)]
    pub fn x8(v: u64x8) -> u64x8 {
        use std::arch::x86_64::{__m512i, _mm512_popcnt_epi64};
        let raw: __m512i = bytemuck::cast(v);
        // SAFETY: the cfg above guarantees the build targets CPUs with this feature.
        bytemuck::cast(unsafe { _mm512_popcnt_epi64(raw) })
    }

    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512vpopcntdq")))]
    #[inline(always)]
    pub fn x8(v: u64x8) -> u64x8 {
        let [low, high]: [u64x4; 2] = bytemuck::cast(v);
        bytemuck::cast([x4(low), x4(high)])
    }

    /// The 8-lane weighted count: native lane popcounts with VPOPCNTDQ, else two halves.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx512vpopcntdq"))]
    #[inline(always)]
    pub fn weighted_x8(a: u64x8, b: u64x8, c: u64x8) -> u64x8 {
        x8(a) + (x8(b) << 1) + (x8(c) << 2)
    }

    /// The 8-lane weighted count: native lane popcounts with VPOPCNTDQ, else two halves.
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx512vpopcntdq")))]
    #[inline(always)]
    pub fn weighted_x8(a: u64x8, b: u64x8, c: u64x8) -> u64x8 {
        let [a0, a1]: [u64x4; 2] = bytemuck::cast(a);
        let [b0, b1]: [u64x4; 2] = bytemuck::cast(b);
        let [c0, c1]: [u64x4; 2] = bytemuck::cast(c);
        bytemuck::cast([weighted_x4(a0, b0, c0), weighted_x4(a1, b1, c1)])
    }
}

/// Which vector code this build runs, for summaries: e.g. `AVX-512 (8 x u64, VPOPCNTDQ)`.
pub fn simd_path() -> &'static str {
    if cfg!(all(target_arch = "x86_64", target_feature = "avx512f")) {
        if cfg!(target_feature = "avx512vpopcntdq") {
            "AVX-512 (8 x u64, VPOPCNTDQ popcount)"
        } else {
            "AVX-512 (8 x u64, AVX2 nibble popcount)"
        }
    } else if cfg!(all(target_arch = "x86_64", target_feature = "avx2")) {
        "AVX2 (8 x u64 as two 4-lane halves, nibble popcount)"
    } else {
        "portable (8 x u64 emulated, scalar popcount)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        ];
        check::<u64>(&values);
        check::<u64x4>(&values);
        check::<u64x4>(&values[4..]);
        check::<u64x8>(&values);
    }
}
