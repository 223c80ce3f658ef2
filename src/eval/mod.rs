//! The evaluation: tapered, hand-crafted terms over the kernels, endgame knowledge on top.
//!
//! One path: [`evaluate`] runs the term code of [`terms`] on one `u64` lane and finishes with
//! [`endgame::finish`]; the batch code of [`batch`] runs the very same functions on 4 or 8
//! lanes. Scores are centipawns from White's point of view.

pub mod batch;
pub mod coefficients;
pub mod endgame;
pub mod features;
mod kpk;
mod lanes_finish;
pub mod pawn_hash;
pub mod pesto;
pub mod terms;
pub mod wdl;
pub mod weights;

use std::sync::LazyLock;

use pawnstorm_kernels::simd::{self, LevelFn};

use crate::position::board::{Position, PositionBoards};
use endgame::Finished;
use pawn_hash::{PawnEval, PawnTable};
use terms::{Boards, PerTerm, Term, Total, all_terms, pawn_terms, piece_terms};
pub use weights::{Prepared, Weight, Weights};

static DEFAULT_WEIGHTS: LazyLock<Prepared> = LazyLock::new(Prepared::default);

/// The compiled-in weights, prepared.
pub fn default_weights() -> &'static Prepared {
    &DEFAULT_WEIGHTS
}

#[inline(always)]
fn lane_boards(boards: &PositionBoards) -> Boards<u64> {
    Boards {
        pieces: boards.pieces,
        colors: boards.colors,
        black_to_move: 0u64.wrapping_sub(boards.black_to_move as u64),
    }
}

/// The score of `position` with the default weights, White's point of view.
pub fn evaluate(position: &Position) -> i32 {
    evaluate_with(default_weights(), position)
}

/// The score of `position` with `prepared` weights, White's point of view.
pub fn evaluate_with(prepared: &Prepared, position: &Position) -> i32 {
    evaluate_boards(prepared, &position.boards())
}

/// The score of the position `boards` hold with `prepared` weights, White's point of view
/// (for callers that hold boards, not positions: the network trainer's comparison).
pub fn evaluate_boards(prepared: &Prepared, boards: &PositionBoards) -> i32 {
    let boards = *boards;
    let lanes = lane_boards(&boards);
    let mut total = Total::<u64>::new();
    let meta = all_terms(prepared, &lanes, &mut total);
    let (mg, eg) = total.sums();
    endgame::finish(mg as i32, eg as i32, meta.phase, meta.signature, || boards).score
}

/// Every term of one position: what `eval --fen` prints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Breakdown {
    /// Per term, in [`Term::ALL`] order, White's point of view.
    pub mg: [i32; Term::COUNT],
    pub eg: [i32; Term::COUNT],
    /// The sums of all terms.
    pub total_mg: i32,
    pub total_eg: i32,
    pub finished: Finished,
}

impl Breakdown {
    /// A term alone, tapered and scaled as the total is (the finals do not add up to the
    /// score exactly: each is rounded, and special endgames replace the sum).
    pub fn term_final(&self, term: Term) -> i32 {
        let i = term as usize;
        endgame::taper(
            self.mg[i],
            self.eg[i],
            self.finished.phase,
            self.finished.scale,
        )
    }
}

/// The breakdown of `position` with `prepared` weights.
pub fn breakdown(prepared: &Prepared, position: &Position) -> Breakdown {
    let boards = position.boards();
    let lanes = lane_boards(&boards);
    let mut terms = PerTerm::<u64>::new();
    let meta = all_terms(prepared, &lanes, &mut terms);
    let mg = Term::ALL.map(|term| terms.sums(term).0 as i32);
    let eg = Term::ALL.map(|term| terms.sums(term).1 as i32);
    let (total_mg, total_eg) = (mg.iter().sum(), eg.iter().sum());
    Breakdown {
        mg,
        eg,
        total_mg,
        total_eg,
        finished: endgame::finish(total_mg, total_eg, meta.phase, meta.signature, || boards),
    }
}

/// The evaluation as the search uses it: the default or given weights and a pawn hash table.
/// Its scores equal [`evaluate_with`]'s; the table only saves work. (The search's choice
/// between it and the network is `engine::search::SearchEvaluator`'s.)
#[derive(Clone, Debug)]
pub struct Evaluator {
    prepared: Prepared,
    pawns: PawnTable,
}

impl Evaluator {
    /// An evaluator with a pawn table of `pawn_entries` slots (rounded to a power of two).
    pub fn new(prepared: Prepared, pawn_entries: usize) -> Evaluator {
        Evaluator {
            prepared,
            pawns: PawnTable::new(pawn_entries),
        }
    }

    pub fn pawn_table(&self) -> &PawnTable {
        &self.pawns
    }

    pub fn pawn_table_mut(&mut self) -> &mut PawnTable {
        &mut self.pawns
    }

    pub fn weights(&self) -> &Prepared {
        &self.prepared
    }

    /// The score of `position`, White's point of view.
    pub fn evaluate(&mut self, position: &Position) -> i32 {
        self.evaluate_keyed(position, position.pawn_key())
    }

    /// As [`Evaluator::evaluate`], with the pawn key the caller keeps incrementally.
    /// Compiled for each SIMD level and run at the process's: the search calls it at every
    /// leaf, and the build for any x86-64 would otherwise run it without POPCNT, BMI or
    /// the CPU's vector registers (the search itself cannot be compiled per level).
    pub fn evaluate_keyed(&mut self, position: &Position, pawn_key: u64) -> i32 {
        struct Keyed<'a> {
            evaluator: &'a mut Evaluator,
            position: &'a Position,
            pawn_key: u64,
        }
        impl LevelFn for Keyed<'_> {
            type Output = i32;
            #[inline(always)]
            fn call(self) -> i32 {
                self.evaluator
                    .evaluate_keyed_here(self.position, self.pawn_key)
            }
        }
        let keyed = Keyed {
            evaluator: self,
            position,
            pawn_key,
        };
        simd::dispatch_level(simd::Path::scalar(), keyed)
    }

    #[inline(always)]
    fn evaluate_keyed_here(&mut self, position: &Position, pawn_key: u64) -> i32 {
        let boards = position.boards();
        let lanes = lane_boards(&boards);
        let prepared = &self.prepared;
        let pawns = self.pawns.probe(
            pawn_key,
            #[inline(always)]
            || {
                let mut total = Total::<u64>::new();
                let passed = pawn_terms(
                    prepared,
                    lanes.pieces[0] & lanes.colors[0],
                    lanes.pieces[0] & lanes.colors[1],
                    &mut total,
                );
                let (mg, eg) = total.sums();
                PawnEval {
                    mg: mg as i32,
                    eg: eg as i32,
                    passed,
                }
            },
        );
        let mut total = Total::<u64>::from_sums(pawns.mg as i64 as u64, pawns.eg as i64 as u64);
        let meta = piece_terms(prepared, &lanes, pawns.passed, &mut total);
        let (mg, eg) = total.sums();
        endgame::finish(mg as i32, eg as i32, meta.phase, meta.signature, || boards).score
    }
}

impl Default for Evaluator {
    fn default() -> Evaluator {
        Evaluator::new(Prepared::default(), 1 << 16)
    }
}
