//! From (mg, eg, phase, material) to the final score: the taper, scale factors, and the
//! endgames that a sum of terms gets wrong (insufficient material, KPK, KBNK, KXK).
//!
//! This runs once per position on plain integers, after the lanes, in both paths: the batch
//! and the scalar evaluation share it, so they agree bit for bit.

use super::kpk;
use super::terms::{LIGHT_SQUARES, SIGNATURE_BITS};
use crate::position::board::PositionBoards;

/// Full scale, out of which scale factors are given.
pub const SCALE_NORMAL: i32 = 64;
/// No pawns for the stronger side and at most a minor piece up.
pub const SCALE_MINOR_UP: i32 = 8;
/// Opposite-coloured bishops, nothing else but pawns.
pub const SCALE_PURE_OPPOSITE_BISHOPS: i32 = 24;
/// Opposite-coloured bishops with other pieces.
pub const SCALE_OPPOSITE_BISHOPS: i32 = 48;
/// The phase of the starting position; more material does not count more.
pub const MAX_PHASE: i32 = 24;
/// The least a won KPK position scores for the winner.
pub const KPK_WIN: i32 = 800;
/// Base score of a won KBNK or KXK position.
pub const KNOWN_WIN: i32 = 1000;

const PAWN: usize = 0;
const KNIGHT: usize = 1;
const BISHOP: usize = 2;
const ROOK: usize = 3;
const QUEEN: usize = 4;

/// Piece counts, decoded from a material signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Material {
    /// [side][pawn, knight, bishop, rook, queen]
    pub counts: [[i32; 5]; 2],
    /// Bishops on light squares, per side.
    pub light_bishops: [i32; 2],
}

impl Material {
    pub fn from_signature(signature: u64) -> Material {
        let field = |i: u32| ((signature >> (i * SIGNATURE_BITS)) & 0xf) as i32;
        Material {
            counts: [
                std::array::from_fn(|p| field(p as u32)),
                std::array::from_fn(|p| field(5 + p as u32)),
            ],
            light_bishops: [field(10), field(11)],
        }
    }

    fn pieces(&self, side: usize) -> i32 {
        self.counts[side][KNIGHT..].iter().sum()
    }

    /// Non-pawn material in pawn units (3, 3, 5, 9).
    fn non_pawn(&self, side: usize) -> i32 {
        let c = &self.counts[side];
        3 * (c[KNIGHT] + c[BISHOP]) + 5 * c[ROOK] + 9 * c[QUEEN]
    }

    fn is_bare(&self, side: usize) -> bool {
        self.counts[side][PAWN] == 0 && self.pieces(side) == 0
    }

    /// KvK, KNvK, KBvK, KNNvK, and any number of bishops all on one colour.
    pub fn insufficient(&self) -> bool {
        let [white, black] = self.counts;
        let minors_only = |c: [i32; 5]| c[PAWN] == 0 && c[ROOK] == 0 && c[QUEEN] == 0;
        if !(minors_only(white) && minors_only(black)) {
            return false;
        }
        let knights = white[KNIGHT] + black[KNIGHT];
        let bishops = white[BISHOP] + black[BISHOP];
        let light = self.light_bishops[0] + self.light_bishops[1];
        if knights == 0 {
            // Bishops on one colour only (KvK included) can never mate.
            return light == 0 || light == bishops;
        }
        // KNvK and KNNvK: no mate can be forced.
        bishops == 0 && knights <= 2 && (self.is_bare(0) || self.is_bare(1))
    }

    /// The scale factor (out of [`SCALE_NORMAL`]) for the endgame part when `strong` (0
    /// White, 1 Black) is ahead.
    pub fn scale(&self, strong: usize) -> i32 {
        let weak = 1 - strong;
        if self.counts[strong][PAWN] == 0 && self.non_pawn(strong) - self.non_pawn(weak) <= 3 {
            return SCALE_MINOR_UP;
        }
        let one_bishop_each = self.counts[0][BISHOP] == 1 && self.counts[1][BISHOP] == 1;
        if one_bishop_each && self.light_bishops[0] + self.light_bishops[1] == 1 {
            let others = (0..2).any(|s| {
                let c = &self.counts[s];
                c[KNIGHT] + c[ROOK] + c[QUEEN] > 0
            });
            return if others {
                SCALE_OPPOSITE_BISHOPS
            } else {
                SCALE_PURE_OPPOSITE_BISHOPS
            };
        }
        SCALE_NORMAL
    }
}

/// How the final score came about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The tapered, scaled sum of the terms.
    Terms,
    Insufficient,
    Kpk,
    Kbnk,
    Kxk,
}

impl Rule {
    pub fn name(self) -> &'static str {
        match self {
            Rule::Terms => "terms",
            Rule::Insufficient => "insufficient material",
            Rule::Kpk => "KPK bitbase",
            Rule::Kbnk => "KBNK",
            Rule::Kxk => "KXK",
        }
    }
}

