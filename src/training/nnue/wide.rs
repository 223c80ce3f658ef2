//! [`FeatureSet::fill`] with AVX2, all of a position's pieces at once: the squares in order
//! from a table per eight squares, each square's piece code from the code planes spread to
//! bytes, and each piece's index from a byte table per code. Without fast PEXT (AMD before
//! Zen 3) the square-by-square loop read each code from the planes bit by bit, about
//! twenty instructions a piece: on a Zen 2 this runs 2.1 times its rate (one thread, in
//! memory, `benches/nnue.rs`).

use std::arch::x86_64::*;

use pawnstorm_kernels::Color;
use pawnstorm_kernels::simd::{Level, level};

use super::{FeatureSet, KING, MAX_ACTIVE, code_planes, first_squares};

/// For each 8-bit mask, the places of its set bits in ascending order, one a byte, the
/// bytes past them 0.
static SET_BITS: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut mask = 0;
    while mask < 256 {
        let (mut places, mut count, mut bit) = (0u64, 0, 0);
        while bit < 8 {
            if mask >> bit & 1 == 1 {
                places |= (bit as u64) << (8 * count);
                count += 1;
            }
            bit += 1;
        }
        table[mask] = places;
        mask += 1;
    }
    table
};

/// One perspective's 32 slots: each piece's index, -1 past the count (`$past`). A macro:
/// as a function, called twice, the compiler did not inline it (a quarter of the time).
macro_rules! perspective {
    ($wide:expr, $kings:expr, $colour:expr, $codes:expr, $squares:expr, $past:expr, $out:expr) => {{
        let (wide, colour, out): (&Wide, Color, &mut [i32; MAX_ACTIVE]) = ($wide, $colour, $out);
        let c = colour.index();
        let (base, orient) = wide.set.layout($kings[c], colour);
        let offset = _mm256_set1_epi32(base[wide.lowest[c]]);
        let orient = _mm256_set1_epi32(orient);
        // SAFETY: 16 bytes each.
        let (low, high) = unsafe {
            (
                _mm256_broadcastsi128_si256(_mm_loadu_si128(wide.low[c].as_ptr().cast())),
                _mm256_broadcastsi128_si256(_mm_loadu_si128(wide.high[c].as_ptr().cast())),
            )
        };
        let low = _mm256_shuffle_epi8(low, $codes);
        let high = _mm256_shuffle_epi8(high, $codes);
        // 16-bit parts: slots 0-7 and 16-23, then 8-15 and 24-31.
        let first = _mm256_unpacklo_epi8(low, high);
        let second = _mm256_unpackhi_epi8(low, high);
        let per_code = [
            _mm256_cvtepu16_epi32(_mm256_castsi256_si128(first)),
            _mm256_cvtepu16_epi32(_mm256_castsi256_si128(second)),
            _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(first)),
            _mm256_cvtepu16_epi32(_mm256_extracti128_si256::<1>(second)),
        ];
        for k in 0..4 {
            let index = _mm256_add_epi32(
                _mm256_add_epi32(per_code[k], offset),
                _mm256_xor_si256($squares[k], orient),
            );
            let index = _mm256_or_si256(index, $past[k]);
            // SAFETY: slots 8k..8k+8 of the 32.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(8 * k).cast(), index) };
        }
    }};
}

/// A feature set's indices as one offset per king square and colour plus one per piece
/// code: `index = offset(colour, king) + per_code[colour][code] + (square ^ orient)`, the
/// per-code part below 65,536 so that it is read from two byte tables (its low and high
/// bytes) sixteen codes at a time.
#[derive(Clone, Debug)]
pub struct Wide {
    set: FeatureSet,
    /// For each perspective colour, the code whose index is the lowest (its per-code part
    /// is 0): the offset is that code's base.
    lowest: [usize; 2],
    low: [[u8; 16]; 2],
    high: [[u8; 16]; 2],
}

