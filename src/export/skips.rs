//! The trainers' skip rules that depend on the rows before (duplicates, flattening a
//! distribution), and where every skip rule comes from (the move played is
//! [`super::filters::move_is_noisy`]'s, the random draws are [`super::random`]'s).
//!
//! Sources, so that a position skipped here is one the field's trainers skip:
//! - capture or promotion played, or in check: Stockfish's learner (tools branch,
//!   `src/learn/learn.cpp`, `smart_fen_skipping`: `pos.capture_or_promotion(move) ||
//!   pos.checkers()`) and nnue-pytorch (`training_data_loader.cpp`, `make_skip_predicate`,
//!   `filtered`: `isCapturingMove() || isInCheck()`, where sfbinpack's `isCapturingMove`
//!   misses en passant and promotions; here both count, as in Stockfish's learner);
//! - `|score|` beyond a bound: Stockfish's learner, `eval_limit < abs(ps.score)`;
//! - random skipping with probability N / (N + 1): nnue-pytorch, `random_fen_skipping`;
//! - early plies: nnue-pytorch, `early_fen_skipping` (`e.ply <= N` there; `--skip-plies N`
//!   here drops plies 0 .. N-1);
//! - the piece-count distribution: nnue-pytorch, `make_skip_predicate`: the desired weight
//!   of a piece count is the parabola through (0, pc_y1), (16, pc_y2), (32, pc_y3), and a
//!   position is kept with a probability proportional to desired / observed frequency of
//!   its count. nnue-pytorch scales that probability so that the most over-represented
//!   count keeps a tenth (`max_skipping_rate` 10) and counts its history per thread; here
//!   the scale is the largest that reaches the desired shares (the most under-represented
//!   count keeps all), and the history is the input's, in order;
//! - `--wdl-skip` applies the same flattening to the game results (wins, draws, losses in
//!   equal shares; unknown results are not skipped).

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use crate::export::filters::{Dropped, Filter, Reason};
use crate::export::random::{Rule, uniform};

/// nnue-pytorch's desired piece-count weight: the parabola through (0, y[0]), (16, y[1]),
/// (32, y[2]) (its Lagrange form, `desired_piece_count_weights`).
pub fn desired_piece_weight(y: [f64; 3], pieces: u32) -> f64 {
    let x = pieces as f64;
    let (x1, x2, x3) = (0.0, 16.0, 32.0);
    let l1 = (x - x2) * (x - x3) / ((x1 - x2) * (x1 - x3));
    let l2 = (x - x1) * (x - x3) / ((x2 - x1) * (x2 - x3));
    let l3 = (x - x1) * (x - x2) / ((x3 - x1) * (x3 - x2));
    l1 * y[0] + l2 * y[1] + l3 * y[2]
}

/// Parses `Y0,Y16,Y32` for `--piece-skip`.
pub fn parse_piece_weights(text: &str) -> Result<[f64; 3], String> {
    let values: Vec<&str> = text.split(',').map(str::trim).collect();
    let [a, b, c] = values[..] else {
        return Err(format!(
            "`{text}` is not Y0,Y16,Y32 (three weights, for example 1,2,1)"
        ));
    };
    let number = |s: &str| -> Result<f64, String> {
        s.parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| format!("`{s}` in `{text}` is not a number"))
    };
    let y = [number(a)?, number(b)?, number(c)?];
    if (0..=32).all(|n| desired_piece_weight(y, n) <= 0.0) {
        return Err(format!("`{text}` gives no piece count a positive weight"));
    }
    Ok(y)
}

/// Skipping that brings the classes of a stream to target shares: a row of class c is kept
/// with probability (target_c / observed share_c) / max over classes of the same ratio, so
/// the most under-represented class keeps all and every other class comes out at its
/// target share. Classes with a target of 0 or less are always skipped.
#[derive(Clone, Debug)]
pub struct Balance {
    target: Vec<f64>,
    seen: Vec<u64>,
    total: u64,
}

impl Balance {
    pub fn new(target: Vec<f64>) -> Balance {
        let n = target.len();
        Balance {
            target,
            seen: vec![0; n],
            total: 0,
        }
    }

    /// Equal shares of wins, draws and losses (class = result + 1).
    pub fn wdl() -> Balance {
        Balance::new(vec![1.0; 3])
    }

    /// nnue-pytorch's desired piece counts (class = piece count, 0 ..= 32).
    pub fn pieces(y: [f64; 3]) -> Balance {
        Balance::new((0..=32).map(|n| desired_piece_weight(y, n)).collect())
    }

    pub fn observe(&mut self, class: usize) {
        self.seen[class] += 1;
        self.total += 1;
    }

    /// The probability of keeping a row of `class`, from what was observed.
    pub fn keep_probability(&self, class: usize) -> f64 {
        if self.target[class] <= 0.0 || self.seen[class] == 0 {
            return if self.target[class] <= 0.0 { 0.0 } else { 1.0 };
        }
        let target_total: f64 = self
            .target
            .iter()
            .zip(&self.seen)
            .filter(|(t, n)| **t > 0.0 && **n > 0)
            .map(|(t, _)| t)
            .sum();
        let ratio =
            |c: usize| (self.target[c] / target_total) / (self.seen[c] as f64 / self.total as f64);
        let best = (0..self.target.len())
            .filter(|&c| self.target[c] > 0.0 && self.seen[c] > 0)
            .map(ratio)
            .fold(0.0f64, f64::max);
        (ratio(class) / best).min(1.0)
    }
}

