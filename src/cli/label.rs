//! `pawnstorm label`: every position of a DB (or EPD/FEN/PGN/JSONL file) scored by a
//! deeper search, pawnstorm's own or any UCI engine's, into a new DB whose other labels
//! are the input's.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use signal_hook::consts::{SIGINT, SIGTERM};

use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::eval::Prepared;
use pawnstorm::training::label::{self, EngineSpec, Limit, SearchLabeller, Summary, UciLabeller};

use super::{Global, import, progress, weights};

/// Failures printed one by one; the rest are counted.
const SHOWN_FAILURES: usize = 20;

#[derive(clap::Args)]
pub struct Args {
    /// Positions to label: a DB, or an EPD/FEN/PGN/JSONL file, plain or compressed
    input: String,
    /// The labelled DB to write (the input's positions and labels, with the new scores)
    #[arg(short, long)]
    output: PathBuf,
    /// Search each position to this depth (the default: 8)
    #[arg(long, group = "limit", value_parser = clap::value_parser!(u32).range(1..=100))]
    depth: Option<u32>,
    /// Search each position this many nodes
    #[arg(long, group = "limit", value_parser = clap::value_parser!(u64).range(1..))]
    nodes: Option<u64>,
    /// Search each position this many milliseconds (labels then depend on the machine)
    #[arg(long, group = "limit", value_parser = clap::value_parser!(u64).range(1..))]
    movetime: Option<u64>,
    /// A UCI engine to label with instead of pawnstorm's own search: the program and its
    /// arguments, separated by spaces (one process per thread)
    #[arg(long, value_name = "CMD")]
    engine: Option<String>,
    /// Evaluation weights of pawnstorm's own search (as `pawnstorm weights` writes them)
    #[arg(long, value_name = "FILE", conflicts_with = "engine")]
    weights: Option<PathBuf>,
    #[command(flatten)]
    evaluator: super::evaluator::EvalArgs,
    /// An option for --engine, sent as `setoption name NAME value VALUE` (repeatable)
    #[arg(long = "option", value_name = "NAME=VALUE", value_parser = name_value, requires = "engine")]
    options: Vec<(String, String)>,
    /// Parallel searches, each with its own table (and its own engine process)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..1025))]
    threads: Option<u32>,
    /// Hash table of each search, MiB (sent to --engine as its `Hash` option before --option)
    #[arg(long, default_value_t = 16, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    hash: u64,
    /// The longest one position may take, seconds: an engine slower than this is restarted
    /// and the position left without a score
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    timeout: f64,
    /// Leave positions that already have a score alone (not searched)
    #[arg(long)]
    keep_existing: bool,
    /// Continue an interrupted run: the output's positions (a prefix of the input's) are
    /// kept and the rest labelled
    #[arg(long)]
    resume: bool,
}

fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.trim().is_empty() => {
            Ok((name.trim().to_string(), value.trim().to_string()))
        }
        _ => Err(format!("`{text}` is not NAME=VALUE")),
    }
}

/// The signal that asked the run to stop, if one did: SIGINT and SIGTERM set it; a second
/// one ends the process at once.
struct Interrupt {
    flag: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

impl Interrupt {
    fn install() -> Result<Interrupt> {
        let flag = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicUsize::new(0));
        for number in [SIGINT, SIGTERM] {
            // The shutdown first: it acts only once the flag is set, by the first signal.
            signal_hook::flag::register_conditional_shutdown(number, 128 + number, flag.clone())
                .context("installing a signal handler")?;
            signal_hook::flag::register(number, flag.clone())
                .context("installing a signal handler")?;
            signal_hook::flag::register_usize(number, signal.clone(), number as usize)
                .context("installing a signal handler")?;
        }
        Ok(Interrupt { flag, signal })
    }
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let started = Instant::now();
    if args.engine.is_some()
        && (args.evaluator.net.is_some() || args.evaluator.kind == super::evaluator::EvalKind::Nnue)
    {
        bail!(
            "--eval nnue and --net are for pawnstorm's own search; --engine evaluates as it does"
        );
    }
    let limit = match (args.depth, args.nodes, args.movetime) {
        (_, Some(n), _) => Limit::Nodes(n),
        (_, _, Some(ms)) => Limit::Movetime(ms),
        (d, _, _) => Limit::Depth(d.unwrap_or(8)),
    };
    if !(args.timeout.is_finite() && args.timeout > 0.0) {
        bail!(
            "--timeout {} is not a positive number of seconds",
            args.timeout
        );
    }
    let timeout = Duration::from_secs_f64(args.timeout);
    if let Limit::Movetime(ms) = limit
        && Duration::from_millis(ms) >= timeout
    {
        bail!(
            "--movetime {ms} ms does not fit in --timeout {} s",
            args.timeout
        );
    }
    let (db, _imported) = import::open_or_import(&args.input, global.verify)?;
    let total = db.len();

    // What is already done: with --resume, the output's positions, which must be the
    // input's first ones.
    let done = if args.resume && args.output.exists() {
        check_prefix(&db, &args.output)?
    } else {
        if args.resume {
            eprintln!(
                "label: {} does not exist yet: starting from the first position",
                args.output.display()
            );
        }
        0
    };
    if done == total && args.resume {
        eprintln!(
            "label: {} already holds all {total} positions of {}: nothing to do",
            args.output.display(),
            args.input
        );
        return Ok(());
    }

    let threads = args
        .threads
        .map_or_else(
            || std::thread::available_parallelism().map_or(1, |n| n.get()),
            |n| n as usize,
        )
        .clamp(1, (total - done).div_ceil(label::CHUNK).max(1) as usize);
    let interrupt = Interrupt::install()?;
    let options = label::Options {
        keep_existing: args.keep_existing,
        interrupt: &interrupt.flag,
    };