impl Wide {
    /// The tables of `set`, or `None` when the process runs below AVX2 or the set's
    /// indices are not of that form (every set here is: a unit test holds them to it; the
    /// check on every king square is a few thousand additions).
    pub fn new(set: FeatureSet) -> Option<Wide> {
        if !matches!(level(), Level::Avx2 | Level::Avx512) {
            return None;
        }
        let mut wide = Wide {
            set,
            lowest: [0; 2],
            low: [[0; 16]; 2],
            high: [[0; 16]; 2],
        };
        for colour in [Color::White, Color::Black] {
            let c = colour.index();
            let (base, _) = set.layout(0, colour);
            let lowest = (0..12).min_by_key(|&code| base[code])?;
            let per_code = base.map(|b| b - base[lowest]);
            if per_code.iter().any(|&p| !(0..65_536).contains(&p)) {
                return None;
            }
            for king in 0..64 {
                let (base, _) = set.layout(king, colour);
                if (0..12).any(|code| base[code] - base[lowest] != per_code[code]) {
                    return None;
                }
            }
            wide.lowest[c] = lowest;
            for (code, &p) in per_code.iter().enumerate() {
                wide.low[c][code] = p as u8;
                wide.high[c][code] = (p >> 8) as u8;
            }
        }
        Some(wide)
    }

    /// [`Wide::fill`] for rows `0..count`: `position(row)` gives the row's boards, their
    /// union and the perspective of its `ours` slots (32 a row in `ours`, and in `theirs` when `BOTH`).
    ///
    /// # Safety
    /// The CPU has AVX2, BMI1 and POPCNT (which [`Wide::new`] checked).
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    pub unsafe fn fill_rows<const BOTH: bool>(
        &self,
        count: usize,
        position: impl Fn(usize) -> ([u64; 12], u64, Color),
        ours: &mut [i32],
        theirs: &mut [i32],
    ) {
        let mut their_slots = theirs.chunks_exact_mut(MAX_ACTIVE);
        let mut list = List::default();
        for (row, our_slot) in ours.chunks_exact_mut(MAX_ACTIVE).take(count).enumerate() {
            let (boards, all, us) = position(row);
            let our_slot: &mut [i32; MAX_ACTIVE] = our_slot.try_into().expect("32 a row");
            let their_slot = if BOTH {
                their_slots.next().expect("32 a row")
            } else {
                &mut []
            };
            self.list(&boards, all, &mut list);
            self.features::<BOTH>(&boards, &list, us, our_slot, their_slot);
        }
    }

    /// [`FeatureSet::active_packed`] for each of `rows`: `packed(row)` gives its occupied
    /// squares (at most 32), their codes (nibbles, see [`super::pack`]), the kings' squares
    /// and the side to move, whose features go first (`ours`, 32 a row) and the other
    /// side's into `theirs`. `None` for HalfKP, whose kings have no feature: the nibbles
    /// would have to be compacted around them.
    ///
    /// # Safety
    /// The CPU has AVX2, BMI1 and POPCNT (which [`Wide::new`] checked).
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    pub unsafe fn fill_packed_rows<T>(
        &self,
        rows: &[T],
        packed: impl Fn(&T) -> (u64, [u64; 2], [u8; 2], Color),
        mut each: impl FnMut(&[i32; MAX_ACTIVE], &[i32; MAX_ACTIVE]),
    ) -> Option<()> {
        if self.set == FeatureSet::HalfKp {
            return None;
        }
        let mut list = List::default();
        let (mut ours, mut theirs) = ([0; MAX_ACTIVE], [0; MAX_ACTIVE]);
        for row in rows {
            let (occupied, pieces, kings, us) = packed(row);
            self.list_of(first_squares(occupied, MAX_ACTIVE as u32), &mut list);
            // SAFETY: 16 bytes.
            let nibbles = unsafe { _mm_loadu_si128(pieces.as_ptr().cast()) };
            let fifteen = _mm_set1_epi8(15);
            let (even, odd) = (
                _mm_and_si128(nibbles, fifteen),
                _mm_and_si128(_mm_srli_epi16::<4>(nibbles), fifteen),
            );
            let codes =
                _mm256_set_m128i(_mm_unpackhi_epi8(even, odd), _mm_unpacklo_epi8(even, odd));
            let kings = [kings[0] as i32, kings[1] as i32];
            self.write::<true>(kings, &list, codes, us, &mut ours, &mut theirs);
            each(&ours, &theirs);
        }
        Some(())
    }

