//! The evaluation terms, written once over lanes: `u64` for one position (the search, the
//! reference) and `u64x4` / `u64x8` for batches. Every term is a count (a popcount of a
//! mask, a king-distance sum) times an (mg, eg) weight; tables are summed through bit
//! planes; nothing looks up a square.
//!
//! One file per concept: [`pawns`] (the pawn-only terms the pawn hash caches), [`pieces`]
//! (material, tables, mobility and piece placement), [`passers`] (passed pawns against
//! pieces and kings), [`king`] (king safety and the endgame king) and [`threats`]. The sets
//! several of them read (each side's pieces and attacks) are computed once, in [`Sets`].

mod king;
mod passers;
mod pawns;
mod pieces;
mod threats;

use pawnstorm_kernels::geometry::pawn_attacks;
use pawnstorm_kernels::setwise::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};
use pawnstorm_kernels::simd::inlined;
use pawnstorm_kernels::{Color, Lanes};

use super::weights::{Prepared, RankTable, Weight};

pub use pawns::pawn_terms;
pub use pieces::psqt_planes;

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
    KingZone,
    KingAttackers,
    SafeChecks,
    KingFile,
    ThreatByPawn,
    ThreatByLesser,
    Hanging,
    PawnPushThreat,
    RookFile,
    QueenFile,
    RookSeventh,
    Outpost,
    BadBishop,
    Space,
}

impl Term {
    pub const COUNT: usize = 36;
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
        Term::KingZone,
        Term::KingAttackers,
        Term::SafeChecks,
        Term::KingFile,
        Term::ThreatByPawn,
        Term::ThreatByLesser,
        Term::Hanging,
        Term::PawnPushThreat,
        Term::RookFile,
        Term::QueenFile,
        Term::RookSeventh,
        Term::Outpost,
        Term::BadBishop,
        Term::Space,
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
            Term::KingZone => "king_zone",
            Term::KingAttackers => "king_attackers",
            Term::SafeChecks => "safe_checks",
            Term::KingFile => "king_file",
            Term::ThreatByPawn => "threat_by_pawn",
            Term::ThreatByLesser => "threat_by_lesser",
            Term::Hanging => "hanging",
            Term::PawnPushThreat => "pawn_push_threat",
            Term::RookFile => "rook_file",
            Term::QueenFile => "queen_file",
            Term::RookSeventh => "rook_seventh",
            Term::Outpost => "outpost",
            Term::BadBishop => "bad_bishop",
            Term::Space => "space",
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
pub trait Sink<L: Lanes> {
    fn add(&mut self, term: Term, value: L::Pair);

    /// `count` (White's minus Black's) times `weight`, a field of the [`Prepared`] weights
    /// the terms run with: every weight reaches the total through here, so that a sink can
    /// record the counts instead (the training features' coefficients).
    #[inline(always)]
    fn times(&mut self, count: L, weight: &Weight) -> L::Pair {
        L::weigh(count, weight.mg, weight.eg)
    }

    /// The piece-square tables over `pieces` (White's pawns, Black's pawns, White's
    /// knights, ..., Black's king), `count` pieces in all: summed through bit planes.
    #[inline(always)]
    fn psqt(&mut self, prepared: &Prepared, pieces: &[L; 12], count: L) -> L::Pair {
        pieces::psqt_planes(prepared, pieces, count)
    }
}

/// Sums every term: what scoring uses.
#[derive(Clone, Copy, Debug)]
pub struct Total<L: Lanes> {
    pub pair: L::Pair,
}

impl<L: Lanes> Total<L> {
    #[inline(always)]
    pub fn new() -> Total<L> {
        Total {
            pair: L::pair_zero(),
        }
    }

    /// A total starting from `mg` and `eg` (their low 32 bits).
    #[inline(always)]
    pub fn from_sums(mg: L, eg: L) -> Total<L> {
        Total {
            pair: L::pair(mg, eg),
        }
    }

    /// The sums (mg, eg): their low 32 bits are the values.
    #[inline(always)]
    pub fn sums(&self) -> (L, L) {
        L::unpair(self.pair)
    }
}

impl<L: Lanes> Default for Total<L> {
    #[inline(always)]
    fn default() -> Total<L> {
        Total::new()
    }
}

impl<L: Lanes> Sink<L> for Total<L> {
    #[inline(always)]
    fn add(&mut self, _: Term, value: L::Pair) {
        self.pair = L::pair_add(self.pair, value);
    }
}

/// Keeps each term apart.
#[derive(Clone, Copy, Debug)]
pub struct PerTerm<L: Lanes> {
    pub pairs: [L::Pair; Term::COUNT],
}

impl<L: Lanes> PerTerm<L> {
    #[inline(always)]
    pub fn new() -> PerTerm<L> {
        PerTerm {
            pairs: [L::pair_zero(); Term::COUNT],
        }
    }