    let mut writer = if done > 0 {
        DbWriter::append_to(&args.output)?
    } else {
        let columns = db.columns().union(Columns::SCORE);
        DbWriter::create(&args.output, db.block_size() as u32, columns, false)?
    };
    let bar = progress::positions_bar(total);
    bar.set_position(done);
    let mut failures_shown = 0;
    let mut report = |summary: &Summary| {
        for failure in &summary.failures {
            if failures_shown < SHOWN_FAILURES {
                bar.suspend(|| {
                    eprintln!(
                        "warning: {} position {}: left without a score: {}",
                        args.input, failure.index, failure.reason
                    )
                });
            }
            failures_shown += 1;
        }
    };
    let searched_by;
    let summary = {
        let mut sink = |record: &pawnstorm::position::labels::Record| writer.push(record);
        let mut progress = |n: u64| bar.inc(n);
        match &args.engine {
            None => {
                let weights = Prepared::new(weights::load(args.weights.as_deref())?);
                let network = args.evaluator.network()?;
                let evaluation = match &network {
                    Some(net) => format!(
                        ", network of {} hidden ({:08x})",
                        net.hidden(),
                        net.checksum()
                    ),
                    None => String::new(),
                };
                searched_by = format!("pawnstorm's search at {}{evaluation}", describe(limit));
                let labellers = (0..threads)
                    .map(|_| {
                        SearchLabeller::new(
                            limit,
                            args.hash as usize,
                            weights.clone(),
                            network.clone(),
                        )
                    })
                    .collect::<Option<Vec<_>>>()
                    .with_context(|| {
                        format!(
                            "cannot allocate a {} MiB hash table for each of {threads} threads",
                            args.hash
                        )
                    })?;
                label::label(
                    &db,
                    done..total,
                    labellers,
                    &options,
                    &mut sink,
                    &mut progress,
                )?
            }
            Some(command) => {
                let command: Vec<String> = command.split_whitespace().map(String::from).collect();
                let mut engine_options = vec![("Hash".to_string(), args.hash.to_string())];
                engine_options.extend(args.options.iter().cloned());
                let spec = EngineSpec {
                    command,
                    options: engine_options,
                    limit,
                    timeout,
                };
                let labellers = (0..threads)
                    .map(|_| UciLabeller::start(spec.clone()))
                    .collect::<Result<Vec<_>, String>>()
                    .map_err(anyhow::Error::msg)?;
                searched_by = format!("{} at {}", labellers[0].name(), describe(limit));
                label::label(
                    &db,
                    done..total,
                    labellers,
                    &options,
                    &mut sink,
                    &mut progress,
                )?
            }
        }
    };
    bar.finish_and_clear();
    report(&summary);
    if failures_shown > SHOWN_FAILURES {
        eprintln!(
            "warning: {} more positions left without a score",
            failures_shown - SHOWN_FAILURES
        );
    }

    let written = done + summary.delivered;
    let seconds = started.elapsed().as_secs_f64();
    let share = if summary.working.is_zero() {
        0.0
    } else {
        100.0 * summary.searching.as_secs_f64() / summary.working.as_secs_f64()
    };
    let counts = format!(
        "{} searched by {searched_by}, {} kept their score, {} failed (no score)",
        summary.scored,
        summary.kept,
        summary.failures.len()
    );
    let rate = summary.delivered as f64 / seconds.max(1e-9);
    let resumed = if done > 0 {
        format!(" after the {done} already labelled")
    } else {
        String::new()
    };
    if summary.interrupted {
        let signal = interrupt.signal.load(Ordering::SeqCst);
        if written == 0 {
            drop(writer);
            eprintln!(
                "label: interrupted before any position was labelled: {} not written",
                args.output.display()
            );
        } else {
            writer.finish()?;
            eprintln!(
                "label: interrupted: {} holds the first {written} of {total} positions ({counts}{resumed}), \
                 {seconds:.2} s, {rate:.0} positions/s; continue with --resume",
                args.output.display()
            );
        }
        std::process::exit(128 + signal.max(1) as i32);
    }
    writer.finish()?;
    eprintln!(
        "label: {} positions ({counts}{resumed}), {seconds:.2} s, {rate:.0} positions/s, \
         {threads} threads, searching {share:.1}% of the workers' time -> {}",
        summary.delivered,
        args.output.display()
    );
    Ok(())
}

fn describe(limit: Limit) -> String {
    match limit {
        Limit::Depth(d) => format!("depth {d}"),
        Limit::Nodes(n) => format!("{n} nodes"),
        Limit::Movetime(ms) => format!("{ms} ms"),
    }
}

/// The number of positions `output` holds, after checking they are the input's first ones
/// (the same boards, in the same order).
fn check_prefix(input: &Database, output: &std::path::Path) -> Result<u64> {
    let done_db = Database::open(output)
        .with_context(|| format!("--resume: reading {}", output.display()))?;
    let done = done_db.len();
    if done > input.len() {
        bail!(
            "--resume: {} holds {done} positions, more than the input's {}: not a run on this input",
            output.display(),
            input.len()
        );
    }
    for (index, (old, new)) in done_db
        .records(0..done)
        .zip(input.records(0..done))
        .enumerate()
    {
        if old?.position != new?.position {
            bail!(
                "--resume: position {index} of {} is not the input's position {index}: not a run on this input",
                output.display()
            );
        }
    }
    Ok(done)
}