    /// [`FeatureSet::active_both`] (`BOTH`) or [`FeatureSet::active`] into `ours`.
    ///
    /// # Safety
    /// The CPU has AVX2, BMI1 and POPCNT (which [`Wide::new`] checked).
    #[inline]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    pub unsafe fn fill<const BOTH: bool>(
        &self,
        boards: &[u64; 12],
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32],
    ) -> usize {
        let mut list = List::default();
        let all = boards.iter().fold(0, |all, &board| all | board);
        self.list(boards, all, &mut list);
        self.features::<BOTH>(boards, &list, us, ours, theirs)
    }

    /// The squares whose pieces have features, in ascending order (`all` is the union of
    /// `boards`: given apart, because the boards were just written one by one and reading
    /// them back in wider loads, as the compiler does to join them, waits for the writes to
    /// reach the cache).
    #[inline]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    fn list(&self, boards: &[u64; 12], all: u64, list: &mut List) {
        let occupied = first_squares(all, MAX_ACTIVE as u32);
        let listed = if self.set == FeatureSet::HalfKp {
            occupied & !(boards[KING] | boards[6 + KING])
        } else {
            occupied
        };
        self.list_of(listed, list);
    }

    /// The squares of `listed` (at most 32) in ascending order.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    fn list_of(&self, listed: u64, list: &mut List) {
        // Eight squares at a time (each write's bytes past the group's squares are
        // overwritten by the next, or lie past the count).
        list.count = 0;
        for group in 0..8 {
            let mask = (listed >> (8 * group)) as u8;
            let places = SET_BITS[mask as usize] + 0x0808_0808_0808_0808 * group as u64;
            // SAFETY: `count` ≤ 32 before every write (`listed` has at most 32 squares),
            // so the 8 bytes lie inside the 40.
            unsafe {
                list.squares
                    .as_mut_ptr()
                    .add(list.count)
                    .cast::<u64>()
                    .write_unaligned(places)
            };
            list.count += mask.count_ones() as usize;
        }
    }

    /// The features of the pieces on `list`'s squares.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    fn features<const BOTH: bool>(
        &self,
        boards: &[u64; 12],
        list: &List,
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32],
    ) -> usize {
        let kings = [
            boards[KING].trailing_zeros() as i32,
            boards[6 + KING].trailing_zeros() as i32,
        ];
        // SAFETY: 32 of the 40 bytes.
        let squares = unsafe { _mm256_loadu_si256(list.squares.as_ptr().cast()) };
        let codes = codes_on(&code_planes(boards), squares);
        self.write::<BOTH>(kings, list, codes, us, ours, theirs)
    }

    /// The features of the pieces on `list`'s squares, whose codes are `codes` (a byte
    /// each, in the list's order).
    #[inline]
    #[target_feature(enable = "avx2,bmi1,popcnt")]
    fn write<const BOTH: bool>(
        &self,
        kings: [i32; 2],
        list: &List,
        codes: __m256i,
        us: Color,
        ours: &mut [i32; MAX_ACTIVE],
        theirs: &mut [i32],
    ) -> usize {
        // SAFETY: 32 of the 40 bytes.
        let squares = unsafe { _mm256_loadu_si256(list.squares.as_ptr().cast()) };
        let last = _mm256_set1_epi32(list.count as i32 - 1);
        let slots = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
        let eight = _mm256_set1_epi32(8);
        let slots_8 = _mm256_add_epi32(slots, eight);
        let slots_16 = _mm256_add_epi32(slots_8, eight);
        let slots_24 = _mm256_add_epi32(slots_16, eight);
        let past = [
            _mm256_cmpgt_epi32(slots, last),
            _mm256_cmpgt_epi32(slots_8, last),
            _mm256_cmpgt_epi32(slots_16, last),
            _mm256_cmpgt_epi32(slots_24, last),
        ];
        let low_squares = _mm256_castsi256_si128(squares);
        let high_squares = _mm256_extracti128_si256::<1>(squares);
        let squares = [
            _mm256_cvtepu8_epi32(low_squares),
            _mm256_cvtepu8_epi32(_mm_srli_si128::<8>(low_squares)),
            _mm256_cvtepu8_epi32(high_squares),
            _mm256_cvtepu8_epi32(_mm_srli_si128::<8>(high_squares)),
        ];
        perspective!(self, kings, us, codes, squares, past, ours);
        if BOTH {
            let theirs: &mut [i32; MAX_ACTIVE] =
                theirs.try_into().expect("MAX_ACTIVE features a side");
            perspective!(self, kings, !us, codes, squares, past, theirs);
        }
        list.count
    }
}

