//! `pawnstorm import`: EPD/FEN lines, PGN games and lichess evaluation lines (plain, gzip,
//! zstd or bzip2) into a position DB; also the on-the-fly import that lets `eval`,
//! `features` and `tune` take a text file where a DB is expected.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

use pawnstorm::db::{Columns, DEFAULT_BLOCK_SIZE, Database, DbError, DbWriter, Verify};
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportOptions, Source};

use super::progress;

#[derive(clap::Args)]
pub struct Args {
    /// Input files: .epd, .fen, .txt (one position a line), .pgn, .jsonl; optionally .gz,
    /// .zst or .bz2; - for stdin
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
    /// PGN: keep only games whose TimeControl base time is at least N seconds (games with
    /// an unknown time control are left out)
    #[arg(long, value_name = "N")]
    min_base_seconds: Option<u32>,
    /// Input format, if the file names do not tell
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    format: FormatArg,
    /// Positions per block (a power of two, 64 to 1048576)
    #[arg(long, default_value_t = DEFAULT_BLOCK_SIZE)]
    block_size: u32,
}

#[derive(Clone, Copy, ValueEnum)]
enum FormatArg {
    /// From the extension (a compression suffix looked through): .pgn is PGN, .jsonl and
    /// .ndjson lichess evaluations, anything else one position a line
    Auto,
    /// EPD/FEN, one position a line
    Lines,
    /// PGN games
    Pgn,
    /// lichess's evaluation database, one JSON object a line
    Jsonl,
}

/// What an import does, checked: the sources resolved, standard input at most once.
struct Config {
    sources: Vec<Source>,
    format: Option<Format>,
    options: ImportOptions,
    strict: bool,
    output: PathBuf,
    append: bool,
    block_size: u32,
}

impl Args {
    fn into_config(self) -> Result<Config> {
        let sources: Vec<Source> = self.inputs.iter().map(|a| Source::from_arg(a)).collect();
        if sources.iter().filter(|s| **s == Source::Stdin).count() > 1 {
            bail!("standard input (-) can be read only once");
        }
        Ok(Config {
            sources,
            format: match self.format {
                FormatArg::Auto => None,
                FormatArg::Lines => Some(Format::Lines),
                FormatArg::Pgn => Some(Format::Pgn),
                FormatArg::Jsonl => Some(Format::Jsonl),
            },
            options: ImportOptions {
                skip_plies: self.skip_plies,
                every: self.every,
                require_eval: self.require_eval,
                min_elo: self.min_elo,
                min_base_seconds: self.min_base_seconds,
            },
            strict: self.strict,
            output: self.output,
            append: self.append,
            block_size: self.block_size,
        })
    }
}

pub fn run(args: Args) -> Result<()> {
    let config = args.into_config()?;
    let start = Instant::now();
    let (mut writer, mut next_game_id) = if config.append && config.output.exists() {
        // Checked whatever --no-verify says: the new file gets fresh checksums, which would
        // make damage read in now look whole.
        let existing = Database::open(&config.output)?;
        let next = existing.max_game_id()?.map_or(0, |id| id.saturating_add(1));
        drop(existing);
        (DbWriter::append_to(&config.output)?, next)
    } else {
        (
            DbWriter::create(&config.output, config.block_size, Columns::NONE, false)?,
            0,
        )
    };
    let appended_to = writer.len();

    let totals = import_sources(
        &config.sources,
        config.format,
        &config.options,
        config.strict,
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
    let dropped = &totals.dropped;
    let dropped = if dropped.total() > 0 {
        let by_filter: Vec<String> = [
            ("--min-elo", dropped.min_elo),
            ("--min-base-seconds", dropped.min_base_seconds),
            ("--require-eval", dropped.require_eval),
        ]
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
    let appended = if config.append && appended_to > 0 {
        format!(", appended to {appended_to} already there")
    } else {
        String::new()
    };
    eprintln!(
        "imported {} positions{games}{dropped}, rejected {} records, {} inputs, {:.2} s, {:.0} positions/s -> {} ({total} positions{appended})",
        totals.positions,
        totals.rejected,
        config.sources.len(),
        seconds,
        totals.positions as f64 / seconds.max(1e-9),
        config.output.display(),
    );
    Ok(())
}

/// Feeds every source into `writer`, with a progress bar and a warning per rejection.
/// `format: None` takes each source's format from its name.
fn import_sources(
    sources: &[Source],
    format: Option<Format>,
    options: &ImportOptions,
    strict: bool,
    next_game_id: &mut u32,
    writer: &mut DbWriter,
) -> Result<import::Counts> {
    let sizes: Option<Vec<u64>> = sources.iter().map(import::input_size).collect();
    let bar = progress::bytes_bar(sizes.as_ref().map(|s| s.iter().sum()));
    let mut done_bytes = 0;
    let mut totals = import::Counts::default();
    for source in sources {
        let format = format.unwrap_or_else(|| source.format());
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
        totals.add(&counts);
    }
    bar.finish_and_clear();
    Ok(totals)
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
    let counts = import_sources(
        &[Source::from_arg(input)],
        None,
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
