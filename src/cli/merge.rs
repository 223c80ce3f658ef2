//! `pawnstorm merge`: DBs concatenated into one (the counterpart of `split`), game ids
//! renumbered so that they stay unique, every label column of every input kept.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, bail};

use pawnstorm::db::Database;
use pawnstorm::db::merge::{self, MergeColumns};

use super::{Global, progress};

#[derive(clap::Args)]
pub struct Args {
    /// The DBs to merge, in order
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// The DB to write (written whole or not at all; may be one of the inputs)
    #[arg(short, long)]
    output: PathBuf,
    /// Keep only the label columns every input has. By default the output has every label
    /// column some input has, "unknown" in the rows of the inputs without it
    #[arg(long)]
    drop_missing: bool,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let inputs = args
        .inputs
        .iter()
        .map(|path| Database::open_with(path, global.verify))
        .collect::<Result<Vec<_>, _>>()?;
    let total: u64 = inputs.iter().map(Database::len).sum();
    if total == 0 {
        bail!("the inputs hold no positions: nothing to merge");
    }
    let bar = progress::positions_bar(total);
    let columns = if args.drop_missing {
        MergeColumns::Common
    } else {
        MergeColumns::Union
    };
    let merged = merge::merge(&inputs, &args.output, columns, &mut |n| bar.inc(n))?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let dropped = if merged.dropped.bits() != 0 {
        format!(
            "; dropped columns {} (not in every input)",
            merged.dropped.names().join(", ")
        )
    } else if merged.filled.bits() != 0 {
        format!(
            "; columns {} unknown in the rows of the inputs without them",
            merged.filled.names().join(", ")
        )
    } else {
        String::new()
    };
    eprintln!(
        "merge: {} positions from {} DBs, columns {}{dropped}, {seconds:.2} s, {:.0} positions/s -> {}",
        merged.positions,
        inputs.len(),
        if merged.columns.bits() == 0 {
            "none".to_string()
        } else {
            merged.columns.names().join(", ")
        },
        merged.positions as f64 / seconds.max(1e-9),
        args.output.display()
    );
    Ok(())
}
