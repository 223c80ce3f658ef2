//! `pawnstorm bench [DEPTH]`: the search's signature (total nodes over a fixed position set,
//! fresh tables for each), its speed and the pawn hash table's hit rate; `bench --suite
//! FILE --nodes N`: how many positions of an EPD test suite the search solves.

use std::io::Write;

use anyhow::{Context, Result};
use clap::Parser;
use pawnstorm::engine::search::bench;

use super::output::stdout;

#[derive(Parser)]
pub struct Args {
    /// Search depth for every position
    #[arg(default_value_t = bench::DEFAULT_DEPTH, value_parser = clap::value_parser!(i32).range(1..=64))]
    depth: i32,
    /// Count the positions of this EPD suite (`bm`/`am` in SAN) solved instead
    #[arg(long, value_name = "FILE")]
    suite: Option<std::path::PathBuf>,
    /// With --suite: nodes searched per position (one thread, fresh tables each)
    #[arg(long, default_value_t = 100_000, requires = "suite")]
    nodes: u64,
    #[command(flatten)]
    evaluator: super::evaluator::EvalArgs,
}

pub fn run(args: Args) -> Result<()> {
    let network = args.evaluator.network()?;
    if let Some(path) = &args.suite {
        return run_suite(path, args.nodes, network);
    }
    let result = bench::run(args.depth, network.clone(), |i, nodes| {
        eprintln!(
            "position {:>2}/{}: {nodes} nodes",
            i + 1,
            bench::POSITIONS.len()
        );
    })?;
    let mut out = stdout();
    let evaluation = match &network {
        Some(net) => {
            let stats = result.accumulators.unwrap_or_default();
            let total = (stats.updates + stats.refreshes).max(1) as f64;
            let kings = if net.inputs().is_mirrored() {
                format!(
                    " ({:.1}% with one side summed again: its king crossed a bucket or the \
                     mirror)",
                    100.0 * stats.king_refreshes as f64 / total
                )
            } else {
                String::new()
            };
            format!(
                "network of {}, accumulators {:.1}% updated{kings}, {:.1}% refreshed",
                net.shape(),
                100.0 * stats.updates as f64 / total,
                100.0 * stats.refreshes as f64 / total
            )
        }
        None => format!("pawn hash hit rate {:.1}%", 100.0 * result.pawn_hit_rate()),
    };
    writeln!(
        out,
        "{} positions, depth {}, {:.2} s: {} nodes/s, {evaluation}",
        result.positions,
        args.depth,
        result.seconds,
        result.nps(),
    )?;
    // The signature line last, as Stockfish prints it.
    writeln!(out, "Nodes searched: {}", result.nodes)?;
    out.flush()?;
    Ok(())
}

fn run_suite(
    path: &std::path::Path,
    nodes: u64,
    network: Option<std::sync::Arc<pawnstorm::nnue::Network>>,
) -> Result<()> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let suite = bench::read_suite(&text);
    for reason in &suite.rejected {
        eprintln!("{}: skipped {reason}", path.display());
    }
    if suite.positions.is_empty() {
        anyhow::bail!(
            "{}: no position with bm or am could be read",
            path.display()
        );
    }
    let mut out = stdout();
    let result = bench::run_suite(
        &suite.positions,
        nodes,
        network,
        |position, found, solved| {
            let found = found.map_or("none".to_string(), |mv| mv.uci(false).to_string());
            let mark = if solved { "solved" } else { "missed" };
            eprintln!("{mark} {} (found {found})", position.id);
        },
    );
    let skipped = if suite.rejected.is_empty() {
        String::new()
    } else {
        format!(" ({} lines skipped: unreadable)", suite.rejected.len())
    };
    writeln!(
        out,
        "{}: solved {}/{} at {nodes} nodes{skipped}, {:.2} s, {:.0} nodes/s",
        path.display(),
        result.solved,
        result.positions,
        result.seconds,
        result.nodes as f64 / result.seconds.max(1e-9)
    )?;
    out.flush()?;
    Ok(())
}
