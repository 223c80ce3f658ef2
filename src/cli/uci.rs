//! `pawnstorm` with no arguments, or `pawnstorm uci`: the engine loop of `pawnstorm::engine::uci`.

#[derive(Clone, Debug, Default, clap::Args)]
pub struct Args {
    /// List the search's tunable constants as UCI spin options and take `setoption` for
    /// them, for SPSA (scripts/spsa.py, OpenBench); without it they keep their defaults
    #[arg(long)]
    pub tune: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    pawnstorm::engine::uci::run(args.tune);
    Ok(())
}
