//! The network's kernels, one per instruction set: adding and removing first-layer rows
//! and the output layer's `Σ clamp(v, 0, QA)² × w`. All are exact integer arithmetic
//! (wrapping `i16` sums, wrapping `i32` output sums), so every path gives the reference's
//! values bit for bit; the tests hold each path the build has to the portable one.

use super::QA;
use super::network::Chunk;

/// An instruction set the kernels have a path for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Avx512,
    Avx2,
    Portable,
}

impl Level {
    /// The widest path the process runs: the kernels' level
    /// ([`pawnstorm_kernels::simd::level`], detected at run time and lowered by
    /// `PAWNSTORM_SIMD`), AVX-512 needing its BW part, which that level includes.
    pub fn best() -> Level {
        use pawnstorm_kernels::simd::{self, Level as Kernels};
        match simd::level() {
            Kernels::Avx512 => Level::Avx512,
            Kernels::Avx2 => Level::Avx2,
            Kernels::Sse4 | Kernels::Scalar => Level::Portable,
        }
    }

    /// Every path this process can run, widest first.
    pub fn available() -> Vec<Level> {
        [Level::Avx512, Level::Avx2, Level::Portable]
            .into_iter()
            .filter(|&l| l <= Level::best())
            .collect()
    }

    pub fn name(self) -> &'static str {
        match self {
            Level::Avx512 => "avx512",
            Level::Avx2 => "avx2",
            Level::Portable => "portable",
        }
    }

    fn rank(self) -> u8 {
        match self {
            Level::Avx512 => 2,
            Level::Avx2 => 1,
            Level::Portable => 0,
        }
    }
}

impl PartialOrd for Level {
    fn partial_cmp(&self, other: &Level) -> Option<std::cmp::Ordering> {
        Some(self.rank().cmp(&other.rank()))
    }
}

/// `dst = src + Σ rows(adds) − Σ rows(subs)`, chunk by chunk (`dst` may be `src`: each
/// chunk is read before it is written). `weights` holds rows of `chunks` chunks.
///
/// # Safety
/// `dst` and `src` point to `chunks` chunks each; every index in `adds` and `subs` names a
/// row of `weights`; `level` is one this build has ([`Level::available`]).
#[inline(always)]
unsafe fn apply_raw(
    level: Level,
    dst: *mut Chunk,
    src: *const Chunk,
    weights: &[Chunk],
    chunks: usize,
    adds: &[u16],
    subs: &[u16],
) {
    // A move changes one to four rows: a quiet move 1 + 1, a capture 1 + 2, castling 2 + 2.
    // With the counts known at compile time the loop over the rows unrolls inside the loop
    // over the chunks; with them in a loop, its exit was mispredicted chunk after chunk
    // (the bulk pass over a DB of games ran about 10% faster for this).
    if level != Level::Portable {
        match (adds, subs) {
            (&[a], &[s]) => {
                return unsafe { apply_fixed(level, dst, src, weights, chunks, [a], [s]) };
            }
            (&[a], &[s, t]) => {
                return unsafe { apply_fixed(level, dst, src, weights, chunks, [a], [s, t]) };
            }
            (&[a, b], &[s, t]) => {
                return unsafe { apply_fixed(level, dst, src, weights, chunks, [a, b], [s, t]) };
            }
            _ => {}
        }
    }
    unsafe { apply_any(level, dst, src, weights, chunks, adds, subs) }
}

