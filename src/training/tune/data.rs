//! The tuning set: each labelled position as its nonzero weight counts (compressed sparse
//! rows), its phase and scale factors, and its labels, split into training and held-out
//! positions.
//!
//! A position of game play has some 34 nonzero counts of the 464 weights (most terms are
//! zero or cancel between the sides, and so do the table entries of pieces on mirrored
//! squares), so a row costs 4 bytes a count plus 16 bytes: some 155 MB for a million
//! positions, against 930 MB dense.

use bytemuck::{Pod, Zeroable};
use pawnstorm_kernels::simd::{LanesFn, dispatch};
use rayon::prelude::*;

use super::{Rng, mix};
use crate::db::{Block, Database, DbError, NO_GAME, NO_RESULT, NO_SCORE};
use crate::eval::coefficients::{Extras, for_each_counted};
use crate::eval::endgame::Rule;
use crate::eval::features::Path;
use crate::eval::{Evaluator, Prepared, Weights};
use crate::export::filters::{self, Dropped, Filter};
use crate::movegen::Board;
use pawnstorm_kernels::Lanes;

/// One nonzero count of a position: the weight's place in file order and the count
/// (White's minus Black's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Entry {
    pub weight: u16,
    pub count: i16,
}

const _: () = assert!(Weights::COUNT <= 1 << 16, "weight places must fit an Entry");

/// Positions in compressed sparse rows, with what the model needs besides the counts.
#[derive(Clone, Debug)]
pub struct Positions {
    /// Position i's entries are `entries[offsets[i]..offsets[i + 1]]`. u32: a part holds
    /// one DB block's positions (at most 2^20) of at most 464 entries.
    offsets: Vec<u32>,
    entries: Vec<Entry>,
    phase: Vec<u8>,
    /// The eg scale (out of 64) when White is ahead in eg, and when Black is.
    scale: Vec<[u8; 2]>,
    /// 1, 0, -1 (White's view); [`NO_RESULT`] when unknown.
    result: Vec<i8>,
    /// Centipawns, White's view; [`NO_SCORE`] when unknown.
    score: Vec<i32>,
    /// What the model is fitted to, from the labels once K is known ([`Positions::set_targets`]).
    target: Vec<f32>,
}

impl Default for Positions {
    fn default() -> Positions {
        Positions {
            offsets: vec![0],
            entries: Vec::new(),
            phase: Vec::new(),
            scale: Vec::new(),
            result: Vec::new(),
            score: Vec::new(),
            target: Vec::new(),
        }
    }
}

/// One position as the model reads it.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    pub entries: &'a [Entry],
    pub phase: u8,
    pub scale: [u8; 2],
    pub target: f32,
}

impl Positions {
    pub fn len(&self) -> usize {
        self.phase.len()
    }

    pub fn is_empty(&self) -> bool {
        self.phase.is_empty()
    }

    /// Nonzero counts over all positions.
    pub fn entry_count(&self) -> usize {
        self.entries.len()
    }

    /// Bytes held (what was filled, not the vectors' spare capacity).
    pub fn bytes(&self) -> usize {
        self.entries.len() * size_of::<Entry>()
            + self.offsets.len() * size_of::<u32>()
            + self.len() * (size_of::<u8>() + 2 + size_of::<i8>() + 2 * size_of::<i32>())
    }

    fn shrink_to_fit(&mut self) {
        self.offsets.shrink_to_fit();
        self.entries.shrink_to_fit();
        self.phase.shrink_to_fit();
        self.scale.shrink_to_fit();
        self.result.shrink_to_fit();
        self.score.shrink_to_fit();
        self.target.shrink_to_fit();
    }

    /// Adds a position from its dense counts (one per weight).
    pub fn push(&mut self, counts: &[i16], extras: &Extras, result: i8, score: i32) {
        // Most of a row is zeros: whole runs of 16 are skipped on one OR (vectorised).
        for (run, chunk) in counts.chunks(16).enumerate() {
            if chunk.iter().fold(0, |any, &c| any | c) == 0 {
                continue;
            }
            // Without a branch a count (whether it is zero is unpredictable): each is
            // written in place, past the end, and the next overwrites it if it was zero.
            // (Gathered in a local array and copied, the copy's wide load waited on the
            // array's narrow stores: a quarter of the load's time.)
            let start = self.entries.len();
            self.entries.resize(start + 16, Entry::zeroed());
            let tail = &mut self.entries[start..];
            let mut n = 0;
            for (i, &count) in chunk.iter().enumerate() {
                tail[n & 15] = Entry {
                    weight: (run * 16 + i) as u16,
                    count,
                };
                n += (count != 0) as usize;
            }
            self.entries.truncate(start + n);
        }
        let end = u32::try_from(self.entries.len()).expect("a part holds one DB block");
        self.offsets.push(end);
        self.phase.push(extras.phase);
        self.scale.push(extras.scale);
        self.result.push(result);
        self.score.push(score);
        self.target.push(f32::NAN);
    }

