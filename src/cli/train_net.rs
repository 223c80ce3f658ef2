//! `pawnstorm train-net`: trains a `(768 → N) × 2 → 1` SCReLU network on labelled positions
//! (`src/training/net/`), writes it quantised in pawnstorm's network format with how it was
//! made, and a checkpoint each epoch that `--resume` continues from.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use indicatif::ProgressBar;

use pawnstorm::nnue::{HIDDEN_STEP, MAX_HIDDEN, MIN_HIDDEN};
use pawnstorm::training::loader::ReadCounts;
use pawnstorm::training::mix::{self, Input};
use pawnstorm::training::net::checkpoint::{self, Checkpoint};
use pawnstorm::training::net::compare::{self, Comparison};
use pawnstorm::training::net::quantise;
use pawnstorm::training::net::run::{self, EpochReport, Observer, RunConfig};

use super::filters::FilterArgs;
use super::{Global, progress};

#[derive(clap::Args)]
pub struct Args {
    /// Labelled positions: position DBs, Stockfish .binpack files, EPD/FEN/PGN/JSONL (plain
    /// or compressed), read as they stream. PATH=WEIGHT interleaves the inputs at their
    /// weights' rates, each cycling, an epoch ending when every input has given all of its
    /// positions once; without weights they are read one after the other
    #[arg(required = true, value_name = "INPUT")]
    inputs: Vec<String>,
    /// The network to write (pawnstorm's format, docs/NNUE.md); its checkpoint goes to
    /// NET.ckpt
    #[arg(short, long, value_name = "NET")]
    output: PathBuf,
    /// Hidden neurons per perspective: a multiple of 16 from 16 to 1536
    #[arg(long, default_value_t = 128, value_parser = hidden_width)]
    hidden: usize,
    /// Output buckets by piece count, bullet's MaterialCount<B>: the output layer is B sets
    /// of weights, a position read by the set of (pieces − 2) / ⌈32 / B⌉ (1: none; 8, as
    /// many engines use: 2–5 pieces, 6–9, …, 30–32)
    #[arg(long, value_name = "B", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=8))]
    output_buckets: u64,
    /// King-bucketed, mirrored inputs (bullet's ChessBucketsMirrored): a count naming a
    /// standard map (1, 2, 4, 8, 16) or 32 hex digits, one bucket per king square of files
    /// a–d, rank 1 first (docs/NNUE.md, "King buckets"); none: Chess768
    #[arg(long, value_name = "MAP", value_parser = parse_king_buckets)]
    king_buckets: Option<pawnstorm::nnue::InputLayout>,
    /// With --king-buckets: no shared factoriser beside the buckets (by default one is
    /// trained and merged into every bucket's weights on saving)
    #[arg(long, requires = "king_buckets")]
    no_factoriser: bool,
    /// Epochs: passes over the training positions (or --epoch-positions positions each)
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    epochs: u64,
    /// The target's share of the game result, the rest being the stored score through
    /// sigmoid(score / S): target = W · result + (1 − W) · sigmoid(score / S). Positions
    /// without a label the blend needs are skipped. Default 0.3: on pawnstorm's self-play
    /// it predicted held-out results best of 0, 0.3 and 0.5 and won its games
    /// (docs/NNUE.md, "The blend")
    #[arg(
        long,
        value_name = "W",
        default_value_t = 0.3,
        value_parser = unit_interval,
        allow_negative_numbers = true
    )]
    wdl: f64,
    /// The logistic's scale S in centipawns, for both halves of the target and for the
    /// net's output: sigmoid(cp / S). `fit` (the default): the S at which the training
    /// positions' stored scores best predict their results (tune's K as S = 400 / (K ln 10)),
    /// so that results blended in leave the net's centipawns those of the scores; 400 is
    /// bullet's example, made for Stockfish's scale. Without results to fit, 400
    #[arg(long, value_name = "S|fit", default_value = "fit", value_parser = scale_option)]
    scale: ScaleOption,
    /// Training threads (default: one per core); the loader runs two threads of its own
    /// beside them. The net does not depend on it
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the starting weights and of the order of the positions
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Continue from NET.ckpt (its options must be this run's, --threads and --epochs aside)
    #[arg(long)]
    resume: bool,
    /// AdamW's learning rate at the first epoch; it decays (cosine) to --final-lr at the last
    #[arg(long, default_value_t = 0.001, value_parser = positive, allow_negative_numbers = true)]
    lr: f64,
    /// The learning rate at the last epoch (default: --lr × 0.027, bullet's example schedule
    /// 0.001 → 0.001 · 0.3³)
    #[arg(long, value_parser = non_negative, allow_negative_numbers = true)]
    final_lr: Option<f64>,
    /// AdamW's decoupled weight decay: each step multiplies every weight by 1 − lr × D
    /// before the update (bullet's default 0.01). More is a stronger pull towards 0, for
    /// nets with more weights than their data fills (docs/NNUE.md)
    #[arg(
        long,
        value_name = "D",
        default_value_t = DEFAULT_WEIGHT_DECAY,
        value_parser = non_negative,
        allow_negative_numbers = true
    )]
    weight_decay: f64,
    /// Epochs of linear warm-up before the cosine: epoch e < N at --lr · (e + 1) / (N + 1);
    /// the cosine then runs over the epochs after them (with --epoch-positions, by superbatch)
    #[arg(long, default_value_t = 0, value_name = "N")]
    warmup: u64,
    /// Positions per AdamW step
    #[arg(long, default_value_t = 16384, value_parser = clap::value_parser!(u64).range(1..=1 << 24))]
    batch_size: u64,
    /// Fraction held out to measure the loss on, as `tune` splits: whole games where the
    /// inputs have game ids, else runs of 512 consecutive positions (0: none)
    #[arg(
        long,
        default_value_t = 0.1,
        value_parser = holdout_fraction,
        allow_negative_numbers = true
    )]
    holdout: f64,
    /// Also measure the loss after each epoch on these positions (never trained on; the
    /// run's filters apply), e.g. data/validation/*.binpack: a fixed set, so that the losses
    /// of runs on other inputs compare (give them one --scale)
    #[arg(long, value_name = "FILE", num_args = 1..)]
    validation: Vec<PathBuf>,
    /// Positions an epoch holds, the passes over the inputs running on across epochs
    /// (bullet's superbatch); default: one pass
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    epoch_positions: Option<u64>,
    /// Positions held in the shuffle buffer (32 bytes each)
    #[arg(long, value_name = "N", default_value_t = 2_000_000)]
    shuffle_buffer: usize,
    /// The most the loader holds, in MiB: the shuffle buffer and the caches of the training,
    /// held-out and validation positions, each kept from its first pass for the others (32
    /// bytes a position). Positions that do not fit in what the buffer leaves (the training
    /// positions first) are read again every pass (default: caches of up to 2 GiB)
    #[arg(long, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..))]
    memory: Option<u64>,
    /// Keep the positions skipped by default: in check, a capture or promotion as the move
    /// played, a mate score (the default skips are --skip-check --skip-capture --drop-mates)
    #[arg(long)]
    no_default_skips: bool,
    #[command(flatten)]
    filters: FilterArgs,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ScaleOption {
    Fit,
    Fixed(f64),
}