/// [`apply_raw`] for `A` rows added and `S` removed.
///
/// # Safety
/// As [`apply_raw`]'s.
#[inline(always)]
unsafe fn apply_fixed<const A: usize, const S: usize>(
    level: Level,
    dst: *mut Chunk,
    src: *const Chunk,
    weights: &[Chunk],
    chunks: usize,
    adds: [u16; A],
    subs: [u16; S],
) {
    let base = weights.as_ptr();
    let (rows_added, rows_removed) = (adds, subs);
    let adds = adds.map(|a| unsafe { base.add(a as usize * chunks) });
    let subs = subs.map(|s| unsafe { base.add(s as usize * chunks) });
    match level {
        // SAFETY: the level is one the CPU has (the callers check it).
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { x86::apply_fixed_avx512(dst, src, chunks, adds, subs) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { x86::apply_fixed_avx2(dst, src, chunks, adds, subs) },
        _ => unsafe {
            let _ = (adds, subs);
            apply_any(level, dst, src, weights, chunks, &rows_added, &rows_removed)
        },
    }
}

/// [`apply_raw`] for any rows.
///
/// # Safety
/// As [`apply_raw`]'s.
#[inline(always)]
unsafe fn apply_any(
    level: Level,
    dst: *mut Chunk,
    src: *const Chunk,
    weights: &[Chunk],
    chunks: usize,
    adds: &[u16],
    subs: &[u16],
) {
    let base = weights.as_ptr();
    match level {
        // SAFETY: the level is one the CPU has (the callers check it).
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 => unsafe { x86::apply_any_avx512(dst, src, base, chunks, adds, subs) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 => unsafe { x86::apply_any_avx2(dst, src, base, chunks, adds, subs) },
        _ => unsafe {
            for c in 0..chunks {
                let mut v = (*src.add(c)).0;
                for &a in adds {
                    let w = &(*base.add(a as usize * chunks + c)).0;
                    for i in 0..32 {
                        v[i] = v[i].wrapping_add(w[i]);
                    }
                }
                for &s in subs {
                    let w = &(*base.add(s as usize * chunks + c)).0;
                    for i in 0..32 {
                        v[i] = v[i].wrapping_sub(w[i]);
                    }
                }
                (*dst.add(c)).0 = v;
            }
        },
    }
}

/// `acc += Σ rows(adds) − Σ rows(subs)`.
#[inline(always)]
pub fn apply_in_place(
    level: Level,
    acc: &mut [Chunk],
    weights: &[Chunk],
    adds: &[u16],
    subs: &[u16],
) {
    let chunks = acc.len();
    assert!(level <= Level::best());
    assert!(
        adds.iter()
            .chain(subs)
            .all(|&r| (r as usize + 1) * chunks <= weights.len())
    );
    let p = acc.as_mut_ptr();
    // SAFETY: `acc` is `chunks` chunks, the rows were checked against `weights`, and the
    // level is one the build has.
    unsafe { apply_raw(level, p, p, weights, chunks, adds, subs) }
}

/// `dst = src + Σ rows(adds) − Σ rows(subs)`.
#[inline(always)]
pub fn apply_from(
    level: Level,
    dst: &mut [Chunk],
    src: &[Chunk],
    weights: &[Chunk],
    adds: &[u16],
    subs: &[u16],
) {
    let chunks = dst.len();
    assert_eq!(src.len(), chunks);
    assert!(level <= Level::best());
    assert!(
        adds.iter()
            .chain(subs)
            .all(|&r| (r as usize + 1) * chunks <= weights.len())
    );
    // SAFETY: as in `apply_in_place`; `dst` and `src` are distinct borrows of equal length.
    unsafe {
        apply_raw(
            level,
            dst.as_mut_ptr(),
            src.as_ptr(),
            weights,
            chunks,
            adds,
            subs,
        )
    }
}

/// One perspective's accumulator and the rows that move it: `acc += Σ rows(adds) −
/// Σ rows(subs)`.
pub struct PerspectiveUpdate<'a> {
    pub acc: &'a mut [Chunk],
    pub adds: &'a [u16],
    pub subs: &'a [u16],
}

/// Both perspectives moved by their rows ([`apply_in_place`]) and the output layer's sum
/// over the new values ([`screlu_sum_pair`]: `us` with `ours`, `them` with `theirs`), in one
/// pass over the chunks: each chunk's new sums go to the output layer from the registers
/// they were made in, instead of being stored and loaded back by a second pass. The same
/// values as the two calls. For the bulk pass's rows a move apart; other row counts, the
/// portable level and large output weights make the two calls.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn update_and_screlu_pair(
    level: Level,
    weights: &[Chunk],
    us: PerspectiveUpdate<'_>,
    ours: &[Chunk],
    them: PerspectiveUpdate<'_>,
    theirs: &[Chunk],
    small_weights: bool,
) -> i32 {
    #[cfg(target_arch = "x86_64")]
    if level != Level::Portable && small_weights {
        let chunks = us.acc.len();
        assert!(
            them.acc.len() == chunks && ours.len() == chunks && theirs.len() == chunks,
            "one width"
        );
        assert!([us.adds, us.subs, them.adds, them.subs].iter().all(|rows| {
            rows.iter()
                .all(|&r| (r as usize + 1) * chunks <= weights.len())
        }));
        let base = weights.as_ptr();
        // Only read by the kernel, within the bounds just checked.
        let row = |r: u16| base.wrapping_add(r as usize * chunks);
        macro_rules! fixed {
            ($a:expr, $s:expr) => {{
                let adds = [$a(us.adds), $a(them.adds)];
                let subs = [$s(us.subs), $s(them.subs)];
                let (acc, out) = ([us.acc, them.acc], [ours, theirs]);
                // SAFETY: the CPU has the level; every row was checked against `weights`
                // and every slice has `chunks` chunks.
                return unsafe {
                    if level == Level::Avx512 {
                        x86::update_and_screlu_pair_avx512(acc, out, adds, subs)
                    } else {
                        x86::update_and_screlu_pair_avx2(acc, out, adds, subs)
                    }
                };
            }};
        }
        match (
            us.adds.len(),
            us.subs.len(),
            them.adds.len(),
            them.subs.len(),
        ) {
            (1, 1, 1, 1) => fixed!(|r: &[u16]| [row(r[0])], |r: &[u16]| [row(r[0])]),
            (1, 2, 1, 2) => {
                fixed!(|r: &[u16]| [row(r[0])], |r: &[u16]| [row(r[0]), row(r[1])])
            }
            (2, 2, 2, 2) => fixed!(|r: &[u16]| [row(r[0]), row(r[1])], |r: &[u16]| [
                row(r[0]),
                row(r[1])
            ]),
            _ => {}
        }
    }
    apply_in_place(level, us.acc, weights, us.adds, us.subs);
    apply_in_place(level, them.acc, weights, them.adds, them.subs);
    screlu_sum_pair(level, us.acc, ours, them.acc, theirs, small_weights)
}

