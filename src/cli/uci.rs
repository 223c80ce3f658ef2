//! `pawnstorm` with no arguments, or `pawnstorm uci`: the engine loop of `pawnstorm::engine::uci`.

pub fn run() -> anyhow::Result<()> {
    pawnstorm::engine::uci::run();
    Ok(())
}
