//! The engine's search: iterative deepening over a principal-variation alpha-beta with
//! aspiration windows, quiescence, a transposition table, and the usual pruning and
//! reductions, on the legal move generator and the one-lane evaluation with its pawn
//! hash table. Each pruning rule is a few lines in `alphabeta.rs`, its limits named there.

mod alphabeta;
pub mod bench;
pub mod evaluator;
pub mod ordering;
pub mod see;
pub mod tb;
pub mod time;
pub mod tt;
pub mod tunables;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::eval::Prepared;
use crate::movegen::{Board, Move, MoveList, legal_moves};
use crate::position::score::{INFINITY, MATE, MATE_BOUND, MAX_PLY};
pub use evaluator::SearchEvaluator;
use ordering::Heuristics;
pub use tb::Syzygy;
pub use time::{Limits, TimeManager};
use tt::TranspositionTable;

/// Shared between the search thread and the thread reading commands.
#[derive(Debug, Default)]
pub struct Control {
    /// Set by `stop` (or `quit`): the search returns at once.
    pub stop: AtomicBool,
    /// Set while the search ponders; cleared by `ponderhit`.
    pub pondering: AtomicBool,
    /// Set by the search thread once it has its answer (before it says `bestmove`), so a
    /// command right after `bestmove` waits for the thread instead of finding it busy.
    pub done: AtomicBool,
}

impl Control {
    pub fn new() -> Arc<Control> {
        Arc::new(Control::default())
    }
}

/// One line of the search's progress, as UCI's `info` reports it.
#[derive(Clone, Debug)]
pub struct Info {
    pub depth: i32,
    pub seldepth: usize,
    /// 1-based.
    pub multipv: usize,
    /// Side to move's view.
    pub score: i32,
    /// `Some(true)` a lower bound (fail high), `Some(false)` an upper bound.
    pub bound: Option<bool>,
    pub nodes: u64,
    pub millis: u64,
    pub hashfull: u32,
    pub tbhits: u64,
    /// The score is a draw by the rules or the tables (stalemate, a tablebase draw at the
    /// root), not an evaluation: its WDL is certain.
    pub proven_draw: bool,
    pub pv: Vec<Move>,
}

/// The outcome of a search.
#[derive(Clone, Debug)]
pub struct SearchResult {
    /// `None` only when the root has no legal move.
    pub best: Option<Move>,
    pub ponder: Option<Move>,
    pub score: i32,
    pub depth: i32,
    pub nodes: u64,
    /// The line `best` starts (as the last `info` gave it).
    pub pv: Vec<Move>,
    /// What each thread did, the main thread first (Lazy SMP's helpers after it).
    pub threads: Vec<ThreadReport>,
    /// Why a helper thread failed, if one did (its panic's message). The main thread's
    /// move still stands; the caller should still say that something went wrong.
    pub helper_failure: Option<String>,
}

/// One thread's share of a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadReport {
    /// Nodes this thread searched.
    pub nodes: u64,
    /// The deepest iteration it finished (0: none).
    pub depth: i32,
}

/// A root move with the score and line of its last full search.
#[derive(Clone, Debug)]
struct RootMove {
    mv: Move,
    score: i32,
    previous_score: i32,
    pv: Vec<Move>,
    /// Whether `score` is a bound from an aspiration failure, and which.
    bound: Option<bool>,
    /// This thread's nodes under this move, over every iteration so far (time management:
    /// the share the best move took says how settled the choice is).
    nodes: u64,
}

/// Options the engine is set up with.
#[derive(Clone, Debug)]
pub struct Options {
    pub multipv: usize,
    pub move_overhead: u64,
    /// UCI `nodestime`: time counted in nodes, this many a millisecond (0: the clock).
    pub nodes_per_ms: u64,
    /// For tests of the failure path only: every helper thread panics as it starts.
    #[doc(hidden)]
    pub helpers_panic: bool,
    /// Search features that tests switch off one at a time to show what each changes.
    #[doc(hidden)]
    pub features: Features,
}

