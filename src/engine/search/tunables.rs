//! The search's constants that SPSA tunes: each a [`Tunable`] with its default and range.
//!
//! The search reads them through [`Tunable::get`] (a relaxed atomic load, as cheap as a
//! plain one), so one binary serves play and tuning: `pawnstorm uci --tune` lists every
//! tunable as a UCI `spin` option and takes `setoption` for it, as OpenBench's SPSA and
//! `scripts/spsa.py` drive them. Without `--tune` they stay at their defaults and are not
//! listed (a GUI has no use for them). They are process-wide: one engine a process, as
//! every UCI engine is run.
//!
//! A value that takes effect through a derived table (the late-move reductions) rebuilds
//! that table when set ([`set`]).

use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// One tunable constant.
pub struct Tunable {
    pub name: &'static str,
    pub default: i32,
    pub min: i32,
    pub max: i32,
    value: AtomicI32,
}

impl Tunable {
    const fn new(name: &'static str, default: i32, min: i32, max: i32) -> Tunable {
        Tunable {
            name,
            default,
            min,
            max,
            value: AtomicI32::new(default),
        }
    }

    /// Its value now.
    #[inline(always)]
    pub fn get(&self) -> i32 {
        self.value.load(Ordering::Relaxed)
    }
}

macro_rules! tunables {
    ($($(#[$doc:meta])* $name:ident = $default:literal in $min:literal ..= $max:literal;)*) => {
        $(
            $(#[$doc])*
            pub static $name: Tunable = Tunable::new(stringify!($name), $default, $min, $max);
        )*
        /// Every tunable, in the order `uci --tune` lists them.
        pub static ALL: &[&Tunable] = &[$(&$name),*];
    };
}

tunables! {
    /// Reverse futility: at depth ≤ RFP_DEPTH, a static eval RFP_MARGIN per depth above
    /// beta cuts.
    RFP_DEPTH = 7 in 3..=12;
    RFP_MARGIN = 75 in 30..=150;
    /// Null move from this depth.
    NMP_DEPTH = 3 in 2..=6;
    /// Late-move pruning of quiets at depth ≤ this.
    LMP_DEPTH = 8 in 3..=12;
    /// Futility: quiets at depth ≤ FUTILITY_DEPTH that cannot raise eval + BASE +
    /// PER_DEPTH × depth to alpha are skipped.
    FUTILITY_DEPTH = 8 in 3..=12;
    FUTILITY_BASE = 90 in 20..=200;
    FUTILITY_PER_DEPTH = 90 in 30..=200;
    /// SEE pruning at depth ≤ SEE_DEPTH: quiets losing more than −QUIET × depth, captures
    /// more than −CAPTURE × depth (both margins negative).
    SEE_DEPTH = 8 in 3..=12;
    SEE_QUIET_MARGIN = -60 in -150..=-10;
    SEE_CAPTURE_MARGIN = -90 in -200..=-20;
    /// Internal iterative reduction from this depth.
    IIR_DEPTH = 4 in 2..=8;
    /// Late-move reductions from LMR_DEPTH: `BASE / 100 + ln(depth) ln(moves) / (DIVISOR /
    /// 100)` plies.
    LMR_DEPTH = 3 in 2..=5;
    LMR_BASE = 75 in 0..=200;
    LMR_DIVISOR = 225 in 120..=400;
    /// Quiescence delta pruning margin.
    DELTA_MARGIN = 200 in 50..=400;
    /// Aspiration windows from ASPIRATION_DEPTH, half-width ASPIRATION_WINDOW.
    ASPIRATION_DEPTH = 5 in 2..=8;
    ASPIRATION_WINDOW = 20 in 5..=60;
    /// Singular extensions from SE_DEPTH; a double extension below singular beta by
    /// SE_DOUBLE_MARGIN.
    SE_DEPTH = 8 in 5..=12;
    SE_DOUBLE_MARGIN = 25 in 5..=80;
    /// Time: the share of the increment spent on a move, per mille.
    TIME_INCREMENT_SHARE = 750 in 300..=1000;
    /// Time: the moves the clock is divided over without movestogo.
    TIME_MOVES_TO_GO = 25 in 10..=50;
    /// Time: the soft limit scaled by (BASE − 100 × the best move's share of the root's
    /// nodes) × SCALE / 10,000: a best move that took most of the nodes stops sooner. BASE
    /// stays above 100 so that a share of 1 cannot scale the soft limit to nothing.
    TIME_NODES_BASE = 150 in 110..=250;
    TIME_NODES_SCALE = 135 in 50..=250;
    /// Time: the hard limit as a multiple of the soft one, per cent.
    TIME_HARD_PER_SOFT = 400 in 150..=800;
}

/// Sets tunable `name` (case-insensitive, as UCI option names) to `value`, within its
/// range; rebuilds what depends on it.
pub fn set(name: &str, value: i32) -> Result<(), String> {
    let tunable = find(name).ok_or_else(|| format!("no tunable named {name}"))?;
    if !(tunable.min..=tunable.max).contains(&value) {
        return Err(format!(
            "{} = {value}: its range is {} to {}",
            tunable.name, tunable.min, tunable.max
        ));
    }
    tunable.value.store(value, Ordering::Relaxed);
    if std::ptr::eq(tunable, &LMR_BASE) || std::ptr::eq(tunable, &LMR_DIVISOR) {
        rebuild_lmr();
    }
    Ok(())
}

/// The tunable named `name` (case-insensitive).
pub fn find(name: &str) -> Option<&'static Tunable> {
    ALL.iter()
        .copied()
        .find(|t| t.name.eq_ignore_ascii_case(name))
}

/// Every tunable back at its default.
pub fn reset() {
    for tunable in ALL {
        tunable.value.store(tunable.default, Ordering::Relaxed);
    }
    rebuild_lmr();
}

/// Late-move reductions by depth and move number (both capped at 63), from LMR_BASE and
/// LMR_DIVISOR: rebuilt when either is set, read with relaxed loads.
static LMR: [[AtomicU8; 64]; 64] = [const { [const { AtomicU8::new(0) }; 64] }; 64];
static LMR_BUILT: std::sync::Once = std::sync::Once::new();

fn rebuild_lmr() {
    let base = LMR_BASE.get() as f64 / 100.0;
    let divisor = LMR_DIVISOR.get() as f64 / 100.0;
    for (depth, row) in LMR.iter().enumerate() {
        for (moves, r) in row.iter().enumerate() {
            let value = if depth == 0 || moves == 0 {
                0.0
            } else {
                base + (depth as f64).ln() * (moves as f64).ln() / divisor
            };
            r.store(value.clamp(0.0, 63.0) as u8, Ordering::Relaxed);
        }
    }
}

/// The late-move reduction at `depth` after `moves` moves.
#[inline(always)]
pub fn lmr(depth: usize, moves: usize) -> i32 {
    LMR_BUILT.call_once(rebuild_lmr);
    LMR[depth.min(63)][moves.min(63)].load(Ordering::Relaxed) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lmr_table_is_the_old_formula_at_the_defaults() {
        for depth in 1..64usize {
            for moves in 1..64usize {
                let old = (0.75 + (depth as f64).ln() * (moves as f64).ln() / 2.25) as i32;
                assert_eq!(lmr(depth, moves), old, "{depth} {moves}");
            }
        }
    }

    #[test]
    fn names_are_unique_and_defaults_within_their_ranges() {
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), ALL.len());
        for t in ALL {
            assert!(t.min <= t.default && t.default <= t.max, "{}", t.name);
        }
        assert!(set("rfp_margin", 1000).is_err());
        assert!(set("no_such", 1).is_err());
    }
}
