//! Time management: from the clock (or a fixed move time) to a soft limit, checked between
//! iterations and stretched or shrunk by how stable the best move is and by the share of
//! the nodes it took, and a hard limit, checked every few thousand nodes.

use super::tunables::{
    TIME_HARD_PER_SOFT, TIME_INCREMENT_SHARE, TIME_MOVES_TO_GO, TIME_NODES_BASE, TIME_NODES_SCALE,
};
use std::time::{Duration, Instant};

use pawnstorm_kernels::Color;

/// What `go` asked for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    pub wtime: Option<u64>,
    pub btime: Option<u64>,
    pub winc: Option<u64>,
    pub binc: Option<u64>,
    pub movestogo: Option<u64>,
    /// Milliseconds for this move.
    pub movetime: Option<u64>,
    pub depth: Option<i32>,
    pub nodes: Option<u64>,
    /// With `nodes`: start no iteration that is forecast not to finish within them (its
    /// work would be thrown away), by the growth from the iteration before the last to the
    /// last. Datagen's searches; UCI's `go nodes` spends its nodes whole.
    pub forecast_nodes: bool,
    /// Stop once a mate in this many moves (or fewer) is found.
    pub mate: Option<u32>,
    pub infinite: bool,
    pub ponder: bool,
}

impl Limits {
    /// A search to a fixed depth, and nothing else.
    pub fn depth(depth: i32) -> Limits {
        Limits {
            depth: Some(depth),
            ..Limits::default()
        }
    }

    /// Whether the clock or a move time bounds the search.
    pub fn timed(&self) -> bool {
        self.movetime.is_some() || self.wtime.is_some() || self.btime.is_some()
    }
}

// The moves a clock is spread over when `movestogo` is not given (TIME_MOVES_TO_GO), the
// share of the increment spent on top of the clock's share (TIME_INCREMENT_SHARE, per
// mille) and the hard limit in soft limits (TIME_HARD_PER_SOFT, per cent) are tunables
// (`super::tunables`).
/// The clock kept back from the per-move share: this many increments and milliseconds.
const RESERVE_INCREMENTS: f64 = 10.0;
const RESERVE_MS: f64 = 50.0;
/// The hard limit: at most this share of the clock.
const HARD_CLOCK_SHARE: f64 = 0.5;
/// The share of the clock (less the overhead) an unfinished first iteration may take.
const EMERGENCY_CLOCK_SHARE: f64 = 0.8;

/// The limits of one search in time.
#[derive(Clone, Debug)]
pub struct TimeManager {
    start: Instant,
    /// The time to aim for; `None` when not timed.
    soft: Option<Duration>,
    /// Never to be passed once an iteration has finished.
    hard: Option<Duration>,
    /// Where even an unfinished first iteration stops (its move is then a fallback): most
    /// of the clock, since a move from no search at all is worse than a longer think.
    emergency: Option<Duration>,
    /// UCI `nodestime` (Stockfish's option): when not 0, time is counted in nodes, this
    /// many a millisecond, so that a timed search is the same search on any machine and
    /// under any load (tests and reproducible matches); the reported `time` stays the clock's.
    nodes_per_ms: u64,
    /// The nodes searched when the clock started (a `ponderhit` restarts it).
    start_nodes: u64,
}

