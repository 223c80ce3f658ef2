//! The evaluation terms, written once over lanes: `u64` for one position (the search, the
//! reference) and `u64x4` / `u64x8` for batches. Every term is a count (a popcount of a
//! mask, a king-distance sum) times an (mg, eg) weight; tables are summed through bit
//! planes; nothing looks up a square.

use pawnstorm_kernels::geometry::{
    distance_planes, distance_sum, east, forward, king_reach, north_fill, pawn_attacks, south_fill,
    west,
};
use pawnstorm_kernels::pawns::{passed_detail, structure};
use pawnstorm_kernels::setwise::{bishop_attacks, knight_attacks, rook_attacks};
use pawnstorm_kernels::{Color, Lanes};

use super::weights::{Planes, Prepared, RankTable, Weight};

/// The terms, in breakdown order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Term {
    Material,
    Psqt,
    Mobility,
    BishopPair,
    Tempo,
    Doubled,
    Isolated,
    Backward,
    Passed,
    Connected,
    ChainBase,
    ConnectedPassers,
    PassedBlocked,
    PassedFreePath,
    PassedKingSupport,
    PassedKingDistance,
    PassedRookBehind,
    KingCentralisation,
    KingPawnTropism,
    Unstoppable,
    Shelter,
    Storm,
}

impl Term {
    pub const COUNT: usize = 22;
    pub const ALL: [Term; Term::COUNT] = [
        Term::Material,
        Term::Psqt,
        Term::Mobility,
        Term::BishopPair,
        Term::Tempo,
        Term::Doubled,
        Term::Isolated,
        Term::Backward,
        Term::Passed,
        Term::Connected,
        Term::ChainBase,
        Term::ConnectedPassers,
        Term::PassedBlocked,
        Term::PassedFreePath,
        Term::PassedKingSupport,
        Term::PassedKingDistance,
        Term::PassedRookBehind,
        Term::KingCentralisation,
        Term::KingPawnTropism,
        Term::Unstoppable,
        Term::Shelter,
        Term::Storm,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Term::Material => "material",
            Term::Psqt => "psqt",
            Term::Mobility => "mobility",
            Term::BishopPair => "bishop_pair",
            Term::Tempo => "tempo",
            Term::Doubled => "doubled",
            Term::Isolated => "isolated",
            Term::Backward => "backward",
            Term::Passed => "passed",
            Term::Connected => "connected",
            Term::ChainBase => "chain_base",
            Term::ConnectedPassers => "connected_passers",
            Term::PassedBlocked => "passed_blocked",
            Term::PassedFreePath => "passed_free_path",
            Term::PassedKingSupport => "passed_king_support",
            Term::PassedKingDistance => "passed_king_distance",
            Term::PassedRookBehind => "passed_rook_behind",
            Term::KingCentralisation => "king_centralisation",
            Term::KingPawnTropism => "king_pawn_tropism",
            Term::Unstoppable => "unstoppable_passer",
            Term::Shelter => "pawn_shelter",
            Term::Storm => "pawn_storm",
        }
    }

    /// Whether the term depends on pawns only (what the pawn hash table caches).
    pub fn pawn_only(self) -> bool {
        matches!(
            self,
            Term::Doubled
                | Term::Isolated
                | Term::Backward
                | Term::Passed
                | Term::Connected
                | Term::ChainBase
                | Term::ConnectedPassers
        )
    }
}

/// Where term values go: summed (evaluation) or kept apart (breakdowns). Values are White's
/// point of view, two's complement in each 64-bit lane.
pub trait Sink<L> {
    fn add(&mut self, term: Term, mg: L, eg: L);
}

/// Sums every term: what scoring uses.
#[derive(Clone, Copy, Debug)]
pub struct Total<L> {
    pub mg: L,
    pub eg: L,
}

impl<L: Lanes> Total<L> {
    pub fn new() -> Total<L> {
        Total {
            mg: L::splat(0),
            eg: L::splat(0),
        }
    }
}

impl<L: Lanes> Default for Total<L> {
    fn default() -> Total<L> {
        Total::new()
    }
}

