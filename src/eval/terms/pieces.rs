//! Material, piece-square tables, mobility and the placement of pieces; the game phase and
//! the material signature the final scoring needs.

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::{attack_span, backward, file_fill};
use pawnstorm_kernels::simd::inlined;

use super::{
    BISHOP, KNIGHT, LIGHT_SQUARES, Meta, PAWN, QUEEN, ROOK, SIGNATURE_BITS, Sets, Sink, Term, any,
    confined_difference, difference, differences,
};
use crate::eval::weights::{Planes, Prepared, Weights};
use pawnstorm_kernels::Lanes;

/// `counts[kind][side]`: each side's pawns, knights, bishops, rooks and queens.
#[inline(always)]
pub(super) fn counts<L: Lanes>(sets: &Sets<L>) -> [[L; 2]; 5] {
    let mut counts = [[L::splat(0); 2]; 5];
    for (count, [white, black]) in counts.iter_mut().zip(&sets.pieces) {
        *count = [white.popcount(), black.popcount()];
    }
    counts
}

#[inline(always)]
pub(super) fn material<L: Lanes, S: Sink<L>>(w: &Weights, counts: &[[L; 2]; 5], sink: &mut S) {
    let mut sum = L::pair_zero();
    for (count, weight) in counts.iter().zip(&w.material) {
        sum = L::pair_add(sum, sink.times(count[0].sub(count[1]), weight));
    }
    sink.add(Term::Material, sum);
}

#[inline(always)]
pub(super) fn psqt<L: Lanes, S: Sink<L>>(prepared: &Prepared, sets: &Sets<L>, sink: &mut S) {
    // Planes are laid out White's pawns, Black's pawns, White's knights, ...
    let mut pieces = [L::splat(0); 12];
    for (i, set) in pieces.iter_mut().enumerate() {
        *set = sets.pieces[i / 2][i % 2];
    }
    let count = sets.occupied.popcount();
    let value = sink.psqt(prepared, &pieces, count);
    sink.add(Term::Psqt, value);
}

/// The tables' (mg, eg) over the 12 piece sets of [`psqt`], through the prepared planes.
#[inline(always)]
pub fn psqt_planes<L: Lanes>(prepared: &Prepared, pieces: &[L; 12], count: L) -> L::Pair {
    L::pair(
        plane_sum(&prepared.psqt.mg, pieces, count),
        plane_sum(&prepared.psqt.eg, pieces, count),
    )
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
    let area = inlined(
        #[inline(always)]
        |side: usize| !sets.colors[side] & !sets.attacks[1 - side].by_kind[PAWN],
    );
    let area = [area(0), area(1)];
    let mut sum = L::pair_zero();
    for (i, weight) in w.mobility.iter().enumerate() {
        let kind = KNIGHT + i;
        let count = inlined(
            #[inline(always)]
            |side: usize| (sets.attacks[side].by_kind[kind] & area[side]).popcount(),
        );
        sum = L::pair_add(sum, sink.times(count(0).sub(count(1)), weight));
    }
    sink.add(Term::Mobility, sum);
}

#[inline(always)]
pub(super) fn bishop_pair<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let pair = inlined(
        #[inline(always)]
        |b: L| any(b & b.sub(L::splat(1))),
    );
    let [white, black] = sets.pieces[BISHOP];
    difference(
        sink,
        Term::BishopPair,
        pair(white),
        pair(black),
        &w.bishop_pair,
    );
}

#[inline(always)]
pub(super) fn tempo<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let black = sets.black_to_move & L::splat(1);
    difference(sink, Term::Tempo, black ^ L::splat(1), black, &w.tempo);
}

/// The game phase (not yet capped) and the material signature.
#[inline(always)]
pub(super) fn meta<L: Lanes>(counts: &[[L; 2]; 5], light_bishops: [L; 2]) -> Meta<L> {
    let both = inlined(
        #[inline(always)]
        |kind: usize| counts[kind][0].add(counts[kind][1]),
    );
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
    for light in light_bishops {
        signature = signature | light.shl(shift);
        shift += SIGNATURE_BITS;
    }
    Meta { phase, signature }
}