/// The phase and scale of a position, and its final score (White's point of view).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished {
    pub score: i32,
    pub phase: i32,
    pub scale: i32,
    pub rule: Rule,
}

/// `(mg x phase + eg x (24 - phase) x scale / 64) / 24`, rounded toward zero, so that the
/// colour-flipped position gets exactly the negation.
pub fn taper(mg: i32, eg: i32, phase: i32, scale: i32) -> i32 {
    (mg * phase + eg * (MAX_PHASE - phase) * scale / SCALE_NORMAL) / MAX_PHASE
}

/// The final score. `boards` is asked for only in the rare special endgames.
#[inline(never)]
pub fn finish(
    mg: i32,
    eg: i32,
    raw_phase: u64,
    signature: u64,
    boards: impl FnOnce() -> PositionBoards,
) -> Finished {
    let phase = (raw_phase as i32).min(MAX_PHASE);
    // The common case, decided on the signature alone: both sides have pawns (no bare king,
    // no insufficient material, no pawnless scaling) and not one bishop each (no
    // opposite-bishop scaling).
    let field = |i: u32| (signature >> (i * SIGNATURE_BITS)) & 0xf;
    if field(0) != 0
        && field(5) != 0
        && !(field(BISHOP as u32) == 1 && field(5 + BISHOP as u32) == 1)
    {
        return Finished {
            score: taper(mg, eg, phase, SCALE_NORMAL),
            phase,
            scale: SCALE_NORMAL,
            rule: Rule::Terms,
        };
    }
    let material = Material::from_signature(signature);
    let strong = if eg >= 0 { 0 } else { 1 };
    let scale = material.scale(strong);
    let tapered = Finished {
        score: taper(mg, eg, phase, scale),
        phase,
        scale,
        rule: Rule::Terms,
    };
    if material.insufficient() {
        return Finished {
            score: 0,
            rule: Rule::Insufficient,
            ..tapered
        };
    }
    // Only positions with a bare king reach the special endgames, so most return here.
    if !material.is_bare(0) && !material.is_bare(1) {
        return tapered;
    }
    let special = special_endgame(&material, &boards());
    match special {
        Some((score, rule)) => Finished {
            score,
            rule,
            ..tapered
        },
        None => tapered,
    }
}

impl Material {
    /// The counts of a position's boards.
    pub fn of_boards(boards: &PositionBoards) -> Material {
        let count = |b: u64| b.count_ones() as i32;
        Material {
            counts: std::array::from_fn(|side| {
                std::array::from_fn(|kind| count(boards.pieces[kind] & boards.colors[side]))
            }),
            light_bishops: std::array::from_fn(|side| {
                count(boards.pieces[BISHOP] & boards.colors[side] & LIGHT_SQUARES)
            }),
        }
    }
}

/// The score of the endgames the evaluation knows exactly (insufficient material, KPK,
/// KBNK, KXK), White's point of view, if `boards` is one: what any evaluator (the terms or
/// the network) gives way to.
#[inline]
pub fn exact_rule(boards: &PositionBoards) -> Option<(i32, Rule)> {
    let pawns = boards.pieces[PAWN];
    // Every rule needs a side without pawns.
    if pawns & boards.colors[0] != 0 && pawns & boards.colors[1] != 0 {
        return None;
    }
    let material = Material::of_boards(boards);
    if material.insufficient() {
        return Some((0, Rule::Insufficient));
    }
    if !material.is_bare(0) && !material.is_bare(1) {
        return None;
    }
    special_endgame(&material, boards)
}

fn distance(a: u32, b: u32) -> i32 {
    let file = (a % 8).abs_diff(b % 8);
    let rank = (a / 8).abs_diff(b / 8);
    file.max(rank) as i32
}

/// Distance from the nearest of the four centre squares: 0 in the centre, 3 on the edge.
fn centre_distance(square: u32) -> i32 {
    let file = square % 8;
    let rank = square / 8;
    let from_centre = |x: u32| if x < 4 { 3 - x } else { x - 4 };
    from_centre(file).max(from_centre(rank)) as i32
}

