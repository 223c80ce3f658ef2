//! A training run: loader passes cut into epochs, a step per batch, the held-out loss and a
//! checkpoint after each epoch.
//!
//! The training positions come as a stream of loader passes over the training side of the
//! held-out split, pass `p` shuffled from a seed of its own; an epoch is one pass, or (with
//! `epoch_positions`) that many positions, the passes running on across epochs (bullet's
//! superbatches). A checkpoint records how many passes were begun and how many batches of
//! the last were taken, so a resumed run starts that pass again and skips what it took: the
//! batches, and so the net, are those of a run that never stopped.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::checkpoint::Checkpoint;
use super::model::{Layout, Objective};
use super::optimiser::{State, Trainer, scheduled_lr};
use crate::export::filters::Filter;
use crate::training::loader::{Batch, Loader, LoaderConfig, PassCache, ReadCounts};
use crate::training::mix::{Input, Split};
use crate::training::nnue::FeatureSet;
use crate::training::tune::model::LN10_OVER_400;
use crate::training::tune::{KFit, TuneError, fit_k, mix};

/// What a run reads and how it trains.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub inputs: Vec<Input>,
    /// Interleave the inputs at their weights' rates (see `training::mix`).
    pub mixing: bool,
    pub hidden: usize,
    /// Output buckets (1: none).
    pub buckets: usize,
    /// The network's inputs (`Chess768`, or king buckets).
    pub king_buckets: crate::nnue::InputLayout,
    /// With king buckets: train a shared factoriser beside them (see `model`).
    pub factoriser: bool,
    pub epochs: u64,
    pub wdl: f64,
    /// The logistic's scale in centipawns (see `model`).
    pub scale: f64,
    pub lr: f64,
    pub final_lr: f64,
    /// AdamW's decoupled weight decay (`optimiser::WEIGHT_DECAY` by default).
    pub weight_decay: f64,
    /// Epochs (superbatches) of linear warm-up before the cosine (see [`scheduled_lr`]).
    pub warmup: u64,
    pub batch_size: usize,
    /// Fraction held out (0: none).
    pub holdout: f64,
    /// Positions the loss is also measured on after each epoch, whole and in order, never
    /// trained on (a fixed file such as data/validation/, so that losses compare across
    /// runs; the run's filters apply). Empty: none.
    pub validation: Vec<Input>,
    pub seed: u64,
    pub shuffle_buffer: usize,
    /// Positions an epoch holds; `None`: one pass over the inputs.
    pub epoch_positions: Option<u64>,
    pub filter: Filter,
    /// Worker threads of the loader (it also runs a reader thread).
    pub loader_threads: usize,
    /// Where each epoch's checkpoint goes, and the options text it records.
    pub checkpoint: Option<(PathBuf, String)>,
    /// The training positions kept in memory once read, for every pass after (and for the
    /// passes after [`fit_scale`]'s); `None`: each pass reads them. See [`pass_cache`].
    pub cache: Option<Arc<PassCache>>,
    /// The most positions all the caches keep together: the training positions', then the
    /// held-out and validation positions' in what that leaves ([`EvaluationCaches`]).
    pub cache_limit: usize,
}

impl RunConfig {
    /// The model's parameter layout.
    pub fn layout(&self) -> Layout {
        Layout {
            hidden: self.hidden,
            buckets: self.buckets,
            inputs: self.king_buckets,
            factoriser: self.factoriser && self.king_buckets.is_mirrored(),
        }
    }
}

/// A cache for `config`'s training passes where each pass reads the same positions before
/// its shuffle (see [`PassCache::suits`]), of at most `limit` positions, else `None`.
pub fn pass_cache(config: &RunConfig, limit: usize) -> Option<Arc<PassCache>> {
    let stream = Stream::new(config);
    let training = stream.loader_config(stream.training_split(), true, 0);
    PassCache::suits(&training).then(|| Arc::new(PassCache::with_limit(limit)))
}

/// One epoch's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochReport {
    /// From 1.
    pub epoch: u64,
    pub lr: f64,
    pub train_loss: f64,
    pub positions: u64,
    pub held_loss: Option<f64>,
    pub held_positions: u64,
    pub validation_loss: Option<f64>,
    pub validation_positions: u64,
    /// Seconds spent on the training positions, and on the epoch in all.
    pub train_seconds: f64,
    pub seconds: f64,
}

