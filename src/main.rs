//! The `pawnstorm` command line: a thin layer that turns arguments into calls of the library.

use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use clap::{Parser, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use pawnstorm::Position;
use pawnstorm::db::{Columns, DEFAULT_BLOCK_SIZE, Database, DbError, DbWriter};
use pawnstorm::eval::batch::{self as eval_batch, BREAKDOWN_WIDTH, breakdown_names};
use pawnstorm::eval::terms::Term;
use pawnstorm::eval::{self, Prepared, Weights};
use pawnstorm::features;
use pawnstorm::fen::{self, FenError};
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportOptions, Source};
use pawnstorm::labels;
use pawnstorm::movegen::Board;
use pawnstorm::perft;
use pawnstorm::table::{ColumnType, TableWriter};

#[derive(Parser)]
#[command(
    name = "pawnstorm",
    version,
    about = "Bulk chess-position evaluation over memory-mapped bitboards"
)]
struct Cli {
    /// Run batch kernels one position at a time instead of in SIMD lanes (for comparisons)
    #[arg(long, global = true)]
    scalar: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the UCI engine loop (also what `pawnstorm` with no arguments does)
    Uci,
    /// Search a fixed set of positions to a fixed depth: nodes (a signature), nps, pawn hash hits
    Bench {
        /// Search depth
        depth: Option<i32>,
    },
    /// Import EPD/FEN lines and PGN games into a position DB (.psdb)
    Import(ImportArgs),
    /// Describe a position DB: positions, blocks, columns, size
    Info {
        /// The DB to describe
        db: PathBuf,
    },
    /// Write a DB's positions as EPD lines (six-field FEN, labels as operations)
    Export {
        /// The DB to read
        db: PathBuf,
        /// Output file (standard output if not given)
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Positions A..B (half-open, 0-based; A.. and ..B also work)
        #[arg(long, value_parser = parse_range)]
        range: Option<Range<u64>>,
    },
    /// Compute per-position features (pawn-structure masks, king distances) into .npy or .csv
    Features(FeaturesArgs),
    /// Evaluate every position of a DB or EPD/FEN file, or one position in detail (--fen)
    Eval(EvalArgs),
    /// Print the evaluation weights in the --weights file format (the defaults, or FILE's)
    Weights {
        /// Read these weights instead of the compiled-in defaults
        #[arg(long, value_name = "FILE")]
        weights: Option<PathBuf>,
        /// Write to this file instead of standard output
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Draw a position: from a FEN, or position N of a DB
    Show {
        /// A FEN (quoted), or a DB path
        target: String,
        /// Which position of the DB (0-based)
        #[arg(long, default_value_t = 0)]
        index: u64,
    },
    /// Count the leaf nodes of the legal move tree (move generator test), or run a suite
    Perft(PerftArgs),
}

#[derive(clap::Args)]
struct PerftArgs {
    /// Plies to count
    #[arg(required_unless_present = "epd", conflicts_with = "epd")]
    depth: Option<u32>,
    /// The position (default: the start position)
    #[arg(long, conflicts_with = "epd")]
    fen: Option<String>,
    /// One `move: count` line per root move, as Stockfish's `go perft` prints
    #[arg(long, conflicts_with = "epd")]
    divide: bool,
    /// Castling as the king taking its rook (e1h1), as UCI_Chess960; the default is e1g1,
    /// unless the position's castling rights are not on standard squares
    #[arg(long, conflicts_with = "epd")]
    chess960: bool,
    /// A perft suite: `FEN ;D1 20 ;D2 400` lines, or `id`/`epd`/`perft N COUNT` blocks
    #[arg(long, value_name = "SUITE")]
    epd: Option<PathBuf>,
    /// With --epd: skip depths whose expected count is above N (default: run all)
    #[arg(long, value_name = "N", requires = "epd")]
    max_nodes: Option<u64>,
}

#[derive(clap::Args)]
struct ImportArgs {
    /// Input files: .epd, .fen, .txt (one position a line), .pgn; optionally .gz; - for stdin
    #[arg(required = true)]
    inputs: Vec<String>,
    /// The DB to write
    #[arg(short, long)]
    output: PathBuf,
    /// Add to the DB instead of replacing it
    #[arg(long)]
    append: bool,
    /// Stop at the first bad line or game (nothing is written)
    #[arg(long)]
    strict: bool,
    /// PGN: leave out the first N plies of each game
    #[arg(long, default_value_t = 0, value_name = "N")]
    skip_plies: u32,
    /// PGN: keep every K-th position
    #[arg(long, default_value_t = 1, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    every: u32,
    /// Input format, if the file names do not tell
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Positions per block (a power of two, 64 to 1048576)
    #[arg(long, default_value_t = DEFAULT_BLOCK_SIZE)]
    block_size: u32,
}

#[derive(clap::Args)]
struct FeaturesArgs {
    /// A DB, or an EPD/FEN/PGN file (imported on the fly)
    input: String,
    /// Which features
    #[arg(long, value_enum, default_value_t = FeatureKind::Masks)]
    kind: FeatureKind,
    /// Output: .npy (a structured array, column names included) or .csv
    #[arg(short, long)]
    output: PathBuf,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(clap::Args)]
struct EvalArgs {
    /// A position DB, or EPD/FEN lines ('-' for standard input)
    #[arg(required_unless_present = "fen")]
    input: Option<String>,
    /// Evaluate this one position and print every term
    #[arg(long, conflicts_with_all = ["input", "output", "terms", "threads"])]
    fen: Option<String>,
    /// Write the scores to this .npy or .csv file
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Add each term's mg, eg and final value, the phase, the scale and the rule
    #[arg(long, requires = "output")]
    terms: bool,
    /// Point of view of the scores
    #[arg(long, value_enum, default_value_t = Pov::White)]
    pov: Pov,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    /// Evaluation weights file (as `pawnstorm weights` writes it)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pov {
    /// White's point of view
    White,
    /// The side to move's
    Stm,
}

#[derive(Clone, Copy, ValueEnum)]
enum FeatureKind {
    /// Pawn-structure masks of both colours and king distances to passed pawns
    Masks,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// From the extension: .pgn is PGN, anything else one position a line
    Auto,
    /// EPD/FEN, one position a line
    Lines,
    /// PGN games
    Pgn,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        None | Some(Command::Uci) => {
            pawnstorm::uci::run();
            Ok(())
        }
        Some(Command::Bench { depth }) => run_bench(depth),
        Some(command) => run_command(command, cli.scalar),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run_bench(depth: Option<i32>) -> Result<()> {
    let depth = depth.unwrap_or(pawnstorm::search::bench::DEFAULT_DEPTH);
    let result = pawnstorm::search::bench::run(depth, |i, nodes| {
        eprintln!("position {:>2}: {nodes} nodes", i + 1);
    })?;
    println!(
        "{} positions, depth {depth}: {} nodes, {:.2} s, {} nps, pawn hash hit rate {:.1}%",
        result.positions,
        result.nodes,
        result.seconds,
        result.nps(),
        100.0 * result.pawn_hit_rate()
    );
    println!("Nodes searched: {}", result.nodes);
    Ok(())
}

fn run_command(command: Command, scalar: bool) -> Result<()> {
    let cli_scalar = scalar;
    match command {
        Command::Uci | Command::Bench { .. } => unreachable!("dispatched above"),
        Command::Import(args) => run_import(args),
        Command::Info { db } => run_info(&db),
        Command::Export { db, output, range } => run_export(&db, output.as_deref(), range),
        Command::Features(args) => run_features(args, cli_scalar),
        Command::Eval(args) => run_eval(args, cli_scalar),
        Command::Weights { weights, output } => run_weights(weights.as_deref(), output.as_deref()),
        Command::Show { target, index } => run_show(&target, index),
        Command::Perft(args) => run_perft(args),
    }
}

fn parse_range(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a range like 10..20"))?;
    let number = |s: &str, default: u64| {
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse::<u64>()
                .map_err(|_| format!("{s:?} is not a position number"))
        }
    };
    let range = number(start, 0)?..number(end, u64::MAX)?;
    if range.start > range.end {
        return Err(format!("range {text:?} ends before it starts"));
    }
    Ok(range)
}

fn progress_bar(total: Option<u64>) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total).with_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} ({eta}) {msg}",
            )
            .expect("valid template"),
        ),
        None => ProgressBar::new_spinner().with_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bytes} {msg}")
                .expect("valid template"),
        ),
    };
    if io::stderr().is_terminal() {
        bar.set_draw_target(ProgressDrawTarget::stderr_with_hz(5));
        bar.enable_steady_tick(Duration::from_millis(200));
    } else {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar
}

