//! `pawnstorm tune`: Texel tuning of the evaluation weights on labelled positions, written
//! as a weights file.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use pawnstorm::eval::features;
use pawnstorm::eval::{Prepared, Weights};
use pawnstorm::export::filters::Reason;
use pawnstorm::training::tune::model::{self, evals_and_results};
use pawnstorm::training::tune::optimise::scheduled_lr;
use pawnstorm::training::tune::{self, Dataset, LoadCounts, LoadOptions, Tuner};

use super::filters::FilterArgs;
use super::{Global, import, output, progress, weights};

#[derive(clap::Args)]
pub struct Args {
    /// Labelled positions: position DBs, or EPD/FEN/PGN/JSONL files, plain or compressed ('-' for standard input)
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The weights file to write (the format of `pawnstorm weights`)
    #[arg(short, long)]
    output: PathBuf,
    /// Weights to start from (default: the compiled-in ones)
    #[arg(long, value_name = "FILE")]
    start: Option<PathBuf>,
    /// Passes over the training positions
    #[arg(long, default_value_t = 100)]
    epochs: usize,
    /// Adam's learning rate: about the most a weight moves in one step, in centipawns. It
    /// decays (cosine) to a tenth of this over the run
    #[arg(long, default_value_t = 1.0, value_parser = positive, allow_negative_numbers = true)]
    lr: f64,
    /// Positions per Adam step
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..))]
    batch_size: u64,
    /// The target's share of the game result, the rest being the stored score through the
    /// same sigmoid: 1 tunes to results alone, 0 to scores alone. Positions without a label
    /// the blend needs are dropped
    #[arg(long, default_value_t = 1.0, value_parser = unit_interval, allow_negative_numbers = true)]
    wdl_weight: f64,
    /// Fraction of the positions held out to measure the loss on: whole games when the
    /// positions have game ids, otherwise whole runs of 512 consecutive positions
    #[arg(
        long,
        default_value_t = 0.1,
        value_parser = holdout_fraction,
        allow_negative_numbers = true
    )]
    holdout: f64,
    /// Pull towards the starting weights: the training objective gains
    /// L2 x sum((weight - start)^2), weights in pawns (docs/TUNING.md)
    #[arg(
        long,
        default_value_t = DEFAULT_L2,
        value_parser = non_negative,
        allow_negative_numbers = true
    )]
    l2: f64,
    /// End the run after this many epochs without a lower held-out loss; the weights
    /// written are always those of the epoch with the lowest held-out loss
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    patience: u64,
    /// The sigmoid's K (p = 1 / (1 + 10^(-K x eval / 400))) instead of fitting it to the
    /// results
    #[arg(long, value_parser = positive, allow_negative_numbers = true)]
    k: Option<f64>,
    /// Keep these weights at their starting values: names or prefixes as `pawnstorm weights`
    /// prints them (material, psqt.king, passed.rank2)
    #[arg(long, value_delimiter = ',', value_name = "TERM,...")]
    freeze: Vec<String>,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the order of the positions (the held-out split does not depend on it)
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print each epoch's training and held-out loss as a line (the progress bar shows them
    /// on a terminal)
    #[arg(long)]
    verbose: bool,
    #[command(flatten)]
    filters: FilterArgs,
}

fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value > 0.0 => Ok(value),
        _ => Err(format!("`{text}` is not a positive number")),
    }
}

fn non_negative(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 0.0 => Ok(value),
        _ => Err(format!("`{text}` is not a number of 0 or more")),
    }
}

/// The L2 strength unless --l2 says otherwise, chosen by measurement (docs/TUNING.md).
const DEFAULT_L2: f64 = 1e-4;
/// Weights listed in the summary as those that moved most.
const MOVED_SHOWN: usize = 12;

fn unit_interval(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..=1.0).contains(&value) => Ok(value),
        _ => Err(format!("`{text}` is not a number from 0 to 1")),
    }
}

fn holdout_fraction(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if (0.0..1.0).contains(&value) => Ok(value),
        _ => Err(format!(
            "`{text}` is not a fraction from 0 up to (not including) 1"
        )),
    }
}

