//! The x86-64 vector lanes: AVX2 (four lanes) and AVX-512 (eight lanes). Only the widths
//! [`crate::simd::Path::native`] runs are here: every other (level, width) pair was code
//! compiled into every kernel for the tests alone (issue 54).
//!
//! Every operation is an `#[inline(always)]` call of an intrinsic. Outside a function
//! compiled for the instruction set such a call would not inline (and is undefined on a CPU
//! without it); these types are only ever made inside [`crate::simd::dispatch`]'s functions
//! for their level, which the CPU is checked to have, and everything the kernels call is
//! inlined into those functions.

use std::arch::x86_64::*;
use std::ops::{BitAnd, BitOr, BitXor, Not};

use super::{Lanes, packed};

/// The nibble-table popcount of each 64-bit lane (`vpshufb`, `vpsadbw`), with each byte's
/// count multiplied by `weight`.
///
/// # Safety
/// The CPU has AVX2.
#[inline(always)]
unsafe fn nibble_counts(v: __m256i, weight: i8) -> __m256i {
    let w = weight;
    unsafe {
        // The same 16-entry table in both 128-bit halves (`vpshufb` looks up per half).
        let table = _mm256_broadcastsi128_si256(_mm_setr_epi8(
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
        ));
        let low_nibbles = _mm256_set1_epi8(0x0f);
        let low = _mm256_and_si256(v, low_nibbles);
        let high = _mm256_and_si256(_mm256_srli_epi16(v, 4), low_nibbles);
        _mm256_add_epi8(
            _mm256_shuffle_epi8(table, low),
            _mm256_shuffle_epi8(table, high),
        )
    }
}

/// Four lanes in one 256-bit register; `$vpopcnt` says whether lane popcounts use
/// AVX-512 VPOPCNTDQ (with VL) or AVX2's nibble tables.
macro_rules! lanes_256 {
    ($name:ident, $vpopcnt:expr) => {
        /// Four 64-bit lanes in a 256-bit register.
        #[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
        #[repr(transparent)]
        pub struct $name(__m256i);

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.to_array() == other.to_array()
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "{}({:x?})", stringify!($name), &self.to_array()[..4])
            }
        }

        // SAFETY (every `unsafe` block below): the type only exists inside dispatch's
        // functions for a level with AVX2 (and, for the VPOPCNTDQ variant, AVX-512 VL and
        // VPOPCNTDQ), on a CPU checked to have them.
        impl BitAnd for $name {
            type Output = Self;
            #[inline(always)]
            fn bitand(self, other: Self) -> Self {
                $name(unsafe { _mm256_and_si256(self.0, other.0) })
            }
        }
        impl BitOr for $name {
            type Output = Self;
            #[inline(always)]
            fn bitor(self, other: Self) -> Self {
                $name(unsafe { _mm256_or_si256(self.0, other.0) })
            }
        }
        impl BitXor for $name {
            type Output = Self;
            #[inline(always)]
            fn bitxor(self, other: Self) -> Self {
                $name(unsafe { _mm256_xor_si256(self.0, other.0) })
            }
        }
        impl Not for $name {
            type Output = Self;
            #[inline(always)]
            fn not(self) -> Self {
                $name(unsafe { _mm256_xor_si256(self.0, _mm256_set1_epi64x(-1)) })
            }
        }

        impl Lanes for $name {
            const WIDTH: usize = 4;
            #[inline(always)]
            fn splat(value: u64) -> Self {
                $name(unsafe { _mm256_set1_epi64x(value as i64) })
            }
            #[inline(always)]
            fn load(values: &[u64]) -> Self {
                let values = &values[..4];
                $name(unsafe { _mm256_loadu_si256(values.as_ptr().cast()) })
            }
            #[inline(always)]
            fn store(self, out: &mut [u64]) {
                let out = &mut out[..4];
                unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), self.0) }
            }
            #[inline(always)]
            fn shl(self, bits: u32) -> Self {
                $name(unsafe { _mm256_sll_epi64(self.0, _mm_cvtsi32_si128(bits as i32)) })
            }
            #[inline(always)]
            fn shr(self, bits: u32) -> Self {
                $name(unsafe { _mm256_srl_epi64(self.0, _mm_cvtsi32_si128(bits as i32)) })
            }
            #[inline(always)]
            fn shl_each(self, bits: Self) -> Self {
                $name(unsafe { _mm256_sllv_epi64(self.0, bits.0) })
            }
            #[inline(always)]
            fn shr_each(self, bits: Self) -> Self {
                $name(unsafe { _mm256_srlv_epi64(self.0, bits.0) })
            }
            #[inline(always)]
            fn add(self, other: Self) -> Self {
                $name(unsafe { _mm256_add_epi64(self.0, other.0) })
            }
            #[inline(always)]
            fn sub(self, other: Self) -> Self {
                $name(unsafe { _mm256_sub_epi64(self.0, other.0) })
            }
            #[inline(always)]
            fn mul_i32(self, other: Self) -> Self {
                $name(unsafe { _mm256_mul_epi32(self.0, other.0) })
            }
            #[inline(always)]
            fn popcount(self) -> Self {
                if $vpopcnt {
                    $name(unsafe { _mm256_popcnt_epi64(self.0) })
                } else {
                    $name(unsafe {
                        _mm256_sad_epu8(nibble_counts(self.0, 1), _mm256_setzero_si256())
                    })
                }
            }
            #[inline(always)]
            fn popcount_weighted(self, twos: Self, fours: Self) -> Self {
                if $vpopcnt {
                    self.popcount()
                        .add(twos.popcount().shl(1))
                        .add(fours.popcount().shl(2))
                } else {
                    // A table per weight, so the three per-byte counts add up (at most
                    // 8 + 16 + 32 a byte) before the one `vpsadbw`.
                    $name(unsafe {
                        let bytes = _mm256_add_epi8(
                            _mm256_add_epi8(nibble_counts(self.0, 1), nibble_counts(twos.0, 2)),
                            nibble_counts(fours.0, 4),
                        );
                        _mm256_sad_epu8(bytes, _mm256_setzero_si256())
                    })
                }
            }
            #[inline(always)]
            fn zero_mask(self) -> Self {
                $name(unsafe { _mm256_cmpeq_epi64(self.0, _mm256_setzero_si256()) })
            }

            type Pair = Self;
            #[inline(always)]
            fn pair_zero() -> Self {
                Self::splat(0)
            }
            #[inline(always)]
            fn weigh(count: Self, mg: i32, eg: i32) -> Self {
                let weight = (mg as u32 as u64 | (eg as u32 as u64) << 32) as i64;
                // The count's low half into both halves, times (mg, eg) in one multiply.
                $name(unsafe {
                    let both = _mm256_shuffle_epi32(count.0, 0b10_10_00_00);
                    _mm256_mullo_epi32(both, _mm256_set1_epi64x(weight))
                })
            }
            #[inline(always)]
            fn pair_add(a: Self, b: Self) -> Self {
                $name(unsafe { _mm256_add_epi32(a.0, b.0) })
            }
            #[inline(always)]
            fn pair(mg: Self, eg: Self) -> Self {
                $name(unsafe { _mm256_blend_epi32(mg.0, _mm256_slli_epi64(eg.0, 32), 0b1010_1010) })
            }
            #[inline(always)]
            fn unpair(pair: Self) -> (Self, Self) {
                packed::unpair(pair)
            }
        }
    };
}