/// Hears of a run's progress.
pub trait Observer {
    /// After each training batch: positions so far in the epoch and their mean loss.
    fn batch(&mut self, _epoch: u64, _positions: u64, _loss: f64) {}
    /// After each epoch (its checkpoint written).
    fn epoch(&mut self, _report: &EpochReport) {}
}

/// What a run ends with.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub state: State,
    pub epochs: Vec<EpochReport>,
    /// The last epoch's losses (from the checkpoint when no epoch was left to run).
    pub train_loss: f64,
    pub held_loss: Option<f64>,
    /// The last epoch's loss on the validation positions (none when no epoch ran).
    pub validation_loss: Option<f64>,
    /// What the last complete training pass and the last held-out pass read.
    pub train_counts: Option<ReadCounts>,
    pub held_counts: Option<ReadCounts>,
    pub positions: u64,
    pub train_seconds: f64,
    /// The held-out positions as the run kept them, for the passes over them after it
    /// ([`held_out_boards_loader`]); `None` when no held-out pass ran.
    pub held_out_cache: Option<Arc<PassCache>>,
    /// The validation positions as the run kept them (`None`: no validation pass ran).
    pub validation_cache: Option<Arc<PassCache>>,
}

/// The seed of loader pass `pass` (from 0).
fn pass_seed(seed: u64, pass: u64) -> u64 {
    mix(seed ^ mix(pass.wrapping_add(0x7061_7373)))
}

/// Training batches, pass after pass.
struct Stream<'a> {
    config: &'a RunConfig,
    loader: Option<Loader>,
    /// The next pass, started once the current one gives its first batch (when `prefetch`):
    /// a shuffled pass gives nothing until its shuffle buffer is full (2M positions by
    /// default), and without this the trainer waited for that at every pass while the
    /// loader then sat idle through the buffer's drain at the pass's end. A pass's batches
    /// depend on its seed alone, not on when it starts.
    upcoming: Option<Loader>,
    /// Whether another pass will be needed.
    prefetch: bool,
    /// The training passes' positions, read once, where every pass reads the same.
    cache: Option<Arc<PassCache>>,
    passes: u64,
    batches_in_pass: u64,
    last_counts: Option<ReadCounts>,
}

enum Next {
    Batch(Batch),
    /// The pass ended (its counts kept).
    EndOfPass,
}

