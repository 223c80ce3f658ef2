//! Threats: pieces attacked by pawns or by lesser pieces, hanging pieces, and pawn pushes
//! that would attack a piece. Each is counted for the attacking side.

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::pawn_attacks;
use pawnstorm_kernels::pawns::{double_pushes, single_pushes};

use super::{BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, Sets, Sink, Term, difference};
use crate::eval::weights::Weights;
use pawnstorm_kernels::Lanes;

#[inline(always)]
pub(super) fn threats<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let (white, black) = (
        side_threats(sets, Color::White),
        side_threats(sets, Color::Black),
    );
    for (i, (term, weight)) in [
        (Term::ThreatByPawn, &w.threat_by_pawn),
        (Term::ThreatByLesser, &w.threat_by_lesser),
        (Term::Hanging, &w.hanging),
        (Term::PawnPushThreat, &w.pawn_push_threat),
    ]
    .into_iter()
    .enumerate()
    {
        difference(sink, term, white[i], black[i], weight);
    }
}

/// `color`'s threats, counted in enemy pieces: attacked by a pawn; attacked by a lesser
/// piece; hanging; attacked after a safe pawn push.
#[inline(always)]
fn side_threats<L: Lanes>(sets: &Sets<L>, color: Color) -> [L; 4] {
    let (side, enemy) = (color.index(), 1 - color.index());
    let ours = &sets.attacks[side];
    let theirs = &sets.attacks[enemy];
    let pieces = sets.non_pawn(enemy);
    let heavy = sets.pieces[ROOK][enemy] | sets.pieces[QUEEN][enemy];
    let by_minor = (ours.by_kind[KNIGHT] | ours.by_kind[BISHOP]) & heavy;
    let by_rook = ours.by_kind[ROOK] & sets.pieces[QUEEN][enemy];
    let targets = sets.colors[enemy] & !sets.pieces[KING][enemy];
    let hanging = targets & ours.all & !theirs.all;
    let pawns = sets.pieces[PAWN][side];
    let pushes = single_pushes(color, pawns, sets.empty) | double_pushes(color, pawns, sets.empty);
    let safe_pushes = pushes & !theirs.by_kind[PAWN] & (!theirs.all | ours.all);
    [
        (ours.by_kind[PAWN] & pieces).popcount(),
        (by_minor | by_rook).popcount(),
        hanging.popcount(),
        (pawn_attacks(color, safe_pushes) & pieces).popcount(),
    ]
}