fn run_import(args: ImportArgs) -> Result<()> {
    let sources: Vec<Source> = args.inputs.iter().map(|a| Source::from_arg(a)).collect();
    if sources.iter().filter(|s| **s == Source::Stdin).count() > 1 {
        bail!("standard input (-) can be read only once");
    }
    let options = ImportOptions {
        skip_plies: args.skip_plies,
        every: args.every,
    };
    let start = Instant::now();
    let (mut writer, mut next_game_id) = if args.append && args.output.exists() {
        let existing = Database::open(&args.output)?;
        let next = existing.max_game_id()?.map_or(0, |id| id.saturating_add(1));
        drop(existing);
        (DbWriter::append_to(&args.output)?, next)
    } else {
        (
            DbWriter::create(&args.output, args.block_size, Columns::NONE, false)?,
            0,
        )
    };
    let appended_to = writer.len();

    let totals = import_sources(
        &sources,
        args.format,
        &options,
        args.strict,
        &mut next_game_id,
        &mut writer,
    )?;
    let total = writer.finish()?;
    debug_assert_eq!(total, appended_to + totals.positions);
    let seconds = start.elapsed().as_secs_f64();
    let games = if totals.games > 0 {
        format!(" from {} games", totals.games)
    } else {
        String::new()
    };
    let appended = if args.append && appended_to > 0 {
        format!(", appended to {appended_to} already there")
    } else {
        String::new()
    };
    eprintln!(
        "imported {} positions{games}, rejected {} records, {} inputs, {:.2} s, {:.0} positions/s -> {} ({total} positions{appended})",
        totals.positions,
        totals.rejected,
        sources.len(),
        seconds,
        totals.positions as f64 / seconds.max(1e-9),
        args.output.display(),
    );
    Ok(())
}