/// Rooks and queens on half-open files (no own pawn, an enemy pawn) and open files (no
/// pawn at all).
#[inline(always)]
pub(super) fn files<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let pawn_files = [
        file_fill(sets.pieces[PAWN][0]),
        file_fill(sets.pieces[PAWN][1]),
    ];
    let open = !(pawn_files[0] | pawn_files[1]);
    let half_open = [
        !pawn_files[0] & pawn_files[1],
        !pawn_files[1] & pawn_files[0],
    ];
    let on = inlined(
        #[inline(always)]
        |kind: usize, side: usize, files: L| (sets.pieces[kind][side] & files).popcount(),
    );
    for (term, kind, weights) in [
        (Term::RookFile, ROOK, &w.rook_file),
        (Term::QueenFile, QUEEN, &w.queen_file),
    ] {
        differences(
            sink,
            term,
            [
                (
                    on(kind, 0, half_open[0]),
                    on(kind, 1, half_open[1]),
                    &weights[0],
                ),
                (on(kind, 0, open), on(kind, 1, open), &weights[1]),
            ],
        );
    }
}

/// Rooks on the side's seventh rank.
#[inline(always)]
pub(super) fn rook_seventh<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let [white, black] = sets.pieces[ROOK];
    let (white_seventh, black_seventh) = (0xff << 48, 0xff << 8);
    let count = confined_difference(
        white & L::splat(white_seventh),
        black & L::splat(black_seventh),
        black_seventh,
    );
    let value = sink.times(count, &w.rook_seventh);
    sink.add(Term::RookSeventh, value);
}

/// Knights and bishops on the side's ranks 4 to 6, defended by an own pawn, on a square no
/// enemy pawn can ever attack (outside the enemy pawns' attack span).
#[inline(always)]
pub(super) fn outposts<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let squares = inlined(
        #[inline(always)]
        |color: Color| {
            let side = color.index();
            let ranks = match color {
                Color::White => 0x0000_ffff_ff00_0000,
                Color::Black => 0x0000_00ff_ffff_0000,
            };
            L::splat(ranks)
                & sets.attacks[side].by_kind[PAWN]
                & !attack_span(!color, sets.pieces[PAWN][1 - side])
        },
    );
    let squares = [squares(Color::White), squares(Color::Black)];
    let on = inlined(
        #[inline(always)]
        |kind: usize, side: usize| (sets.pieces[kind][side] & squares[side]).popcount(),
    );
    differences(
        sink,
        Term::Outpost,
        [
            (on(KNIGHT, 0), on(KNIGHT, 1), &w.outpost[0]),
            (on(BISHOP, 0), on(BISHOP, 1), &w.outpost[1]),
        ],
    );
}

/// For each bishop, the own pawns on squares of its colour.
#[inline(always)]
pub(super) fn bad_bishops<L: Lanes, S: Sink<L>>(
    w: &Weights,
    sets: &Sets<L>,
    counts: &[[L; 2]; 5],
    light_bishops: [L; 2],
    sink: &mut S,
) {
    let count = inlined(
        #[inline(always)]
        |side: usize| {
            let light_pawns = (sets.pieces[PAWN][side] & L::splat(LIGHT_SQUARES)).popcount();
            let dark_pawns = counts[PAWN][side].sub(light_pawns);
            let dark_bishops = counts[BISHOP][side].sub(light_bishops[side]);
            light_bishops[side]
                .mul_i32(light_pawns)
                .add(dark_bishops.mul_i32(dark_pawns))
        },
    );
    difference(sink, Term::BadBishop, count(0), count(1), &w.bad_bishop);
}

/// Files c to f of the side's ranks 2 to 4, Stockfish's classical space area.
const SPACE_AREA: [u64; 2] = [0x3c3c_3c00, 0x003c_3c3c_0000_0000];

/// Safe squares of the space area (no own pawn, not attacked by an enemy pawn), counted
/// once more when they are at most three squares behind an own pawn on its file and not
/// attacked by any enemy piece.
#[inline(always)]
pub(super) fn space<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    // Both sides' sets lie in their own areas: White's and Black's counts share popcounts.
    let sets_of = inlined(
        #[inline(always)]
        |color: Color| {
            let side = color.index();
            let pawns = sets.pieces[PAWN][side];
            let enemy = &sets.attacks[1 - side];
            let safe = L::splat(SPACE_AREA[side]) & !pawns & !enemy.by_kind[PAWN];
            let behind = pawns | backward(color, pawns);
            let behind = behind | backward(color, backward(color, behind));
            (safe, safe & behind & !enemy.all)
        },
    );
    let (white_safe, white_behind) = sets_of(Color::White);
    let (black_safe, black_behind) = sets_of(Color::Black);
    let count = confined_difference(white_safe, black_safe, SPACE_AREA[1]).add(
        confined_difference(white_behind, black_behind, SPACE_AREA[1]),
    );
    let value = sink.times(count, &w.space);
    sink.add(Term::Space, value);
}