/// Search features a test can switch off (all on by default; the engine never switches
/// them off): each one's behavioural test shows a position whose result it changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Features {
    /// A ply more for a hash move every other move falls well short of (a ply less when
    /// the table's score already beats beta).
    pub singular_extensions: bool,
    /// A cut when the moves other than the hash move reach beta anyway.
    pub multi_cut: bool,
    /// The static evaluation corrected by the running error of past searches with the
    /// same pawns.
    pub correction_history: bool,
    /// Captures ordered by how often the same piece taking the same victim on the same
    /// square caused cut-offs, beside the victim's value.
    pub capture_history: bool,
}

impl Default for Features {
    fn default() -> Features {
        Features {
            singular_extensions: true,
            multi_cut: true,
            correction_history: true,
            capture_history: true,
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            multipv: 1,
            move_overhead: 30,
            nodes_per_ms: 0,
            helpers_panic: false,
            features: Features::default(),
        }
    }
}

/// The most search threads (UCI `Threads`).
pub const MAX_THREADS: usize = 256;

/// What the threads of one search share besides the table.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    /// Set by the main thread once it has its move: the helpers stop.
    helpers_stop: AtomicBool,
    /// Every thread's nodes, each published a thousand at a time.
    nodes: AtomicU64,
}

/// A helper thread's own state (Lazy SMP): what a thread must not share.
struct Helper {
    evaluator: SearchEvaluator,
    heuristics: Heuristics,
}

/// The engine: what lasts between searches (tables, heuristics, options).
pub struct Engine {
    tt: TranspositionTable,
    evaluator: SearchEvaluator,
    heuristics: Heuristics,
    /// One per thread beyond the first.
    helpers: Vec<Helper>,
    syzygy: Option<Syzygy>,
    pub options: Options,
}

/// Pawn hash entries: 2^16 of 32 bytes, 2 MiB, far more than a search's pawn structures.
const PAWN_ENTRIES: usize = 1 << 16;

impl Engine {
    /// An engine with a transposition table of `hash_mb` MiB and the default weights.
    pub fn new(hash_mb: usize) -> Engine {
        Engine {
            tt: TranspositionTable::new(hash_mb),
            evaluator: SearchEvaluator::new(Prepared::default(), PAWN_ENTRIES),
            heuristics: Heuristics::new(MAX_PLY),
            helpers: Vec::new(),
            syzygy: None,
            options: Options::default(),
        }
    }

    /// Replaces the table with one of `hash_mb` MiB.
    /// Replaces the table with one of `hash_mb` MiB; false (the old table kept) when the
    /// memory cannot be had.
    pub fn resize_hash(&mut self, hash_mb: usize) -> bool {
        // The old table goes first, so its memory counts toward the new one.
        self.tt = TranspositionTable::new(1);
        match TranspositionTable::try_new(hash_mb) {
            Some(tt) => {
                self.tt = tt;
                true
            }
            None => false,
        }
    }

    /// Forgets everything learnt: a new game.
    pub fn clear(&mut self) {
        self.tt.clear();
        self.heuristics.clear();
        self.evaluator.pawn_table_mut().clear();
        for helper in &mut self.helpers {
            helper.heuristics.clear();
            helper.evaluator.pawn_table_mut().clear();
        }
    }

    pub fn set_weights(&mut self, prepared: Prepared) {
        let network = self.evaluator.network().cloned();
        self.evaluator = SearchEvaluator::new(prepared, PAWN_ENTRIES);
        self.evaluator.set_network(network);
        let threads = self.threads();
        self.helpers.clear();
        self.set_threads(threads);
    }