impl std::fmt::Display for ScaleOption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ScaleOption::Fit => f.write_str("fit"),
            ScaleOption::Fixed(s) => write!(f, "{s}"),
        }
    }
}

fn scale_option(text: &str) -> Result<ScaleOption, String> {
    if text == "fit" {
        return Ok(ScaleOption::Fit);
    }
    match text.parse::<f64>() {
        Ok(value) if value.is_finite() && value >= 1.0 => Ok(ScaleOption::Fixed(value)),
        _ => Err(format!(
            "`{text}` is neither `fit` nor a number of centipawns of 1 or more"
        )),
    }
}

fn parse_king_buckets(text: &str) -> Result<pawnstorm::nnue::InputLayout, String> {
    pawnstorm::nnue::InputLayout::parse_king_buckets(text)
}

fn hidden_width(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if (MIN_HIDDEN..=MAX_HIDDEN).contains(&n) && n.is_multiple_of(HIDDEN_STEP) => Ok(n),
        _ => Err(format!(
            "`{text}` is not a multiple of {HIDDEN_STEP} from {MIN_HIDDEN} to {MAX_HIDDEN}"
        )),
    }
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

/// The progress bar over an epoch's positions, and the summary line of each epoch.
struct Progress {
    bar: ProgressBar,
    epochs: u64,
    /// Positions an epoch holds, once known (after the first).
    per_epoch: Option<u64>,
    started: Instant,
}

