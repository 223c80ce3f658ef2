//! Material, piece-square tables, mobility and the placement of pieces; the game phase and
//! the material signature the final scoring needs.

use pawnstorm_kernels::Lanes;

use super::{
    BISHOP, KNIGHT, Meta, PAWN, QUEEN, ROOK, SIGNATURE_BITS, Sets, Sink, Term, any, difference,
    times,
};
use crate::eval::weights::{Planes, Prepared, Weights};

pub(super) const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;

/// `counts[kind][side]`: each side's pawns, knights, bishops, rooks and queens.
#[inline(always)]
pub(super) fn counts<L: Lanes>(sets: &Sets<L>) -> [[L; 2]; 5] {
    std::array::from_fn(|kind| sets.pieces[kind].map(|set| set.popcount()))
}

#[inline(always)]
pub(super) fn material<L: Lanes, S: Sink<L>>(w: &Weights, counts: &[[L; 2]; 5], sink: &mut S) {
    let (mut mg, mut eg) = (L::splat(0), L::splat(0));
    for (count, weight) in counts.iter().zip(&w.material) {
        let (m, e) = times(count[0].sub(count[1]), *weight);
        mg = mg.add(m);
        eg = eg.add(e);
    }
    sink.add(Term::Material, mg, eg);
}

#[inline(always)]
pub(super) fn psqt<L: Lanes, S: Sink<L>>(prepared: &Prepared, sets: &Sets<L>, sink: &mut S) {
    // Planes are laid out White's pawns, Black's pawns, White's knights, ...
    let pieces: [L; 12] = std::array::from_fn(|i| sets.pieces[i / 2][i % 2]);
    let count = sets.occupied.popcount();
    sink.add(
        Term::Psqt,
        plane_sum(&prepared.psqt.mg, &pieces, count),
        plane_sum(&prepared.psqt.eg, &pieces, count),
    );
}

/// The sum of the planes' tables over the disjoint `sets`; `count` is the number of pieces
/// in all of them.
#[inline(always)]
fn plane_sum<L: Lanes, const N: usize>(planes: &Planes, sets: &[L; N], count: L) -> L {
    let mut sum = count.mul_i32(L::splat(planes.offset as i64 as u64));
    for j in 0..planes.bits {
        let mut hits = L::splat(0);
        for (set, masks) in sets.iter().zip(&planes.masks) {
            hits = hits | (*set & L::splat(masks[j]));
        }
        sum = sum.add(hits.popcount().shl(j as u32));
    }
    sum
}

/// Squares attacked set-wise by each kind, outside own pieces and the enemy pawns' attacks.
#[inline(always)]
pub(super) fn mobility<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let area = |side: usize| !sets.colors[side] & !sets.attacks[1 - side].by_kind[PAWN];
    let area = [area(0), area(1)];
    let (mut mg, mut eg) = (L::splat(0), L::splat(0));
    for (i, weight) in w.mobility.iter().enumerate() {
        let kind = KNIGHT + i;
        let count = |side: usize| (sets.attacks[side].by_kind[kind] & area[side]).popcount();
        let (m, e) = times(count(0).sub(count(1)), *weight);
        mg = mg.add(m);
        eg = eg.add(e);
    }
    sink.add(Term::Mobility, mg, eg);
}

#[inline(always)]
pub(super) fn bishop_pair<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let pair = |b: L| any(b & b.sub(L::splat(1)));
    let [white, black] = sets.pieces[BISHOP];
    difference(
        sink,
        Term::BishopPair,
        pair(white),
        pair(black),
        w.bishop_pair,
    );
}

#[inline(always)]
pub(super) fn tempo<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let black = sets.black_to_move & L::splat(1);
    difference(sink, Term::Tempo, black ^ L::splat(1), black, w.tempo);
}

/// The game phase (not yet capped) and the material signature.
#[inline(always)]
pub(super) fn meta<L: Lanes>(sets: &Sets<L>, counts: &[[L; 2]; 5]) -> Meta<L> {
    let both = |kind: usize| counts[kind][0].add(counts[kind][1]);
    let phase = both(KNIGHT)
        .add(both(BISHOP))
        .add(both(ROOK).shl(1))
        .add(both(QUEEN).shl(2));
    let mut signature = L::splat(0);
    let mut shift = 0;
    for side in 0..2 {
        for count in &counts[PAWN..=QUEEN] {
            signature = signature | count[side].shl(shift);
            shift += SIGNATURE_BITS;
        }
    }
    for bishops in sets.pieces[BISHOP] {
        signature = signature | (bishops & L::splat(LIGHT_SQUARES)).popcount().shl(shift);
        shift += SIGNATURE_BITS;
    }
    Meta { phase, signature }
}