lanes_256!(Avx2x4, false);

/// Eight lanes in one AVX-512 register.
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(transparent)]
pub struct Avx512x8(__m512i);

impl PartialEq for Avx512x8 {
    fn eq(&self, other: &Self) -> bool {
        self.to_array() == other.to_array()
    }
}

impl std::fmt::Debug for Avx512x8 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Avx512x8({:x?})", self.to_array())
    }
}

// SAFETY (every `unsafe` block below): the type only exists inside dispatch's function for
// the AVX-512 level (F, BW, VL, VPOPCNTDQ), on a CPU checked to have it.
impl BitAnd for Avx512x8 {
    type Output = Self;
    #[inline(always)]
    fn bitand(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_and_si512(self.0, other.0) })
    }
}
impl BitOr for Avx512x8 {
    type Output = Self;
    #[inline(always)]
    fn bitor(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_or_si512(self.0, other.0) })
    }
}
impl BitXor for Avx512x8 {
    type Output = Self;
    #[inline(always)]
    fn bitxor(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_xor_si512(self.0, other.0) })
    }
}
impl Not for Avx512x8 {
    type Output = Self;
    #[inline(always)]
    fn not(self) -> Self {
        Avx512x8(unsafe { _mm512_xor_si512(self.0, _mm512_set1_epi64(-1)) })
    }
}

impl Lanes for Avx512x8 {
    const WIDTH: usize = 8;
    #[inline(always)]
    fn splat(value: u64) -> Self {
        Avx512x8(unsafe { _mm512_set1_epi64(value as i64) })
    }
    #[inline(always)]
    fn load(values: &[u64]) -> Self {
        let values = &values[..8];
        Avx512x8(unsafe { _mm512_loadu_si512(values.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store(self, out: &mut [u64]) {
        let out = &mut out[..8];
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn shl(self, bits: u32) -> Self {
        Avx512x8(unsafe { _mm512_sll_epi64(self.0, _mm_cvtsi32_si128(bits as i32)) })
    }
    #[inline(always)]
    fn shr(self, bits: u32) -> Self {
        Avx512x8(unsafe { _mm512_srl_epi64(self.0, _mm_cvtsi32_si128(bits as i32)) })
    }
    #[inline(always)]
    fn shl_each(self, bits: Self) -> Self {
        Avx512x8(unsafe { _mm512_sllv_epi64(self.0, bits.0) })
    }
    #[inline(always)]
    fn shr_each(self, bits: Self) -> Self {
        Avx512x8(unsafe { _mm512_srlv_epi64(self.0, bits.0) })
    }
    #[inline(always)]
    fn add(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_add_epi64(self.0, other.0) })
    }
    #[inline(always)]
    fn sub(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_sub_epi64(self.0, other.0) })
    }
    #[inline(always)]
    fn mul_i32(self, other: Self) -> Self {
        Avx512x8(unsafe { _mm512_mul_epi32(self.0, other.0) })
    }
    #[inline(always)]
    fn popcount(self) -> Self {
        Avx512x8(unsafe { _mm512_popcnt_epi64(self.0) })
    }
    #[inline(always)]
    fn zero_mask(self) -> Self {
        Avx512x8(unsafe {
            let zero = _mm512_cmpeq_epi64_mask(self.0, _mm512_setzero_si512());
            _mm512_maskz_mov_epi64(zero, _mm512_set1_epi64(-1))
        })
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
        packed::add(a, b)
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