/// A position's squares that have features, in ascending order, one a byte (32 and room
/// for the last group's 8-byte write).
#[derive(Clone, Copy)]
struct List {
    squares: [u8; MAX_ACTIVE + 8],
    count: usize,
}

impl Default for List {
    fn default() -> List {
        List {
            squares: [0; MAX_ACTIVE + 8],
            count: 0,
        }
    }
}

/// The piece code on each of 32 squares (bytes below 64), from the four code planes.
#[inline]
#[target_feature(enable = "avx2,bmi1,popcnt")]
fn codes_on(planes: &[u64; 4], squares: __m256i) -> __m256i {
    // Each plane spread to a byte a square, 0xff where set: byte i of the board to the
    // eight bytes of its squares, then each its own bit.
    #[rustfmt::skip]
    let (spread_low, spread_high) = (
        _mm256_setr_epi8(
            0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1,
            2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3,
        ),
        _mm256_setr_epi8(
            4, 4, 4, 4, 4, 4, 4, 4, 5, 5, 5, 5, 5, 5, 5, 5,
            6, 6, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7, 7, 7, 7, 7,
        ),
    );
    let bits = _mm256_set1_epi64x(0x8040_2010_0804_0201u64 as i64);
    let (mut low, mut high) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    for (k, &plane) in planes.iter().enumerate() {
        let board = _mm256_set1_epi64x(plane as i64);
        let weight = _mm256_set1_epi8(1 << k);
        let set = |spread| {
            let picked = _mm256_and_si256(_mm256_shuffle_epi8(board, spread), bits);
            _mm256_and_si256(_mm256_cmpeq_epi8(picked, bits), weight)
        };
        low = _mm256_or_si256(low, set(spread_low));
        high = _mm256_or_si256(high, set(spread_high));
    }
    // Squares 0-15, 16-31, 32-47 and 48-63 each in both lanes, looked up by the square's
    // low four bits, then chosen by its bits 4 and 5 (moved to bit 7 for the blends).
    let quarter = [
        _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x00>(low, low), squares),
        _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x11>(low, low), squares),
        _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x00>(high, high), squares),
        _mm256_shuffle_epi8(_mm256_permute2x128_si256::<0x11>(high, high), squares),
    ];
    let bit4 = _mm256_slli_epi16::<3>(squares);
    let bit5 = _mm256_slli_epi16::<2>(squares);
    _mm256_blendv_epi8(
        _mm256_blendv_epi8(quarter[0], quarter[1], bit4),
        _mm256_blendv_epi8(quarter[2], quarter[3], bit4),
        bit5,
    )
}