/// What the ordered rules need of a row.
#[derive(Clone, Copy, Debug, Default)]
pub struct Traits {
    /// Zobrist key of the position (board, side to move, castling, en passant); only read
    /// with `--unique`.
    pub key: u64,
    pub draw: u64,
    /// White's result, -1 ..= 1.
    pub result: Option<i8>,
    pub pieces: u8,
}

/// The set of positions kept so far: their Zobrist keys, 8 bytes each in a hash set (with
/// its spare capacity, 9 to 18 bytes a kept position).
pub type Seen = HashSet<u64, BuildHasherDefault<KeyHasher>>;

/// The keys are Zobrist keys, uniform already: hashing them again buys nothing.
#[derive(Default)]
pub struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ b as u64;
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// The ordered rules over a stream, deciding each row as it comes (`--unique`, then
/// `--wdl-skip`, then `--piece-skip`): the distributions are those seen so far, so the
/// first rows of a stream are skipped less than the target asks.
#[derive(Debug, Default)]
pub struct Ordered {
    seen: Option<SeenSet>,
    wdl: Option<Balance>,
    pieces: Option<Balance>,
    seed: u64,
}

/// [`Seen`] with a Debug that does not print the keys.
#[derive(Default)]
struct SeenSet(Seen);

impl std::fmt::Debug for SeenSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} keys", self.0.len())
    }
}

impl Ordered {
    pub fn new(filter: &Filter) -> Ordered {
        Ordered {
            seen: filter.unique.then(SeenSet::default),
            wdl: filter.wdl_skip.then(Balance::wdl),
            pieces: filter.piece_skip.map(Balance::pieces),
            seed: filter.seed,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_none() && self.wdl.is_none() && self.pieces.is_none()
    }

    /// Why the row is dropped, or `None` to keep it (and remember it).
    pub fn check(&mut self, row: &Traits) -> Option<Reason> {
        if let Some(seen) = &mut self.seen
            && !seen.0.insert(row.key)
        {
            return Some(Reason::Duplicate);
        }
        if let Some(wdl) = &mut self.wdl
            && let Some(result) = row.result
        {
            let class = (result + 1) as usize;
            wdl.observe(class);
            if uniform(self.seed, row.draw, Rule::Wdl) >= wdl.keep_probability(class) {
                return Some(Reason::Wdl);
            }
        }
        if let Some(pieces) = &mut self.pieces {
            let class = row.pieces.min(32) as usize;
            pieces.observe(class);
            if uniform(self.seed, row.draw, Rule::Pieces) >= pieces.keep_probability(class) {
                return Some(Reason::PieceSkip);
            }
        }
        None
    }

    /// Positions remembered by `--unique`.
    pub fn unique_keys(&self) -> usize {
        self.seen.as_ref().map_or(0, |s| s.0.len())
    }
}

/// The ordered rules over a whole selection known in advance (a DB's rows that passed
/// [`Filter::check`], in DB order): duplicates go first (the first occurrence stays), then
/// each flattening uses the exact shares of the rows still kept. Returns which rows stay.
pub fn decide_in_order(filter: &Filter, rows: &[Traits], dropped: &mut Dropped) -> Vec<bool> {
    let mut keep = vec![true; rows.len()];
    if filter.unique {
        let mut seen = Seen::default();
        seen.reserve(rows.len());
        for (k, row) in keep.iter_mut().zip(rows) {
            if !seen.insert(row.key) {
                *k = false;
                dropped.add(Reason::Duplicate);
            }
        }
    }
    let mut flatten =
        |balance: Balance, class: &dyn Fn(&Traits) -> Option<usize>, rule: Rule, reason: Reason| {
            let mut balance = balance;
            for (row, _) in rows.iter().zip(&keep).filter(|(_, k)| **k) {
                if let Some(c) = class(row) {
                    balance.observe(c);
                }
            }
            let probability: Vec<f64> = (0..balance.target.len())
                .map(|c| balance.keep_probability(c))
                .collect();
            for (k, row) in keep.iter_mut().zip(rows) {
                if let (true, Some(c)) = (*k, class(row))
                    && uniform(filter.seed, row.draw, rule) >= probability[c]
                {
                    *k = false;
                    dropped.add(reason);
                }
            }
        };
    if filter.wdl_skip {
        flatten(
            Balance::wdl(),
            &|r| r.result.map(|v| (v + 1) as usize),
            Rule::Wdl,
            Reason::Wdl,
        );
    }
    if let Some(y) = filter.piece_skip {
        flatten(
            Balance::pieces(y),
            &|r| Some(r.pieces.min(32) as usize),
            Rule::Pieces,
            Reason::PieceSkip,
        );
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parabola_goes_through_its_three_points() {
        let y = [1.0, 3.0, 2.0];
        assert!((desired_piece_weight(y, 0) - 1.0).abs() < 1e-12);
        assert!((desired_piece_weight(y, 16) - 3.0).abs() < 1e-12);
        assert!((desired_piece_weight(y, 32) - 2.0).abs() < 1e-12);
        assert_eq!(parse_piece_weights("1, 2,1"), Ok([1.0, 2.0, 1.0]));
        assert!(parse_piece_weights("1,2").is_err());
        assert!(parse_piece_weights("1,x,1").is_err());
        assert!(parse_piece_weights("0,0,0").is_err());
    }

    #[test]
    fn balance_keeps_the_rarest_class_whole() {
        let mut balance = Balance::wdl();
        for (class, n) in [(0, 100), (1, 700), (2, 200)] {
            for _ in 0..n {
                balance.observe(class);
            }
        }
        assert_eq!(balance.keep_probability(0), 1.0);
        assert!((balance.keep_probability(1) - 100.0 / 700.0).abs() < 1e-12);
        assert!((balance.keep_probability(2) - 0.5).abs() < 1e-12);
    }
}