/// Feeds every source into `writer`, with a progress bar and a warning per rejection.
fn import_sources(
    sources: &[Source],
    format: FormatArg,
    options: &ImportOptions,
    strict: bool,
    next_game_id: &mut u32,
    writer: &mut DbWriter,
) -> Result<import::Counts> {
    let sizes: Option<Vec<u64>> = sources.iter().map(import::input_size).collect();
    let bar = progress_bar(sizes.as_ref().map(|s| s.iter().sum()));
    let mut done_bytes = 0;
    let mut totals = import::Counts::default();
    for source in sources {
        let format = match format {
            FormatArg::Auto => source.format(),
            FormatArg::Lines => Format::Lines,
            FormatArg::Pgn => Format::Pgn,
        };
        bar.set_message(source.name());
        let counts = import::import(
            source,
            format,
            options,
            next_game_id,
            &mut Handlers {
                record: &mut |record| writer.push(record),
                reject: &mut |rejection| {
                    if strict {
                        return AfterRejection::Stop;
                    }
                    bar.suspend(|| eprintln!("warning: skipped {rejection}"));
                    AfterRejection::Continue
                },
                progress: &mut |bytes| bar.set_position(done_bytes + bytes),
            },
        )?;
        done_bytes += import::input_size(source).unwrap_or(0);
        totals.positions += counts.positions;
        totals.rejected += counts.rejected;
        totals.games += counts.games;
    }
    bar.finish_and_clear();
    Ok(totals)
}

