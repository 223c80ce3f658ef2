//! `pawnstorm features`: pawn-structure masks and king distances of every position (.npy or
//! .csv), or training features with their labels (.npz): evaluation-term coefficients and
//! network input planes.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::ValueEnum;

use pawnstorm::eval::Prepared;
use pawnstorm::eval::features;
use pawnstorm::io::npz::NpzWriter;
use pawnstorm::io::table::TableWriter;
use pawnstorm::training::arrays::{self, Layout, Pov};
use pawnstorm::training::nnue::FeatureSet;

use super::filters::FilterArgs;
use super::{Global, import, progress, weights};

#[derive(clap::Args)]
pub struct Args {
    /// A DB, or an EPD/FEN/PGN/JSONL file, plain or gzip/zstd/bzip2-compressed (imported on the fly)
    input: String,
    /// Which features
    #[arg(long, value_enum, default_value_t = FeatureKind::Masks)]
    kind: FeatureKind,
    /// Output: for masks .npy (a structured array, column names included) or .csv; for
    /// terms, planes and nnue .npz (several arrays, labels included; see docs/TRAINING.md)
    #[arg(short, long)]
    output: PathBuf,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    /// Terms: write the coefficients as CSR (indptr, indices, values) instead of a dense
    /// (N, W) int16 array
    #[arg(long)]
    sparse: bool,
    /// Planes: one byte a square, (N, 12, 8, 8), instead of one u64 a board
    #[arg(long)]
    unpacked: bool,
    /// NNUE: the feature set: 768 (bullet's), halfkp, halfka_v2_hm (nnue-pytorch's), 768xKhm
    /// or 768hm:MAP (bullet's ChessBucketsMirrored, the network's king-bucketed inputs)
    #[arg(long, value_parser = parse_set)]
    set: Option<FeatureSet>,
    /// Evaluation weights file: terms writes these weights (and the scale they pick); the
    /// quiet filter evaluates with them
    #[arg(long)]
    weights: Option<PathBuf>,
    #[command(flatten)]
    filters: FilterArgs,
}

#[derive(Clone, Copy, ValueEnum)]
enum FeatureKind {
    /// Pawn-structure masks of both colours and king distances to passed pawns
    Masks,
    /// Every evaluation weight's count per position, with phase, scale and endgame rules
    Terms,
    /// The 12 piece boards and the pawn-structure masks, as network input planes
    Planes,
    /// NNUE input feature indices of both perspectives (side to move first), with the
    /// score and result from the side to move's view (--set picks the feature set)
    Nnue,
}

fn parse_set(text: &str) -> Result<FeatureSet, String> {
    FeatureSet::parse(text)
        .ok_or_else(|| format!("{text:?} is not a feature set: {}", FeatureSet::NAMES))
}

pub fn run(args: Args, global: Global) -> Result<()> {
    if !matches!(args.kind, FeatureKind::Masks) {
        return run_npz(args, global);
    }
    if args.sparse || args.unpacked || args.weights.is_some() || args.set.is_some() {
        anyhow::bail!(
            "--sparse, --unpacked, --weights and --set are for --kind terms, planes and nnue"
        );
    }
    if args.filters.is_active() {
        anyhow::bail!(
            "--kind masks writes a row per DB position (the index column is the DB row); filters are for --kind terms, planes and nnue"
        );
    }
    let start = Instant::now();
    let (db, _imported) = import::open_or_import(&args.input, global.verify)?;
    let path = if global.scalar {
        features::Path::scalar()
    } else {
        features::Path::native()
    };
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let threads = pool.current_num_threads();
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

/// `--kind terms` and `--kind planes`: an .npz with the labels.
fn run_npz(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let is_npz = args
        .output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("npz"));
    if !is_npz {
        anyhow::bail!(
            "{}: --kind terms, planes and nnue write .npz (several arrays in one file)",
            args.output.display()
        );
    }
    let terms = matches!(args.kind, FeatureKind::Terms);
    let nnue = matches!(args.kind, FeatureKind::Nnue);
    if nnue && args.set.is_none() {
        anyhow::bail!("--kind nnue needs --set {}", FeatureSet::NAMES);
    }
    if !nnue && args.set.is_some() {
        anyhow::bail!("--set is for --kind nnue");
    }
    if args.sparse && !terms {
        anyhow::bail!("--sparse is for --kind terms");
    }
    if args.unpacked && (terms || nnue) {
        anyhow::bail!("--unpacked is for --kind planes");
    }
    let prepared = Prepared::new(weights::load(args.weights.as_deref())?);
    let filter = args.filters.filter(&prepared)?;
    let (db, _imported) = import::open_or_import(&args.input, global.verify)?;
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let threads = pool.current_num_threads();
    let selection = pool.install(|| arrays::select(&db, &filter))?;
    let bar = progress::positions_bar(selection.count);
    let progress = |rows: u64| bar.inc(rows);
    let path = if global.scalar {
        features::Path::scalar()
    } else {
        features::Path::native()
    };
    let written = pool.install(|| -> Result<()> {
        let mut npz = NpzWriter::create(&args.output)
            .with_context(|| format!("creating {}", args.output.display()))?;
        if let Some(set) = args.set {
            arrays::write_nnue(&db, &selection, set, &mut npz, &progress)?;
        } else if terms {
            let layout = if args.sparse {
                Layout::Sparse
            } else {
                Layout::Dense
            };
            arrays::write_terms(
                &db, &selection, &prepared, layout, path, &mut npz, &progress,
            )?;
        } else {
            arrays::write_planes(&db, &selection, args.unpacked, path, &mut npz, &progress)?;
        }
        let pov = if nnue { Pov::SideToMove } else { Pov::White };
        arrays::write_labels(&db, &selection, pov, &mut npz)?;
        npz.finish()?;
        Ok(())
    });
    bar.finish_and_clear();
    written.with_context(|| format!("writing {}", args.output.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    let filtered = if filter.is_empty() {
        String::new()
    } else {
        format!(", {}", selection.dropped)
    };
    eprintln!(
        "features: {} positions{filtered}, {seconds:.2} s, {:.0} positions/s, {threads} threads -> {}",
        selection.count,
        selection.count as f64 / seconds.max(1e-9),
        args.output.display()
    );
    Ok(())
}