    #[inline(always)]
    pub fn row(&self, i: usize) -> Row<'_> {
        let (start, end) = (self.offsets[i] as usize, self.offsets[i + 1] as usize);
        Row {
            entries: &self.entries[start..end],
            phase: self.phase[i],
            scale: self.scale[i],
            target: self.target[i],
        }
    }

    /// The game result of position i as a probability of White winning (1, 0.5, 0).
    pub fn result(&self, i: usize) -> Option<f64> {
        match self.result[i] {
            NO_RESULT => None,
            r => Some((r as f64 + 1.0) / 2.0),
        }
    }

    /// The stored score of position i, centipawns, White's view.
    pub fn score(&self, i: usize) -> Option<i32> {
        Some(self.score[i]).filter(|&s| s != NO_SCORE)
    }

    /// Sets every target to `wdl_weight x result + (1 - wdl_weight) x sigmoid(K, score)`;
    /// a label with no weight in the blend may be missing.
    pub fn set_targets(&mut self, k: f64, wdl_weight: f64) {
        for i in 0..self.len() {
            let result = if wdl_weight > 0.0 {
                wdl_weight * self.result(i).expect("loaded with results")
            } else {
                0.0
            };
            let score = if wdl_weight < 1.0 {
                let score = self.score(i).expect("loaded with scores");
                (1.0 - wdl_weight) * super::sigmoid(k, score as f64)
            } else {
                0.0
            };
            self.target[i] = (result + score) as f32;
        }
    }
}

/// Which positions a load keeps and where it puts them.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// Keep only positions with a game result.
    pub needs_result: bool,
    /// Keep only positions with a stored score.
    pub needs_score: bool,
    /// The fraction of positions (of games, where game ids are known) held out.
    pub holdout: f64,
    /// Seeds the order of the positions within each block (not the held-out split).
    pub seed: u64,
    /// The trainer's filters (`--skip-check`, `--quiet-only`, ...), after the labels.
    pub filter: Filter,
    /// The lanes the counts are taken on.
    pub path: Path,
}

impl Default for LoadOptions {
    /// Every position, none held out, counted on the native lanes.
    fn default() -> LoadOptions {
        LoadOptions {
            needs_result: false,
            needs_score: false,
            holdout: 0.0,
            seed: 0,
            filter: Filter::default(),
            path: Path::native(),
        }
    }
}

/// What a load read, dropped and kept. A position dropped for several reasons counts
/// under the first: no result, then no score, then the filters (in their order), then a
/// rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoadCounts {
    pub read: u64,
    pub no_result: u64,
    pub no_score: u64,
    pub filtered: Dropped,
    /// Scored by an endgame rule (insufficient material, KPK, KBNK, KXK), which no weight
    /// changes.
    pub rule: u64,
    pub train: u64,
    pub held_out: u64,
}

impl LoadCounts {
    fn add(&mut self, other: &LoadCounts) {
        self.read += other.read;
        self.no_result += other.no_result;
        self.no_score += other.no_score;
        self.filtered.merge(&other.filtered);
        self.rule += other.rule;
        self.train += other.train;
        self.held_out += other.held_out;
    }
}

/// The positions of a tuning run: one part per DB block read, training and held out.
#[derive(Clone, Debug, Default)]
pub struct Dataset {
    pub train: Vec<Positions>,
    pub held_out: Vec<Positions>,
    pub counts: LoadCounts,
}

/// Consecutive positions that fall on one side of the held-out split together when the
/// input has no game ids: dumps keep a game's positions together (PGN imports, datagen,
/// `export`), and a game of 40 to 120 positions then straddles at most two runs, so few of
/// the held-out positions have a neighbour from their game in the training set.
pub const HOLDOUT_RUN: u64 = 512;

