//! `pawnstorm datagen`: self-play games at a fixed node count into a labelled position DB
//! (and optionally a PGN file).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use pawnstorm::db::{Columns, DEFAULT_BLOCK_SIZE, Database, DbWriter};
use pawnstorm::engine::search::{Engine, Syzygy};
use pawnstorm::eval::Prepared;
use pawnstorm::training::datagen::{self, Adjudication, Config, GameRecord, Summary, Termination};

use super::{progress, weights};

/// The largest ply a game may reach: plies are stored as u16, u16::MAX meaning "none".
const MAX_MAX_PLIES: u16 = 10_000;

#[derive(clap::Args)]
pub struct Args {
    /// The DB to write
    #[arg(short, long)]
    output: PathBuf,
    /// Games to play
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Add the games to the DB instead of replacing it (game ids continue after its largest)
    #[arg(long)]
    append: bool,
    /// Nodes searched per move
    #[arg(long, default_value_t = datagen::DEFAULT_NODES, value_parser = clap::value_parser!(u64).range(1..))]
    nodes: u64,
    /// Spend every search's nodes whole, as before 2026-11-29: by default no iteration is
    /// started that is forecast not to finish within --nodes (its work would be thrown
    /// away; the score and move are the last finished iteration's either way)
    #[arg(long)]
    no_forecast: bool,
    /// Random legal moves from the start position before the engine plays
    #[arg(long, default_value_t = datagen::DEFAULT_RANDOM_PLIES, value_name = "N")]
    random_plies: u16,
    /// Draw the opening again when its search score is further than this from 0 (cp)
    #[arg(long, default_value_t = datagen::DEFAULT_OPENING_WINDOW, value_name = "CP", value_parser = clap::value_parser!(i32).range(0..))]
    opening_window: i32,
    /// Games played at once, one engine each (default: the available cores)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..1025))]
    threads: Option<u32>,
    /// Hash table of each engine, in MiB. 1 by default: a search of a few thousand nodes
    /// fills a fraction of it, and a table that stays in L2 beside the network's weights
    /// made 1.13x the positions a second of 16 MiB at the same strength (docs/NNUE.md)
    #[arg(long, default_value_t = 1, value_name = "MB", value_parser = clap::value_parser!(u64).range(1..=65536))]
    hash: u64,
    /// Seed of the random openings; each game's generator mixes it with the game id
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Syzygy tables (directories separated by ':'): a game entering them ends with their result
    #[arg(long, value_name = "DIR")]
    syzygy: Option<String>,
    /// Evaluation weights of the engines (as `pawnstorm weights` writes them)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    #[command(flatten)]
    evaluator: super::evaluator::EvalArgs,
    /// Also write every game as PGN (with --append, added to the file)
    #[arg(long, value_name = "FILE")]
    pgn: Option<PathBuf>,
    /// A game reaching this ply is a draw
    #[arg(long, default_value_t = datagen::DEFAULT_MAX_PLIES, value_name = "N")]
    max_plies: u16,
    /// Adjudicate a win when |score| >= this (cp, White's view) ...
    #[arg(long, default_value_t = Adjudication::default().win_score, value_name = "CP", value_parser = clap::value_parser!(i32).range(1..))]
    win_score: i32,
    /// ... with one sign for this many consecutive plies
    #[arg(long, default_value_t = Adjudication::default().win_plies, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    win_plies: u32,
    /// Adjudicate a draw when |score| <= this (cp) ...
    #[arg(long, default_value_t = Adjudication::default().draw_score, value_name = "CP", value_parser = clap::value_parser!(i32).range(0..))]
    draw_score: i32,
    /// ... for this many consecutive plies ...
    #[arg(long, default_value_t = Adjudication::default().draw_plies, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    draw_plies: u32,
    /// ... counted from this ply on
    #[arg(long, default_value_t = Adjudication::default().draw_from_ply, value_name = "PLY")]
    draw_from_ply: u16,
}

pub fn run(args: Args) -> Result<()> {
    if args.max_plies > MAX_MAX_PLIES {
        bail!("--max-plies {} is over {MAX_MAX_PLIES}", args.max_plies);
    }
    if args.random_plies >= args.max_plies {
        bail!(
            "--random-plies {} leaves no ply to search under --max-plies {}",
            args.random_plies,
            args.max_plies
        );
    }
    let config = Config {
        nodes: args.nodes,
        forecast_nodes: !args.no_forecast,
        random_plies: args.random_plies,
        opening_window: args.opening_window,
        max_plies: args.max_plies,
        seed: args.seed,
        adjudication: Adjudication {
            win_score: args.win_score,
            win_plies: args.win_plies,
            draw_score: args.draw_score,
            draw_plies: args.draw_plies,
            draw_from_ply: args.draw_from_ply,
        },
    };
    let threads = args.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        |n| n as usize,
    );
    let threads = threads.min(args.games as usize);
    let weights = Prepared::new(weights::load(args.weights.as_deref())?);
    let engines = engines(
        threads,
        args.hash as usize,
        args.syzygy.as_deref(),
        &weights,
        args.evaluator.network()?,
    )?;

    let start = Instant::now();
    let (mut writer, first_game_id) = if args.append && args.output.exists() {
        // Locked first, then read (see import). Checked whatever --no-verify says: the new
        // file gets fresh checksums.
        let writer = DbWriter::append_to(&args.output)?;
        let existing = Database::open(&args.output)?;
        let next = match existing.max_game_id()? {
            Some(id) => id.checked_add(1).context("the DB's game ids are used up")?,
            None => 0,
        };
        (writer, next)
    } else {
        // Self-play has no clock: the one column it could never fill is left out.
        let columns = Columns::ALL.without(Columns::CLOCK);
        (
            DbWriter::create(&args.output, DEFAULT_BLOCK_SIZE, columns, false)?,
            0,
        )
    };
    // u32::MAX is the DB's "no game id".
    if u64::from(first_game_id) + u64::from(args.games) >= u64::from(u32::MAX) {
        bail!(
            "{} games after game id {first_game_id} would run out of game ids",
            args.games
        );
    }
    let appended_to = writer.len();
    let mut pgn = args
        .pgn
        .as_deref()
        .map(|path| PgnOut::start(path, args.append))
        .transpose()?;

    let bar = progress::games_bar(u64::from(args.games));
    let mut positions = 0u64;
    let mut text = String::new();
    let summary = datagen::generate(engines, &config, first_game_id, args.games, |game| {
        write_game(&game, &mut writer, pgn.as_mut(), &mut text)?;
        positions += game.records.len() as u64;
        let seconds = start.elapsed().as_secs_f64().max(1e-9);
        bar.inc(1);
        bar.set_message(format!(
            "{positions} positions, {:.0} positions/s",
            positions as f64 / seconds
        ));
        anyhow::Ok(())
    })?;
    bar.finish_and_clear();
    let total = writer.finish()?;
    if let Some(pgn) = pgn {
        pgn.finish()?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let appended = if appended_to > 0 {
        format!(", appended to {appended_to} already there")
    } else {
        String::new()
    };
    eprintln!(
        "{}, {seconds:.2} s, {:.0} positions/s -> {} ({total} positions{appended})",
        describe(&summary, first_game_id),
        summary.positions as f64 / seconds.max(1e-9),
        args.output.display(),
    );
    Ok(())
}

