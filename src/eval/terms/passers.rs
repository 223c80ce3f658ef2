//! Passed pawns against the pieces and the kings: blockers, free paths, rooks behind,
//! king support and distances, and the rule of the square.

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::{distance_sum, north_fill, south_fill};
use pawnstorm_kernels::pawns::{PassedDetail, passed_detail};
use pawnstorm_kernels::simd::inlined;

use super::king::Geometry;
use super::{ROOK, Sets, Sink, Term, difference, differences, rank_table};
use crate::eval::weights::Weights;
use pawnstorm_kernels::Lanes;

const RANK_1: u64 = 0xff;
const RANK_8: u64 = 0xff << 56;

/// Every passer term but the pawn-only ones, given both sides' passed pawns.
#[inline(always)]
pub(super) fn passer_terms<L: Lanes, S: Sink<L>>(
    w: &Weights,
    sets: &Sets<L>,
    kings: &Geometry<L>,
    passed: [L; 2],
    sink: &mut S,
) {
    let rooks = sets.pieces[ROOK];
    let details = [
        passed_detail(Color::White, passed[0], sets.occupied, rooks[0], rooks[1]),
        passed_detail(Color::Black, passed[1], sets.occupied, rooks[1], rooks[0]),
    ];
    path_and_rooks(w, &details, sink);
    king_support(w, kings, passed, sink);
    unstoppable(w, sets, kings, &details, sink);
}

#[inline(always)]
fn path_and_rooks<L: Lanes, S: Sink<L>>(w: &Weights, details: &[PassedDetail<L>; 2], sink: &mut S) {
    let [white, black] = details;
    rank_table(
        sink,
        Term::PassedBlocked,
        &w.passed_blocked,
        white.blocked,
        black.blocked,
    );
    difference(
        sink,
        Term::PassedFreePath,
        white.free_path.popcount(),
        black.free_path.popcount(),
        &w.passed_free_path,
    );
    let count = inlined(
        #[inline(always)]
        |detail: &PassedDetail<L>, own: bool| {
            let behind = if own {
                detail.own_rook_behind
            } else {
                detail.enemy_rook_behind
            };
            behind.popcount()
        },
    );
    differences(
        sink,
        Term::PassedRookBehind,
        [
            (
                count(white, true),
                count(black, true),
                &w.passed_own_rook_behind,
            ),
            (
                count(white, false),
                count(black, false),
                &w.passed_enemy_rook_behind,
            ),
        ],
    );
}

/// Passers next to their own king; king steps from each passer to both kings.
#[inline(always)]
fn king_support<L: Lanes, S: Sink<L>>(
    w: &Weights,
    kings: &Geometry<L>,
    passed: [L; 2],
    sink: &mut S,
) {
    difference(
        sink,
        Term::PassedKingSupport,
        (passed[0] & kings.reach[0][1]).popcount(),
        (passed[1] & kings.reach[1][1]).popcount(),
        &w.passed_king_support,
    );
    let distance = inlined(
        #[inline(always)]
        |side: usize, king: usize| distance_sum(passed[side], &kings.distances[king]),
    );
    differences(
        sink,
        Term::PassedKingDistance,
        [
            (distance(0, 0), distance(1, 1), &w.passed_own_king_distance),
            (
                distance(0, 1),
                distance(1, 0),
                &w.passed_enemy_king_distance,
            ),
        ],
    );
}

/// Passers the enemy king cannot catch when the enemy has no pieces.
#[inline(always)]
fn unstoppable<L: Lanes, S: Sink<L>>(
    w: &Weights,
    sets: &Sets<L>,
    kings: &Geometry<L>,
    details: &[PassedDetail<L>; 2],
    sink: &mut S,
) {
    let black_defends = sets.black_to_move;
    let white = escaped_passers(
        Color::White,
        details[0].free_path,
        &kings.reach[1],
        black_defends,
    ) & sets.non_pawn(1).zero_mask();
    let black = escaped_passers(
        Color::Black,
        details[1].free_path,
        &kings.reach[0],
        !black_defends,
    ) & sets.non_pawn(0).zero_mask();
    difference(
        sink,
        Term::Unstoppable,
        white.popcount(),
        black.popcount(),
        &w.unstoppable_passer,
    );
}

/// Promotion squares of `color`'s passers with a free path that the enemy king (whose
/// `reach` this is) cannot reach in time: by the rule of the square, with a tempo more where
/// `defender_to_move` is all ones, and the double step from the second rank.
#[inline(always)]
fn escaped_passers<L: Lanes>(
    color: Color,
    free_passers: L,
    reach: &[L; 8],
    defender_to_move: L,
) -> L {
    let mut escaped = L::splat(0);
    for relative_rank in 1..7usize {
        let rank = match color {
            Color::White => relative_rank,
            Color::Black => 7 - relative_rank,
        };
        let on_rank = free_passers & L::splat(0xff << (8 * rank));
        let promotion = match color {
            Color::White => north_fill(on_rank) & L::splat(RANK_8),
            Color::Black => south_fill(on_rank) & L::splat(RANK_1),
        };
        // Moves to promote: the double step saves one from the second rank.
        let moves = (7 - relative_rank).min(5);
        let caught = L::select(defender_to_move, reach[moves + 1], reach[moves]);
        escaped = escaped | (promotion & !caught);
    }
    escaped
}