    /// Evaluates with `network` (`None`: the hand-crafted terms) in every thread. The table
    /// is cleared: its stored evaluations are the other evaluator's.
    pub fn set_network(&mut self, network: Option<Arc<crate::nnue::Network>>) {
        let same = match (self.evaluator.network(), &network) {
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        self.evaluator.set_network(network.clone());
        for helper in &mut self.helpers {
            helper.evaluator.set_network(network.clone());
        }
        self.tt.clear();
    }

    pub fn network(&self) -> Option<&Arc<crate::nnue::Network>> {
        self.evaluator.network()
    }

    /// Searches with `threads` threads (Lazy SMP: one table, the rest per thread), 1 to
    /// [`MAX_THREADS`].
    pub fn set_threads(&mut self, threads: usize) {
        let helpers = threads.clamp(1, MAX_THREADS) - 1;
        self.helpers.truncate(helpers);
        while self.helpers.len() < helpers {
            let mut evaluator =
                SearchEvaluator::new(self.evaluator.weights().clone(), PAWN_ENTRIES);
            evaluator.set_network(self.evaluator.network().cloned());
            self.helpers.push(Helper {
                evaluator,
                heuristics: Heuristics::new(MAX_PLY),
            });
        }
    }

    pub fn threads(&self) -> usize {
        self.helpers.len() + 1
    }

    pub fn set_syzygy(&mut self, syzygy: Option<Syzygy>) {
        self.syzygy = syzygy;
    }

    pub fn syzygy(&self) -> Option<&Syzygy> {
        self.syzygy.as_ref()
    }

    pub fn evaluator_mut(&mut self) -> &mut SearchEvaluator {
        &mut self.evaluator
    }

    /// The main thread's accumulator updates and refreshes, with a network.
    pub fn accumulator_stats(&self) -> Option<crate::nnue::accumulator::AccumulatorStats> {
        self.evaluator.accumulator_stats()
    }

    /// Pawn hash probes and hits since the table was made or cleared.
    pub fn pawn_hash_stats(&self) -> (u64, u64) {
        let table = self.evaluator.pawn_table();
        (table.probes(), table.hits())
    }

    /// Searches `root` (reached through the positions whose keys are `history`, oldest
    /// first, for repetitions) under `limits`, reporting each finished iteration to
    /// `report`. Only the moves in `search_moves` are searched at the root if it is not
    /// empty.
    pub fn search(
        &mut self,
        root: &Board,
        history: &[u64],
        search_moves: &[Move],
        limits: &Limits,
        control: &Control,
        report: &mut dyn FnMut(&Info),
    ) -> SearchResult {
        let mut time = TimeManager::new(limits, root.side_to_move(), self.options.move_overhead);
        time.count_in_nodes(self.options.nodes_per_ms);
        self.tt.new_search();
        self.heuristics.clear_killers();

        let mut moves = MoveList::new();
        if !root.opponent_in_check() {
            legal_moves(root, &mut moves);
        }
        let mut root_moves: Vec<Move> = moves
            .iter()
            .copied()
            .filter(|mv| search_moves.is_empty() || search_moves.contains(mv))
            .collect();
        if root_moves.is_empty() {
            root_moves = moves.to_vec();
        }
        let mut tbhits = 0;
        let mut tb_score = None;
        if let Some(syzygy) = &self.syzygy
            && let Some((outcome, kept)) = syzygy.root_moves(root, &root_moves)
        {
            tbhits += 1;
            root_moves = kept;
            tb_score = Some(outcome);
        }
        let root_moves: Vec<RootMove> = root_moves
            .iter()
            .map(|&mv| RootMove {
                mv,
                score: -INFINITY,
                previous_score: -INFINITY,
                pv: vec![mv],
                bound: None,
                nodes: 0,
            })
            .collect();
        let shared = Shared::default();
        let Engine {
            tt,
            evaluator,
            heuristics,
            helpers,
            syzygy,
            options,
        } = self;
        let (tt, syzygy, options) = (&*tt, syzygy.as_ref(), &*options);
        // Helpers search to the same depth and node limits, never to a clock: the main
        // thread decides when the search ends (a node limit counts every thread's nodes).
        let helper_limits = Limits {
            depth: limits.depth,
            nodes: limits.nodes,
            ..Limits::default()
        };
        let multipv = options.multipv;
        std::thread::scope(|scope| {
            let mut running = Vec::with_capacity(helpers.len());
            for (index, helper) in helpers.iter_mut().enumerate() {
                let (shared, helper_limits, root_moves) = (&shared, &helper_limits, &root_moves);
                helper.heuristics.clear_killers();
                let parts = alphabeta::Parts {
                    tt,
                    evaluator: &mut helper.evaluator,
                    heuristics: &mut helper.heuristics,
                    syzygy,
                    options,
                };
                let panics = options.helpers_panic;
                running.push(scope.spawn(move || {
                    assert!(!panics, "injected failure (Options::helpers_panic)");
                    let mut time = TimeManager::unlimited();
                    let mut search = alphabeta::Search::new(
                        parts,
                        history,
                        control,
                        &mut time,
                        shared,
                        index + 1,
                    );
                    search.root_moves = root_moves.clone();
                    search.iterate(root, helper_limits, &mut |_| {})
                }));
            }
            let parts = alphabeta::Parts {
                tt,
                evaluator,
                heuristics,
                syzygy,
                options,
            };
            let mut search = alphabeta::Search::new(parts, history, control, &mut time, &shared, 0);
            search.tbhits = tbhits;
            search.root_outcome = tb_score;
            search.root_moves = root_moves.clone();
            let mut result = search.iterate(root, limits, report);
            drop(search);
            shared.helpers_stop.store(true, Ordering::Relaxed);
            let mut finished = Vec::with_capacity(running.len());
            for (index, handle) in running.into_iter().enumerate() {
                match handle.join() {
                    Ok(helper) => {
                        result.threads.extend_from_slice(&helper.threads);
                        finished.push(helper);
                    }
                    Err(panic) => {
                        let message = panic
                            .downcast_ref::<&str>()
                            .map(|s| s.to_string())
                            .or_else(|| panic.downcast_ref::<String>().cloned())
                            .unwrap_or_else(|| "a panic without a message".to_string());
                        result.threads.push(ThreadReport::default());
                        result.helper_failure.get_or_insert(format!(
                            "search thread {} panicked: {message}",
                            index + 1
                        ));
                    }
                }
            }
            // The main thread decides, from every thread's last completed iteration: a
            // helper's line replaces its own when it is at least as deep and scores better
            // (a mate one thread proved is not lost because another thread did not see it).
            // Not at a root the tables decide, nor with several lines (MultiPV is the main
            // thread's).
            if tb_score.is_none() && multipv == 1 && result.best.is_some() {
                let better = finished
                    .into_iter()
                    .filter(|h| h.best.is_some() && h.depth >= result.depth)
                    .filter(|h| h.score > result.score)
                    .max_by_key(|h| (h.score, h.depth));
                if let Some(better) = better {
                    report(&Info {
                        depth: better.depth,
                        seldepth: better.depth.max(0) as usize,
                        multipv: 1,
                        score: better.score,
                        bound: None,
                        nodes: result.nodes,
                        millis: time.elapsed().as_millis() as u64,
                        hashfull: tt.hashfull(),
                        tbhits,
                        proven_draw: false,
                        pv: better.pv.clone(),
                    });
                    result = SearchResult {
                        nodes: result.nodes,
                        threads: std::mem::take(&mut result.threads),
                        helper_failure: result.helper_failure.take(),
                        ..better
                    };
                }
            }
            result
        })
    }
}

/// Whether `score` is a mate found within `moves` moves for the side to move.
fn mate_within(score: i32, moves: u32) -> bool {
    score >= MATE_BOUND && (MATE - score + 1) / 2 <= moves as i32
}

impl Control {
    #[inline]
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
