//! `pawnstorm features`: pawn-structure masks and king distances of every position, to .npy
//! or .csv.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;

use pawnstorm::features;
use pawnstorm::table::TableWriter;

use super::{Global, import, progress};

#[derive(clap::Args)]
pub struct Args {
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

#[derive(Clone, Copy, ValueEnum)]
enum FeatureKind {
    /// Pawn-structure masks of both colours and king distances to passed pawns
    Masks,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let (db, _imported) = import::open_or_import(&args.input, global.verify)?;
    let path = if global.scalar {
        features::Path::Scalar
    } else {
        features::Path::native()
    };
    let threads = args.threads.unwrap_or_else(rayon::current_num_threads);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("starting worker threads")?;
    let source = features::MaskTable { db: &db, path };
    let table = TableWriter::create(&args.output, &source.columns(), db.len())?;
    let bar = progress::positions_bar(db.len());
    let compute_start = Instant::now();
    let rows =
        pool.install(|| table.fill(&source, db.block_size(), |rows| bar.inc(rows as u64)))?;
    bar.finish_and_clear();
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
