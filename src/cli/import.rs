//! `pawnstorm import`: EPD/FEN lines, PGN games and lichess evaluation lines (plain, gzip,
//! zstd or bzip2), binpack and Parquet into a position DB; also the on-the-fly import that lets `eval`,
//! `features` and `tune` take a text file where a DB is expected.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

use pawnstorm::db::{Columns, DEFAULT_BLOCK_SIZE, Database, DbError, DbWriter, Verify};
use pawnstorm::import::lichess::{self, Speed};
use pawnstorm::import::{self, Format, ImportOptions, IntoDb, Observers, Source, import_sources};

use super::progress;

#[derive(clap::Args)]
pub struct Args {
    /// Input files: .epd, .fen, .txt (one position a line), .pgn, .jsonl, .binpack; optionally .gz,
    /// .zst or .bz2; .parquet (a FEN column, labels by the Parquet export's column names); -
    /// for stdin
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
    /// PGN: keep only games with at least one [%eval] comment (lichess analyses a game
    /// whole or not at all)
    #[arg(long)]
    require_eval: bool,
    /// PGN: keep only games where both WhiteElo and BlackElo are at least N (games with
    /// an unknown rating are left out)
    #[arg(long, value_name = "N")]
    min_elo: Option<u16>,
    /// PGN: keep only games where both WhiteElo and BlackElo are at most N (games with
    /// an unknown rating are left out)
    #[arg(long, value_name = "N")]
    max_elo: Option<u16>,
    /// PGN: keep only games whose TimeControl base time is at least N seconds (games with
    /// an unknown time control are left out)
    #[arg(long, value_name = "N")]
    min_base_seconds: Option<u32>,
    /// PGN: keep only games of these lichess speed classes, by base + 40 × increment
    /// seconds: ultrabullet (< 30), bullet (< 180), blitz (< 480), rapid (< 1500),
    /// classical, correspondence (TimeControl "-")
    #[arg(long, value_name = "CLASS,...", value_delimiter = ',', value_parser = parse_speed)]
    speed: Vec<Speed>,
    /// PGN: keep only games played on these dates, inclusive, from the UTCDate tag (else
    /// Date): 2024.01.01..2024.01.31, 2024.01.01.. or ..2024.01.31 (games with an
    /// unknown date are left out)
    #[arg(long, value_name = "A..B", value_parser = parse_dates)]
    date: Option<(u32, u32)>,
    /// PGN: keep only games whose Termination tag is one of these, case-insensitive
    /// (lichess writes Normal, Time forfeit, Abandoned, Rules infraction)
    #[arg(long, value_name = "V,...", value_delimiter = ',')]
    termination: Vec<String>,
    /// PGN: keep only rated games (an Event tag starting with "Rated", as lichess writes it)
    #[arg(long)]
    rated_only: bool,
    /// Worker threads for PGN, lichess JSONL, EPD lines and binpack blocks (default: one per
    /// core)
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    threads: Option<u32>,
    /// Input format, if the file names do not tell
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Positions per block (a power of two, 64 to 1048576)
    #[arg(long, default_value_t = DEFAULT_BLOCK_SIZE)]
    block_size: u32,
}

fn parse_speed(text: &str) -> Result<Speed, String> {
    Speed::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Speed::ALL.iter().map(|s| s.name()).collect();
        format!("{text:?} is not a speed class: {}", names.join(", "))
    })
}

fn parse_dates(text: &str) -> Result<(u32, u32), String> {
    lichess::parse_date_range(text)
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// From the extension (a compression suffix looked through): .pgn is PGN, .jsonl and
    /// .ndjson lichess evaluations, .binpack Stockfish's training data, .parquet and .pq Parquet,
    /// anything else one position a line
    Auto,
    /// EPD/FEN, one position a line
    Lines,
    /// PGN games
    Pgn,
    /// lichess's evaluation database, one JSON object a line
    Jsonl,
    /// Stockfish's .binpack training data
    Binpack,
    /// Apache Parquet with a column `fen` (any case) and optional label columns named as
    /// `export --format parquet` names them (result, score, game_id, ply, white_elo,
    /// black_elo, base_seconds, increment, move)
    Parquet,
}