/// Opens `input` as a DB, or, if it is not one, imports it (EPD/FEN/PGN) into a DB in a
/// temporary directory that lives as long as the returned guard.
fn open_or_import(input: &str) -> Result<(Database, Option<tempfile::TempDir>)> {
    if input != "-" {
        match Database::open(input) {
            Ok(db) => return Ok((db, None)),
            Err(DbError::NotADatabase { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let dir = tempfile::tempdir().context("temporary directory for the imported positions")?;
    let path = dir.path().join("input.psdb");
    let mut writer = DbWriter::create(&path, DEFAULT_BLOCK_SIZE, Columns::NONE, false)?;
    let counts = import_sources(
        &[Source::from_arg(input)],
        FormatArg::Auto,
        &ImportOptions::default(),
        false,
        &mut 0,
        &mut writer,
    )?;
    writer.finish()?;
    if counts.rejected > 0 {
        eprintln!(
            "warning: {} records of {input} were rejected (see above)",
            counts.rejected
        );
    }
    Ok((Database::open(&path)?, Some(dir)))
}

fn run_features(args: FeaturesArgs, scalar: bool) -> Result<()> {
    let start = Instant::now();
    let (db, _imported) = open_or_import(&args.input)?;
    let path = if scalar {
        features::Path::Scalar
    } else {
        features::Path::Simd8
    };
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting worker threads")?;
    let mut columns = vec![("index".to_string(), ColumnType::U64)];
    columns.extend(
        features::column_names()
            .into_iter()
            .enumerate()
            .map(|(i, name)| {
                let kind = if features::is_distance_column(i) {
                    ColumnType::U16
                } else {
                    ColumnType::U64
                };
                (name, kind)
            }),
    );
    let mut table = TableWriter::create(&args.output, &columns, db.len())?;
    let bar = progress_bar(None);
    let n = db.block_size();
    let compute_start = Instant::now();
    let mut values = vec![0u64; columns.len()];
    pool.install(|| {
        features::for_each_block(&db, path, 4 * threads, |block, out, len| {
            for row in 0..len {
                values[0] = (block * n + row) as u64;
                for (c, value) in values[1..].iter_mut().enumerate() {
                    *value = out[c * n + row];
                }
                table.write_row(&values).map_err(|e| DbError::Invalid {
                    path: args.output.clone(),
                    what: e.to_string(),
                })?;
            }
            bar.set_position(((block + 1) * n).min(db.len() as usize) as u64);
            Ok(())
        })
    })?;
    bar.finish_and_clear();
    let rows = table.finish()?;
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "features: {rows} positions, {seconds:.2} s ({:.2} s computing and writing), {:.0} positions/s, path {}, {threads} threads -> {}",
        compute_start.elapsed().as_secs_f64(),
        rows as f64 / seconds.max(1e-9),
        path.describe(),
        args.output.display()
    );
    Ok(())
}

fn load_weights(path: Option<&Path>) -> Result<Weights> {
    Ok(match path {
        Some(path) => Weights::read(path)?,
        None => Weights::default(),
    })
}

fn run_weights(weights: Option<&Path>, output: Option<&Path>) -> Result<()> {
    let text = load_weights(weights)?.to_text();
    match output {
        Some(path) => {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let mut temp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("{}: creating a temporary file", dir.display()))?;
            temp.write_all(text.as_bytes())
                .with_context(|| format!("{}: writing", path.display()))?;
            temp.persist(path)
                .with_context(|| format!("{}: renaming into place", path.display()))?;
        }
        None => {
            io::stdout().write_all(text.as_bytes())?;
        }
    }
    Ok(())
}

fn positions_bar(total: u64) -> ProgressBar {
    let bar = progress_bar(None);
    bar.set_length(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {wide_bar} {human_pos}/{human_len} positions ({eta})",
        )
        .expect("valid template"),
    );
    bar
}

fn run_eval(args: EvalArgs, scalar: bool) -> Result<()> {
    let start = Instant::now();
    let prepared = Prepared::new(load_weights(args.weights.as_deref())?);
    if let Some(text) = &args.fen {
        let position = fen::parse_fen(text).map_err(|e| fen_error_with_caret(text, &e))?;
        print_breakdown(&position, &eval::breakdown(&prepared, &position));
        return Ok(());
    }
    let input = args.input.as_deref().unwrap_or("-");
    let (db, _imported) = open_or_import(input)?;
    let path = if scalar {
        features::Path::Scalar
    } else {
        features::Path::native()
    };
    let threads = args
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting worker threads")?;
    let bar = positions_bar(db.len());
    let n = db.block_size();
    let stm_pov = args.pov == Pov::Stm;
    // The side to move's point of view turns every score-like value round for Black.
    let turn = |block: &pawnstorm::db::Block<'_>, row: usize, value: i32| {
        if stm_pov && block.side_to_move[row] != 0 {
            -value
        } else {
            value
        }
    };
    let count = db.len();
    match &args.output {
        Some(output) => {
            let width = if args.terms { BREAKDOWN_WIDTH } else { 1 };
            let mut columns = Vec::new();
            if args.terms
                || output
                    .extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("csv"))
            {
                columns.push(("index".to_string(), ColumnType::U64));
            }
            if args.terms {
                columns.extend(breakdown_names().into_iter().map(|n| (n, ColumnType::I32)));
            } else {
                columns.push(("score".to_string(), ColumnType::I32));
            }
            let with_index = columns[0].0 == "index";
            let mut table = TableWriter::create(output, &columns, count)?;
            let mut values = vec![0u64; columns.len()];
            // Columns of a breakdown row that are scores (turned round for --pov stm).
            let is_score: Vec<bool> = (0..width).map(|c| c == 0 || c >= 4).collect();
            pool.install(|| {
                eval_batch::for_each_block_ordered(
                    &db,
                    4 * threads,
                    width,
                    |block, out| {
                        if args.terms {
                            eval_batch::rows_breakdown(path, &prepared, block, 0..n, out);
                        } else {
                            eval_batch::rows_scores(path, &prepared, block, 0..n, out);
                        }
                        for row in 0..block.len {
                            for (c, value) in out[row * width..][..width].iter_mut().enumerate() {
                                if is_score[c] {
                                    *value = turn(block, row, *value);
                                }
                            }
                        }
                    },
                    |block, out, len| {
                        for row in 0..len {
                            let mut at = 0;
                            if with_index {
                                values[0] = (block * n + row) as u64;
                                at = 1;
                            }
                            for (slot, value) in
                                values[at..].iter_mut().zip(&out[row * width..][..width])
                            {
                                *slot = *value as i64 as u64;
                            }
                            table.write_row(&values)?;
                        }
                        bar.set_position(((block + 1) * n).min(count as usize) as u64);
                        Ok(())
                    },
                )
            })?;
            bar.finish_and_clear();
            table.finish()?;
            eval_summary(count, start, path, threads, Some(output));
        }
        None => {
            let scores = pool.install(|| {
                eval_batch::db_scores_with(&db, path, &prepared, |block, scores| {
                    for (row, score) in scores.iter_mut().enumerate().take(block.len) {
                        *score = turn(block, row, *score);
                    }
                    bar.inc(block.len as u64);
                })
            })?;
            bar.finish_and_clear();
            eval_summary(count, start, path, threads, None);
            print_histogram(&scores, args.pov);
        }
    }
    Ok(())
}