/// Where K came from, for the summary.
enum KSource {
    Fitted,
    Given,
    /// Scores alone: no results to fit against (K only weighs the errors then; the best
    /// evaluation is the stored score whatever K).
    Default,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let started = Instant::now();
    if args.inputs.iter().filter(|i| *i == "-").count() > 1 {
        bail!("standard input (-) can be read only once");
    }
    // Fail now rather than after the tuning.
    let dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("{}: no such directory", dir.display());
    }
    // Written only at the end: an interrupt before then names it as not written.
    pawnstorm::io::durable::announce(&args.output);
    let frozen = tune::select_weights(&args.freeze)?;
    let start = weights::load(args.start.as_deref())?;
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let threads = pool.current_num_threads();

    args.filters.refuse_ordered("tune")?;
    let prepared = Prepared::new(start.clone());
    let options = LoadOptions {
        needs_result: args.wdl_weight > 0.0,
        needs_score: args.wdl_weight < 1.0,
        holdout: args.holdout,
        seed: args.seed,
        // The quiet test asks the weights the tuning starts from.
        filter: args.filters.filter(&prepared)?,
        path: if global.scalar {
            features::Path::scalar()
        } else {
            features::Path::native()
        },
    };
    let mut dataset = Dataset::default();
    for (source, input) in args.inputs.iter().enumerate() {
        // The guard keeps an on-the-fly import's DB until its positions are read.
        let (db, _imported) = import::open_or_import(input, global.verify)?;
        let bar = progress::positions_bar(db.len());
        pool.install(|| dataset.add_db(&db, source as u32, &prepared, &options, &|n| bar.inc(n)))?;
        bar.finish_and_clear();
    }
    let counts = dataset.counts;
    if counts.train == 0 {
        bail!(
            "no labelled positions to tune on in {}: {}",
            args.inputs.join(", "),
            describe_counts(&counts, args.wdl_weight)
        );
    }

    let (entries, bytes) = dataset.size();
    let kept = (counts.train + counts.held_out) as f64;
    let size_text = format!(
        "{:.1} counts a position, {:.0} MB",
        entries as f64 / kept,
        bytes as f64 / 1e6
    );
    let start_params: Vec<[f64; 2]> = start
        .values()
        .iter()
        .map(|w| [w.mg as f64, w.eg as f64])
        .collect();
    let (k, k_source) = match args.k {
        Some(k) => (k, KSource::Given),
        None if options.needs_result => {
            let samples = pool.install(|| evals_and_results(&start_params, &dataset.train));
            let fit = pool.install(|| tune::fit_k(&samples))?;
            (fit.k, KSource::Fitted)
        }
        None => (1.0, KSource::Default),
    };
    pool.install(|| dataset.set_targets(k, args.wdl_weight));

    let uses = pool.install(|| dataset.training_uses());
    let untouched = (0..Weights::COUNT)
        .filter(|&i| !frozen[i] && uses[i] == 0)
        .count();
    let trainable: Vec<bool> = (0..Weights::COUNT)
        .map(|i| !frozen[i] && uses[i] > 0)
        .collect();
    let frozen_count = frozen.iter().filter(|&&f| f).count();
    let mut tuner = Tuner::new(&start, trainable, k, args.seed).with_l2(args.l2);
    let has_held_out = !dataset.held_out.is_empty();
    let before = pool.install(|| {
        (
            tuner.loss(&dataset.train),
            has_held_out.then(|| tuner.loss(&dataset.held_out)),
        )
    });

    let bar = progress::epochs_bar(args.epochs as u64);
    let mut training_time = Duration::ZERO;
    // Early stopping: the weights of the epoch with the lowest held-out loss (0: the
    // starting weights) are the ones written.
    let mut best = before.1.map(|loss| (0usize, loss, tuner.params().to_vec()));
    let mut epochs_run = 0;
    for epoch in 0..args.epochs {
        let lr = scheduled_lr(args.lr, epoch, args.epochs);
        let epoch_start = Instant::now();
        let loss = pool.install(|| tuner.epoch(&dataset.train, args.batch_size as usize, lr));
        training_time += epoch_start.elapsed();
        epochs_run += 1;
        let held = has_held_out.then(|| pool.install(|| tuner.loss(&dataset.held_out)));
        let line = format!("epoch {}: loss {loss:.6}{}", epoch + 1, held_text(held));
        bar.set_message(line.clone());
        if args.verbose {
            bar.suspend(|| eprintln!("{line}"));
        }
        bar.inc(1);
        if let (Some(held), Some((best_epoch, best_loss, params))) = (held, best.as_mut()) {
            if held < *best_loss {
                (*best_epoch, *best_loss) = (epoch + 1, held);
                params.clone_from(&tuner.params().to_vec());
            } else if (epoch + 1 - *best_epoch) as u64 >= args.patience {
                break;
            }
        }
    }
    bar.finish_and_clear();
    let kept_epoch = match &best {
        Some((epoch, _, params)) => {
            tuner.restore(params);
            *epoch
        }
        None => epochs_run,
    };

    let tuned = tuner.weights()?;
    let tuned_params: Vec<[f64; 2]> = tuned
        .values()
        .iter()
        .map(|w| [w.mg as f64, w.eg as f64])
        .collect();
    let after = pool.install(|| {
        (
            model::loss(&tuned_params, k, &dataset.train),
            has_held_out.then(|| model::loss(&tuned_params, k, &dataset.held_out)),
        )
    });
    let text = tuned.to_text();
    output::write_atomically(&args.output, |sink| Ok(sink.write_all(text.as_bytes())?))?;

    let k_text = match k_source {
        KSource::Fitted => "fitted",
        KSource::Given => "--k",
        KSource::Default => "default: no results in the target",
    };
    let held_loss = match (before.1, after.1) {
        (Some(b), Some(a)) => format!(", held-out {b:.6} -> {a:.6}"),
        _ => String::new(),
    };
    let epoch_time = if epochs_run > 0 {
        format!(
            ", {:.3} s an epoch",
            training_time.as_secs_f64() / epochs_run as f64
        )
    } else {
        String::new()
    };
    let moved = most_moved(&start, &tuned, MOVED_SHOWN);
    if !moved.is_empty() {
        eprintln!("tune: the weights that moved most (mg, eg: start -> end):");
        for line in &moved {
            eprintln!("  {line}");
        }
    }
    let stopped = if epochs_run < args.epochs {
        format!(
            " (stopped early: {} epochs without a lower held-out loss)",
            args.patience
        )
    } else {
        String::new()
    };
    let kept = if has_held_out {
        format!(", kept epoch {kept_epoch} (lowest held-out loss)")
    } else {
        String::new()
    };
    eprintln!(
        "tune: positions {}; {size_text}; K {k:.4} ({k_text}); L2 {}; loss {:.6} -> {:.6}{held_loss}; \
         {epochs_run} of {} epochs{stopped}{kept}{epoch_time}, \
         {:.2} s in all, {threads} threads; {frozen_count} weights frozen, {untouched} untouched \
         by any training position -> {}",
        describe_counts(&counts, args.wdl_weight),
        args.l2,
        before.0,
        after.0,
        args.epochs,
        started.elapsed().as_secs_f64(),
        args.output.display(),
    );
    Ok(())
}

