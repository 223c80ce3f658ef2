//! The final scoring of `L::WIDTH` positions at once, for the lanes where it needs nothing
//! but the signature: both sides have pawns, so there is no insufficient material, no bare
//! king and no pawnless scaling, only the opposite-bishop scale factors. The other lanes are
//! marked for the scalar [`super::endgame::finish`]; real games rarely get there, and calling
//! it per position (four stores, a call, its branches) cost as much as a tenth of the batch.
//!
//! Every step reproduces [`super::endgame::taper`]'s `i32` arithmetic, wrapping included
//! (AVX2 has neither a 64-bit arithmetic shift nor a vector division), so both paths give
//! the same scores bit for bit.

use pawnstorm_kernels::Lanes;

use super::endgame::{
    MAX_PHASE, SCALE_NORMAL, SCALE_OPPOSITE_BISHOPS, SCALE_PURE_OPPOSITE_BISHOPS,
};
use super::terms::SIGNATURE_BITS;

/// Signature fields: White's pawn..queen are 0..=4, Black's 5..=9, light bishops 10 and 11.
const WHITE_PAWNS: u32 = 0;
const WHITE_BISHOPS: u32 = 2;
const BLACK_PAWNS: u32 = 5;
const BLACK_BISHOPS: u32 = 7;
const WHITE_LIGHT_BISHOPS: u32 = 10;
const BLACK_LIGHT_BISHOPS: u32 = 11;
/// Knights, rooks and queens of both sides.
const OTHER_PIECES: u64 =
    field_mask(1) | field_mask(3) | field_mask(4) | field_mask(6) | field_mask(8) | field_mask(9);

const fn field_mask(field: u32) -> u64 {
    0xf << (field * SIGNATURE_BITS)
}

/// Scores of `L::WIDTH` positions; lanes of `fallback` (all ones) need the scalar finish.
pub(crate) struct LaneScores<L> {
    /// White's point of view, a sign-extended `i32` per lane.
    pub score: L,
    pub fallback: L,
}

#[inline(always)]
fn field<L: Lanes>(signature: L, field: u32) -> L {
    signature.shr(field * SIGNATURE_BITS) & L::splat(0xf)
}

/// All ones in lanes equal to `value`.
#[inline(always)]
fn equals<L: Lanes>(lanes: L, value: u64) -> L {
    (lanes ^ L::splat(value)).zero_mask()
}

/// The low 32 bits of each lane as a sign-extended `i32`.
#[inline(always)]
fn low_i32<L: Lanes>(x: L) -> L {
    let sign = L::splat(0x8000_0000);
    ((x & L::splat(0xffff_ffff)) ^ sign).sub(sign)
}

/// |x| and the sign mask (all ones where x < 0) of sign-extended `i32` lanes.
#[inline(always)]
fn magnitude<L: Lanes>(x: L) -> (L, L) {
    let negative = L::splat(0).sub(x.shr(63));
    ((x ^ negative).sub(negative), negative)
}

/// `x / 2^bits` rounded toward zero, as Rust's `i32` division does, for sign-extended `i32`
/// lanes.
#[inline(always)]
fn div_pow2<L: Lanes>(x: L, bits: u32) -> L {
    let (abs, negative) = magnitude(x);
    (abs.shr(bits) ^ negative).sub(negative)
}

/// `x / 24` rounded toward zero for sign-extended `i32` lanes: |x| / 8 (below 2^28), then a
/// multiply-high by 2^32 / 3 rounded up, exact for dividends below 2^31.
#[inline(always)]
fn div_24<L: Lanes>(x: L) -> L {
    let (abs, negative) = magnitude(x);
    let third = abs.shr(3).mul_i32(L::splat(0x5555_5556)).shr(32);
    (third ^ negative).sub(negative)
}

/// `lane ? if_set : if_clear` for constants.
#[inline(always)]
fn choose<L: Lanes>(mask: L, if_set: i32, if_clear: i32) -> L {
    L::select(mask, L::splat(if_set as u64), L::splat(if_clear as u64))
}