fn special_endgame(material: &Material, boards: &PositionBoards) -> Option<(i32, Rule)> {
    let weak = if material.is_bare(0) { 0 } else { 1 };
    let strong = 1 - weak;
    let sign = if strong == 0 { 1 } else { -1 };
    let c = material.counts[strong];
    let king = |side: usize| (boards.pieces[5] & boards.colors[side]).trailing_zeros();
    let (strong_king, weak_king) = (king(strong), king(weak));
    let strong_to_move = boards.black_to_move == (strong == 1);

    if c == [1, 0, 0, 0, 0] {
        let pawn = (boards.pieces[0] & boards.colors[strong]).trailing_zeros();
        let wins = kpk::strong_side_wins(
            strong == 0,
            strong_to_move,
            strong_king as u8,
            weak_king as u8,
            pawn as u8,
        );
        if !wins {
            return Some((0, Rule::Kpk));
        }
        let relative_rank = if strong == 0 { pawn / 8 } else { 7 - pawn / 8 } as i32;
        return Some((sign * (KPK_WIN + 20 * relative_rank), Rule::Kpk));
    }

    // Bringing the kings together helps every mate against a bare king.
    let closeness = 10 * (7 - distance(strong_king, weak_king));

    if c == [0, 1, 1, 0, 0] {
        // Mate only in a corner of the bishop's colour: drive the king there.
        let light_bishop = material.light_bishops[strong] == 1;
        // a1 and h8 are dark, h1 and a8 light.
        let corners: [u32; 2] = if light_bishop { [7, 56] } else { [0, 63] };
        let to_corner = corners
            .iter()
            .map(|&corner| distance(weak_king, corner))
            .min()
            .unwrap_or(7);
        return Some((
            sign * (KNOWN_WIN + 40 * (7 - to_corner) + closeness),
            Rule::Kbnk,
        ));
    }

    let bishops_both_colours = c[BISHOP] >= 2
        && material.light_bishops[strong] > 0
        && material.light_bishops[strong] < c[BISHOP];
    let mating_material = c[QUEEN] > 0
        || c[ROOK] > 0
        || bishops_both_colours
        || (c[BISHOP] > 0 && c[KNIGHT] > 0)
        || c[KNIGHT] >= 3;
    if mating_material {
        let material_value = 100 * c[PAWN] + material.non_pawn(strong) * 100;
        return Some((
            sign * (KNOWN_WIN + material_value + 30 * centre_distance(weak_king) + closeness),
            Rule::Kxk,
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn material(white: [i32; 5], black: [i32; 5], light: [i32; 2]) -> Material {
        Material {
            counts: [white, black],
            light_bishops: light,
        }
    }

    #[test]
    fn insufficient_material_cases() {
        let bare = [0; 5];
        assert!(material(bare, bare, [0, 0]).insufficient());
        assert!(material([0, 1, 0, 0, 0], bare, [0, 0]).insufficient());
        assert!(material(bare, [0, 0, 1, 0, 0], [0, 1]).insufficient());
        assert!(material([0, 2, 0, 0, 0], bare, [0, 0]).insufficient());
        assert!(material([0, 0, 2, 0, 0], [0, 0, 1, 0, 0], [2, 1]).insufficient());
        assert!(material([0, 0, 2, 0, 0], [0, 0, 1, 0, 0], [0, 0]).insufficient());
        assert!(!material([0, 0, 2, 0, 0], bare, [1, 0]).insufficient());
        assert!(!material([0, 1, 1, 0, 0], bare, [1, 0]).insufficient());
        assert!(!material([1, 0, 0, 0, 0], bare, [0, 0]).insufficient());
        assert!(!material([0, 0, 0, 1, 0], bare, [0, 0]).insufficient());
        assert!(!material([0, 3, 0, 0, 0], bare, [0, 0]).insufficient());
        assert!(!material([0, 1, 0, 0, 0], [0, 1, 0, 0, 0], [0, 0]).insufficient());
    }

    #[test]
    fn taper_is_odd_and_interpolates() {
        assert_eq!(taper(100, 200, 24, 64), 100);
        assert_eq!(taper(100, 200, 0, 64), 200);
        assert_eq!(taper(100, 200, 12, 64), 150);
        assert_eq!(taper(100, 200, 0, 32), 100);
        for (mg, eg, phase, scale) in [(7, -13, 5, 64), (101, 33, 17, 8), (-5, 999, 23, 24)] {
            assert_eq!(taper(-mg, -eg, phase, scale), -taper(mg, eg, phase, scale));
        }
    }

    #[test]
    fn scale_factors() {
        // KRvKB: no pawns, a minor's worth up.
        assert_eq!(
            material([0, 0, 0, 1, 0], [0, 0, 1, 0, 0], [0, 0]).scale(0),
            SCALE_MINOR_UP
        );
        // KQvKR is not scaled.
        assert_eq!(
            material([0, 0, 0, 0, 1], [0, 0, 0, 1, 0], [0, 0]).scale(0),
            SCALE_NORMAL
        );
        // Opposite bishops with pawns.
        assert_eq!(
            material([3, 0, 1, 0, 0], [2, 0, 1, 0, 0], [1, 0]).scale(0),
            SCALE_PURE_OPPOSITE_BISHOPS
        );
        assert_eq!(
            material([3, 0, 1, 1, 0], [2, 0, 1, 1, 0], [0, 1]).scale(0),
            SCALE_OPPOSITE_BISHOPS
        );
        // Same-coloured bishops are not scaled.
        assert_eq!(
            material([3, 0, 1, 0, 0], [2, 0, 1, 0, 0], [1, 1]).scale(0),
            SCALE_NORMAL
        );
    }
}