impl Args {
    fn into_request(self) -> Result<IntoDb> {
        let request = IntoDb {
            sources: self.inputs.iter().map(|a| Source::from_arg(a)).collect(),
            format: match self.format {
                FormatArg::Auto => None,
                FormatArg::Lines => Some(Format::Lines),
                FormatArg::Pgn => Some(Format::Pgn),
                FormatArg::Jsonl => Some(Format::Jsonl),
                FormatArg::Binpack => Some(Format::Binpack),
                FormatArg::Parquet => Some(Format::Parquet),
            },
            options: ImportOptions {
                skip_plies: self.skip_plies,
                every: self.every,
                require_eval: self.require_eval,
                min_elo: self.min_elo,
                max_elo: self.max_elo,
                min_base_seconds: self.min_base_seconds,
                speeds: self.speed.iter().fold(0, |bits, s| bits | s.bit()),
                dates: self.date,
                terminations: self
                    .termination
                    .iter()
                    .map(|t| t.trim().to_ascii_lowercase())
                    .collect(),
                rated_only: self.rated_only,
                threads: self.threads.map(|n| n as usize),
            },
            strict: self.strict,
            output: self.output,
            append: self.append,
            block_size: self.block_size,
        };
        if let Err(problem) = request.check() {
            bail!("{problem}");
        }
        Ok(request)
    }
}

pub fn run(args: Args) -> Result<()> {
    let request = args.into_request()?;
    let start = Instant::now();
    let sizes: Option<Vec<u64>> = request.sources.iter().map(import::input_size).collect();
    let bar = progress::bytes_bar(sizes.as_ref().map(|s| s.iter().sum()));
    let imported = {
        // Bytes of the sources finished, and of the one being read.
        let done_bytes = std::cell::Cell::new(0u64);
        let current_size = std::cell::Cell::new(0u64);
        request.run(&mut Observers {
            reject: &mut |rejection| bar.suspend(|| eprintln!("warning: skipped {rejection}")),
            source: &mut |source| {
                done_bytes.set(done_bytes.get() + current_size.get());
                current_size.set(import::input_size(source).unwrap_or(0));
                bar.set_message(source.name());
            },
            progress: &mut |bytes| bar.set_position(done_bytes.get() + bytes),
        })?
    };
    bar.finish_and_clear();
    let (totals, total, appended_to) = (imported.counts, imported.total, imported.appended_to);
    let seconds = start.elapsed().as_secs_f64();
    let games = if totals.games > 0 {
        format!(" from {} games", totals.games)
    } else {
        String::new()
    };
    let dropped = &totals.dropped;
    let dropped = if dropped.total() > 0 {
        let by_filter: Vec<String> = dropped
            .by_filter()
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(filter, n)| format!("{n} {filter}"))
            .collect();
        format!(
            ", dropped {} games ({})",
            dropped.total(),
            by_filter.join(", ")
        )
    } else {
        String::new()
    };
    let appended = if request.append && appended_to > 0 {
        format!(", appended to {appended_to} already there")
    } else {
        String::new()
    };
    eprintln!(
        "imported {} positions{games}{dropped}, rejected {} records, {} inputs, {:.2} s, {:.0} positions/s -> {} ({total} positions{appended})",
        totals.positions,
        totals.rejected,
        request.sources.len(),
        seconds,
        totals.positions as f64 / seconds.max(1e-9),
        request.output.display(),
    );
    Ok(())
}

/// Opens `input` as a DB, or, if it is not one, imports it (EPD/FEN/PGN/JSONL, plain or compressed) into a DB in a
/// temporary directory that lives as long as the returned guard. A DB is opened with the
/// checksum checks `verify` asks for.
pub fn open_or_import(
    input: &str,
    verify: Verify,
) -> Result<(Database, Option<tempfile::TempDir>)> {
    if input != "-" {
        match Database::open_with(input, verify) {
            Ok(db) => return Ok((db, None)),
            Err(DbError::NotADatabase { .. }) => {}
            Err(e) => return Err(e.into()),
        }
    }
    let dir = tempfile::tempdir().context("temporary directory for the imported positions")?;
    let path = dir.path().join("input.psdb");
    let mut writer = DbWriter::create(&path, DEFAULT_BLOCK_SIZE, Columns::NONE, false)?;
    let source = Source::from_arg(input);
    let bar = progress::bytes_bar(import::input_size(&source));
    let counts = import_sources(
        std::slice::from_ref(&source),
        None,
        &ImportOptions::default(),
        false,
        &mut 0,
        &mut writer,
        &mut Observers {
            reject: &mut |rejection| bar.suspend(|| eprintln!("warning: skipped {rejection}")),
            source: &mut |source| bar.set_message(source.name()),
            progress: &mut |bytes| bar.set_position(bytes),
        },
    )?;
    bar.finish_and_clear();
    writer.finish()?;
    if counts.rejected > 0 {
        eprintln!(
            "warning: {} records of {input} were rejected (see above)",
            counts.rejected
        );
    }
    Ok((Database::open(&path)?, Some(dir)))
}
