//! `pawnstorm weights`: the evaluation weights as the text file `--weights` reads.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;

use pawnstorm::eval::Weights;

use super::output;

#[derive(clap::Args)]
pub struct Args {
    /// Read these weights instead of the compiled-in defaults
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Write to this file instead of standard output
    #[arg(short, long)]
    output: Option<PathBuf>,
}

/// The weights of `path`, or the compiled-in defaults.
pub fn load(path: Option<&Path>) -> Result<Weights> {
    Ok(match path {
        Some(path) => Weights::read(path)?,
        None => Weights::default(),
    })
}

pub fn run(args: Args) -> Result<()> {
    let text = load(args.weights.as_deref())?.to_text();
    match &args.output {
        Some(path) => output::write_atomically(path, |sink| Ok(sink.write_all(text.as_bytes())?))?,
        None => {
            let mut out = output::stdout();
            out.write_all(text.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}