    /// Term `term`'s (mg, eg): their low 32 bits are the values.
    #[inline(always)]
    pub fn sums(&self, term: Term) -> (L, L) {
        L::unpair(self.pairs[term as usize])
    }

    /// Every term together.
    #[inline(always)]
    pub fn total(&self) -> Total<L> {
        // A loop, not a fold: the fold's closure is wrapped in one the kernel cannot mark
        // for inlining (see `simd::inlined`).
        let mut pair = L::pair_zero();
        for term in &self.pairs {
            pair = L::pair_add(pair, *term);
        }
        Total { pair }
    }
}

impl<L: Lanes> Default for PerTerm<L> {
    #[inline(always)]
    fn default() -> PerTerm<L> {
        PerTerm::new()
    }
}

impl<L: Lanes> Sink<L> for PerTerm<L> {
    #[inline(always)]
    fn add(&mut self, term: Term, value: L::Pair) {
        let i = term as usize;
        self.pairs[i] = L::pair_add(self.pairs[i], value);
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

/// The light squares: b1, d1, ..., a2, ... (a1 is dark).
pub(crate) const LIGHT_SQUARES: u64 = 0x55aa_55aa_55aa_55aa;

/// Signature layout: 4 bits a count, White's pawn..queen, Black's pawn..queen, then each
/// side's light-squared bishops.
pub const SIGNATURE_BITS: u32 = 4;

/// Squares attacked by one side, per piece kind (pawn..king; a queen's are its rook and
/// bishop rays) and all together. The union loses how many pieces of a kind attack a
/// square: terms count attacked squares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Attacks<L> {
    pub by_kind: [L; 6],
    pub all: L,
}

/// What several terms read, computed once per evaluation: the mobility attack sets are
/// the king-safety and threat attack sets too.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sets<L> {
    /// `pieces[kind][side]`, pawn..king, White then Black.
    pub pieces: [[L; 2]; 6],
    pub colors: [L; 2],
    pub occupied: L,
    pub empty: L,
    pub attacks: [Attacks<L>; 2],
    /// All ones where Black is to move.
    pub black_to_move: L,
}

impl<L: Lanes> Sets<L> {
    #[inline(always)]
    fn new(boards: &Boards<L>) -> Sets<L> {
        let colors = boards.colors;
        let mut pieces = [[L::splat(0); 2]; 6];
        for (by_color, kind) in pieces.iter_mut().zip(&boards.pieces) {
            *by_color = [*kind & colors[0], *kind & colors[1]];
        }
        let occupied = colors[0] | colors[1];
        let empty = !occupied;
        let attacks = [
            side_attacks(Color::White, &pieces, empty),
            side_attacks(Color::Black, &pieces, empty),
        ];
        Sets {
            pieces,
            colors,
            occupied,
            empty,
            attacks,
            black_to_move: boards.black_to_move,
        }
    }

