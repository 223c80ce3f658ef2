//! `--eval hce|nnue` and `--net FILE`: which evaluator a command uses, shared by the
//! commands that evaluate or search.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use pawnstorm::nnue::{Arch, Network};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum EvalKind {
    /// The hand-crafted evaluation (the terms)
    Hce,
    /// The network (NNUE): the compiled-in one, or --net
    Nnue,
}

#[derive(Clone, Debug, clap::Args)]
pub struct EvalArgs {
    /// The evaluator
    #[arg(long = "eval", value_enum, default_value_t = EvalKind::Hce)]
    pub kind: EvalKind,
    /// A network file (pawnstorm's, or a raw bullet-quantised one) instead of the compiled-in
    /// network; implies --eval nnue
    #[arg(long, value_name = "FILE")]
    pub net: Option<PathBuf>,
    /// What a raw bullet --net file does not record: `king-buckets=MAP,output-buckets=B`,
    /// MAP a count (1, 2, 4, 8, 16: a standard map) or 32 hex digits, files a-d, rank 1
    /// first (docs/NNUE.md); a pawnstorm file records its own
    #[arg(long, value_name = "ARCH", requires = "net", value_parser = parse_arch)]
    pub arch: Option<Arch>,
}

pub fn parse_arch(text: &str) -> Result<Arch, String> {
    text.parse()
}

impl EvalArgs {
    /// The network to evaluate with, `None` for the terms.
    pub fn network(&self) -> Result<Option<Arc<Network>>> {
        if let Some(path) = &self.net {
            return Ok(Some(Arc::new(Network::load_as(path, self.arch.as_ref())?)));
        }
        match self.kind {
            EvalKind::Hce => Ok(None),
            EvalKind::Nnue => pawnstorm::nnue::default_network()
                .map(Some)
                .map_err(|e| anyhow!("--eval nnue: {e} (--net FILE)")),
        }
    }
}
