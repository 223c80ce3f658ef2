//! `pawnstorm split`: a DB as N shard DBs of contiguous rows in a directory, named so that
//! sorted names are row order (`shard-00000.psdb`, ...), for one task a shard on a cluster.

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use pawnstorm::db::Database;
use pawnstorm::db::split::{self, is_shard_name};

use super::{Global, progress};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to split
    input: PathBuf,
    /// Number of shards (balanced: their sizes differ by at most one position)
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    shards: u32,
    /// Directory for the shards (created if missing; must be empty unless --force)
    #[arg(short, long)]
    output: PathBuf,
    /// Write into a directory that is not empty, replacing the shard files there
    #[arg(long)]
    force: bool,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let db = Database::open_with(&args.input, global.verify)?;
    prepare_dir(&args.output, args.force)?;
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let bar = progress::positions_bar(db.len());
    let paths = pool.install(|| {
        split::split(&db, args.shards as usize, &args.output, |rows| {
            bar.inc(rows)
        })
    })?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "split: {} positions into {} shards of {}..{} positions, {seconds:.2} s, {:.0} positions/s -> {}",
        db.len(),
        paths.len(),
        db.len() / args.shards as u64,
        db.len().div_ceil(args.shards as u64),
        db.len() as f64 / seconds.max(1e-9),
        args.output.display()
    );
    Ok(())
}

/// Creates `dir`, or checks that it is empty; with `force`, removes the shard files a
/// previous split left there (a larger split's extra shards would otherwise be taken for
/// part of this one), and nothing else.
fn prepare_dir(dir: &Path, force: bool) -> Result<()> {
    if !dir.exists() {
        return std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()));
    }
    if !dir.is_dir() {
        bail!("{}: exists and is not a directory", dir.display());
    }
    let entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .collect::<Result<_, _>>()
        .with_context(|| format!("reading {}", dir.display()))?;
    if entries.is_empty() {
        return Ok(());
    }
    if !force {
        bail!(
            "{}: directory is not empty ({} entries); use --force to replace the shards there",
            dir.display(),
            entries.len()
        );
    }
    for entry in entries {
        let name = entry.file_name();
        if is_shard_name(&name.to_string_lossy()) {
            std::fs::remove_file(entry.path())
                .with_context(|| format!("removing {}", entry.path().display()))?;
        }
    }
    Ok(())
}