/// [`screlu_sum`] of both halves of the output layer at once: `(us, ours)` and `(them,
/// theirs)`. The AVX-512 path runs the two as independent chains into one reduction: the
/// output is a third of the bulk pass, most of it waiting on its chain of multiply-adds.
#[inline(always)]
pub fn screlu_sum_pair(
    level: Level,
    us: &[Chunk],
    ours: &[Chunk],
    them: &[Chunk],
    theirs: &[Chunk],
    small_weights: bool,
) -> i32 {
    assert!(us.len() == ours.len() && them.len() == theirs.len() && us.len() == them.len());
    assert!(level <= Level::best());
    match level {
        // SAFETY: the CPU has the level; the chunks are 64-byte aligned.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 if small_weights => unsafe {
            x86::screlu_sum_pair_avx512(us, ours, them, theirs)
        },
        _ => screlu_sum(level, us, ours, small_weights).wrapping_add(screlu_sum(
            level,
            them,
            theirs,
            small_weights,
        )),
    }
}

/// `Σ clamp(v, 0, QA)² × w` over `acc` and `weights` (equal lengths), wrapping `i32`.
/// `small_weights`: every `|w| ≤ 128`, so that `v × w` fits `i16` and the wide paths may
/// multiply before widening (`madd(v, v × w)`); otherwise they widen first.
#[inline(always)]
pub fn screlu_sum(level: Level, acc: &[Chunk], weights: &[Chunk], small_weights: bool) -> i32 {
    assert_eq!(acc.len(), weights.len());
    assert!(level <= Level::best());
    // Only the wide paths ask; a build without them has only the widening one.
    let _ = small_weights;
    match level {
        // SAFETY: the CPU has the level; the chunks are 64-byte aligned.
        #[cfg(target_arch = "x86_64")]
        Level::Avx512 if small_weights => unsafe { x86::screlu_sum_avx512(acc, weights) },
        #[cfg(target_arch = "x86_64")]
        Level::Avx2 if small_weights => unsafe { x86::screlu_sum_avx2(acc, weights) },
        _ => {
            let mut lanes = [0i32; 32];
            for (a, w) in acc.iter().zip(weights) {
                for ((lane, &a), &w) in lanes.iter_mut().zip(&a.0).zip(&w.0) {
                    let v = (a as i32).clamp(0, QA);
                    *lane = lane.wrapping_add((v * v).wrapping_mul(w as i32));
                }
            }
            lanes.iter().fold(0i32, |s, &x| s.wrapping_add(x))
        }
    }
}