impl TimeManager {
    /// The limits for `side` under `limits`, keeping `overhead` ms of each clock in reserve
    /// for the GUI's and the pipe's delays.
    pub fn new(limits: &Limits, side: Color, overhead: u64) -> TimeManager {
        let start = Instant::now();
        let (soft, hard, emergency) = if let Some(movetime) = limits.movetime {
            // A fixed move time is spent whole, as Stockfish spends it: no clock falls when
            // it runs out, so `Move Overhead` (a reserve for the clock) is not taken off.
            let budget = Some(Duration::from_millis(movetime.max(1)));
            return TimeManager {
                soft: None,
                hard: budget,
                emergency: budget,
                ..TimeManager::unlimited()
            };
        } else {
            let (time, inc) = match side {
                Color::White => (limits.wtime, limits.winc),
                Color::Black => (limits.btime, limits.binc),
            };
            // A clock given for the other side only: ours is taken as empty, as Stockfish
            // takes it (the search still completes its first iteration), not as unlimited.
            let time = time.or((limits.wtime.is_some() || limits.btime.is_some()).then_some(0));
            match time {
                None => return TimeManager::unlimited(),
                Some(time) => {
                    let inc = inc.unwrap_or(0) as f64;
                    let remaining = time.saturating_sub(overhead) as f64;
                    let moves = limits
                        .movestogo
                        .unwrap_or(TIME_MOVES_TO_GO.get() as u64)
                        .clamp(1, 50);
                    let clock_share = if moves == 1 { 0.8 } else { HARD_CLOCK_SHARE };
                    // A reserve the clock share is not taken from: with increments, the
                    // clock settles above it instead of near zero, where one slow reply
                    // from the operating system would lose on time.
                    let reserve = (RESERVE_INCREMENTS * inc + RESERVE_MS).min(remaining / 2.0);
                    let soft = ((remaining - reserve) / moves as f64
                        + inc * (TIME_INCREMENT_SHARE.get() as f64 / 1000.0))
                        .min(remaining * clock_share);
                    let hard = (soft * (TIME_HARD_PER_SOFT.get() as f64 / 100.0))
                        .min(remaining * clock_share);
                    (
                        soft.max(1.0),
                        hard.max(1.0),
                        (remaining * EMERGENCY_CLOCK_SHARE).max(1.0),
                    )
                }
            }
        };
        TimeManager {
            start,
            soft: Some(Duration::from_secs_f64(soft / 1000.0)),
            hard: Some(Duration::from_secs_f64(hard / 1000.0)),
            emergency: Some(Duration::from_secs_f64(emergency / 1000.0)),
            ..TimeManager::unlimited()
        }
    }

    /// No time limit.
    pub fn unlimited() -> TimeManager {
        TimeManager {
            start: Instant::now(),
            soft: None,
            hard: None,
            emergency: None,
            nodes_per_ms: 0,
            start_nodes: 0,
        }
    }

    /// Counts time in nodes, `nodes_per_ms` a millisecond (0: the clock).
    pub fn count_in_nodes(&mut self, nodes_per_ms: u64) {
        self.nodes_per_ms = nodes_per_ms;
    }

    /// Restarts the clock (a `ponderhit`: the move we pondered was played; our time starts).
    pub fn restart(&mut self, nodes: u64) {
        self.start = Instant::now();
        self.start_nodes = nodes;
    }

    /// Wall-clock time since the start (what `info time` reports).
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The time the limits are measured against, having searched `nodes`: the clock's, or
    /// with `nodestime` the nodes since the start in milliseconds.
    pub fn spent(&self, nodes: u64) -> Duration {
        match self.nodes_per_ms {
            0 => self.elapsed(),
            per_ms => Duration::from_millis(nodes.saturating_sub(self.start_nodes) / per_ms),
        }
    }

    /// Whether the hard limit has passed, having searched `nodes`.
    pub fn hard_expired(&self, nodes: u64) -> bool {
        self.hard.is_some_and(|hard| self.spent(nodes) >= hard)
    }

    /// Whether even an unfinished first iteration must stop, having searched `nodes`.
    pub fn emergency_expired(&self, nodes: u64) -> bool {
        self.emergency
            .is_some_and(|limit| self.spent(nodes) >= limit)
    }

