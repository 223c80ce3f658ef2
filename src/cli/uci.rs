//! `pawnstorm` with no arguments, or `pawnstorm uci`: the engine loop of `pawnstorm::uci`.

pub fn run() -> anyhow::Result<()> {
    pawnstorm::uci::run();
    Ok(())
}
