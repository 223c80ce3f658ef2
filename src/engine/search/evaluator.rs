//! The search's evaluation: the hand-crafted terms with their pawn hash table
//! ([`Evaluator`]), or a network with its accumulators kept per ply ([`NnueEvaluator`]).
//! The choice between the two evaluators is made here, above both.

use std::sync::Arc;

use crate::eval::pawn_hash::PawnTable;
use crate::eval::{Evaluator, Prepared};
use crate::nnue::accumulator::AccumulatorStats;
use crate::nnue::{Network, NnueEvaluator};
use crate::position::board::Position;

/// The terms' [`Evaluator`], and a network that replaces it when set
/// ([`SearchEvaluator::set_network`]).
#[derive(Clone, Debug)]
pub struct SearchEvaluator {
    terms: Evaluator,
    nnue: Option<NnueEvaluator>,
}

impl SearchEvaluator {
    /// An evaluator with `prepared` weights and a pawn table of `pawn_entries` slots
    /// (rounded to a power of two), without a network.
    pub fn new(prepared: Prepared, pawn_entries: usize) -> SearchEvaluator {
        SearchEvaluator {
            terms: Evaluator::new(prepared, pawn_entries),
            nnue: None,
        }
    }

    /// Evaluates with `network` from now on (`None`: the hand-crafted terms).
    pub fn set_network(&mut self, network: Option<Arc<Network>>) {
        self.nnue = network.map(NnueEvaluator::new);
    }

    pub fn network(&self) -> Option<&Arc<Network>> {
        self.nnue.as_ref().map(|n| n.network())
    }

    /// How the network's accumulators were found so far, with a network.
    pub fn accumulator_stats(&self) -> Option<AccumulatorStats> {
        self.nnue.as_ref().map(|n| n.stats())
    }

    /// The search's evaluation of `position` at `ply`, White's point of view: the network's
    /// (with the exact endgame rules) if there is one, else the terms'.
    #[inline]
    pub fn evaluate_at(&mut self, position: &Position, pawn_key: u64, ply: usize) -> i32 {
        match &mut self.nnue {
            Some(nnue) => {
                let boards = crate::nnue::boards_of(position);
                let black = position.side_to_move() == pawnstorm_kernels::Color::Black;
                let score = nnue.score(&boards, black, ply);
                if black { -score } else { score }
            }
            None => self.terms.evaluate_keyed(position, pawn_key),
        }
    }

    pub fn weights(&self) -> &Prepared {
        self.terms.weights()
    }

    pub fn pawn_table(&self) -> &PawnTable {
        self.terms.pawn_table()
    }

    pub fn pawn_table_mut(&mut self) -> &mut PawnTable {
        self.terms.pawn_table_mut()
    }
}

impl Default for SearchEvaluator {
    fn default() -> SearchEvaluator {
        SearchEvaluator::new(Prepared::default(), 1 << 16)
    }
}