/// One engine per thread, each with its own tables (a probe keeps per-table state).
fn engines(
    threads: usize,
    hash_mb: usize,
    syzygy: Option<&str>,
    weights: &Prepared,
    network: Option<std::sync::Arc<pawnstorm::nnue::Network>>,
) -> Result<Vec<Engine>> {
    let mut engines = Vec::with_capacity(threads);
    for _ in 0..threads {
        let mut engine = Engine::new(1);
        engine.set_weights(weights.clone());
        engine.set_network(network.clone());
        if !engine.resize_hash(hash_mb) {
            bail!("cannot allocate a {hash_mb} MiB hash table for each of {threads} threads");
        }
        if let Some(dir) = syzygy {
            let tables = Syzygy::open(dir)
                .with_context(|| format!("Syzygy tables in {dir}"))?
                .with_context(|| format!("no Syzygy tables in {dir}"))?;
            engine.set_syzygy(Some(tables));
        }
        engines.push(engine);
    }
    Ok(engines)
}

fn write_game(
    game: &GameRecord,
    writer: &mut DbWriter,
    pgn: Option<&mut PgnOut>,
    text: &mut String,
) -> Result<()> {
    for record in &game.records {
        writer.push(record)?;
    }
    if let Some(pgn) = pgn {
        text.clear();
        game.write_pgn(text);
        pgn.write(text)?;
    }
    Ok(())
}

/// `40 games (ids 0..39), 3120 positions: 1-0 12, 1/2-1/2 20, 0-1 8; checkmate 5, ...`
fn describe(summary: &Summary, first_game_id: u32) -> String {
    let ids = match summary.games {
        0 => String::new(),
        n => format!(
            " (ids {first_game_id}..{})",
            u64::from(first_game_id) + n - 1
        ),
    };
    let ends: Vec<String> = Termination::ALL
        .iter()
        .filter(|&&t| summary.count(t) > 0)
        .map(|&t| format!("{} {}", t.name(), summary.count(t)))
        .collect();
    let [white, draws, black] = summary.results;
    format!(
        "played {} games{ids}, {} positions, average {:.1} positions a game: 1-0 {white}, 1/2-1/2 {draws}, 0-1 {black}; {}",
        summary.games,
        summary.positions,
        summary.positions as f64 / summary.games.max(1) as f64,
        ends.join(", "),
    )
}

/// The PGN file, written beside the target and renamed into place when complete (after
/// the DB), as the DB is; with `append`, the old file's games come first.
struct PgnOut {
    path: PathBuf,
    temp: tempfile::NamedTempFile,
    pending: pawnstorm::io::durable::Pending,
    out: io::BufWriter<File>,
}

impl PgnOut {
    fn start(path: &Path, append: bool) -> Result<PgnOut> {
        let context = || format!("PGN output {}", path.display());
        let (temp, pending) =
            pawnstorm::io::durable::temp_file_for(path, ".pgn-", ".tmp").with_context(context)?;
        let mut out = io::BufWriter::new(temp.reopen().with_context(context)?);
        if append && path.exists() {
            let mut old = File::open(path).with_context(context)?;
            io::copy(&mut old, &mut out).with_context(context)?;
        }
        Ok(PgnOut {
            path: path.to_path_buf(),
            pending,
            temp,
            out,
        })
    }

    fn write(&mut self, text: &str) -> Result<()> {
        self.out
            .write_all(text.as_bytes())
            .with_context(|| format!("PGN output {}", self.path.display()))
    }

    fn finish(mut self) -> Result<()> {
        let context = || format!("PGN output {}", self.path.display());
        self.out.flush().with_context(context)?;
        self.out.get_ref().sync_all().with_context(context)?;
        let path = self.path.clone();
        self.pending
            .commit(|| self.temp.persist(&path))
            .map_err(|e| e.error)
            .with_context(|| format!("PGN output {}", path.display()))?;
        pawnstorm::io::durable::sync_parent_dir(&path)
            .with_context(|| format!("PGN output {}", path.display()))?;
        Ok(())
    }
}
