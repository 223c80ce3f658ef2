//! The network against the hand-crafted evaluation on the held-out positions, measured as
//! `tune` measures: the mean squared error between the game result and `sigmoid(K · eval)`
//! with K fitted to the results (`training::tune::fit_k`), so that a net's figure and a
//! tuned weights file's can be set side by side.
//!
//! As in `tune`, positions an exact endgame rule scores (insufficient material, KPK, KBNK,
//! KXK) are left out: both evaluations give the rule's score there.

use std::sync::Arc;

use super::model::boards_of_features;
use crate::eval::Prepared;
use crate::nnue::{Network, NnueEvaluator};
use crate::position::board::PositionBoards;
use crate::training::loader::Batch;
use crate::training::nnue::MAX_ACTIVE;
use crate::training::tune::{KFit, fit_k};

/// Both fits on the same positions.
#[derive(Clone, Debug)]
pub struct Comparison {
    /// Positions with a result that no rule scores.
    pub positions: usize,
    /// Left out: scored by an exact rule.
    pub rules: u64,
    pub net: Result<KFit, String>,
    pub hce: Result<KFit, String>,
}

/// Evaluates every position of `batches` that has a result with `net` (the quantised
/// integer evaluation, as the engine plays it) and with `prepared`, and fits K for each.
/// The batches must be Chess768 (`run::held_out_boards_loader`): the boards are decoded from
/// their features, and a king-bucketed set's are mirrored, which the hand-crafted
/// evaluation, not symmetric between the wings, would score as other positions.
pub fn results_only(
    batches: impl Iterator<Item = Result<Batch, String>>,
    net: Arc<Network>,
    prepared: &Prepared,
) -> Result<Comparison, String> {
    let mut evaluator = NnueEvaluator::new(net);
    let (mut net_samples, mut hce_samples) = (Vec::new(), Vec::new());
    let mut rules = 0;
    for batch in batches {
        let batch = batch?;
        for i in 0..batch.len {
            let result = batch.result[i];
            if result.is_nan() {
                continue;
            }
            let black = batch.stm[i] == 1;
            let boards = boards_of_features(
                &batch.stm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE],
                black,
            );
            if crate::nnue::exact_rule(&boards, black).is_some() {
                rules += 1;
                continue;
            }
            let position = PositionBoards {
                pieces: std::array::from_fn(|kind| boards[kind] | boards[6 + kind]),
                colors: [
                    boards[..6].iter().fold(0, |a, b| a | b),
                    boards[6..].iter().fold(0, |a, b| a | b),
                ],
                black_to_move: black,
            };
            let white = crate::eval::evaluate_boards(prepared, &position);
            let hce = if black { -white } else { white };
            // Both in the side to move's view, with its result: the logistic is odd, so
            // the fit is the one White's view would give.
            net_samples.push((evaluator.evaluate(&boards, black, 0) as f64, result as f64));
            hce_samples.push((hce as f64, result as f64));
        }
    }
    Ok(Comparison {
        positions: net_samples.len(),
        rules,
        net: fit_k(&net_samples).map_err(|e| e.to_string()),
        hce: fit_k(&hce_samples).map_err(|e| e.to_string()),
    })
}