    /// A side's pieces that are neither pawns nor the king.
    #[inline(always)]
    fn non_pawn(&self, side: usize) -> L {
        self.pieces[KNIGHT][side]
            | self.pieces[BISHOP][side]
            | self.pieces[ROOK][side]
            | self.pieces[QUEEN][side]
    }
}

/// `color`'s attacks. Here and in every term function: a function rather than a closure
/// passed to `array::map`, which LLVM leaves out of line (a third of the time went there).
#[inline(always)]
fn side_attacks<L: Lanes>(color: Color, pieces: &[[L; 2]; 6], empty: L) -> Attacks<L> {
    let side = color.index();
    let piece = inlined(
        #[inline(always)]
        |kind: usize| pieces[kind][side],
    );
    let by_kind = [
        pawn_attacks(color, piece(PAWN)),
        knight_attacks(piece(KNIGHT)),
        bishop_attacks(piece(BISHOP), empty),
        rook_attacks(piece(ROOK), empty),
        rook_attacks(piece(QUEEN), empty) | bishop_attacks(piece(QUEEN), empty),
        king_attacks(piece(KING)),
    ];
    let all = by_kind[0] | by_kind[1] | by_kind[2] | by_kind[3] | by_kind[4] | by_kind[5];
    Attacks { by_kind, all }
}

/// (White count - Black count) x weight.
#[inline(always)]
fn difference<L: Lanes, S: Sink<L>>(sink: &mut S, term: Term, white: L, black: L, weight: &Weight) {
    let value = sink.times(white.sub(black), weight);
    sink.add(term, value);
}

/// A term made of several weighted White-minus-Black counts: `(white, black, weight)` each.
#[inline(always)]
fn differences<L: Lanes, S: Sink<L>, const N: usize>(
    sink: &mut S,
    term: Term,
    parts: [(L, L, &Weight); N],
) {
    let mut sum = L::pair_zero();
    for (white, black, weight) in parts {
        sum = L::pair_add(sum, sink.times(white.sub(black), weight));
    }
    sink.add(term, sum);
}

/// Each byte (rank) of `b` replaced by its number of squares: every rank's count at once,
/// with shifts and adds (on AVX2 one vector popcount costs as much as all eight).
#[inline(always)]
fn rank_counts<L: Lanes>(b: L) -> L {
    let b = b.sub(b.shr(1) & L::splat(0x5555_5555_5555_5555));
    let pairs = L::splat(0x3333_3333_3333_3333);
    let b = (b & pairs).add(b.shr(2) & pairs);
    b.add(b.shr(4)) & L::splat(0x0f0f_0f0f_0f0f_0f0f)
}

/// A White-minus-Black rank table over pawn sets, from the per-rank counts of
/// [`rank_counts`], shared by both phases.
#[inline(always)]
fn rank_table<L: Lanes, S: Sink<L>>(
    sink: &mut S,
    term: Term,
    ranks: &RankTable,
    white: L,
    black: L,
) {
    let (white, black) = (rank_counts(white), rank_counts(black));
    let mut sum = L::pair_zero();
    // Pawn sets hold no pawn on the first or last rank. (A zip, not `enumerate().take(7)
    // .skip(1)`: `Skip` called `Take::nth` out of line from every kernel, registers spilled
    // around each call.)
    for (weight, relative_rank) in ranks[1..7].iter().zip(1usize..) {
        let white_count = white.shr(8 * relative_rank as u32) & L::splat(0xff);
        let black_count = black.shr(8 * (7 - relative_rank) as u32) & L::splat(0xff);
        sum = L::pair_add(sum, sink.times(white_count.sub(black_count), weight));
    }
    sink.add(term, sum);
}

/// Popcount of `white` minus popcount of `black` for sets confined to disjoint squares
/// `white_area` and `black_area`: one popcount, as Black's count is the area's size less
/// the count of its complement in the area.
#[inline(always)]
fn confined_difference<L: Lanes>(white: L, black: L, black_area: u64) -> L {
    (white | (L::splat(black_area) & !black))
        .popcount()
        .sub(L::splat(black_area.count_ones() as u64))
}

/// 1 in lanes where `b` is not empty, 0 elsewhere.
#[inline(always)]
fn any<L: Lanes>(b: L) -> L {
    !b.zero_mask() & L::splat(1)
}

/// Every term of `boards` into `sink`: the pawn terms, then the rest.
#[inline(always)]
pub fn all_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    sink: &mut S,
) -> Meta<L> {
    let passed = board_pawn_terms(prepared, boards, sink);
    piece_terms(prepared, boards, passed, sink)
}

/// [`pawn_terms`] of `boards`' pawns: the passed pawns.
#[inline(always)]
fn board_pawn_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    sink: &mut S,
) -> [L; 2] {
    let pawns = boards.pieces[PAWN];
    pawn_terms(
        prepared,
        pawns & boards.colors[0],
        pawns & boards.colors[1],
        sink,
    )
}

/// Every other term, given the passed pawns from [`pawn_terms`] (or the pawn hash table):
/// the three stages of [`Staged`] on locals.
#[inline(always)]
pub fn piece_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    passed: [L; 2],
    sink: &mut S,
) -> Meta<L> {
    let sets = Sets::new(boards);
    let (counts, light_bishops) = material_terms(prepared, &sets, sink);
    king_terms(prepared, &sets, passed, sink);
    last_terms(prepared, &sets, &counts, light_bishops, sink)
}