impl<L: Lanes> Sink<L> for Total<L> {
    #[inline(always)]
    fn add(&mut self, _: Term, mg: L, eg: L) {
        self.mg = self.mg.add(mg);
        self.eg = self.eg.add(eg);
    }
}

/// Keeps each term apart.
#[derive(Clone, Copy, Debug)]
pub struct PerTerm<L> {
    pub mg: [L; Term::COUNT],
    pub eg: [L; Term::COUNT],
}

impl<L: Lanes> PerTerm<L> {
    pub fn new() -> PerTerm<L> {
        PerTerm {
            mg: [L::splat(0); Term::COUNT],
            eg: [L::splat(0); Term::COUNT],
        }
    }
}

impl<L: Lanes> Default for PerTerm<L> {
    fn default() -> PerTerm<L> {
        PerTerm::new()
    }
}

impl<L: Lanes> Sink<L> for PerTerm<L> {
    #[inline(always)]
    fn add(&mut self, term: Term, mg: L, eg: L) {
        let i = term as usize;
        self.mg[i] = self.mg[i].add(mg);
        self.eg[i] = self.eg[i].add(eg);
    }
}

/// The boards of `L::WIDTH` positions.
#[derive(Clone, Copy, Debug)]
pub struct Boards<L> {
    /// Pawn, knight, bishop, rook, queen, king.
    pub pieces: [L; 6],
    /// White, Black.
    pub colors: [L; 2],
    /// All ones where Black is to move.
    pub black_to_move: L,
}

/// What the final scoring needs besides (mg, eg): the game phase (not yet capped) and the
/// material signature (see [`super::endgame::Material`]).
#[derive(Clone, Copy, Debug)]
pub struct Meta<L> {
    pub phase: L,
    pub signature: L,
}

const PAWN: usize = 0;
const KNIGHT: usize = 1;
const BISHOP: usize = 2;
const ROOK: usize = 3;
const QUEEN: usize = 4;
const KING: usize = 5;

const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;
const RANK_1: u64 = 0xff;
const RANK_8: u64 = 0xff << 56;
/// d4, e4, d5, e5 and the squares within one and two king steps of them.
const CENTRE: [u64; 3] = [
    0x0000_0018_1800_0000,
    0x0000_3c3c_3c3c_0000,
    0x007e_7e7e_7e7e_7e00,
];
/// Distance from the centre (0..=3), bit-sliced: bit 0 (distance 1 or 3), bit 1 (2 or 3).
const CENTRE_DISTANCE: [u64; 2] = [(CENTRE[1] & !CENTRE[0]) | !CENTRE[2], !CENTRE[1]];

/// Signature layout: 4 bits a count, White's pawn..queen, Black's pawn..queen, then each
/// side's light-squared bishops.
pub const SIGNATURE_BITS: u32 = 4;

#[inline(always)]
fn times<L: Lanes>(count: L, weight: Weight) -> (L, L) {
    (
        count.mul_i32(L::splat(weight.mg as i64 as u64)),
        count.mul_i32(L::splat(weight.eg as i64 as u64)),
    )
}

