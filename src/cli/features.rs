//! `pawnstorm features`: pawn-structure masks and king distances of every position, to .npy
//! or .csv.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;

use pawnstorm::db::DbError;
use pawnstorm::features;
use pawnstorm::table::{ColumnType, TableWriter};

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
    let bar = progress::bytes_bar(None);
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
