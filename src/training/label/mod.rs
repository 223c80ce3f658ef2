//! Labelling: every position of a DB scored by a deeper search, for training targets.
//!
//! A [`Labeller`] scores one position at a time: pawnstorm's own search
//! ([`SearchLabeller`]) or any UCI engine in a child process ([`uci_engine::UciLabeller`]).
//! [`label`] hands runs of [`CHUNK`] consecutive positions to one labeller per worker
//! thread and gives the scores back in input order. Each labeller forgets what it learnt
//! (its hash table, its histories) at the start of every run, so a position's label depends
//! on its run alone, not on the thread count or on which thread took which run: with a
//! depth or node limit, the same input gives the same labels.
//!
//! A position whose labeller fails (an engine that crashes, hangs or answers garbage) is
//! reported and left without a score: never a wrong or stale label.

pub mod uci_engine;

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::db::{Database, DbError};
use crate::engine::search::{Control, Engine, Limits};
use crate::eval::Prepared;
use crate::movegen::Board;
use crate::position::board::Position;
use crate::position::labels::{Record, white_pov};

pub use uci_engine::{EngineSpec, UciLabeller};

/// Consecutive positions one labeller takes at a time (and forgets its tables before):
/// a few games' worth of a self-play dump, so the table helps within a game.
pub const CHUNK: u64 = 256;

/// How deep each position is searched.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Depth(u32),
    Nodes(u64),
    /// Milliseconds a position (labels then depend on the machine's speed and load).
    Movetime(u64),
}

impl Limit {
    /// The UCI `go` arguments.
    pub fn go_arguments(self) -> String {
        match self {
            Limit::Depth(d) => format!("depth {d}"),
            Limit::Nodes(n) => format!("nodes {n}"),
            Limit::Movetime(ms) => format!("movetime {ms}"),
        }
    }
}

/// A labeller's answer for one position: its score from the side to move's point of view
/// (centipawns; mates as `32000 - plies`, negated when mated, the DB's convention), or why
/// there is none.
pub type Scored = Result<i32, String>;

/// Scores positions one at a time.
pub trait Labeller: Send {
    /// Called before each run of consecutive positions: forget tables and histories.
    fn new_run(&mut self) -> Result<(), String>;
    /// The score of `position`, side to move's view.
    fn score(&mut self, position: &Position) -> Scored;
}

/// pawnstorm's own search to a fixed limit, with its own table.
pub struct SearchLabeller {
    engine: Engine,
    limits: Limits,
    control: Control,
}

impl SearchLabeller {
    /// A labeller searching with `weights`' terms, or with `network` when there is one.
    pub fn new(
        limit: Limit,
        hash_mb: usize,
        weights: Prepared,
        network: Option<std::sync::Arc<crate::nnue::Network>>,
    ) -> Option<SearchLabeller> {
        let mut engine = Engine::new(1);
        if !engine.resize_hash(hash_mb) {
            return None;
        }
        engine.set_weights(weights);
        engine.set_network(network);
        let limits = match limit {
            Limit::Depth(d) => Limits::depth(d as i32),
            Limit::Nodes(n) => Limits {
                nodes: Some(n),
                ..Limits::default()
            },
            Limit::Movetime(ms) => Limits {
                movetime: Some(ms),
                ..Limits::default()
            },
        };
        Some(SearchLabeller {
            engine,
            limits,
            control: Control::default(),
        })
    }
}

impl Labeller for SearchLabeller {
    fn new_run(&mut self) -> Result<(), String> {
        self.engine.clear();
        Ok(())
    }

    fn score(&mut self, position: &Position) -> Scored {
        let board = Board::new(position.clone());
        let result = self
            .engine
            .search(&board, &[], &[], &self.limits, &self.control, &mut |_| {});
        Ok(result.score)
    }
}

/// A failed position: its index in the input and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub index: u64,
    pub reason: String,
}

/// What a labelling pass did.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// Positions handed to [`label`]'s sink, in order from the range's start.
    pub delivered: u64,
    /// Of those, scored by the labeller.
    pub scored: u64,
    /// Kept their existing score (`keep_existing`).
    pub kept: u64,
    pub failures: Vec<Failure>,
    /// Stopped by `interrupt` before the range's end.
    pub interrupted: bool,
    /// Summed over the workers: time spent inside the labeller's `score` calls, and the
    /// workers' whole time (the rest is reading positions, runs' resets, waiting).
    pub searching: Duration,
    pub working: Duration,
}

/// How [`label`] runs.
pub struct Options<'a> {
    /// Positions that already have a score keep it and are not searched.
    pub keep_existing: bool,
    /// Set from outside (a signal handler) to stop: positions not yet delivered are not.
    pub interrupt: &'a AtomicBool,
}

/// One run's outcome, sent from a worker to the writer.
struct RunResult {
    start: u64,
    records: Vec<Record>,
    /// Whether each record was scored by the labeller (false: kept or failed).
    scored: Vec<bool>,
    kept: u64,
    failures: Vec<Failure>,
    searching: Duration,
}