/// The `count` weights whose (mg, eg) moved furthest from `start` (by the larger of the
/// two moves), as `name mg eg -> mg eg`.
fn most_moved(start: &Weights, tuned: &Weights, count: usize) -> Vec<String> {
    let mut moves: Vec<(i32, String)> = Weights::names()
        .into_iter()
        .zip(start.values().iter().zip(tuned.values()))
        .filter(|(_, (a, b))| **a != *b)
        .map(|(name, (a, b))| {
            let distance = (a.mg - b.mg).abs().max((a.eg - b.eg).abs());
            (
                distance,
                format!("{name} {} {} -> {} {}", a.mg, a.eg, b.mg, b.eg),
            )
        })
        .collect();
    moves.sort_by_key(|m| std::cmp::Reverse(m.0));
    moves
        .into_iter()
        .take(count)
        .map(|(_, text)| text)
        .collect()
}

fn held_text(held: Option<f64>) -> String {
    held.map_or(String::new(), |h| format!(", held-out {h:.6}"))
}

/// "N read, T training, H held out, dropped D: ..." naming only the reasons that dropped
/// some.
fn describe_counts(counts: &LoadCounts, wdl_weight: f64) -> String {
    let mut dropped = Vec::new();
    if counts.no_result > 0 {
        dropped.push(format!(
            "{} without a result (--wdl-weight {wdl_weight} needs one)",
            counts.no_result
        ));
    }
    if counts.no_score > 0 {
        dropped.push(format!(
            "{} without a score (--wdl-weight {wdl_weight} needs one)",
            counts.no_score
        ));
    }
    for reason in Reason::ALL {
        let n = counts.filtered.count(reason);
        if n > 0 {
            dropped.push(format!("{n} by {}", reason.option()));
        }
    }
    if counts.rule > 0 {
        dropped.push(format!(
            "{} scored by an endgame rule (no weight applies)",
            counts.rule
        ));
    }
    let total = counts.no_result + counts.no_score + counts.filtered.total() + counts.rule;
    let dropped = if dropped.is_empty() {
        String::new()
    } else {
        format!("; dropped {total}: {}", dropped.join(", "))
    };
    format!(
        "{} read: {} training, {} held out{dropped}",
        counts.read, counts.train, counts.held_out
    )
}