impl Observer for Progress {
    fn batch(&mut self, epoch: u64, positions: u64, loss: f64) {
        if positions > self.bar.length().unwrap_or(0) {
            self.bar.set_length(positions);
        }
        self.bar.set_position(positions);
        let rate = positions as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
        self.bar.set_message(format!(
            "epoch {epoch}/{}: loss {loss:.6}, {:.0}k positions/s",
            self.epochs,
            rate / 1e3
        ));
    }

    fn epoch(&mut self, report: &EpochReport) {
        let held = report
            .held_loss
            .map_or(String::new(), |h| format!(", held-out {h:.6}"));
        let validation = report.validation_loss.map_or(String::new(), |v| {
            format!(
                ", validation {v:.6} ({} positions)",
                report.validation_positions
            )
        });
        let line = format!(
            "epoch {}/{}: loss {:.6}{held}{validation}, lr {:.3e}, {} positions in {:.1} s, {:.0} positions/s",
            report.epoch,
            self.epochs,
            report.train_loss,
            report.lr,
            report.positions,
            report.train_seconds,
            report.positions as f64 / report.train_seconds.max(1e-9),
        );
        self.bar.suspend(|| eprintln!("{line}"));
        self.per_epoch = Some(report.positions);
        self.bar.set_length(report.positions);
        self.bar.set_position(0);
        self.started = Instant::now();
    }
}

/// The logistic's scale when there are no results to fit it to: bullet's.
const SCALE_WITHOUT_RESULTS: f64 = 400.0;
/// `--weight-decay`'s default: the trainer's own (`optimiser::WEIGHT_DECAY`), written as
/// the f64 the option parses to, so that the default compares equal to it.
const DEFAULT_WEIGHT_DECAY: f64 = 0.01;
const _: () = assert!(
    DEFAULT_WEIGHT_DECAY as f32 == pawnstorm::training::net::optimiser::WEIGHT_DECAY,
    "the option's default is the trainer's"
);

