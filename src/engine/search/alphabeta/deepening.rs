//! Iterative deepening around the alpha-beta: one root search a depth, in aspiration
//! windows, the lines reported as each finishes, the time checked between them, and the
//! move to play when not even the first finished.

use std::sync::atomic::Ordering;

use super::Search;
use crate::engine::search::see::{captured, see};
use crate::engine::search::tb::Outcome;
use crate::engine::search::tunables::{ASPIRATION_DEPTH, ASPIRATION_WINDOW};
use crate::engine::search::{Info, Limits, RootMove, SearchResult, ThreadReport};
use crate::movegen::{Board, Move};
use crate::position::score::{DRAW, INFINITY, MATE_BOUND, MAX_PLY, TB_WIN, mated_in};

/// The least and the most an iteration is forecast to grow over the one before (a ratio of
/// their nodes). Chosen by measurement at datagen's 5,000 nodes: the most positions a
/// second for labels as good (tests/search.rs `forecast_nodes_...`, docs/NNUE.md, "Datagen").
const FORECAST_GROWTH: (f64, f64) = (1.5, 4.0);

/// Whether an iteration after one of `last` nodes (and one before it of `before_last`,
/// 0 for none) is forecast to finish within `limit` nodes, `spent` spent so far.
fn next_iteration_fits(spent: u64, before_last: u64, last: u64, limit: u64) -> bool {
    let (least, most) = FORECAST_GROWTH;
    let growth = if before_last == 0 {
        least
    } else {
        (last as f64 / before_last as f64).clamp(least, most)
    };
    spent as f64 + last as f64 * growth <= limit as f64
}