/// (White count - Black count) x weight.
#[inline(always)]
fn difference<L: Lanes, S: Sink<L>>(sink: &mut S, term: Term, white: L, black: L, weight: Weight) {
    let (mg, eg) = times(white.sub(black), weight);
    sink.add(term, mg, eg);
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

/// A White-minus-Black rank table over pawn sets: one popcount per rank and colour, shared
/// by both phases (cheaper than bit planes for tables that vary by rank only).
#[inline(always)]
fn rank_table<L: Lanes, S: Sink<L>>(
    sink: &mut S,
    term: Term,
    ranks: &RankTable,
    white: L,
    black: L,
) {
    let (mut mg, mut eg) = (L::splat(0), L::splat(0));
    // Pawn sets hold no pawn on the first or last rank.
    for (relative_rank, weight) in ranks.iter().enumerate().take(7).skip(1) {
        let white_count = (white & L::splat(0xff << (8 * relative_rank))).popcount();
        let black_count = (black & L::splat(0xff << (8 * (7 - relative_rank)))).popcount();
        let (m, e) = times(white_count.sub(black_count), *weight);
        mg = mg.add(m);
        eg = eg.add(e);
    }
    sink.add(term, mg, eg);
}

/// 1 in lanes where `b` is not empty, 0 elsewhere.
#[inline(always)]
fn any<L: Lanes>(b: L) -> L {
    !b.zero_mask() & L::splat(1)
}

/// The terms that depend on the pawns alone (the pawn hash table caches their sum and the
/// passers). Returns the passed pawns of White and Black.
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
    let count = |mask: fn(&pawnstorm_kernels::pawns::Structure<L>) -> L| {
        (mask(&white).popcount(), mask(&black).popcount())
    };
    let (doubled_w, doubled_b) = count(|s| s.doubled);
    difference(sink, Term::Doubled, doubled_w, doubled_b, w.doubled);
    let (isolated_w, isolated_b) = count(|s| s.isolated);
    difference(sink, Term::Isolated, isolated_w, isolated_b, w.isolated);
    let (backward_w, backward_b) = count(|s| s.backward);
    difference(sink, Term::Backward, backward_w, backward_b, w.backward);
    rank_table(sink, Term::Passed, &w.passed, white.passed, black.passed);
    rank_table(
        sink,
        Term::Connected,
        &w.connected,
        white.connected,
        black.connected,
    );
    let (chain_w, chain_b) = count(|s| s.chain_base);
    difference(sink, Term::ChainBase, chain_w, chain_b, w.chain_base);
    let connected_passers = |color: Color, passed: L| {
        (passed & (pawn_attacks(color, passed) | east(passed) | west(passed))).popcount()
    };
    difference(
        sink,
        Term::ConnectedPassers,
        connected_passers(Color::White, white.passed),
        connected_passers(Color::Black, black.passed),
        w.connected_passers,
    );
    [white.passed, black.passed]
}

/// Every term of `boards` into `sink`: the pawn terms, then the rest.
#[inline(always)]
pub fn all_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    sink: &mut S,
) -> Meta<L> {
    let pawns = boards.pieces[PAWN];
    let passed = pawn_terms(
        prepared,
        pawns & boards.colors[0],
        pawns & boards.colors[1],
        sink,
    );
    piece_terms(prepared, boards, passed, sink)
}