pub fn run(args: Args, _global: Global) -> Result<()> {
    let started = Instant::now();
    if args.inputs.iter().any(|i| i == "-") {
        bail!("train-net reads its inputs once an epoch: standard input (-) cannot be one");
    }
    let inputs: Vec<Input> = args
        .inputs
        .iter()
        .map(|text| mix::parse_input(text).map_err(anyhow::Error::msg))
        .collect::<Result<_>>()?;
    for path in inputs.iter().map(|i| &i.path).chain(&args.validation) {
        if !path.is_file() {
            bail!("{}: no such file", path.display());
        }
    }
    let dir = match args.output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        bail!("{}: no such directory", dir.display());
    }
    let checkpoint_path = checkpoint::path_for(&args.output);
    let final_lr = args.final_lr.unwrap_or(args.lr * 0.027);
    let mut filter_args = args.filters.clone();
    if !args.no_default_skips {
        filter_args.skip_check = true;
        filter_args.skip_capture = true;
        filter_args.drop_mates = true;
    }
    let mut filter = filter_args.filter(pawnstorm::eval::default_weights())?;
    // The target needs these labels: positions without them are skipped, and counted.
    filter.require_result |= args.wdl > 0.0;
    filter.require_score |= args.wdl < 1.0;
    let options = options_text(&args, &inputs, final_lr, &filter_args);

    let start = if args.resume {
        let checkpoint = Checkpoint::load(&checkpoint_path).map_err(|e| {
            anyhow::anyhow!("--resume: {e} (start without --resume to train from scratch)")
        })?;
        let differences = checkpoint::differences(&checkpoint.options, &options, &["epochs"]);
        if !differences.is_empty() {
            bail!(
                "--resume: {} was made with other options ({}): run with the checkpoint's \
                 options, or without --resume to start afresh",
                checkpoint_path.display(),
                differences.join("; ")
            );
        }
        if checkpoint.epochs_done > args.epochs {
            bail!(
                "--resume: {} has {} epochs done, more than --epochs {}",
                checkpoint_path.display(),
                checkpoint.epochs_done,
                args.epochs
            );
        }
        eprintln!(
            "train-net: resuming from {} after epoch {}",
            checkpoint_path.display(),
            checkpoint.epochs_done
        );
        Some(checkpoint)
    } else {
        if checkpoint_path.exists() {
            eprintln!(
                "train-net: {} exists; starting afresh (--resume continues from it)",
                checkpoint_path.display()
            );
        }
        None
    };
    // Written only at the end: an interrupt before then names it as not written.
    pawnstorm::io::durable::announce(&args.output);
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let threads = pool.current_num_threads();
    let mut config = RunConfig {
        inputs: inputs.clone(),
        mixing: inputs.iter().any(|i| i.weight != 1.0),
        hidden: args.hidden,
        buckets: args.output_buckets as usize,
        king_buckets: args
            .king_buckets
            .unwrap_or(pawnstorm::nnue::InputLayout::CHESS768),
        factoriser: !args.no_factoriser,
        epochs: args.epochs,
        wdl: args.wdl,
        scale: SCALE_WITHOUT_RESULTS,
        lr: args.lr,
        final_lr,
        weight_decay: args.weight_decay,
        warmup: args.warmup,
        batch_size: args.batch_size as usize,
        holdout: args.holdout,
        validation: args
            .validation
            .iter()
            .map(|path| Input {
                path: path.clone(),
                weight: 1.0,
            })
            .collect(),
        seed: args.seed,
        shuffle_buffer: args.shuffle_buffer,
        epoch_positions: args.epoch_positions,
        filter,
        loader_threads: 1,
        checkpoint: Some((checkpoint_path.clone(), options)),
        cache: None,
        cache_limit: 0,
    };
    let cache_limit = match args.memory {
        None => pawnstorm::training::loader::CACHED_POSITIONS,
        Some(mib) => {
            let buffer = args.shuffle_buffer as u64 * 32;
            let bytes = mib << 20;
            if buffer > bytes {
                bail!(
                    "--memory {mib} MiB is less than the shuffle buffer's {} MiB (--shuffle-buffer \
                     {} positions, 32 bytes each)",
                    buffer.div_ceil(1 << 20),
                    args.shuffle_buffer
                );
            }
            ((bytes - buffer) / 32) as usize
        }
    };
    config.cache = run::pass_cache(&config, cache_limit);
    config.cache_limit = cache_limit;
    let scale_text = match args.scale {
        ScaleOption::Fixed(s) => {
            config.scale = s;
            format!("{s} (given)")
        }
        ScaleOption::Fit => match pool.install(|| run::fit_scale(&config)) {
            Ok((s, fit, counted)) => {
                config.scale = s;
                format!(
                    "{s:.1} (fitted: K {:.4}, results-only loss {:.6} on {counted} training \
                     positions)",
                    fit.k, fit.loss
                )
            }
            // Training goes on at bullet's scale: the positions without the labels the
            // target needs are counted and reported by the run itself.
            Err(e) => format!("{SCALE_WITHOUT_RESULTS} (not fitted: {e})"),
        },
    };
    eprintln!("train-net: logistic scale {scale_text}");
    // The first epoch's length, until it is known: the DBs' positions less the held-out
    // share (an overestimate by the filters' share), or unknown with other inputs.
    let estimate = args.epoch_positions.or_else(|| {
        let sizes: Option<Vec<u64>> = inputs
            .iter()
            .map(|i| {
                pawnstorm::db::Database::open(&i.path)
                    .ok()
                    .map(|db| db.len())
            })
            .collect();
        sizes.map(|s| (s.iter().sum::<u64>() as f64 * (1.0 - args.holdout)) as u64)
    });
    let mut observer = Progress {
        bar: progress::training_bar(estimate.unwrap_or(0)),
        epochs: args.epochs,
        per_epoch: None,
        started: Instant::now(),
    };
    let outcome = run::train(&config, start, &pool, &mut observer).map_err(anyhow::Error::msg)?;
    observer.bar.finish_and_clear();

    let layout = config.layout();
    let mut net = quantise(&outcome.state.params, layout, "").map_err(anyhow::Error::msg)?;
    let comparison = if args.holdout > 0.0 {
        let loader = run::held_out_boards_loader(&config, outcome.held_out_cache.clone())
            .map_err(anyhow::Error::msg)?;
        let net = Arc::new(net.clone());
        let prepared = pawnstorm::eval::default_weights();
        Some(
            pool.install(|| compare::results_only(loader, net, prepared))
                .map_err(anyhow::Error::msg)?,
        )
    } else {
        None
    };
    let provenance = provenance(
        &args,
        &inputs,
        &outcome,
        comparison.as_ref(),
        final_lr,
        &scale_text,
    );
    net.set_provenance(&provenance);
    net.save(&args.output)
        .with_context(|| format!("writing {}", args.output.display()))?;
    if let Some(c) = &comparison {
        eprintln!("train-net: {}", comparison_text(c));
    }
    if let Some(cache) = &config.cache {
        match cache.kept() {
            Some(kept) => eprintln!(
                "train-net: the training positions ({kept}, {} MiB) kept in memory after the \
                 first pass",
                (kept as u64 * 32).div_ceil(1 << 20)
            ),
            None if outcome.epochs.len() > 1 => eprintln!(
                "train-net: the inputs read again every pass (more positions than {cache_limit} \
                 fit beside the shuffle buffer; --memory)"
            ),
            None => {}
        }
    }
    for (what, cache) in [
        ("held-out", &outcome.held_out_cache),
        ("validation", &outcome.validation_cache),
    ] {
        match cache.as_ref().map(|c| c.kept()) {
            Some(Some(kept)) => eprintln!(
                "train-net: the {what} positions ({kept}, {} MiB) kept in memory after their \
                 first pass",
                (kept as u64 * 32).div_ceil(1 << 20)
            ),
            Some(None) if outcome.epochs.len() > 1 => eprintln!(
                "train-net: the {what} positions read again every epoch (more than fit beside \
                 the other caches; --memory)"
            ),
            _ => {}
        }
    }
    let rate = outcome.positions as f64 / outcome.train_seconds.max(1e-9);
    eprintln!(
        "train-net: {} epochs, {} positions trained in {:.1} s ({:.0} positions/s, {threads} \
         threads, N = {}), loss {:.6}{}; {:.1} s in all -> {}",
        outcome.epochs.len(),
        outcome.positions,
        outcome.train_seconds,
        rate,
        args.hidden,
        outcome.train_loss,
        outcome
            .held_loss
            .map_or(String::new(), |h| format!(", held-out {h:.6}"))
            + &outcome
                .validation_loss
                .map_or(String::new(), |v| format!(", validation {v:.6}")),
        started.elapsed().as_secs_f64(),
        args.output.display()
    );
    Ok(())
}