    /// Whether a new iteration should not start. `stability` counts the iterations the
    /// best move has stayed the same; `score_drop` is how much the score fell since the last
    /// iteration (centipawns); `best_move_share` is the share of the root's nodes (over every
    /// iteration) spent under the best move: where the others were refuted quickly the
    /// choice is settled, where they took most of the nodes it is not. The next iteration
    /// takes about as long as all before it, so one is started only while under half the
    /// (scaled) soft limit.
    pub fn soft_expired(
        &self,
        stability: u32,
        score_drop: i32,
        best_move_share: f64,
        nodes: u64,
    ) -> bool {
        let Some(soft) = self.soft else {
            return false;
        };
        let mut scale = 1.4 - 0.1 * f64::from(stability.min(7));
        if score_drop > 30 {
            scale *= 1.3;
        }
        let share = best_move_share.clamp(0.0, 1.0);
        scale *= (f64::from(TIME_NODES_BASE.get()) / 100.0 - share)
            * (f64::from(TIME_NODES_SCALE.get()) / 100.0);
        self.spent(nodes).as_secs_f64() >= soft.as_secs_f64() * scale * 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clock(time: u64, inc: u64) -> Limits {
        Limits {
            wtime: Some(time),
            btime: Some(time),
            winc: Some(inc),
            binc: Some(inc),
            ..Limits::default()
        }
    }

    #[test]
    fn the_hard_limit_stays_inside_the_clock() {
        for (time, inc) in [
            (1000, 10),
            (50, 10),
            (30, 0),
            (0, 0),
            (10_000, 100),
            (300_000, 0),
        ] {
            let tm = TimeManager::new(&clock(time, inc), Color::White, 30);
            let hard = tm.hard.expect("timed").as_millis() as u64;
            assert!(
                hard <= time.saturating_sub(30).max(1),
                "{time}+{inc}: {hard}"
            );
            assert!(tm.soft.expect("timed") <= tm.hard.expect("timed"));
            assert!(tm.hard.expect("timed") <= tm.emergency.expect("timed"));
            let emergency = tm.emergency.expect("timed").as_millis() as u64;
            assert!(
                emergency <= time.saturating_sub(30).max(1),
                "{time}+{inc}: {emergency}"
            );
        }
    }

    #[test]
    fn movetime_is_spent_whole() {
        let limits = Limits {
            movetime: Some(1000),
            ..Limits::default()
        };
        let tm = TimeManager::new(&limits, Color::Black, 30);
        assert_eq!(tm.hard, Some(Duration::from_millis(1000)));
        assert_eq!(tm.soft, None);
    }

    #[test]
    fn untimed_searches_have_no_limits() {
        let tm = TimeManager::new(&Limits::depth(5), Color::White, 30);
        assert!(!tm.hard_expired(u64::MAX) && !tm.soft_expired(0, 0, 0.5, u64::MAX));
    }

    #[test]
    fn a_clock_for_the_other_side_only_leaves_almost_no_time() {
        let limits = Limits {
            btime: Some(5000),
            ..Limits::default()
        };
        let tm = TimeManager::new(&limits, Color::White, 30);
        assert_eq!(tm.hard, Some(Duration::from_millis(1)));
    }

    #[test]
    fn nodestime_counts_nodes_as_milliseconds() {
        let limits = Limits {
            movetime: Some(100),
            ..Limits::default()
        };
        let mut tm = TimeManager::new(&limits, Color::White, 30);
        tm.count_in_nodes(1000);
        assert!(!tm.hard_expired(99_999));
        assert!(tm.hard_expired(100_000));
        tm.restart(50_000);
        assert!(!tm.hard_expired(149_999));
        assert!(tm.hard_expired(150_000));
    }

    #[test]
    fn the_side_to_move_clock_is_used() {
        let limits = Limits {
            wtime: Some(100_000),
            btime: Some(1_000),
            ..Limits::default()
        };
        let white = TimeManager::new(&limits, Color::White, 0)
            .hard
            .expect("timed");
        let black = TimeManager::new(&limits, Color::Black, 0)
            .hard
            .expect("timed");
        assert!(white > black * 10);
    }

    #[test]
    fn a_best_move_that_took_most_of_the_nodes_stops_sooner() {
        let mut tm = TimeManager::new(&clock(10_000, 100), Color::White, 30);
        tm.count_in_nodes(1000);
        // The first spent time (in nodes) at which the soft limit says stop, by share.
        let stop_at = |share: f64| {
            (0..u64::MAX)
                .step_by(1000)
                .find(|&nodes| tm.soft_expired(0, 0, share, nodes))
                .expect("a timed search stops")
        };
        let settled = stop_at(0.95);
        let balanced = stop_at(0.5);
        let unsettled = stop_at(0.1);
        assert!(
            settled < balanced && balanced < unsettled,
            "{settled} {balanced} {unsettled}"
        );
        // Out of range shares count as their nearest end.
        assert_eq!(stop_at(1.5), stop_at(1.0));
    }
}