impl<'a> Stream<'a> {
    fn new(config: &'a RunConfig) -> Stream<'a> {
        Stream {
            config,
            loader: None,
            upcoming: None,
            prefetch: false,
            cache: config.cache.clone(),
            passes: 0,
            batches_in_pass: 0,
            last_counts: None,
        }
    }

    fn loader_config(&self, split: Split, shuffle: bool, seed: u64) -> LoaderConfig {
        let c = self.config;
        LoaderConfig {
            inputs: c.inputs.clone(),
            mixing: c.mixing,
            batch_size: c.batch_size,
            set: if c.king_buckets.is_mirrored() {
                FeatureSet::KingBuckets(c.king_buckets)
            } else {
                FeatureSet::Chess768
            },
            shuffle,
            shuffle_buffer: c.shuffle_buffer,
            seed,
            threads: c.loader_threads,
            filter: c.filter.clone(),
            split,
        }
    }

    fn training_split(&self) -> Split {
        if self.config.holdout > 0.0 {
            Split::Training(self.config.holdout)
        } else {
            Split::All
        }
    }

    fn start_pass(&mut self, pass: u64) -> Result<(), String> {
        self.loader = Some(self.pass_loader(pass)?);
        Ok(())
    }

    fn pass_loader(&self, pass: u64) -> Result<Loader, String> {
        let config = self.loader_config(
            self.training_split(),
            true,
            pass_seed(self.config.seed, pass),
        );
        Loader::start_cached(config, self.cache.clone())
    }

    /// Opens pass `passes - 1` again and skips the `batches` it had given.
    fn resume(&mut self, passes: u64, batches: u64) -> Result<(), String> {
        self.passes = passes;
        self.batches_in_pass = 0;
        if batches == 0 {
            return Ok(());
        }
        self.start_pass(passes - 1)?;
        for _ in 0..batches {
            match self.next()? {
                Next::Batch(batch) => self.give_back(batch),
                Next::EndOfPass => {
                    return Err("the inputs give fewer positions than the checkpoint had \
                                read: they changed since"
                        .to_string());
                }
            }
        }
        Ok(())
    }

    fn next(&mut self) -> Result<Next, String> {
        if self.loader.is_none() {
            match self.upcoming.take() {
                Some(loader) => self.loader = Some(loader),
                None => self.start_pass(self.passes)?,
            }
            self.passes += 1;
            self.batches_in_pass = 0;
        }
        let loader = self.loader.as_mut().expect("a pass");
        match loader.next() {
            Some(Ok(batch)) => {
                self.batches_in_pass += 1;
                if self.prefetch && self.upcoming.is_none() {
                    self.upcoming = Some(self.pass_loader(self.passes)?);
                }
                Ok(Next::Batch(batch))
            }
            Some(Err(message)) => Err(message),
            None => {
                self.last_counts = Some(loader.counts());
                let empty = self.batches_in_pass == 0;
                self.loader = None;
                self.batches_in_pass = 0;
                if empty {
                    return Err(no_positions(self.config, self.last_counts.as_ref()));
                }
                Ok(Next::EndOfPass)
            }
        }
    }

    fn give_back(&self, batch: Batch) {
        if let Some(loader) = &self.loader {
            let recycler = loader.recycler();
            recycler.give(batch.stm_features);
            recycler.give(batch.nstm_features);
        }
    }
}

fn no_positions(config: &RunConfig, counts: Option<&ReadCounts>) -> String {
    let names: Vec<String> = config
        .inputs
        .iter()
        .map(|i| i.path.display().to_string())
        .collect();
    let detail = counts.map_or(String::new(), |c| {
        format!(
            " ({} kept, {}, {} bad records)",
            c.kept, c.dropped_by, c.rejected
        )
    });
    format!(
        "no training positions in {}{detail}: check the inputs, the filters and --holdout",
        names.join(", ")
    )
}

/// Runs the epochs left after `start` (a checkpoint to resume from, or none), on `pool`.
pub fn train(
    config: &RunConfig,
    start: Option<Checkpoint>,
    pool: &rayon::ThreadPool,
    observer: &mut dyn Observer,
) -> Result<Outcome, String> {
    let mut stream = Stream::new(config);
    let (state, first_epoch, mut last_losses) = match start {
        Some(c) => {
            stream.resume(c.passes, c.batches_in_pass)?;
            (c.state, c.epochs_done, (c.train_loss, c.held_loss))
        }
        None => (
            State::new(config.layout(), config.seed),
            0,
            (f64::NAN, None),
        ),
    };
    let objective = Objective {
        wdl: config.wdl as f32,
        scale: config.scale as f32,
    };
    let mut trainer = Trainer::new(state, objective).with_weight_decay(config.weight_decay as f32);
    let mut reports = Vec::new();
    let (mut total_positions, mut total_seconds) = (0u64, 0.0f64);
    let mut held_counts = None;
    let mut last_validation_loss = None;
    let mut caches = EvaluationCaches::default();
    for epoch in first_epoch..config.epochs {
        let started = Instant::now();
        let lr = scheduled_lr(
            config.lr,
            config.final_lr,
            config.warmup as usize,
            epoch as usize,
            config.epochs as usize,
        );
        // An epoch of one pass needs the next pass only before the last epoch; epochs of a
        // set size may start one at any time until the last.
        stream.prefetch = epoch + 1 < config.epochs;
        let (mut error, mut counted, mut positions) = (0.0f64, 0usize, 0u64);
        loop {
            if let Some(limit) = config.epoch_positions
                && positions >= limit
            {
                break;
            }
            let batch = match stream.next()? {
                Next::Batch(batch) => batch,
                Next::EndOfPass if config.epoch_positions.is_some() => continue,
                Next::EndOfPass => break,
            };
            let (e, n) = pool.install(|| trainer.step(&batch, lr as f32));
            error += e;
            counted += n;
            positions += batch.len as u64;
            stream.give_back(batch);
            observer.batch(epoch + 1, positions, error / counted.max(1) as f64);
        }
        let train_seconds = started.elapsed().as_secs_f64();
        let train_loss = error / counted.max(1) as f64;
        let (held_loss, held_positions) = if config.holdout > 0.0 {
            let loader =
                Loader::start_cached(held_out_config(config), Some(caches.held_out(config)))?;
            let (loss, n, counts) = mean_loss(loader, &mut trainer, pool)?;
            held_counts = Some(counts);
            (Some(loss), n)
        } else {
            (None, 0)
        };
        let (validation_loss, validation_positions) = if config.validation.is_empty() {
            (None, 0)
        } else {
            let loader =
                Loader::start_cached(validation_config(config), Some(caches.validation(config)))?;
            let (loss, n, _) = mean_loss(loader, &mut trainer, pool)?;
            last_validation_loss = Some(loss);
            (Some(loss), n)
        };
        total_positions += positions;
        total_seconds += train_seconds;
        last_losses = (train_loss, held_loss);
        if let Some((path, options)) = &config.checkpoint {
            let checkpoint = Checkpoint {
                state: trainer.state(),
                epochs_done: epoch + 1,
                passes: stream.passes,
                batches_in_pass: stream.batches_in_pass,
                train_loss,
                held_loss,
                options: options.clone(),
            };
            checkpoint
                .save(path)
                .map_err(|e| format!("writing the checkpoint {}: {e}", path.display()))?;
        }
        let report = EpochReport {
            epoch: epoch + 1,
            lr,
            train_loss,
            positions,
            held_loss,
            held_positions,
            validation_loss,
            validation_positions,
            train_seconds,
            seconds: started.elapsed().as_secs_f64(),
        };
        observer.epoch(&report);
        reports.push(report);
    }
    Ok(Outcome {
        state: trainer.state(),
        epochs: reports,
        train_loss: last_losses.0,
        held_loss: last_losses.1,
        validation_loss: last_validation_loss,
        train_counts: stream.last_counts,
        held_counts,
        positions: total_positions,
        train_seconds: total_seconds,
        held_out_cache: caches.held_out,
        validation_cache: caches.validation,
    })
}

/// The mean loss over a loader's positions, how many counted, and what the pass read.
fn mean_loss(
    mut loader: Loader,
    trainer: &mut Trainer,
    pool: &rayon::ThreadPool,
) -> Result<(f64, u64, ReadCounts), String> {
    let (mut error, mut counted) = (0.0, 0usize);
    let recycler = loader.recycler();
    for batch in loader.by_ref() {
        let batch = batch?;
        let (e, n) = pool.install(|| trainer.error(&batch));
        error += e;
        counted += n;
        recycler.give(batch.stm_features);
        recycler.give(batch.nstm_features);
    }
    Ok((
        error / counted.max(1) as f64,
        counted as u64,
        loader.counts(),
    ))
}

/// The loader settings of a pass over the held-out positions, in the inputs' order.
fn held_out_config(config: &RunConfig) -> LoaderConfig {
    Stream::new(config).loader_config(Split::HeldOut(config.holdout), false, config.seed)
}

/// The held-out and validation positions, kept by their first pass for the passes of the
/// epochs after it: each such pass read and decoded every input again (the held-out one
/// all of the inputs, to find its tenth), a seventh of a 10-epoch run's CPU time. Unlike
/// the training passes they are never shuffled and their seed is the run's, so every pass
/// reads the same positions whatever the inputs and filters. Made at their first pass,
/// each within what the caches before it left of [`RunConfig::cache_limit`].
#[derive(Default)]
struct EvaluationCaches {
    held_out: Option<Arc<PassCache>>,
    validation: Option<Arc<PassCache>>,
}

impl EvaluationCaches {
    fn held_out(&mut self, config: &RunConfig) -> Arc<PassCache> {
        let limit = Self::left(config, &[]);
        Arc::clone(
            self.held_out
                .get_or_insert_with(|| Arc::new(PassCache::with_limit(limit))),
        )
    }