/// What the later stages of the batch's evaluation read from its first, so that a batch
/// can run each stage over a run of positions before the next: [`first_terms`] (the pawn
/// terms, then [`material_terms`]), [`king_terms`], [`last_terms`]. The whole kernel is
/// some 40 KB of code at the AVX2 level, more than a 32 KB instruction cache; a loop over
/// one stage is a third of that (the batch kernel took 0.94 of the time on a Zen 2,
/// criterion's `eval_db/one_thread/avx2_x4`). The search's [`piece_terms`] runs the same
/// stages on locals: given a `Staged` built and read back, its one-position code came out
/// 9% slower in `bench`.
#[derive(Clone, Copy, Debug)]
pub struct Staged<L> {
    sets: Sets<L>,
    passed: [L; 2],
    counts: [[L; 2]; 5],
    light_bishops: [L; 2],
}

impl<L: Lanes> Staged<L> {
    /// A placeholder to fill (every set empty).
    #[inline(always)]
    pub fn empty() -> Staged<L> {
        let zero = L::splat(0);
        let attacks = Attacks {
            by_kind: [zero; 6],
            all: zero,
        };
        Staged {
            sets: Sets {
                pieces: [[zero; 2]; 6],
                colors: [zero; 2],
                occupied: zero,
                empty: zero,
                attacks: [attacks; 2],
                black_to_move: zero,
            },
            passed: [zero; 2],
            counts: [[zero; 2]; 5],
            light_bishops: [zero; 2],
        }
    }
}

/// The batch's first stage: the pawn terms, then [`material_terms`].
#[inline(always)]
pub fn first_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    boards: &Boards<L>,
    sink: &mut S,
) -> Staged<L> {
    let passed = board_pawn_terms(prepared, boards, sink);
    let sets = Sets::new(boards);
    let (counts, light_bishops) = material_terms(prepared, &sets, sink);
    Staged {
        sets,
        passed,
        counts,
        light_bishops,
    }
}

/// The batch's second stage, [`king_terms`], on what the first kept.
#[inline(always)]
pub fn staged_king_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    staged: &Staged<L>,
    sink: &mut S,
) {
    king_terms(prepared, &staged.sets, staged.passed, sink);
}

/// The batch's last stage, [`last_terms`], on what the first kept.
#[inline(always)]
pub fn staged_last_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    staged: &Staged<L>,
    sink: &mut S,
) -> Meta<L> {
    last_terms(
        prepared,
        &staged.sets,
        &staged.counts,
        staged.light_bishops,
        sink,
    )
}

/// Material, the tables, mobility, the bishop pair and the tempo; and the piece counts and
/// light-squared bishops the last terms read.
#[inline(always)]
fn material_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    sets: &Sets<L>,
    sink: &mut S,
) -> ([[L; 2]; 5], [L; 2]) {
    let w = &prepared.weights;
    let counts = pieces::counts(sets);
    let light = inlined(
        #[inline(always)]
        |side: usize| (sets.pieces[BISHOP][side] & L::splat(LIGHT_SQUARES)).popcount(),
    );
    let light_bishops = [light(0), light(1)];
    pieces::material(w, &counts, sink);
    pieces::psqt(prepared, sets, sink);
    pieces::mobility(w, sets, sink);
    pieces::bishop_pair(w, sets, sink);
    pieces::tempo(w, sets, sink);
    (counts, light_bishops)
}

/// Passed pawns against pieces and kings, the endgame king, shelter, storm and king safety.
#[inline(always)]
fn king_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    sets: &Sets<L>,
    passed: [L; 2],
    sink: &mut S,
) {
    let w = &prepared.weights;
    let kings = king::Geometry::new(sets);
    passers::passer_terms(w, sets, &kings, passed, sink);
    king::endgame_king(w, sets, &kings, sink);
    king::shelter_and_storm(w, sets, sink);
    king::king_safety(w, sets, sink);
}

/// Threats, files, the seventh rank, outposts, bad bishops and space; and what the final
/// scoring needs.
#[inline(always)]
fn last_terms<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    sets: &Sets<L>,
    counts: &[[L; 2]; 5],
    light_bishops: [L; 2],
    sink: &mut S,
) -> Meta<L> {
    let w = &prepared.weights;
    threats::threats(w, sets, sink);
    pieces::files(w, sets, sink);
    pieces::rook_seventh(w, sets, sink);
    pieces::outposts(w, sets, sink);
    pieces::bad_bishops(w, sets, counts, light_bishops, sink);
    pieces::space(w, sets, sink);
    pieces::meta(counts, light_bishops)
}