/// [`super::endgame::finish`]'s score where both sides have pawns; `mg` and `eg` are the
/// term sums (their low 32 bits count, as `finish` takes them `as i32`), `raw_phase` and
/// `signature` as [`super::terms::Meta`] gives them.
#[inline(always)]
pub(crate) fn finish_lanes<L: Lanes>(mg: L, eg: L, raw_phase: L, signature: L) -> LaneScores<L> {
    let max_phase = L::splat(MAX_PHASE as u64);
    // The raw phase is a small count: above 24 where 24 - raw borrows.
    let capped = L::splat(0).sub(max_phase.sub(raw_phase).shr(63));
    let phase = L::select(capped, max_phase, raw_phase);
    let fallback =
        field(signature, WHITE_PAWNS).zero_mask() | field(signature, BLACK_PAWNS).zero_mask();
    // With pawns on both sides `Material::scale` is the opposite-bishop rule or normal.
    let light = field(signature, WHITE_LIGHT_BISHOPS).add(field(signature, BLACK_LIGHT_BISHOPS));
    let opposite_bishops = equals(field(signature, WHITE_BISHOPS), 1)
        & equals(field(signature, BLACK_BISHOPS), 1)
        & equals(light, 1);
    let others = !(signature & L::splat(OTHER_PIECES)).zero_mask();
    let scale = L::select(
        opposite_bishops,
        choose(others, SCALE_OPPOSITE_BISHOPS, SCALE_PURE_OPPOSITE_BISHOPS),
        L::splat(SCALE_NORMAL as u64),
    );
    // taper: (mg * phase + eg * (24 - phase) * scale / 64) / 24 in wrapping i32. Each
    // `mul_i32` reads its operands' low 32 bits, so the products wrap as `i32`'s would.
    let eg_part = div_pow2(
        low_i32(eg.mul_i32(max_phase.sub(phase)).mul_i32(scale)),
        SCALE_NORMAL.trailing_zeros(),
    );
    let sum = low_i32(mg.mul_i32(phase).add(eg_part));
    LaneScores {
        score: div_24(sum),
        fallback,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `endgame::taper` as release builds run it (wrapping), for any inputs.
    fn taper(mg: i32, eg: i32, phase: i32, scale: i32) -> i32 {
        let eg_part = eg.wrapping_mul(MAX_PHASE - phase).wrapping_mul(scale) / SCALE_NORMAL;
        mg.wrapping_mul(phase).wrapping_add(eg_part) / MAX_PHASE
    }

    /// The division helpers against Rust's `i32` division at the edges and in between.
    #[test]
    fn lane_divisions_round_like_i32() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut values: Vec<i32> = vec![0, 1, -1, 23, 24, 25, -23, -24, -25, 63, 64, -63, -64];
        values.extend([i32::MIN, i32::MIN + 1, i32::MAX, i32::MAX - 1]);
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            values.push(state as i32);
            values.push((state >> 40) as i32 - (1 << 23));
        }
        for v in values {
            let lane = v as i64 as u64;
            assert_eq!(div_24(lane) as i64, (v / 24) as i64, "{v} / 24");
            assert_eq!(div_pow2(lane, 6) as i64, (v / 64) as i64, "{v} / 64");
            assert_eq!(low_i32(lane ^ 0xabcd_0000_0000_0000), lane, "{v}");
        }
    }

    /// The lane taper equals `taper`, wrapping products included, for every scale.
    #[test]
    fn lane_taper_matches_taper() {
        let pawns = 1 | 1 << (5 * SIGNATURE_BITS);
        let bishops = 1 << (2 * SIGNATURE_BITS) | 1 << (7 * SIGNATURE_BITS);
        let light = 1 << (10 * SIGNATURE_BITS);
        let rook = 1 << (3 * SIGNATURE_BITS);
        for (signature, scale) in [
            (pawns, SCALE_NORMAL),
            (pawns | rook, SCALE_NORMAL),
            (pawns | bishops, SCALE_NORMAL),
            (
                pawns | bishops | light | light << SIGNATURE_BITS,
                SCALE_NORMAL,
            ),
            (pawns | bishops | light, SCALE_PURE_OPPOSITE_BISHOPS),
            (pawns | bishops | light | rook, SCALE_OPPOSITE_BISHOPS),
        ] {
            for (mg, eg) in [
                (0, 0),
                (7, -13),
                (-100_000, 3),
                (i32::MAX, i32::MIN),
                (12345, -67890),
            ] {
                for phase in 0..30u64 {
                    let lanes = finish_lanes(mg as i64 as u64, eg as i64 as u64, phase, signature);
                    let expected = taper(mg, eg, (phase as i32).min(MAX_PHASE), scale);
                    assert_eq!(
                        lanes.score as i64, expected as i64,
                        "{mg} {eg} {phase} {scale}"
                    );
                    assert_eq!(lanes.fallback, 0);
                }
            }
        }
        assert_eq!(finish_lanes(0u64, 0, 0, 1).fallback, !0);
        assert_eq!(
            finish_lanes(0u64, 0, 0, 1 << (5 * SIGNATURE_BITS)).fallback,
            !0
        );
    }
}