    fn validation(&mut self, config: &RunConfig) -> Arc<PassCache> {
        let limit = Self::left(config, &[self.held_out.as_deref()]);
        Arc::clone(
            self.validation
                .get_or_insert_with(|| Arc::new(PassCache::with_limit(limit))),
        )
    }

    /// The positions the limit leaves beside the training cache and `others`.
    fn left(config: &RunConfig, others: &[Option<&PassCache>]) -> usize {
        let training = config.cache.as_deref();
        let used: usize = std::iter::once(training)
            .chain(others.iter().copied())
            .map(|cache| cache.and_then(PassCache::kept).unwrap_or(0))
            .sum();
        config.cache_limit.saturating_sub(used)
    }
}

/// The held-out positions as each epoch's pass reads them, in the plain Chess768 set
/// whatever the run's inputs: for passes that decode each position's boards from its
/// features (`compare::results_only`), which a king-bucketed set cannot give back, since
/// its indices are mirrored to the e-h files by each side's king. `cache`: the run's
/// ([`Outcome::held_out_cache`]; it keeps positions, not features, so it serves any set).
pub fn held_out_boards_loader(
    config: &RunConfig,
    cache: Option<Arc<PassCache>>,
) -> Result<Loader, String> {
    let mut loader_config = held_out_config(config);
    loader_config.set = FeatureSet::Chess768;
    Loader::start_cached(loader_config, cache)
}

/// The loader settings of a pass over the validation positions, whole and in order.
fn validation_config(config: &RunConfig) -> LoaderConfig {
    let mut loader_config = Stream::new(config).loader_config(Split::All, false, config.seed);
    loader_config.inputs = config.validation.clone();
    loader_config.mixing = false;
    loader_config
}

/// The logistic's scale (centipawns) at which the stored scores of the training positions
/// best predict their results, with the fit it comes from: `tune`'s K (base 10, per 400
/// centipawns) turned into the natural logistic's `sigmoid(cp / scale)`. One pass over the
/// training split in the inputs' order, through the run's filters; positions without both
/// labels do not count.
pub fn fit_scale(config: &RunConfig) -> Result<(f64, KFit, u64), String> {
    let stream = Stream::new(config);
    // Unshuffled, the same positions in the same order as a training pass reads before its
    // shuffle: this pass can fill the cache for them.
    let mut loader = Loader::start_cached(
        stream.loader_config(stream.training_split(), false, 0),
        config.cache.clone(),
    )?;
    let recycler = loader.recycler();
    let mut samples = Vec::new();
    for batch in loader.by_ref() {
        let batch = batch?;
        for i in 0..batch.len {
            let (score, result) = (batch.score[i], batch.result[i]);
            if score != crate::training::arrays::UNKNOWN_SCORE && !result.is_nan() {
                samples.push((score as f64, result as f64));
            }
        }
        recycler.give(batch.stm_features);
        recycler.give(batch.nstm_features);
    }
    let counted = samples.len() as u64;
    if counted == 0 {
        return Err("no training position has both a score and a result".to_string());
    }
    // tune's own wording of these errors points at its --k, which train-net has not.
    let fit = fit_k(&samples).map_err(|e| {
        let why = match e {
            TuneError::KAtBoundary { k, .. } => {
                format!("the best K, {k:.3}, lies at the edge of the search range")
            }
            TuneError::KFlat { loss, baseline } => format!(
                "the results do not depend on the scores (mean squared error {loss:.6} at \
                 the best K, {baseline:.6} predicting a draw everywhere)"
            ),
            other => other.to_string(),
        };
        format!("the scores of {counted} positions with a result do not fit the results: {why}")
    })?;
    Ok((scale_of_k(fit.k), fit, counted))
}

/// `1 / (1 + 10^(−K·cp/400)) = 1 / (1 + e^(−cp/scale))` with `scale = 400 / (K · ln 10)`.
pub fn scale_of_k(k: f64) -> f64 {
    1.0 / (k * LN10_OVER_400)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The natural logistic at `scale_of_k(K)` is tune's base-10 logistic at K.
    #[test]
    fn the_scale_is_tunes_k_in_natural_units() {
        for k in [0.5, 1.0, 1.18, 2.0] {
            let scale = scale_of_k(k);
            for cp in [-700.0, -150.0, 0.0, 35.0, 420.0] {
                let natural = 1.0 / (1.0 + (-cp / scale).exp());
                let tune = crate::training::tune::sigmoid(k, cp);
                assert!((natural - tune).abs() < 1e-12, "K {k} cp {cp}");
            }
        }
        assert!((scale_of_k(1.0) - 173.72).abs() < 0.01);
    }
}