/// Which side of the split a position falls on: a hash of its game (by the input it came
/// from and its game id) or, without a game id, of the run of [`HOLDOUT_RUN`] positions
/// it stands in. Positions of one game stay together, so the held-out loss is not measured
/// on the neighbours of training positions.
pub(crate) fn held_out(source: u32, game: Option<u32>, index: u64, fraction: f64) -> bool {
    let key = match game {
        Some(game) => (1 << 63) | game as u64,
        None => (index / HOLDOUT_RUN) & !(1 << 63),
    };
    let hash = mix(mix(0x7475_6e65_0000_0000 ^ source as u64) ^ key);
    ((hash >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < fraction
}

impl Dataset {
    /// Reads every position of `db` (input number `source`) into the set, one block per
    /// worker on the current rayon pool; `progress` hears of each block's positions.
    pub fn add_db(
        &mut self,
        db: &Database,
        source: u32,
        prepared: &Prepared,
        options: &LoadOptions,
        progress: &(dyn Fn(u64) + Sync),
    ) -> Result<(), DbError> {
        let parts = (0..db.block_count())
            .into_par_iter()
            .map_init(
                || options.filter.evaluator(),
                |evaluator, index| {
                    let block = db.block(index)?;
                    let first = (index * db.block_size()) as u64;
                    let part = load_block(&block, first, source, prepared, options, evaluator)
                        .map_err(|(row, reason)| DbError::BadRecord {
                            path: db.path().to_path_buf(),
                            index: first + row as u64,
                            reason,
                        })?;
                    progress(block.len as u64);
                    Ok(part)
                },
            )
            .collect::<Result<Vec<_>, DbError>>()?;
        for (train, held_out, counts) in parts {
            self.counts.add(&counts);
            if !train.is_empty() {
                self.train.push(train);
            }
            if !held_out.is_empty() {
                self.held_out.push(held_out);
            }
        }
        Ok(())
    }

    /// Nonzero counts and bytes held, over every part.
    pub fn size(&self) -> (usize, usize) {
        self.train
            .iter()
            .chain(&self.held_out)
            .fold((0, 0), |(entries, bytes), part| {
                (entries + part.entry_count(), bytes + part.bytes())
            })
    }

    /// For each weight, how many training positions count it (nonzero).
    pub fn training_uses(&self) -> Vec<u64> {
        self.train
            .par_iter()
            .fold(
                || vec![0u64; Weights::COUNT],
                |mut uses, part| {
                    for entry in &part.entries {
                        uses[entry.weight as usize] += 1;
                    }
                    uses
                },
            )
            .reduce(
                || vec![0u64; Weights::COUNT],
                |mut a, b| {
                    a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                    a
                },
            )
    }

    /// Sets the targets of every position (see [`Positions::set_targets`]).
    pub fn set_targets(&mut self, k: f64, wdl_weight: f64) {
        self.train
            .par_iter_mut()
            .chain(self.held_out.par_iter_mut())
            .for_each(|part| part.set_targets(k, wdl_weight));
    }
}

/// One block's kept positions, training and held out, in a shuffled order (a block holds
/// consecutive positions of a few dozen games; the tuner's minibatches take runs of a part,
/// which should not all come from one game). Errors are (row, reason).
fn load_block(
    block: &Block<'_>,
    first: u64,
    source: u32,
    prepared: &Prepared,
    options: &LoadOptions,
    evaluator: &mut Option<Evaluator>,
) -> Result<(Positions, Positions, LoadCounts), (usize, String)> {
    let mut counts = LoadCounts::default();
    let mut order: Vec<usize> = (0..block.len).collect();
    Rng::new(mix(options.seed ^ mix(first ^ (source as u64) << 40))).shuffle(&mut order);
    // The labels and filters first: the counts are then taken on full lanes.
    let mut kept = Vec::with_capacity(block.len);
    for row in order {
        counts.read += 1;
        let result = block.result.map_or(NO_RESULT, |c| c[row]);
        if !matches!(result, -1..=1 | NO_RESULT) {
            return Err((row, format!("result byte {result} is invalid")));
        }
        if options.needs_result && result == NO_RESULT {
            counts.no_result += 1;
            continue;
        }
        let score = block.score.map_or(NO_SCORE, |c| c[row]);
        if options.needs_score && score == NO_SCORE {
            counts.no_score += 1;
            continue;
        }
        if !options.filter.is_empty() {
            let mut view = if options.filter.needs_move() {
                // The block's last row has no next row here: its move stays unknown unless
                // labelled.
                filters::Row::of_block_in_game(block, row, || None)
            } else {
                filters::Row::of_block(block, row)
            };
            view.draw = crate::export::random::draw_key(source, 0, first + row as u64);
            let board = || block.record(row).ok().map(|r| Board::new(r.position));
            if let Some(reason) = options.filter.check(&view, board, evaluator.as_mut()) {
                counts.filtered.add(reason);
                continue;
            }
        }
        kept.push((row, result, score));
    }
    struct Counted<'a, 'b> {
        block: &'a Block<'b>,
        kept: &'a [(usize, i8, i32)],
        first: u64,
        source: u32,
        prepared: &'a Prepared,
        options: &'a LoadOptions,
        counts: &'a mut LoadCounts,
    }
    impl LanesFn for Counted<'_, '_> {
        type Output = (Positions, Positions);
        #[inline(always)]
        fn call<L: Lanes>(self) -> Self::Output {
            counted::<L>(
                self.block,
                self.kept,
                self.first,
                self.source,
                self.prepared,
                self.options,
                self.counts,
            )
        }
    }
    let (train, held) = dispatch(
        options.path,
        Counted {
            block,
            kept: &kept,
            first,
            source,
            prepared,
            options,
            counts: &mut counts,
        },
    );
    Ok((train, held, counts))
}

/// The counts of the `kept` rows (row, result, score) of `block`, `L::WIDTH` at a time,
/// into training and held-out positions; those a rule scores are dropped.
#[inline(always)]
fn counted<L: Lanes>(
    block: &Block<'_>,
    kept: &[(usize, i8, i32)],
    first: u64,
    source: u32,
    prepared: &Prepared,
    options: &LoadOptions,
    counts: &mut LoadCounts,
) -> (Positions, Positions) {
    let (mut train, mut held) = (Positions::default(), Positions::default());
    let boards_of = |&(row, _, _): &(usize, i8, i32)| block.boards(row);
    for_each_counted::<L, _>(prepared, kept, boards_of, |i, row_counts, extras, _| {
        let (row, result, score) = kept[i];
        if extras.rule != Rule::Terms {
            counts.rule += 1;
            return;
        }
        let game = block.game_id.map(|c| c[row]).filter(|&g| g != NO_GAME);
        let part = if held_out(source, game, first + row as u64, options.holdout) {
            counts.held_out += 1;
            &mut held
        } else {
            counts.train += 1;
            &mut train
        };
        part.push(row_counts, extras, result, score);
    });
    // The vectors grew by doubling: up to half of each would be spare for the whole run.
    train.shrink_to_fit();
    held.shrink_to_fit();
    (train, held)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The target blends the result (White's view, 1 / 0.5 / 0) and the score through the
    /// sigmoid of K; a label with no share in the blend may be missing.
    #[test]
    fn targets_blend_result_and_score() {
        let extras = Extras {
            phase: 24,
            scale: [64, 64],
            rule: Rule::Terms,
            rule_score: 0,
        };
        let mut part = Positions::default();
        part.push(&[1, 0], &extras, 1, 400);
        part.push(&[0, 2], &extras, 0, -200);
        part.push(&[0, 0], &extras, -1, 0);
        assert_eq!(part.len(), 3);
        assert_eq!(part.entry_count(), 2);
        assert_eq!(
            part.row(1).entries,
            &[Entry {
                weight: 1,
                count: 2
            }]
        );
        let sigmoid = |cp: f64| 1.0 / (1.0 + 10f64.powf(-1.5 * cp / 400.0));
        part.set_targets(1.5, 0.25);
        for (i, (result, score)) in [(1.0, 400.0), (0.5, -200.0), (0.0, 0.0)].iter().enumerate() {
            let expected = 0.25 * result + 0.75 * sigmoid(*score);
            assert!((part.row(i).target as f64 - expected).abs() < 1e-6, "{i}");
        }
        let mut scores_only = Positions::default();
        scores_only.push(&[1, 0], &extras, NO_RESULT, 400);
        scores_only.set_targets(1.0, 0.0);
        assert!((scores_only.row(0).target - 10.0 / 11.0).abs() < 1e-6);
        let mut results_only = Positions::default();
        results_only.push(&[1, 0], &extras, 0, NO_SCORE);
        results_only.set_targets(1.0, 1.0);
        assert_eq!(results_only.row(0).target, 0.5);
        assert_eq!(results_only.score(0), None);
    }

    /// The split holds out about the fraction asked for, by game when there is one.
    #[test]
    fn split_fraction_and_games() {
        let runs = 20_000u64;
        let by_run = (0..runs)
            .filter(|&r| held_out(0, None, r * HOLDOUT_RUN, 0.1))
            .count() as f64;
        assert!((by_run / runs as f64 - 0.1).abs() < 0.01, "{by_run}");
        // Without game ids, a run of consecutive positions falls on one side.
        for run in 0..100 {
            let first = run * HOLDOUT_RUN;
            let side = held_out(0, None, first, 0.5);
            assert!((first..first + HOLDOUT_RUN).all(|i| held_out(0, None, i, 0.5) == side));
        }
        let games = (0..20_000u32)
            .filter(|&g| held_out(0, Some(g), 0, 0.25))
            .count() as f64;
        assert!((games / 20_000.0 - 0.25).abs() < 0.01, "{games}");
        // One game's positions, wherever they stand, fall on one side.
        for game in 0..100 {
            let side = held_out(3, Some(game), 0, 0.5);
            assert!((1..50).all(|i| held_out(3, Some(game), i, 0.5) == side));
        }
        assert!((0..1000).all(|i| !held_out(0, None, i, 0.0)));
        assert!((0..1000).all(|i| held_out(0, Some(i as u32), i, 1.0)));
    }
}