fn eval_summary(
    count: u64,
    start: Instant,
    path: features::Path,
    threads: usize,
    output: Option<&Path>,
) {
    let seconds = start.elapsed().as_secs_f64();
    let target = output.map_or(String::new(), |p| format!(" -> {}", p.display()));
    eprintln!(
        "eval: {count} positions, {seconds:.2} s, {:.0} positions/s, path {}, {threads} threads{target}",
        count as f64 / seconds.max(1e-9),
        path.describe(),
    );
}

fn print_histogram(scores: &[i32], pov: Pov) {
    if scores.is_empty() {
        return;
    }
    let edges = [-1000, -500, -300, -100, -50, 50, 100, 300, 500, 1000];
    let mut counts = [0u64; 11];
    for &score in scores {
        counts[edges.partition_point(|&edge| edge <= score)] += 1;
    }
    let sum: i64 = scores.iter().map(|&s| s as i64).sum();
    let (min, max) = (
        scores.iter().min().copied().unwrap_or(0),
        scores.iter().max().copied().unwrap_or(0),
    );
    let view = match pov {
        Pov::White => "White's view",
        Pov::Stm => "side to move's view",
    };
    println!(
        "scores (centipawns, {view}): mean {:.1}, min {min}, max {max}",
        sum as f64 / scores.len() as f64
    );
    let widest = counts.iter().copied().max().unwrap_or(1).max(1);
    for (i, &c) in counts.iter().enumerate() {
        let label = match i {
            0 => format!("       < {}", edges[0]),
            10 => format!("      >= {}", edges[9]),
            _ => format!("{:>6} .. {:<5}", edges[i - 1], edges[i] - 1),
        };
        let bar = "#".repeat(((c * 50).div_ceil(widest)) as usize);
        println!(
            "{label:>16} {c:>10} {:>5.1}% {bar}",
            100.0 * c as f64 / scores.len() as f64
        );
    }
}