impl Search<'_> {
    /// Iterative deepening to the limits; reports every finished iteration.
    pub fn iterate(
        &mut self,
        root: &Board,
        limits: &Limits,
        report: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        self.node_limit = limits.nodes.unwrap_or(u64::MAX);
        self.ponder = limits.ponder;
        if self.root_moves.is_empty() {
            let score = if root.in_check() { mated_in(0) } else { DRAW };
            let mut info = self.info(0, 1, score, None, Vec::new());
            info.proven_draw = !root.in_check();
            report(&info);
            self.wait_for_release(limits);
            return SearchResult {
                best: None,
                ponder: None,
                score,
                depth: 0,
                nodes: 0,
                pv: Vec::new(),
                threads: vec![ThreadReport::default()],
                helper_failure: None,
            };
        }
        let max_depth = limits
            .depth
            .unwrap_or(MAX_PLY as i32 - 8)
            .clamp(1, MAX_PLY as i32 - 8);
        // Helpers only fill the table: one line is enough for them.
        let multipv = if self.is_main() {
            self.options.multipv.clamp(1, self.root_moves.len())
        } else {
            1
        };
        let mut completed: Option<(RootMove, i32)> = None;
        let mut stability = 0;
        // Odd helpers start one ply deeper, so that two threads do not search the same
        // iteration in step; the table's differing contents soon part them further.
        let first_depth = (1 + (self.thread % 2) as i32).min(max_depth);
        // The nodes the last finished iteration took (for `forecast_nodes`).
        let mut last_cost = 0u64;
        for depth in first_depth..=max_depth {
            let nodes_before = self.total_nodes();
            for rm in &mut self.root_moves {
                rm.previous_score = rm.score;
            }
            for pv_index in 0..multipv {
                self.pv_index = pv_index;
                self.seldepth = 0;
                self.aspiration(root, depth, report);
                self.root_moves[..=pv_index].sort_by_key(|rm| -rm.score);
                if self.stopped {
                    break;
                }
            }
            if self.stopped {
                break;
            }
            if self.is_main() {
                for i in 0..multipv {
                    let rm = &self.root_moves[i];
                    let info = self.info(depth, i + 1, rm.score, rm.bound, rm.pv.clone());
                    report(&info);
                }
            }
            let best = self.root_moves[0].clone();
            if let Some((previous, _)) = &completed {
                stability = if previous.mv == best.mv {
                    stability + 1
                } else {
                    0
                };
            }
            let score_drop = completed.as_ref().map_or(0, |(p, _)| p.score - best.score);
            let root_nodes: u64 = self.root_moves.iter().map(|rm| rm.nodes).sum();
            let best_move_share = best.nodes as f64 / root_nodes.max(1) as f64;
            completed = Some((best.clone(), depth));
            self.completed_depth = depth;
            if limits
                .mate
                .is_some_and(|moves| crate::engine::search::mate_within(best.score, moves))
            {
                break;
            }
            if self.is_main()
                && !self.untimed_now(limits)
                && self.time.soft_expired(
                    stability,
                    score_drop,
                    best_move_share,
                    self.total_nodes(),
                )
            {
                break;
            }
            let before_last_cost = last_cost;
            last_cost = self.total_nodes() - nodes_before;
            if limits.forecast_nodes
                && let Some(limit) = limits.nodes
                && !next_iteration_fits(self.total_nodes(), before_last_cost, last_cost, limit)
            {
                break;
            }
        }
        self.wait_for_release(limits);
        let (best, depth) = completed.unwrap_or_else(|| (self.unsearched_choice(root), 0));
        SearchResult {
            best: Some(best.mv),
            ponder: best.pv.get(1).copied(),
            score: self.reported(best.score),
            depth,
            nodes: self.total_nodes(),
            pv: best.pv,
            threads: vec![ThreadReport {
                nodes: self.nodes,
                depth: self.completed_depth,
            }],
            helper_failure: None,
        }
    }

    /// The move to play when not even the first iteration finished (`stop`, or `go nodes`
    /// below what it needs): the table's move for the root, else the capture that wins the
    /// most by exchange (none that loses), else the best of the moves searched so far.
    fn unsearched_choice(&self, root: &Board) -> RootMove {
        let hash_move = self.tt.probe(root.key(), 0).map(|hit| hit.mv);
        let by_move = |mv: Move| self.root_moves.iter().find(|rm| rm.mv == mv).cloned();
        if let Some(rm) = hash_move.and_then(by_move) {
            return rm;
        }
        let position = root.position();
        self.root_moves
            .iter()
            .filter(|rm| captured(position, rm.mv).is_some())
            .map(|rm| (see(position, rm.mv), rm))
            .filter(|(gain, _)| *gain >= 0)
            .max_by_key(|(gain, _)| *gain)
            .map(|(_, rm)| RootMove {
                pv: vec![rm.mv],
                ..rm.clone()
            })
            .unwrap_or_else(|| self.root_moves[0].clone())
    }

    /// `go infinite` and an unanswered ponder wait for `stop` (or `ponderhit`), even at a
    /// root with nothing to search: a GUI that sent them expects no `bestmove` before.
    fn wait_for_release(&self, limits: &Limits) {
        while self.is_main()
            && !self.control.stopped()
            && (limits.infinite || self.control.pondering.load(Ordering::Relaxed))
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// A root score as reported: the tables' result replaces an evaluation at a root they
    /// cover (as Stockfish reports a tablebase win), a mate stays.
    fn reported(&self, score: i32) -> i32 {
        match self.root_outcome {
            Some(_) if score.abs() >= MATE_BOUND => score,
            Some(Outcome::Win) => TB_WIN - 1,
            Some(Outcome::Loss) => -TB_WIN + 1,
            Some(Outcome::Draw) => DRAW,
            None => score,
        }
    }

    /// Whether time does not bound the search right now (infinite, or still pondering).
    fn untimed_now(&self, limits: &Limits) -> bool {
        limits.infinite || self.control.pondering.load(Ordering::Relaxed)
    }

    fn info(
        &self,
        depth: i32,
        multipv: usize,
        score: i32,
        bound: Option<bool>,
        pv: Vec<Move>,
    ) -> Info {
        Info {
            depth,
            seldepth: self.seldepth.max(depth.max(0) as usize),
            multipv,
            score: self.reported(score),
            bound,
            nodes: self.total_nodes(),
            millis: self.time.elapsed().as_millis() as u64,
            hashfull: self.tt.hashfull(),
            tbhits: self.tbhits,
            proven_draw: matches!(self.root_outcome, Some(Outcome::Draw))
                && score.abs() < MATE_BOUND,
            pv,
        }
    }

    /// One root search at `depth` for the current PV line, in a window around the last
    /// score that widens on each failure.
    fn aspiration(&mut self, root: &Board, depth: i32, report: &mut dyn FnMut(&Info)) {
        let previous = self.root_moves[self.pv_index].previous_score;
        let mut delta = ASPIRATION_WINDOW.get();
        let (mut alpha, mut beta) =
            if depth >= ASPIRATION_DEPTH.get() && previous.abs() < MATE_BOUND {
                (
                    (previous - delta).max(-INFINITY),
                    (previous + delta).min(INFINITY),
                )
            } else {
                (-INFINITY, INFINITY)
            };
        loop {
            let score = self.negamax(root, alpha, beta, depth, 0, false);
            self.root_moves[self.pv_index..].sort_by_key(|rm| -rm.score);
            if self.stopped {
                return;
            }
            let bound = if score <= alpha {
                beta = (alpha + beta) / 2;
                alpha = (score - delta).max(-INFINITY);
                Some(false)
            } else if score >= beta {
                beta = (score + delta).min(INFINITY);
                Some(true)
            } else {
                self.root_moves[self.pv_index].bound = None;
                return;
            };
            // Long searches show their failures, as Stockfish does.
            if self.time.elapsed().as_millis() > 3000 {
                let rm = &self.root_moves[self.pv_index];
                let info = self.info(depth, self.pv_index + 1, score, bound, rm.pv.clone());
                report(&info);
            }
            delta += delta;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::next_iteration_fits;

    #[test]
    fn an_iteration_is_started_only_when_forecast_to_finish() {
        // 1,000 spent, the last iteration 400 after 200 before it: twice as long, 800 more.
        assert!(next_iteration_fits(1000, 200, 400, 1800));
        assert!(!next_iteration_fits(1000, 200, 400, 1799));
        // The growth is held within 1.5-4 whatever the last two did.
        assert!(next_iteration_fits(1000, 400, 400, 1600));
        assert!(!next_iteration_fits(1000, 400, 400, 1599));
        assert!(!next_iteration_fits(1000, 10, 400, 2599));
        assert!(next_iteration_fits(1000, 10, 400, 2600));
        // After the first iteration: the least growth.
        assert!(next_iteration_fits(100, 0, 100, 250));
        assert!(!next_iteration_fits(100, 0, 100, 249));
    }
}