/// The options that decide the run's arithmetic, as the checkpoint records them.
fn options_text(args: &Args, inputs: &[Input], final_lr: f64, filters: &FilterArgs) -> String {
    let mut text = String::new();
    for (i, input) in inputs.iter().enumerate() {
        text.push_str(&format!(
            "input{i}={}={}\n",
            input.path.display(),
            input.weight
        ));
    }
    for (key, value) in [
        ("hidden", args.hidden.to_string()),
        ("epochs", args.epochs.to_string()),
        ("wdl", args.wdl.to_string()),
        ("scale", args.scale.to_string()),
        ("seed", args.seed.to_string()),
        ("lr", args.lr.to_string()),
        ("final-lr", final_lr.to_string()),
        ("batch-size", args.batch_size.to_string()),
        ("holdout", args.holdout.to_string()),
        ("epoch-positions", format!("{:?}", args.epoch_positions)),
        ("shuffle-buffer", args.shuffle_buffer.to_string()),
        ("filters", format!("{filters:?}")),
    ] {
        text.push_str(&format!("{key}={value}\n"));
    }
    // Only with buckets: a checkpoint without the line is one of a single output (and
    // checkpoints of single-output runs stay as they were).
    if args.output_buckets != 1 {
        text.push_str(&format!("output-buckets={}\n", args.output_buckets));
    }
    // Only with king buckets, as output buckets.
    if let Some(layout) = args.king_buckets {
        text.push_str(&format!("king-buckets={}\n", layout.map_text()));
        if args.no_factoriser {
            text.push_str("factoriser=0\n");
        }
    }
    // Only when used, so that checkpoints from before the option still resume.
    if args.warmup > 0 {
        text.push_str(&format!("warmup={}\n", args.warmup));
    }
    // Only when not the default, as above.
    if args.weight_decay != DEFAULT_WEIGHT_DECAY {
        text.push_str(&format!("weight-decay={}\n", args.weight_decay));
    }
    text
}