/// Every other term, given the passed pawns from [`pawn_terms`] (or the pawn hash table).
#[inline(always)]
pub fn piece_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    passed: [L; 2],
    sink: &mut S,
) -> Meta<L> {
    let w = &prepared.weights;
    let [white, black] = boards.colors;
    let by_color = |piece: usize| [boards.pieces[piece] & white, boards.pieces[piece] & black];
    let pawns = by_color(PAWN);
    let knights = by_color(KNIGHT);
    let bishops = by_color(BISHOP);
    let rooks = by_color(ROOK);
    let queens = by_color(QUEEN);
    let kings = by_color(KING);
    let occupied = white | black;
    let empty = !occupied;

    // Material, and the counts the signature and the phase are made of.
    let pieces = [pawns, knights, bishops, rooks, queens];
    let mut counts = [[L::splat(0); 2]; 5];
    for (count, piece) in counts.iter_mut().zip(&pieces) {
        count[0] = piece[0].popcount();
        count[1] = piece[1].popcount();
    }
    let (mut material_mg, mut material_eg) = (L::splat(0), L::splat(0));
    for (count, weight) in counts.iter().zip(&w.material) {
        let (mg, eg) = times(count[0].sub(count[1]), *weight);
        material_mg = material_mg.add(mg);
        material_eg = material_eg.add(eg);
    }
    sink.add(Term::Material, material_mg, material_eg);

    let sets = [pawns, knights, bishops, rooks, queens, kings];
    let sets: [L; 12] = std::array::from_fn(|i| sets[i / 2][i % 2]);
    let count = occupied.popcount();
    sink.add(
        Term::Psqt,
        plane_sum(&prepared.psqt.mg, &sets, count),
        plane_sum(&prepared.psqt.eg, &sets, count),
    );

    // Mobility: squares attacked set-wise, outside own pieces and enemy pawn attacks.
    let area = [
        !white & !pawn_attacks(Color::Black, pawns[1]),
        !black & !pawn_attacks(Color::White, pawns[0]),
    ];
    let mobility = |side: usize| {
        side_mobility(
            knights[side],
            bishops[side],
            rooks[side],
            queens[side],
            empty,
            area[side],
        )
    };
    let (white_mobility, black_mobility) = (mobility(0), mobility(1));
    let (mut mobility_mg, mut mobility_eg) = (L::splat(0), L::splat(0));
    for i in 0..4 {
        let (mg, eg) = times(white_mobility[i].sub(black_mobility[i]), w.mobility[i]);
        mobility_mg = mobility_mg.add(mg);
        mobility_eg = mobility_eg.add(eg);
    }
    sink.add(Term::Mobility, mobility_mg, mobility_eg);

    let pair = |b: L| any(b & b.sub(L::splat(1)));
    difference(
        sink,
        Term::BishopPair,
        pair(bishops[0]),
        pair(bishops[1]),
        w.bishop_pair,
    );
    let black_moves = boards.black_to_move & L::splat(1);
    difference(
        sink,
        Term::Tempo,
        black_moves ^ L::splat(1),
        black_moves,
        w.tempo,
    );

    // Passed-pawn details.
    let details = [
        passed_detail(Color::White, passed[0], occupied, rooks[0], rooks[1]),
        passed_detail(Color::Black, passed[1], occupied, rooks[1], rooks[0]),
    ];
    rank_table(
        sink,
        Term::PassedBlocked,
        &w.passed_blocked,
        details[0].blocked,
        details[1].blocked,
    );
    difference(
        sink,
        Term::PassedFreePath,
        details[0].free_path.popcount(),
        details[1].free_path.popcount(),
        w.passed_free_path,
    );
    // Each king's reach and bit-sliced distances, shared by every distance term.
    let reach = [king_reach(kings[0]), king_reach(kings[1])];
    let distances = [distance_planes(&reach[0]), distance_planes(&reach[1])];
    difference(
        sink,
        Term::PassedKingSupport,
        (passed[0] & reach[0][1]).popcount(),
        (passed[1] & reach[1][1]).popcount(),
        w.passed_king_support,
    );
    let white_own = distance_sum(passed[0], &distances[0]);
    let white_enemy = distance_sum(passed[0], &distances[1]);
    let black_own = distance_sum(passed[1], &distances[1]);
    let black_enemy = distance_sum(passed[1], &distances[0]);
    let (own_mg, own_eg) = times(white_own.sub(black_own), w.passed_own_king_distance);
    let (enemy_mg, enemy_eg) = times(white_enemy.sub(black_enemy), w.passed_enemy_king_distance);
    sink.add(
        Term::PassedKingDistance,
        own_mg.add(enemy_mg),
        own_eg.add(enemy_eg),
    );
    let (own_mg, own_eg) = times(
        details[0]
            .own_rook_behind
            .popcount()
            .sub(details[1].own_rook_behind.popcount()),
        w.passed_own_rook_behind,
    );
    let (enemy_mg, enemy_eg) = times(
        details[0]
            .enemy_rook_behind
            .popcount()
            .sub(details[1].enemy_rook_behind.popcount()),
        w.passed_enemy_rook_behind,
    );
    sink.add(
        Term::PassedRookBehind,
        own_mg.add(enemy_mg),
        own_eg.add(enemy_eg),
    );

    // Endgame: king centralisation and the kings' distance to every pawn.
    // The king is one square: its distance (0..=3) from the centre is two bit-sliced
    // membership tests, no popcount.
    let centre_distance = |king: L| {
        any(king & L::splat(CENTRE_DISTANCE[0]))
            .add(any(king & L::splat(CENTRE_DISTANCE[1])).shl(1))
    };
    difference(
        sink,
        Term::KingCentralisation,
        centre_distance(kings[0]),
        centre_distance(kings[1]),
        w.king_centre_distance,
    );
    let all_pawns = pawns[0] | pawns[1];
    difference(
        sink,
        Term::KingPawnTropism,
        distance_sum(all_pawns, &distances[0]),
        distance_sum(all_pawns, &distances[1]),
        w.king_pawn_distance,
    );

    // Unstoppable passers: the enemy has no pieces and its king is outside the square.
    let non_pawn = |side: usize| knights[side] | bishops[side] | rooks[side] | queens[side];
    let black_defends = boards.black_to_move;
    let unstoppable = [
        unstoppable_passers(Color::White, details[0].free_path, &reach[1], black_defends)
            & non_pawn(1).zero_mask(),
        unstoppable_passers(
            Color::Black,
            details[1].free_path,
            &reach[0],
            !black_defends,
        ) & non_pawn(0).zero_mask(),
    ];
    difference(
        sink,
        Term::Unstoppable,
        unstoppable[0].popcount(),
        unstoppable[1].popcount(),
        w.unstoppable_passer,
    );

    // King safety: own pawns in front of the king, enemy pawns storming toward it.
    let shelter_and_storm = |color: Color, side: usize| {
        let king = kings[side];
        let files = king | east(king) | west(king);
        let near = forward(color, files);
        let far = forward(color, near);
        let farther = forward(color, far);
        (
            (pawns[side] & near).popcount(),
            (pawns[side] & far).popcount(),
            (pawns[1 - side] & far).popcount(),
            (pawns[1 - side] & farther).popcount(),
        )
    };
    let (w_near, w_far, w_storm_near, w_storm_far) = shelter_and_storm(Color::White, 0);
    let (b_near, b_far, b_storm_near, b_storm_far) = shelter_and_storm(Color::Black, 1);
    let (near_mg, near_eg) = times(w_near.sub(b_near), w.shelter[0]);
    let (far_mg, far_eg) = times(w_far.sub(b_far), w.shelter[1]);
    sink.add(Term::Shelter, near_mg.add(far_mg), near_eg.add(far_eg));
    let (near_mg, near_eg) = times(w_storm_near.sub(b_storm_near), w.storm[0]);
    let (far_mg, far_eg) = times(w_storm_far.sub(b_storm_far), w.storm[1]);
    sink.add(Term::Storm, near_mg.add(far_mg), near_eg.add(far_eg));

    // Phase and material signature.
    let phase = counts[1][0]
        .add(counts[1][1])
        .add(counts[2][0])
        .add(counts[2][1])
        .add(counts[3][0].add(counts[3][1]).shl(1))
        .add(counts[4][0].add(counts[4][1]).shl(2));
    let mut signature = L::splat(0);
    let mut shift = 0;
    for side in 0..2 {
        for count in &counts {
            signature = signature | count[side].shl(shift);
            shift += SIGNATURE_BITS;
        }
    }
    for bishops in bishops {
        signature = signature | (bishops & L::splat(LIGHT_SQUARES)).popcount().shl(shift);
        shift += SIGNATURE_BITS;
    }
    Meta { phase, signature }
}

/// Squares attacked by one side's knights, bishops, rooks and queens (set-wise) in its
/// mobility `area`, counted per kind. A function rather than a closure: it must be inlined.
#[inline(always)]
fn side_mobility<L: Lanes>(
    knights: L,
    bishops: L,
    rooks: L,
    queens: L,
    empty: L,
    area: L,
) -> [L; 4] {
    [
        (knight_attacks(knights) & area).popcount(),
        (bishop_attacks(bishops, empty) & area).popcount(),
        (rook_attacks(rooks, empty) & area).popcount(),
        ((rook_attacks(queens, empty) | bishop_attacks(queens, empty)) & area).popcount(),
    ]
}

/// Promotion squares of `color`'s passers with a free path that the enemy king (whose
/// `reach` this is) cannot reach in time: by the rule of the square, with a tempo more where
/// `defender_to_move` is all ones, and the double step from the second rank.
#[inline(always)]
fn unstoppable_passers<L: Lanes>(
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
