//! Texel tuning: the evaluation's weights fitted to labelled positions.
//!
//! The evaluation is linear in its weights before the taper (`eval::coefficients`), so each
//! position is read once into its nonzero counts ([`data`]) and every step of the fit works
//! on those counts, never calling the evaluation. The model ([`model`]) is the taper of
//! `docs/EVAL.md` without its rounding, a logistic of the result, and the squared error to
//! a target blending the game result and a stored score; K is fitted first, then Adam
//! ([`optimise`]) minimises the error over every weight not frozen. `docs/TUNING.md` gives
//! the formulas and the decisions.

pub mod data;
pub mod model;
pub mod optimise;

use thiserror::Error;

use crate::eval::Weights;

pub use data::{Dataset, Entry, LoadCounts, LoadOptions, Positions};
pub use model::{K_RANGE, KFit, fit_k, sigmoid};
pub use optimise::{Adam, Tuner};

/// What stops a tuning run before it writes anything.
#[derive(Debug, Error)]
pub enum TuneError {
    #[error("--freeze: no weight is named `{0}` or starts with `{0}.` (see `pawnstorm weights`)")]
    UnknownWeight(String),
    #[error(
        "K cannot be fitted: the best K, {k:.3}, lies at the edge of the search range {min}..{max}: \
         the evaluation's scale and the results do not match (check the labels, or set --k)"
    )]
    KAtBoundary { k: f64, min: f64, max: f64 },
    #[error(
        "K cannot be fitted: the results do not depend on the evaluation (mean squared error \
         {loss:.6} at the best K, {baseline:.6} predicting a draw everywhere); the labels look \
         uninformative (check them, or set --k)"
    )]
    KFlat { loss: f64, baseline: f64 },
    #[error(
        "K cannot be fitted: the results run against the evaluation (mean squared error \
         {loss:.6} with the evaluation negated, {baseline:.6} predicting a draw everywhere); \
         they look to be from Black's or the side to move's point of view, where results are \
         White's"
    )]
    KReversed { loss: f64, baseline: f64 },
    #[error(
        "the tuned weights could overflow an i32 sum (the weights loader would refuse them): \
         |mg| totals reach {mg} and |eg| {eg} at the largest counts; the largest contributors: \
         {culprits} (freeze them, lower --lr or check the labels)"
    )]
    Overflow { mg: i64, eg: i64, culprits: String },
}

/// Which weights `prefixes` name: a name, or a prefix ending at a `.` of the names
/// (`psqt` is every table, `psqt.king` the king's, `passed` the `passed.rankN` weights but
/// not `passed_blocked`). A prefix that names no weight is an error; empty items are skipped.
pub fn select_weights(prefixes: &[String]) -> Result<Vec<bool>, TuneError> {
    let names = Weights::names();
    let mut selected = vec![false; names.len()];
    for prefix in prefixes.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        let mut any = false;
        for (name, chosen) in names.iter().zip(&mut selected) {
            let matches = name
                .strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
            if matches {
                *chosen = true;
                any = true;
            }
        }
        if !any {
            return Err(TuneError::UnknownWeight(prefix.to_string()));
        }
    }
    Ok(selected)
}

/// A seeded generator (SplitMix64): the shuffles are the same on every run with one seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix(self.0)
    }

    /// Uniform in `0..n` (n > 0), without the modulo's bias worth caring about at 64 bits.
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() as u128 * n as u128) >> 64) as usize
    }

    /// Fisher-Yates.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

/// SplitMix64's finaliser: a bijection of u64 whose output bits all depend on every input bit.
pub fn mix(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_stop_at_dots() {
        let names = Weights::names();
        let chosen = |p: &[&str]| -> Vec<String> {
            let prefixes: Vec<String> = p.iter().map(|s| s.to_string()).collect();
            let mask = select_weights(&prefixes).expect("known");
            names
                .iter()
                .zip(mask)
                .filter(|(_, m)| *m)
                .map(|(n, _)| n.clone())
                .collect()
        };
        assert_eq!(chosen(&["material"]).len(), 5);
        assert_eq!(chosen(&["psqt"]).len(), 384);
        assert_eq!(chosen(&["psqt.king"]).len(), 64);
        assert_eq!(chosen(&["passed.rank2"]), ["passed.rank2"]);
        // `passed` is the passed.rankN table, not passed_blocked or passed_free_path.
        let passed = chosen(&["passed"]);
        assert_eq!(passed.len(), 8);
        assert!(passed.iter().all(|n| n.starts_with("passed.rank")));
        assert_eq!(chosen(&["tempo", "", "tempo"]), ["tempo"]);
        assert!(chosen(&[]).is_empty());
        for bad in ["psq", "passed.rank9", "materials", "psqt.king.e"] {
            let error = select_weights(&[bad.to_string()]).unwrap_err().to_string();
            assert!(error.contains(&format!("`{bad}`")), "{error}");
        }
    }

    #[test]
    fn shuffles_are_permutations() {
        let mut rng = Rng::new(7);
        let mut items: Vec<u32> = (0..1000).collect();
        rng.shuffle(&mut items);
        assert_ne!(items, (0..1000).collect::<Vec<_>>());
        items.sort_unstable();
        assert_eq!(items, (0..1000).collect::<Vec<_>>());
        assert!((0..10_000).all(|_| rng.below(3) < 3));
    }
}
