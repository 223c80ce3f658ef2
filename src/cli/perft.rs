//! `pawnstorm perft`: leaf counts of the legal move tree, as Stockfish's `go perft` prints
//! them, or a whole perft suite.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};

use pawnstorm::engine::perft;
use pawnstorm::movegen::Board;

use super::{fen_error_with_caret, output, progress};

#[derive(clap::Args)]
pub struct Args {
    /// Plies to count
    #[arg(required_unless_present = "epd", conflicts_with = "epd")]
    depth: Option<u32>,
    /// The position (default: the start position)
    #[arg(long, conflicts_with = "epd")]
    fen: Option<String>,
    /// One `move: count` line per root move, as Stockfish's `go perft` prints
    #[arg(long, conflicts_with = "epd")]
    divide: bool,
    /// Castling as the king taking its rook (e1h1), as UCI_Chess960; the default is e1g1,
    /// unless the position's castling rights are not on standard squares
    #[arg(long, conflicts_with = "epd")]
    chess960: bool,
    /// A perft suite: `FEN ;D1 20 ;D2 400` lines, or `id`/`epd`/`perft N COUNT` blocks
    #[arg(long, value_name = "SUITE")]
    epd: Option<PathBuf>,
    /// With --epd: skip depths whose expected count is above N (default: run all)
    #[arg(long, value_name = "N", requires = "epd")]
    max_nodes: Option<u64>,
}

pub fn run(args: Args) -> Result<()> {
    pawnstorm_kernels::attacks::init();
    if let Some(suite) = &args.epd {
        return run_suite(suite, args.max_nodes.unwrap_or(u64::MAX));
    }
    let depth = args.depth.context("a depth is required without --epd")?;
    let board = match &args.fen {
        Some(text) => Board::from_fen(text).map_err(|e| fen_error_with_caret(text, &e))?,
        None => Board::startpos(),
    };
    let chess960 = args.chess960 || board.has_chess960_castling();
    let started = Instant::now();
    let divided = args.divide.then(|| perft::divide(&board, depth));
    let nodes = match &divided {
        Some(moves) if depth > 0 => moves.iter().map(|(_, count)| count).sum(),
        _ => perft::perft(&board, depth),
    };
    let seconds = started.elapsed().as_secs_f64();
    let mut out = output::stdout();
    perft::write_perft_report(
        &mut out,
        divided.as_deref().map(|moves| (moves, chess960)),
        nodes,
    )
    .and_then(|()| out.flush())
    .context("writing to standard output")?;
    eprintln!(
        "perft {depth}: {nodes} nodes, {seconds:.3} s, {:.1} Mnps",
        perft::mnps(nodes, seconds)
    );
    Ok(())
}

fn run_suite(path: &Path, max_nodes: u64) -> Result<()> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("reading perft suite {}", path.display()))?;
    let suite = perft::parse_suite(&text);
    let name = path.display();
    for bad in &suite.bad_lines {
        eprintln!("{name}:{}: {}: {:?}", bad.line, bad.reason, bad.text);
    }
    for invalid in &suite.invalid_positions {
        eprintln!(
            "{name}:{}: skipped, position rejected: {}: {:?}",
            invalid.line, invalid.reason, invalid.text
        );
    }
    let mut out = output::stdout();
    // The callback cannot return an error: keep the first and report it after the run.
    let mut write_error = None;
    // The bar counts the nodes the checks to run expect: the depth-6 lines dominate.
    let work: u64 = suite
        .cases
        .iter()
        .flat_map(|case| &case.checks)
        .map(|&(_, expected)| expected)
        .filter(|&expected| expected <= max_nodes)
        .sum();
    let bar = progress::count_bar(work, "nodes");
    let summary = perft::run_suite(
        &suite,
        max_nodes,
        |m| {
            let written = bar.suspend(|| {
                writeln!(
                    out,
                    "mismatch {name}:{}: {} depth {} expected {} got {}",
                    m.line, m.fen, m.depth, m.expected, m.got
                )
                // Mismatches are seen as they happen, not when the buffer fills.
                .and_then(|()| out.flush())
            });
            if let Err(e) = written {
                write_error.get_or_insert(e);
            }
        },
        |nodes| bar.inc(nodes),
    );
    bar.finish_and_clear();
    if let Some(e) = write_error {
        return Err(e.into());
    }
    writeln!(
        out,
        "{} positions, {} checks run, {} skipped (over {} nodes), {} invalid positions skipped, {} bad lines, {} mismatches, {:.2} s, {:.1} Mnps",
        summary.positions,
        summary.checks_run,
        summary.skipped,
        if max_nodes == u64::MAX {
            "no limit".to_string()
        } else {
            max_nodes.to_string()
        },
        suite.invalid_positions.len(),
        suite.bad_lines.len(),
        summary.mismatches,
        summary.seconds,
        perft::mnps(summary.nodes, summary.seconds),
    )?;
    out.flush()?;
    if summary.mismatches > 0 || !suite.bad_lines.is_empty() {
        bail!(
            "{name}: {} mismatches, {} bad lines",
            summary.mismatches,
            suite.bad_lines.len()
        );
    }
    Ok(())
}