fn print_breakdown(position: &Position, b: &eval::Breakdown) {
    let pawns = |cp: i32| format!("{:+.2}", cp as f64 / 100.0);
    println!("{position}");
    println!("      Term               |    MG      EG   |  Final");
    println!(" ------------------------+-----------------+--------");
    for term in Term::ALL {
        let i = term as usize;
        println!(
            " {:<23} | {:>7} {:>7} | {:>6}",
            term.name(),
            pawns(b.mg[i]),
            pawns(b.eg[i]),
            pawns(b.term_final(term))
        );
    }
    println!(" ------------------------+-----------------+--------");
    println!(
        " {:<23} | {:>7} {:>7} |",
        "total",
        pawns(b.total_mg),
        pawns(b.total_eg)
    );
    let f = &b.finished;
    println!(
        "\nPhase {}/{} (24 = middlegame), scale {}/64, rule: {}",
        f.phase,
        pawnstorm::eval::endgame::MAX_PHASE,
        f.scale,
        f.rule.name()
    );
    let stm = if position.side_to_move() == pawnstorm::Color::White {
        f.score
    } else {
        -f.score
    };
    println!(
        "Final evaluation: {} (White side) [{} cp]; {} for the side to move",
        pawns(f.score),
        f.score,
        pawns(stm)
    );
}

fn run_info(path: &Path) -> Result<()> {
    let db = Database::open(path)?;
    db.verify()?;
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("{}", path.display()))?
        .len();
    let header = db.header();
    let mut columns = vec![
        "pawns",
        "knights",
        "bishops",
        "rooks",
        "queens",
        "kings",
        "white",
        "black",
        "side_to_move",
        "castling",
        "en_passant",
        "halfmove_clock",
        "fullmove_number",
    ];
    columns.extend(db.columns().names());
    let mut out = io::stdout().lock();
    writeln!(out, "file:               {}", path.display())?;
    writeln!(out, "format version:     {}", header.version)?;
    writeln!(out, "positions:          {}", db.len())?;
    writeln!(
        out,
        "blocks:             {} of {} positions ({} bytes each)",
        db.block_count(),
        db.block_size(),
        header.block_bytes
    )?;
    writeln!(out, "columns:            {}", columns.join(", "))?;
    writeln!(out, "bytes:              {bytes}")?;
    if db.is_empty() {
        writeln!(out, "bytes per position: -")?;
    } else {
        writeln!(
            out,
            "bytes per position: {:.2}",
            bytes as f64 / db.len() as f64
        )?;
    }
    writeln!(
        out,
        "checksum:           ok (crc32 {:08x})",
        header.payload_crc
    )?;
    Ok(())
}

fn run_export(path: &Path, output: Option<&Path>, range: Option<Range<u64>>) -> Result<()> {
    let db = Database::open(path)?;
    db.verify()?;
    let range = range.unwrap_or(0..db.len());
    if range.start > db.len() {
        bail!(
            "range starts at {} but {} holds {} positions",
            range.start,
            path.display(),
            db.len()
        );
    }
    let write_all = |sink: &mut dyn Write| -> Result<u64> {
        let mut line = String::with_capacity(128);
        let mut written = 0;
        for record in db.records(range.clone()) {
            let record = record?;
            line.clear();
            labels::write_line(&record, &mut line);
            line.push('\n');
            sink.write_all(line.as_bytes())?;
            written += 1;
        }
        sink.flush()?;
        Ok(written)
    };
    let start = Instant::now();
    let written = match output {
        None => {
            let stdout = io::stdout().lock();
            match write_all(&mut BufWriter::new(stdout)) {
                // A closed pipe (`| head`) is the reader's choice, not a failure.
                Err(e)
                    if e.downcast_ref::<io::Error>()
                        .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe) =>
                {
                    return Ok(());
                }
                other => other?,
            }
        }
        Some(output) => {
            let dir = match output.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let temp = tempfile::NamedTempFile::new_in(dir)
                .with_context(|| format!("{}", output.display()))?;
            let mut sink = BufWriter::new(temp.as_file());
            let written =
                write_all(&mut sink).with_context(|| format!("writing {}", output.display()))?;
            drop(sink);
            temp.persist(output)
                .with_context(|| format!("{}", output.display()))?;
            written
        }
    };
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "exported {written} positions, {seconds:.2} s, {:.0} positions/s",
        written as f64 / seconds.max(1e-9)
    );
    Ok(())
}

