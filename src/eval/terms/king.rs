//! The kings: pawn shelter and storm in the middlegame; centralisation and the distance to
//! the pawns in the endgame.

use pawnstorm_kernels::geometry::{distance_planes, distance_sum, east, forward, king_reach, west};
use pawnstorm_kernels::{Color, Lanes};

use super::{KING, PAWN, Sets, Sink, Term, any, difference, differences};
use crate::eval::weights::Weights;

/// d4, e4, d5, e5 and the squares within one and two king steps of them.
const CENTRE: [u64; 3] = [
    0x0000_0018_1800_0000,
    0x0000_3c3c_3c3c_0000,
    0x007e_7e7e_7e7e_7e00,
];
/// Distance from the centre (0..=3), bit-sliced: bit 0 (distance 1 or 3), bit 1 (2 or 3).
const CENTRE_DISTANCE: [u64; 2] = [(CENTRE[1] & !CENTRE[0]) | !CENTRE[2], !CENTRE[1]];

/// Each king's reach (`reach[side][d]`: the squares within d steps) and bit-sliced
/// distances: shared by every king-distance term.
pub(super) struct Geometry<L> {
    pub reach: [[L; 8]; 2],
    pub distances: [[L; 3]; 2],
}

impl<L: Lanes> Geometry<L> {
    #[inline(always)]
    pub fn new(sets: &Sets<L>) -> Geometry<L> {
        let reach = sets.pieces[KING].map(king_reach);
        let distances = [distance_planes(&reach[0]), distance_planes(&reach[1])];
        Geometry { reach, distances }
    }
}

/// King centralisation and the kings' distance to every pawn.
#[inline(always)]
pub(super) fn endgame_king<L: Lanes, S: Sink<L>>(
    w: &Weights,
    sets: &Sets<L>,
    kings: &Geometry<L>,
    sink: &mut S,
) {
    // The king is one square: its distance (0..=3) from the centre is two bit-sliced
    // membership tests, no popcount.
    let centre_distance = |king: L| {
        any(king & L::splat(CENTRE_DISTANCE[0]))
            .add(any(king & L::splat(CENTRE_DISTANCE[1])).shl(1))
    };
    let [white, black] = sets.pieces[KING];
    difference(
        sink,
        Term::KingCentralisation,
        centre_distance(white),
        centre_distance(black),
        w.king_centre_distance,
    );
    let pawns = sets.pieces[PAWN][0] | sets.pieces[PAWN][1];
    difference(
        sink,
        Term::KingPawnTropism,
        distance_sum(pawns, &kings.distances[0]),
        distance_sum(pawns, &kings.distances[1]),
        w.king_pawn_distance,
    );
}

/// Own pawns one and two ranks in front of the king, enemy pawns two and three ranks in
/// front (its file and the adjacent ones).
#[inline(always)]
pub(super) fn shelter_and_storm<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let counts = |color: Color| {
        let side = color.index();
        let king = sets.pieces[KING][side];
        let pawns = sets.pieces[PAWN];
        let near = forward(color, king | east(king) | west(king));
        let far = forward(color, near);
        let farther = forward(color, far);
        [
            (pawns[side] & near).popcount(),
            (pawns[side] & far).popcount(),
            (pawns[1 - side] & far).popcount(),
            (pawns[1 - side] & farther).popcount(),
        ]
    };
    let ([w0, w1, w2, w3], [b0, b1, b2, b3]) = (counts(Color::White), counts(Color::Black));
    differences(
        sink,
        Term::Shelter,
        [(w0, b0, w.shelter[0]), (w1, b1, w.shelter[1])],
    );
    differences(
        sink,
        Term::Storm,
        [(w2, b2, w.storm[0]), (w3, b3, w.storm[1])],
    );
}