/// The x86-64 paths, each compiled for its instruction set and called only at a level the
/// CPU has. `#[inline]`: the bulk pass's loop, compiled per level (`nnue::bulk`), takes
/// them in; called from plain x86-64 code (the search) they stay calls.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Chunk;
    use crate::nnue::QA;

    /// [`super::apply_fixed`] on AVX-512.
    ///
    /// # Safety
    /// As [`super::apply_raw`]'s, and the CPU has AVX-512 F and BW.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn apply_fixed_avx512<const A: usize, const S: usize>(
        dst: *mut Chunk,
        src: *const Chunk,
        chunks: usize,
        adds: [*const Chunk; A],
        subs: [*const Chunk; S],
    ) {
        unsafe {
            use std::arch::x86_64::*;
            for c in 0..chunks {
                let mut v = _mm512_load_si512(src.add(c) as *const _);
                for a in adds {
                    v = _mm512_add_epi16(v, _mm512_load_si512(a.add(c) as *const _));
                }
                for s in subs {
                    v = _mm512_sub_epi16(v, _mm512_load_si512(s.add(c) as *const _));
                }
                _mm512_store_si512(dst.add(c) as *mut _, v);
            }
        }
    }

    /// [`super::apply_fixed`] on AVX2.
    ///
    /// # Safety
    /// As [`super::apply_raw`]'s, and the CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn apply_fixed_avx2<const A: usize, const S: usize>(
        dst: *mut Chunk,
        src: *const Chunk,
        chunks: usize,
        adds: [*const Chunk; A],
        subs: [*const Chunk; S],
    ) {
        unsafe {
            use std::arch::x86_64::*;
            for c in 0..chunks {
                let s0 = src.add(c) as *const __m256i;
                let (mut lo, mut hi) = (_mm256_load_si256(s0), _mm256_load_si256(s0.add(1)));
                for a in adds {
                    let w = a.add(c) as *const __m256i;
                    lo = _mm256_add_epi16(lo, _mm256_load_si256(w));
                    hi = _mm256_add_epi16(hi, _mm256_load_si256(w.add(1)));
                }
                for s in subs {
                    let w = s.add(c) as *const __m256i;
                    lo = _mm256_sub_epi16(lo, _mm256_load_si256(w));
                    hi = _mm256_sub_epi16(hi, _mm256_load_si256(w.add(1)));
                }
                let d = dst.add(c) as *mut __m256i;
                _mm256_store_si256(d, lo);
                _mm256_store_si256(d.add(1), hi);
            }
        }
    }

    /// [`super::apply_any`] on AVX-512.
    ///
    /// # Safety
    /// As [`super::apply_raw`]'s (`base` is the weights), and the CPU has AVX-512 F and BW.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx2")]
    pub unsafe fn apply_any_avx512(
        dst: *mut Chunk,
        src: *const Chunk,
        base: *const Chunk,
        chunks: usize,
        adds: &[u16],
        subs: &[u16],
    ) {
        unsafe {
            use std::arch::x86_64::*;
            // Four chunks at a time where the width allows (a fixed four, so that they stay
            // in registers): four independent chains of additions per row, and each row's
            // address computed once per four chunks. A refresh (~30 rows) of a 128-wide net
            // is one pass.
            let blocked = chunks - chunks % 4;
            for c in (0..blocked).step_by(4) {
                let mut v: [__m512i; 4] =
                    std::array::from_fn(|k| _mm512_load_si512(src.add(c + k) as *const _));
                for &a in adds {
                    let row = base.add(a as usize * chunks + c);
                    for (k, v) in v.iter_mut().enumerate() {
                        *v = _mm512_add_epi16(*v, _mm512_load_si512(row.add(k) as *const _));
                    }
                }
                for &s in subs {
                    let row = base.add(s as usize * chunks + c);
                    for (k, v) in v.iter_mut().enumerate() {
                        *v = _mm512_sub_epi16(*v, _mm512_load_si512(row.add(k) as *const _));
                    }
                }
                for (k, v) in v.iter().enumerate() {
                    _mm512_store_si512(dst.add(c + k) as *mut _, *v);
                }
            }
            for c in blocked..chunks {
                let mut v = _mm512_load_si512(src.add(c) as *const _);
                for &a in adds {
                    let w = _mm512_load_si512(base.add(a as usize * chunks + c) as *const _);
                    v = _mm512_add_epi16(v, w);
                }
                for &s in subs {
                    let w = _mm512_load_si512(base.add(s as usize * chunks + c) as *const _);
                    v = _mm512_sub_epi16(v, w);
                }
                _mm512_store_si512(dst.add(c) as *mut _, v);
            }
        }
    }

    /// [`super::apply_any`] on AVX2.
    ///
    /// # Safety
    /// As [`super::apply_raw`]'s (`base` is the weights), and the CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn apply_any_avx2(
        dst: *mut Chunk,
        src: *const Chunk,
        base: *const Chunk,
        chunks: usize,
        adds: &[u16],
        subs: &[u16],
    ) {
        unsafe {
            use std::arch::x86_64::*;
            // As AVX-512's: four chunks (eight registers) at a time.
            let blocked = chunks - chunks % 4;
            for c in (0..blocked).step_by(4) {
                let at = |p: *const Chunk| p as *const __m256i;
                let mut v: [__m256i; 8] =
                    std::array::from_fn(|k| _mm256_load_si256(at(src.add(c)).add(k)));
                for &a in adds {
                    let row = at(base.add(a as usize * chunks + c));
                    for (k, v) in v.iter_mut().enumerate() {
                        *v = _mm256_add_epi16(*v, _mm256_load_si256(row.add(k)));
                    }
                }
                for &s in subs {
                    let row = at(base.add(s as usize * chunks + c));
                    for (k, v) in v.iter_mut().enumerate() {
                        *v = _mm256_sub_epi16(*v, _mm256_load_si256(row.add(k)));
                    }
                }
                let d = dst.add(c) as *mut __m256i;
                for (k, v) in v.iter().enumerate() {
                    _mm256_store_si256(d.add(k), *v);
                }
            }
            for c in blocked..chunks {
                let s0 = src.add(c) as *const __m256i;
                let (mut lo, mut hi) = (_mm256_load_si256(s0), _mm256_load_si256(s0.add(1)));
                for &a in adds {
                    let w = base.add(a as usize * chunks + c) as *const __m256i;
                    lo = _mm256_add_epi16(lo, _mm256_load_si256(w));
                    hi = _mm256_add_epi16(hi, _mm256_load_si256(w.add(1)));
                }
                for &s in subs {
                    let w = base.add(s as usize * chunks + c) as *const __m256i;
                    lo = _mm256_sub_epi16(lo, _mm256_load_si256(w));
                    hi = _mm256_sub_epi16(hi, _mm256_load_si256(w.add(1)));
                }
                let d = dst.add(c) as *mut __m256i;
                _mm256_store_si256(d, lo);
                _mm256_store_si256(d.add(1), hi);
            }
        }
    }

    /// [`super::screlu_sum_pair`] on AVX-512 with small weights.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
    pub unsafe fn screlu_sum_pair_avx512(
        us: &[Chunk],
        ours: &[Chunk],
        them: &[Chunk],
        theirs: &[Chunk],
    ) -> i32 {
        unsafe {
            use std::arch::x86_64::*;
            let zero = _mm512_setzero_si512();
            let qa = _mm512_set1_epi16(QA as i16);
            let term = |a: &Chunk, w: &Chunk| {
                let v = _mm512_load_si512(a.0.as_ptr() as *const _);
                let v = _mm512_min_epi16(_mm512_max_epi16(v, zero), qa);
                let w = _mm512_load_si512(w.0.as_ptr() as *const _);
                (v, _mm512_mullo_epi16(v, w))
            };
            let (mut first, mut second) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for i in 0..us.len() {
                let (v, vw) = term(&us[i], &ours[i]);
                first = _mm512_dpwssd_epi32(first, v, vw);
                let (v, vw) = term(&them[i], &theirs[i]);
                second = _mm512_dpwssd_epi32(second, v, vw);
            }
            _mm512_reduce_add_epi32(_mm512_add_epi32(first, second))
        }
    }

    /// [`super::screlu_sum`] on AVX-512 with small weights.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
    pub unsafe fn screlu_sum_avx512(acc: &[Chunk], weights: &[Chunk]) -> i32 {
        unsafe {
            use std::arch::x86_64::*;
            let zero = _mm512_setzero_si512();
            let qa = _mm512_set1_epi16(QA as i16);
            let mut sum = _mm512_setzero_si512();
            for (a, w) in acc.iter().zip(weights) {
                let v = _mm512_load_si512(a.0.as_ptr() as *const _);
                let v = _mm512_min_epi16(_mm512_max_epi16(v, zero), qa);
                let w = _mm512_load_si512(w.0.as_ptr() as *const _);
                let vw = _mm512_mullo_epi16(v, w);
                sum = _mm512_dpwssd_epi32(sum, v, vw);
            }
            _mm512_reduce_add_epi32(sum)
        }
    }

    /// [`super::screlu_sum`] on AVX2 with small weights.
    ///
    /// # Safety
    /// The CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn screlu_sum_avx2(acc: &[Chunk], weights: &[Chunk]) -> i32 {
        unsafe {
            use std::arch::x86_64::*;
            let zero = _mm256_setzero_si256();
            let qa = _mm256_set1_epi16(QA as i16);
            let mut sum = _mm256_setzero_si256();
            for (a, w) in acc.iter().zip(weights) {
                let ap = a.0.as_ptr() as *const __m256i;
                let wp = w.0.as_ptr() as *const __m256i;
                for half in 0..2 {
                    let v = _mm256_load_si256(ap.add(half));
                    let v = _mm256_min_epi16(_mm256_max_epi16(v, zero), qa);
                    let vw = _mm256_mullo_epi16(v, _mm256_load_si256(wp.add(half)));
                    sum = _mm256_add_epi32(sum, _mm256_madd_epi16(v, vw));
                }
            }
            let lanes: [i32; 8] = std::mem::transmute(sum);
            lanes.iter().fold(0i32, |s, &x| s.wrapping_add(x))
        }
    }

    /// [`super::update_and_screlu_pair`] on AVX-512 with small weights, `A` rows added
    /// and `S` removed a perspective.
    ///
    /// # Safety
    /// The CPU has AVX-512 F, BW and VNNI; both accumulators and both weight slices have the same
    /// number of chunks, and every row pointer points to that many.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni,avx2")]
    pub unsafe fn update_and_screlu_pair_avx512<const A: usize, const S: usize>(
        acc: [&mut [Chunk]; 2],
        out: [&[Chunk]; 2],
        adds: [[*const Chunk; A]; 2],
        subs: [[*const Chunk; S]; 2],
    ) -> i32 {
        unsafe {
            use std::arch::x86_64::*;
            let zero = _mm512_setzero_si512();
            let qa = _mm512_set1_epi16(QA as i16);
            let mut sums = [_mm512_setzero_si512(); 2];
            let [us, them] = acc;
            let accs = [us.as_mut_ptr(), them.as_mut_ptr()];
            for c in 0..out[0].len() {
                for p in 0..2 {
                    let at = accs[p].add(c) as *mut __m512i;
                    let mut v = _mm512_load_si512(at);
                    for a in adds[p] {
                        v = _mm512_add_epi16(v, _mm512_load_si512(a.add(c) as *const _));
                    }
                    for s in subs[p] {
                        v = _mm512_sub_epi16(v, _mm512_load_si512(s.add(c) as *const _));
                    }
                    _mm512_store_si512(at, v);
                    let v = _mm512_min_epi16(_mm512_max_epi16(v, zero), qa);
                    let w = _mm512_load_si512(out[p].as_ptr().add(c) as *const _);
                    sums[p] = _mm512_dpwssd_epi32(sums[p], v, _mm512_mullo_epi16(v, w));
                }
            }
            _mm512_reduce_add_epi32(_mm512_add_epi32(sums[0], sums[1]))
        }
    }

    /// [`update_and_screlu_pair_avx512`] on AVX2: each chunk in two halves.
    ///
    /// # Safety
    /// As [`update_and_screlu_pair_avx512`]'s, and the CPU has AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn update_and_screlu_pair_avx2<const A: usize, const S: usize>(
        acc: [&mut [Chunk]; 2],
        out: [&[Chunk]; 2],
        adds: [[*const Chunk; A]; 2],
        subs: [[*const Chunk; S]; 2],
    ) -> i32 {
        unsafe {
            use std::arch::x86_64::*;
            let zero = _mm256_setzero_si256();
            let qa = _mm256_set1_epi16(QA as i16);
            let mut sums = [_mm256_setzero_si256(); 2];
            let [us, them] = acc;
            let accs = [us.as_mut_ptr(), them.as_mut_ptr()];
            for c in 0..out[0].len() {
                for p in 0..2 {
                    for h in 0..2 {
                        let at = (accs[p].add(c) as *mut __m256i).add(h);
                        let half = |row: *const Chunk| (row.add(c) as *const __m256i).add(h);
                        let mut v = _mm256_load_si256(at);
                        for a in adds[p] {
                            v = _mm256_add_epi16(v, _mm256_load_si256(half(a)));
                        }
                        for s in subs[p] {
                            v = _mm256_sub_epi16(v, _mm256_load_si256(half(s)));
                        }
                        _mm256_store_si256(at, v);
                        let v = _mm256_min_epi16(_mm256_max_epi16(v, zero), qa);
                        let w = _mm256_load_si256(half(out[p].as_ptr()));
                        sums[p] = _mm256_add_epi32(
                            sums[p],
                            _mm256_madd_epi16(v, _mm256_mullo_epi16(v, w)),
                        );
                    }
                }
            }
            let lanes: [i32; 8] = std::mem::transmute(_mm256_add_epi32(sums[0], sums[1]));
            lanes.iter().fold(0i32, |s, &x| s.wrapping_add(x))
        }
    }
}