/// Labels the positions `range` of `db` with `labellers` (one worker thread each), handing
/// every record, its score replaced, to `sink` in input order. A failed position keeps its
/// other labels and has no score. `progress` hears of each run's positions as it is
/// delivered. Stops early, with `interrupted` set, when `options.interrupt` is set: the
/// positions delivered are then a prefix of the range, every one of them complete.
pub fn label<L: Labeller>(
    db: &Database,
    range: Range<u64>,
    labellers: Vec<L>,
    options: &Options<'_>,
    sink: &mut dyn FnMut(&Record) -> Result<(), DbError>,
    progress: &mut dyn FnMut(u64),
) -> Result<Summary, DbError> {
    let range = range.start.min(db.len())..range.end.min(db.len());
    let runs = (range.end - range.start).div_ceil(CHUNK);
    let next_run = AtomicU64::new(0);
    let abort = AtomicBool::new(false);
    let started = Instant::now();
    let mut summary = Summary::default();
    let threads = labellers.len() as u32;
    let outcome = std::thread::scope(|scope| -> Result<(), DbError> {
        let (sender, receiver) =
            mpsc::sync_channel::<Result<RunResult, DbError>>(2 * threads as usize);
        for mut labeller in labellers {
            let sender = sender.clone();
            let (next_run, abort, range) = (&next_run, &abort, range.clone());
            scope.spawn(move || {
                loop {
                    if abort.load(Ordering::Relaxed) || options.interrupt.load(Ordering::Relaxed) {
                        return;
                    }
                    let run = next_run.fetch_add(1, Ordering::Relaxed);
                    if run >= runs {
                        return;
                    }
                    let start = range.start + run * CHUNK;
                    let end = (start + CHUNK).min(range.end);
                    let result = label_run(db, start..end, &mut labeller, options);
                    let Some(result) = result else { return };
                    if sender.send(result).is_err() {
                        return;
                    }
                }
            });
        }
        drop(sender);
        // Runs arrive in any order: each is delivered once those before it are.
        let mut waiting: BTreeMap<u64, RunResult> = BTreeMap::new();
        let mut next_start = range.start;
        for result in receiver {
            let result = match result {
                Ok(result) => result,
                Err(e) => {
                    abort.store(true, Ordering::Relaxed);
                    return Err(e);
                }
            };
            waiting.insert(result.start, result);
            while let Some(run) = waiting.remove(&next_start) {
                for record in &run.records {
                    if let Err(e) = sink(record) {
                        abort.store(true, Ordering::Relaxed);
                        return Err(e);
                    }
                }
                let n = run.records.len() as u64;
                summary.delivered += n;
                summary.scored += run.scored.iter().filter(|&&s| s).count() as u64;
                summary.kept += run.kept;
                summary.failures.extend(run.failures);
                summary.searching += run.searching;
                next_start += n;
                progress(n);
            }
        }
        Ok(())
    });
    summary.working = started.elapsed() * threads;
    outcome?;
    summary.interrupted = summary.delivered < range.end - range.start;
    Ok(summary)
}

/// Labels one run; `None` when interrupted before its end (its positions are not
/// delivered: a partial run would leave a gap).
fn label_run<L: Labeller>(
    db: &Database,
    range: Range<u64>,
    labeller: &mut L,
    options: &Options<'_>,
) -> Option<Result<RunResult, DbError>> {
    let records = match db.records(range.clone()).collect::<Result<Vec<_>, _>>() {
        Ok(records) => records,
        Err(e) => return Some(Err(e)),
    };
    let mut result = RunResult {
        start: range.start,
        scored: vec![false; records.len()],
        records,
        kept: 0,
        failures: Vec::new(),
        searching: Duration::ZERO,
    };
    let mut reset = labeller.new_run();
    for (i, record) in result.records.iter_mut().enumerate() {
        if options.interrupt.load(Ordering::Relaxed) {
            return None;
        }
        if options.keep_existing && record.labels.score.is_some() {
            result.kept += 1;
            continue;
        }
        let index = range.start + i as u64;
        let scored = match &reset {
            Err(reason) => Err(reason.clone()),
            Ok(()) => {
                let searching = Instant::now();
                let scored = labeller.score(&record.position);
                result.searching += searching.elapsed();
                scored
            }
        };
        match scored {
            Ok(score) => {
                record.labels.score = Some(white_pov(score, record.position.side_to_move()));
                result.scored[i] = true;
            }
            Err(reason) => {
                // A signal to the process group ends a child engine too: not its fault.
                if options.interrupt.load(Ordering::Relaxed) {
                    return None;
                }
                record.labels.score = None;
                result.failures.push(Failure { index, reason });
                // A labeller that failed to reset gets another chance at the next position.
                if reset.is_err() {
                    reset = labeller.new_run();
                }
            }
        }
    }
    Some(Ok(result))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_arguments_are_uci() {
        assert_eq!(Limit::Depth(8).go_arguments(), "depth 8");
        assert_eq!(Limit::Nodes(5000).go_arguments(), "nodes 5000");
        assert_eq!(Limit::Movetime(20).go_arguments(), "movetime 20");
    }
}
