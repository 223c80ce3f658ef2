//! `pawnstorm report`: a DB's one-page HTML report (see `pawnstorm::pictures::report`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};

use pawnstorm::db::Database;
use pawnstorm::eval::Prepared;

use super::{Global, output, progress, weights};

#[derive(clap::Args)]
pub struct Args {
    /// The position DB
    db: PathBuf,
    /// The HTML page to write
    #[arg(short, long, value_name = "OUT.html")]
    output: PathBuf,
    /// Report on about N positions (evenly spaced blocks) instead of all
    #[arg(long, value_name = "N")]
    sample: Option<u64>,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    /// Evaluation weights file (as `pawnstorm weights` writes it)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let prepared = Prepared::new(weights::load(args.weights.as_deref())?);
    let db = Database::open_with(&args.db, global.verify)?;
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let bar = progress::positions_bar(args.sample.map_or(db.len(), |n| n.min(db.len())));
    let summary = pool.install(|| {
        pawnstorm::pictures::report::summarise(&db, &prepared, args.sample, &|rows| bar.inc(rows))
    })?;
    bar.finish_and_clear();
    let page = pawnstorm::pictures::report::html(&summary, &args.db.display().to_string());
    output::write_atomically(&args.output, |sink| Ok(sink.write_all(page.as_bytes())?))?;
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "reported on {} of {} positions, {:.2} s, {:.0} positions/s, {} bytes -> {}",
        summary.positions,
        summary.in_db,
        seconds,
        summary.positions as f64 / seconds.max(1e-9),
        page.len(),
        args.output.display()
    );
    Ok(())
}
