//! The kings: safety (attacks on the king zone, safe checks, the king's file, pawn shelter
//! and storm) in the middlegame; centralisation and the distance to the pawns in the
//! endgame.

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::{
    distance_planes, distance_sum, east, file_fill, forward, king_reach, west,
};
use pawnstorm_kernels::setwise::{bishop_attacks, knight_attacks, rook_attacks};
use pawnstorm_kernels::simd::inlined;

use super::{
    BISHOP, KING, KNIGHT, PAWN, QUEEN, ROOK, Sets, Sink, Term, any, difference, differences,
};
use crate::eval::weights::{Weight, Weights};
use pawnstorm_kernels::Lanes;

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
        let kings = sets.pieces[KING];
        let reach = [king_reach(kings[0]), king_reach(kings[1])];
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
    let centre_distance = inlined(
        #[inline(always)]
        |king: L| {
            any(king & L::splat(CENTRE_DISTANCE[0]))
                .add(any(king & L::splat(CENTRE_DISTANCE[1])).shl(1))
        },
    );
    let [white, black] = sets.pieces[KING];
    difference(
        sink,
        Term::KingCentralisation,
        centre_distance(white),
        centre_distance(black),
        &w.king_centre_distance,
    );
    let pawns = sets.pieces[PAWN][0] | sets.pieces[PAWN][1];
    difference(
        sink,
        Term::KingPawnTropism,
        distance_sum(pawns, &kings.distances[0]),
        distance_sum(pawns, &kings.distances[1]),
        &w.king_pawn_distance,
    );
}

/// Own pawns one and two ranks in front of the king, enemy pawns two and three ranks in
/// front (its file and the adjacent ones).
#[inline(always)]
pub(super) fn shelter_and_storm<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let counts = inlined(
        #[inline(always)]
        |color: Color| {
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
        },
    );
    let ([w0, w1, w2, w3], [b0, b1, b2, b3]) = (counts(Color::White), counts(Color::Black));
    differences(
        sink,
        Term::Shelter,
        [(w0, b0, &w.shelter[0]), (w1, b1, &w.shelter[1])],
    );
    differences(
        sink,
        Term::Storm,
        [(w2, b2, &w.storm[0]), (w3, b3, &w.storm[1])],
    );
}

/// The attacker side's pieces against the enemy king: zone attacks by kind, the number of
/// kinds attacking, safe checks; and each king's file.
#[inline(always)]
pub(super) fn king_safety<L: Lanes, S: Sink<L>>(w: &Weights, sets: &Sets<L>, sink: &mut S) {
    let white = attack_on_king(sets, Color::White);
    let black = attack_on_king(sets, Color::Black);
    differences(
        sink,
        Term::KingZone,
        per_kind(&white.zone, &black.zone, &w.king_zone_attack),
    );
    // The number of kinds (0..=4) selects a weight: one equality mask per entry, no lookup.
    let is = inlined(
        #[inline(always)]
        |kinds: L, n: u64| (kinds ^ L::splat(n)).zero_mask() & L::splat(1),
    );
    let by_kinds = inlined(
        #[inline(always)]
        |n: usize| {
            let kinds = n as u64 + 1;
            (
                is(white.kinds, kinds),
                is(black.kinds, kinds),
                &w.king_attackers[n],
            )
        },
    );
    differences(
        sink,
        Term::KingAttackers,
        [by_kinds(0), by_kinds(1), by_kinds(2), by_kinds(3)],
    );
    differences(
        sink,
        Term::SafeChecks,
        per_kind(&white.checks, &black.checks, &w.safe_check),
    );
    let king_file = inlined(
        #[inline(always)]
        |side: usize| {
            let file = file_fill(sets.pieces[KING][side]);
            let own = any(sets.pieces[PAWN][side] & file);
            let enemy = any(sets.pieces[PAWN][1 - side] & file);
            let no_own = own ^ L::splat(1);
            (no_own & enemy, no_own & (enemy ^ L::splat(1)))
        },
    );
    let ((white_half, white_open), (black_half, black_open)) = (king_file(0), king_file(1));
    differences(
        sink,
        Term::KingFile,
        [
            (white_half, black_half, &w.king_file[0]),
            (white_open, black_open, &w.king_file[1]),
        ],
    );
}

/// White's and Black's per-kind counts with their weights, as [`differences`] takes them.
#[inline(always)]
fn per_kind<'w, L: Lanes>(
    white: &[L; 4],
    black: &[L; 4],
    weights: &'w [Weight; 4],
) -> [(L, L, &'w Weight); 4] {
    [
        (white[0], black[0], &weights[0]),
        (white[1], black[1], &weights[1]),
        (white[2], black[2], &weights[2]),
        (white[3], black[3], &weights[3]),
    ]
}

/// One side's attack on the enemy king; per kind: knight, bishop, rook, queen.
struct KingAttack<L> {
    /// Squares of the enemy king zone attacked.
    zone: [L; 4],
    /// How many kinds attack the zone at all.
    kinds: L,
    /// Safe squares from which a piece of the kind would give check.
    checks: [L; 4],
}

/// The attack of `color`'s pieces on the enemy king. The zone is the king's square, its
/// neighbours and the rank beyond those toward the attacker; a safe check square is one the
/// kind attacks and could check from, holding no own piece, attacked by no enemy piece.
#[inline(always)]
fn attack_on_king<L: Lanes>(sets: &Sets<L>, color: Color) -> KingAttack<L> {
    let side = color.index();
    let attacks = &sets.attacks[side];
    let king = sets.pieces[KING][1 - side];
    let near = king | sets.attacks[1 - side].by_kind[KING];
    let zone = near | forward(!color, near);
    let by = &attacks.by_kind;
    let zone_attacks = [
        by[KNIGHT] & zone,
        by[BISHOP] & zone,
        by[ROOK] & zone,
        by[QUEEN] & zone,
    ];
    let kinds_attacking = any(zone_attacks[0])
        .add(any(zone_attacks[1]))
        .add(any(zone_attacks[2]))
        .add(any(zone_attacks[3]));
    let diagonal = bishop_attacks(king, sets.empty);
    let straight = rook_attacks(king, sets.empty);
    let safe = !sets.colors[side] & !sets.attacks[1 - side].all;
    KingAttack {
        zone: [
            zone_attacks[0].popcount(),
            zone_attacks[1].popcount(),
            zone_attacks[2].popcount(),
            zone_attacks[3].popcount(),
        ],
        kinds: kinds_attacking,
        checks: [
            (knight_attacks(king) & by[KNIGHT] & safe).popcount(),
            (diagonal & by[BISHOP] & safe).popcount(),
            (straight & by[ROOK] & safe).popcount(),
            ((diagonal | straight) & by[QUEEN] & safe).popcount(),
        ],
    }
}
