//! `pawnstorm export`: a DB's positions as EPD lines.

use std::io::Write;
use std::ops::Range;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};

use pawnstorm::db::Database;
use pawnstorm::eval::default_weights;
use pawnstorm::filters::{Dropped, Row};
use pawnstorm::labels;
use pawnstorm::movegen::Board;

use super::filters::FilterArgs;
use super::{Global, output, progress};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to read
    db: PathBuf,
    /// Output file (standard output if not given)
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Positions A..B (half-open, 0-based; A.. and ..B also work)
    #[arg(long, value_parser = parse_range)]
    range: Option<Range<u64>>,
    #[command(flatten)]
    filters: FilterArgs,
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

/// Positions between progress updates (a bar update per line would cost more than the line).
const PROGRESS_EVERY: u64 = 4096;

pub fn run(args: Args, global: Global) -> Result<()> {
    let path = &args.db;
    // Each block is checked as it is read: standard output may get the blocks before a
    // damaged one; a file (-o) is written only when every block was whole.
    let db = Database::open_with(path, global.verify)?;
    let range = args.range.unwrap_or(0..db.len());
    if range.start > db.len() {
        bail!(
            "range starts at {} but {} holds {} positions",
            range.start,
            path.display(),
            db.len()
        );
    }
    let filter = args.filters.filter(default_weights())?;
    let mut evaluator = filter.evaluator();
    let mut dropped = Dropped::default();
    let bar = progress::positions_bar(range.end.min(db.len()) - range.start);
    let mut write_all = |sink: &mut dyn Write| -> Result<u64> {
        let mut line = String::with_capacity(128);
        let (mut read, mut written) = (0u64, 0u64);
        for record in db.records(range.clone()) {
            let record = record?;
            read += 1;
            if read.is_multiple_of(PROGRESS_EVERY) {
                bar.inc(PROGRESS_EVERY);
            }
            if !filter.is_empty() {
                let row = Row::of_record(&record);
                let board = || Some(Board::new(record.position.clone()));
                if let Some(reason) = filter.check(&row, board, evaluator.as_mut()) {
                    dropped.add(reason);
                    continue;
                }
            }
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
    let written = match &args.output {
        None => write_all(&mut output::stdout())?,
        Some(path) => output::write_atomically(path, write_all)?,
    };
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let filtered = if filter.is_empty() {
        String::new()
    } else {
        format!(", {dropped}")
    };
    eprintln!(
        "exported {written} positions{filtered}, {seconds:.2} s, {:.0} positions/s",
        written as f64 / seconds.max(1e-9)
    );
    Ok(())
}