fn run_show(target: &str, index: u64) -> Result<()> {
    let path = Path::new(target);
    // A FEN always has spaces between its fields; a path without one that names no file
    // is a missing DB, not a bad FEN.
    if !path.exists() && !target.contains(' ') {
        bail!("{target}: no such file (and not a FEN: a FEN has space-separated fields)");
    }
    let position = if path.is_file() {
        let db = Database::open(path)?;
        if index >= db.len() {
            bail!(
                "{} holds {} positions; there is no index {index}",
                path.display(),
                db.len()
            );
        }
        let record = db.record(index)?;
        let labels = record.labels;
        let mut notes = Vec::new();
        if let Some(result) = labels.result {
            notes.push(format!("result {}", result.as_pgn()));
        }
        if let Some(score) = labels.score {
            notes.push(format!("score {score} cp (White's view)"));
        }
        if let Some(game) = labels.game_id {
            notes.push(format!("game {game}"));
        }
        if let Some(ply) = labels.ply {
            notes.push(format!("ply {ply}"));
        }
        println!("{}[{index}] {}", path.display(), notes.join(", "));
        record.position
    } else {
        fen::parse_fen(target).map_err(|e| fen_error_with_caret(target, &e))?
    };
    println!("{position}");
    Ok(())
}

fn run_perft(args: PerftArgs) -> Result<()> {
    pawnstorm_kernels::attacks::init();
    if let Some(suite) = &args.epd {
        return run_perft_suite(suite, args.max_nodes.unwrap_or(u64::MAX));
    }
    let depth = args.depth.context("a depth is required without --epd")?;
    let board = match &args.fen {
        Some(text) => Board::from_fen(text).map_err(|e| fen_error_with_caret(text, &e))?,
        None => Board::startpos(),
    };
    let chess960 = args.chess960 || board.has_chess960_castling();
    let started = Instant::now();
    let divided = args.divide.then(|| perft::divide(&board, depth));
    let nodes = match &divided {
        Some(moves) if depth > 0 => moves.iter().map(|(_, count)| count).sum(),
        _ => perft::perft(&board, depth),
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut out = BufWriter::new(io::stdout().lock());
    perft::write_perft_report(
        &mut out,
        divided.as_deref().map(|moves| (moves, chess960)),
        nodes,
    )
    .and_then(|()| out.flush())
    .context("writing to standard output")?;
    eprintln!(
        "perft {depth}: {nodes} nodes, {seconds:.3} s, {:.1} Mnps",
        perft::mnps(nodes, seconds)
    );
    Ok(())
}

fn run_perft_suite(path: &Path, max_nodes: u64) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading perft suite {}", path.display()))?;
    let suite = perft::parse_suite(&text);
    let name = path.display();
    for bad in &suite.bad_lines {
        eprintln!("{name}:{}: {}: {:?}", bad.line, bad.reason, bad.text);
    }
    for invalid in &suite.invalid_positions {
        eprintln!(
            "{name}:{}: skipped, position rejected: {}: {:?}",
            invalid.line, invalid.reason, invalid.text
        );
    }
    let summary = perft::run_suite(&suite, max_nodes, |m| {
        println!(
            "mismatch {name}:{}: {} depth {} expected {} got {}",
            m.line, m.fen, m.depth, m.expected, m.got
        );
    });
    println!(
        "{} positions, {} checks run, {} skipped (over {} nodes), {} invalid positions skipped, {} bad lines, {} mismatches, {:.2} s, {:.1} Mnps",
        summary.positions,
        summary.checks_run,
        summary.skipped,
        if max_nodes == u64::MAX {
            "no limit".to_string()
        } else {
            max_nodes.to_string()
        },
        suite.invalid_positions.len(),
        suite.bad_lines.len(),
        summary.mismatches,
        summary.seconds,
        perft::mnps(summary.nodes, summary.seconds),
    );
    if summary.mismatches > 0 || !suite.bad_lines.is_empty() {
        bail!(
            "{name}: {} mismatches, {} bad lines",
            summary.mismatches,
            suite.bad_lines.len()
        );
    }
    Ok(())
}

/// The error, the FEN, and a caret under the offending character.
fn fen_error_with_caret(text: &str, error: &FenError) -> anyhow::Error {
    let caret = " ".repeat(error.column.saturating_sub(1));
    anyhow!("invalid FEN: {error}\n  {text}\n  {caret}^")
}
