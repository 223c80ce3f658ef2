//! The terms that depend on the pawns alone: what the pawn hash table caches.

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::{east, pawn_attacks, west};
use pawnstorm_kernels::pawns::{Structure, structure};
use pawnstorm_kernels::simd::inlined;

use super::{Sink, Term, difference, rank_table};
use crate::eval::weights::{Prepared, Weight};
use pawnstorm_kernels::Lanes;

/// The pawn-structure terms (`docs/DEFINITIONS.md`'s masks) into `sink`. Returns the passed pawns of
/// White and Black, which the passer terms and the pawn hash table need.
#[inline(always)]
pub fn pawn_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    white_pawns: L,
    black_pawns: L,
    sink: &mut S,
) -> [L; 2] {
    let w = &prepared.weights;
    let white = structure(Color::White, white_pawns, black_pawns);
    let black = structure(Color::Black, black_pawns, white_pawns);
    let both = [&white, &black];
    count(
        sink,
        Term::Doubled,
        both,
        #[inline(always)]
        |s| s.doubled,
        &w.doubled,
    );
    count(
        sink,
        Term::Isolated,
        both,
        #[inline(always)]
        |s| s.isolated,
        &w.isolated,
    );
    count(
        sink,
        Term::Backward,
        both,
        #[inline(always)]
        |s| s.backward,
        &w.backward,
    );
    rank_table(sink, Term::Passed, &w.passed, white.passed, black.passed);
    rank_table(
        sink,
        Term::Connected,
        &w.connected,
        white.connected,
        black.connected,
    );
    count(
        sink,
        Term::ChainBase,
        both,
        #[inline(always)]
        |s| s.chain_base,
        &w.chain_base,
    );
    let connected_passers = inlined(
        #[inline(always)]
        |color: Color, passed: L| {
            (passed & (pawn_attacks(color, passed) | east(passed) | west(passed))).popcount()
        },
    );
    difference(
        sink,
        Term::ConnectedPassers,
        connected_passers(Color::White, white.passed),
        connected_passers(Color::Black, black.passed),
        &w.connected_passers,
    );
    [white.passed, black.passed]
}

/// White's minus Black's pawns in one structure mask, times `weight`.
#[inline(always)]
fn count<L: Lanes, S: Sink<L>>(
    sink: &mut S,
    term: Term,
    [white, black]: [&Structure<L>; 2],
    mask: fn(&Structure<L>) -> L,
    weight: &Weight,
) {
    let (w, b) = (mask(white).popcount(), mask(black).popcount());
    difference(sink, term, w, b, weight);
}