fn fit_text(fit: &Result<pawnstorm::training::tune::KFit, String>) -> String {
    match fit {
        Ok(fit) => format!("{:.6} (K {:.4})", fit.loss, fit.k),
        Err(e) => format!("not fitted ({e})"),
    }
}

fn comparison_text(c: &Comparison) -> String {
    format!(
        "results-only held-out loss (as tune's, K fitted) on {} positions ({} scored by \
         endgame rules left out): net {}, hand-crafted evaluation {}",
        c.positions,
        c.rules,
        fit_text(&c.net),
        fit_text(&c.hce)
    )
}

fn counts_text(counts: &ReadCounts, inputs: &[Input]) -> String {
    let mut lines = Vec::new();
    for (input, c) in inputs.iter().zip(&counts.inputs) {
        lines.push(format!(
            "  {}: {} positions given ({} read, {} dropped, {} bad, {} on the other side of \
             the split)",
            input.path.display(),
            c.given,
            c.read,
            c.dropped,
            c.rejected,
            c.split_off
        ));
    }
    if counts.dropped_by.total() > 0 {
        lines.push(format!("  {}", counts.dropped_by));
    }
    lines.join("\n")
}

/// How the net was made: the text its file carries.
fn provenance(
    args: &Args,
    inputs: &[Input],
    outcome: &run::Outcome,
    comparison: Option<&Comparison>,
    final_lr: f64,
    scale_text: &str,
) -> String {
    let command: Vec<String> = std::env::args().collect();
    let mut text = String::new();
    text.push_str(&format!(
        "made by pawnstorm {} train-net\n",
        env!("CARGO_PKG_VERSION")
    ));
    text.push_str(&format!("command: {}\n", command.join(" ")));
    text.push_str(&format!("date: {}\n", today()));
    text.push_str(&format!(
        "network: ({} -> {}) x 2 -> 1 SCReLU{}; wdl {}, lr {}{} -> {final_lr} (cosine), weight \
         decay {}, batch {}, seed {}, holdout {}\n",
        match args.king_buckets {
            Some(layout) => format!(
                "768x{}hm, king buckets {}{}",
                layout.king_buckets(),
                layout.map_text(),
                if args.no_factoriser {
                    ""
                } else {
                    ", factorised"
                }
            ),
            None => "768".to_string(),
        },
        args.hidden,
        match args.output_buckets {
            1 => String::new(),
            b => format!(", {b} output buckets by piece count"),
        },
        args.wdl,
        args.lr,
        match args.warmup {
            0 => String::new(),
            n => format!(" after {n} warm-up epochs"),
        },
        args.weight_decay,
        args.batch_size,
        args.seed,
        args.holdout
    ));
    text.push_str(&format!("logistic scale: {scale_text}\n"));
    if let Some(counts) = &outcome.train_counts {
        text.push_str(&format!(
            "training positions (a pass):\n{}\n",
            counts_text(counts, inputs)
        ));
    }
    if let Some(counts) = &outcome.held_counts {
        text.push_str(&format!("held-out positions: {}\n", counts.kept));
    }
    text.push_str(&format!(
        "epochs: {}; final training loss {:.6}{}\n",
        args.epochs,
        outcome.train_loss,
        outcome
            .held_loss
            .map_or(String::new(), |h| format!(", held-out loss {h:.6}"))
            + &outcome.validation_loss.map_or(String::new(), |v| format!(
                ", validation loss {v:.6} ({})",
                args.validation
                    .iter()
                    .map(|p| p.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
    ));
    if let Some(c) = comparison {
        text.push_str(&format!("{}\n", comparison_text(c)));
    }
    text
}

/// Today's date (UTC) as YYYY-MM-DD, from the days since 1970 (Howard Hinnant's
/// `civil_from_days`).
fn today() -> String {
    let seconds = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let z = seconds.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + (month <= 2) as i64;
    format!("{year:04}-{month:02}-{day:02}")
}
