//! `pawnstorm features`: pawn-structure masks and king distances of every position, to .npy
//! or .csv.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;

use pawnstorm::db::Database;
use pawnstorm::features;
use pawnstorm::table::{ColumnType, TableSource, TableWriter};

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
    let (db, _imported) = import::open_or_import(&args.input)?;
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
    let table = TableWriter::create(&args.output, &columns, db.len())?;
    let bar = progress::positions_bar(db.len());
    let compute_start = Instant::now();
    let source = MaskTable { db: &db, path };
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

/// The masks of every position of a DB as a table: the index, then [`features::COLUMNS`]
/// values; one piece a DB block.
struct MaskTable<'a> {
    db: &'a Database,
    path: features::Path,
}

impl TableSource for MaskTable<'_> {
    /// The block's features (column-major, stride = block size), and the index of its first
    /// position.
    type Scratch = (Vec<u64>, u64);
    type Error = anyhow::Error;

    fn scratch(&self) -> Self::Scratch {
        (vec![0; features::COLUMNS * self.db.block_size()], 0)
    }

    fn compute(&self, (out, first): &mut Self::Scratch, piece: usize) -> Result<usize> {
        let block = self.db.block(piece)?;
        features::block_features(self.path, &block, out);
        *first = (piece * self.db.block_size()) as u64;
        Ok(block.len)
    }

    #[inline]
    fn value(&self, (out, first): &Self::Scratch, row: usize, column: usize) -> u64 {
        match column {
            0 => first + row as u64,
            c => out[(c - 1) * self.db.block_size() + row],
        }
    }
}
