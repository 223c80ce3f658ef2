//! `pawnstorm bench [DEPTH]`: the search's signature (total nodes over a fixed position set,
//! fresh tables for each), its speed and the pawn hash table's hit rate.

use std::io::Write;

use anyhow::Result;
use clap::Parser;
use pawnstorm::search::bench;

use super::output::stdout;

#[derive(Parser)]
pub struct Args {
    /// Search depth for every position
    #[arg(default_value_t = bench::DEFAULT_DEPTH, value_parser = clap::value_parser!(i32).range(1..=64))]
    depth: i32,
}

pub fn run(args: Args) -> Result<()> {
    let result = bench::run(args.depth, |i, nodes| {
        eprintln!(
            "position {:>2}/{}: {nodes} nodes",
            i + 1,
            bench::POSITIONS.len()
        );
    })?;
    let mut out = stdout();
    writeln!(
        out,
        "{} positions, depth {}, {:.2} s: {} nodes/s, pawn hash hit rate {:.1}%",
        result.positions,
        args.depth,
        result.seconds,
        result.nps(),
        100.0 * result.pawn_hit_rate()
    )?;
    // The signature line last, as Stockfish prints it.
    writeln!(out, "Nodes searched: {}", result.nodes)?;
    out.flush()?;
    Ok(())
}
