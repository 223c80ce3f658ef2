//! `pawnstorm eval`: scores of every position of a DB (to .npy/.csv, or a histogram), or
//! every term of one position (`--fen`).

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{Context, Result, bail};
use clap::ValueEnum;

use pawnstorm::Position;
use pawnstorm::eval::batch as eval_batch;
use pawnstorm::eval::features;
use pawnstorm::eval::terms::Term;
use pawnstorm::eval::{self, Prepared};
use pawnstorm::io::table::TableWriter;
use pawnstorm::nnue::{self, NnueEvaluator, simd::Level};
use pawnstorm::position::fen;
use pawnstorm::scoring::ScoreTable;

use super::{Global, fen_error_with_caret, import, output, progress, weights};

#[derive(clap::Args)]
pub struct Args {
    /// A position DB, or EPD/FEN lines, PGN or lichess JSONL, plain or gzip/zstd/bzip2-compressed ('-' for standard input)
    #[arg(required_unless_present = "fen")]
    input: Option<String>,
    /// Evaluate this one position and print every term
    #[arg(long, conflicts_with_all = ["input", "output", "terms", "threads"])]
    fen: Option<String>,
    /// With --fen: also draw the board beside a chart of the terms into this SVG file
    #[arg(long, value_name = "OUT.svg", requires = "fen")]
    svg: Option<PathBuf>,
    /// Write the scores to this .npy or .csv file
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Add each term's mg, eg and final value, the phase, the scale and the rule
    #[arg(long, requires = "output")]
    terms: bool,
    /// Point of view of the scores
    #[arg(long, value_enum, default_value_t = Pov::White)]
    pov: Pov,
    /// Add win, draw and loss columns (per mille, same point of view) from the WDL model (a
    /// function of the score and the material, whichever evaluation gave the score)
    #[arg(long, requires = "output")]
    wdl: bool,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    /// Evaluation weights file (as `pawnstorm weights` writes it)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    // --eval nnue: the network, with the exact endgame rules on top (docs/NNUE.md); no
    // --terms (a network has none); --wdl reads its scores as it reads the terms'.
    #[command(flatten)]
    evaluator: super::evaluator::EvalArgs,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pov {
    /// White's point of view
    White,
    /// The side to move's
    Stm,
}

/// The network's evaluator for `--eval nnue` (`--scalar` takes the portable kernels), after
/// refusing the options that belong to the other evaluation.
fn network(args: &Args, global: Global) -> Result<Option<NnueEvaluator>> {
    let Some(net) = args.evaluator.network()? else {
        return Ok(None);
    };
    if args.terms {
        bail!(
            "--terms lists the hand-crafted evaluation's terms; a network has none (use --eval \
             hce, or drop --terms)"
        );
    }
    if args.weights.is_some() {
        bail!("--weights are the hand-crafted evaluation's; the network's file is --net");
    }
    let level = if global.scalar {
        Level::Portable
    } else {
        Level::best()
    };
    Ok(Some(NnueEvaluator::with_level(net, level)))
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let network = network(&args, global)?;
    let prepared = Prepared::new(weights::load(args.weights.as_deref())?);
    if let Some(text) = &args.fen {
        let position = fen::parse_fen(text).map_err(|e| fen_error_with_caret(text, &e))?;
        let breakdown = eval::breakdown(&prepared, &position);
        let mut out = output::stdout();
        print_breakdown(&mut out, &position, &breakdown)?;
        // Both evaluations: the network's below the terms' table, the compiled-in one when
        // none was asked for.
        let shown = network.or_else(|| nnue::default_network().ok().map(NnueEvaluator::new));
        if let Some(mut evaluator) = shown {
            print_network(&mut out, &position, &mut evaluator)?;
        }
        out.flush()?;
        if let Some(path) = &args.svg {
            let bars: Vec<pawnstorm::pictures::svg::TermBar> = Term::ALL
                .into_iter()
                .map(|term| pawnstorm::pictures::svg::TermBar {
                    name: term.name().to_string(),
                    mg: breakdown.mg[term as usize],
                    eg: breakdown.eg[term as usize],
                    tapered: breakdown.term_final(term),
                })
                .collect();
            let finished = &breakdown.finished;
            let picture = pawnstorm::pictures::svg::breakdown_chart(
                &position,
                &bars,
                finished.score,
                finished.phase,
                finished.scale,
            );
            output::write_atomically(path, |sink| Ok(sink.write_all(picture.as_bytes())?))?;
        }
        return Ok(());
    }
    let input = args.input.as_deref().unwrap_or("-");
    let (db, _imported) = import::open_or_import(input, global.verify)?;
    let path = if global.scalar {
        features::Path::scalar()
    } else {
        features::Path::native()
    };
    let kernels = match &network {
        Some(evaluator) => format!(
            "network {} wide, {} kernels",
            evaluator.network().hidden(),
            evaluator.level().name()
        ),
        None => format!("path {}", path.describe()),
    };
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let threads = pool.current_num_threads();
    let bar = progress::positions_bar(db.len());
    let stm_pov = args.pov == Pov::Stm;
    let count = db.len();
    match &args.output {
        Some(output) => {
            let source = ScoreTable {
                db: &db,
                path,
                prepared: &prepared,
                breakdown: args.terms,
                // A CSV row names its position; a .npy row's index is its place.
                with_index: args.terms
                    || output
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("csv")),
                stm_pov,
                wdl: args.wdl,
                network: network.as_ref(),
                sorted: Default::default(),
            };
            let table = TableWriter::create(output, &source.columns(), count)?;
            pool.install(|| table.fill(&source, db.block_size(), |rows| bar.inc(rows as u64)))?;
            bar.finish_and_clear();
            eval_summary(count, start, &kernels, threads, Some(output));
        }
        None => {
            let each_block = |block: &pawnstorm::db::Block<'_>, scores: &mut [i32]| {
                if stm_pov {
                    eval_batch::turn_for_black(block, scores, 1);
                }
                bar.inc(block.len as u64);
            };
            let scores = pool.install(|| match &network {
                Some(evaluator) => nnue::bulk::db_scores_with(&db, evaluator, each_block),
                None => eval_batch::db_scores_with(&db, path, &prepared, each_block),
            })?;
            bar.finish_and_clear();
            eval_summary(count, start, &kernels, threads, None);
            let mut out = output::stdout();
            print_histogram(&mut out, &scores, args.pov)?;
            out.flush()?;
        }
    }
    Ok(())
}

fn eval_summary(count: u64, start: Instant, kernels: &str, threads: usize, output: Option<&Path>) {
    let seconds = start.elapsed().as_secs_f64();
    let target = output.map_or(String::new(), |p| format!(" -> {}", p.display()));
    eprintln!(
        "eval: {count} positions, {seconds:.2} s, {:.0} positions/s, {kernels}, {threads} threads{target}",
        count as f64 / seconds.max(1e-9),
    );
}

/// The network's score of `position` under the terms' breakdown (`--fen`).
fn print_network(
    out: &mut impl Write,
    position: &Position,
    evaluator: &mut NnueEvaluator,
) -> io::Result<()> {
    let boards = nnue::boards_of(position);
    let black = position.side_to_move() == pawnstorm::Color::Black;
    let stm = evaluator.score(&boards, black, 0);
    let white = if black { -stm } else { stm };
    let rule = nnue::exact_rule(&boards, black).map_or("", |_| " (an exact endgame rule)");
    writeln!(
        out,
        "Network evaluation: {:+.2} (White side) [{white} cp]; {:+.2} for the side to move{rule}",
        white as f64 / 100.0,
        stm as f64 / 100.0
    )
}

fn print_histogram(out: &mut impl Write, scores: &[i32], pov: Pov) -> io::Result<()> {
    if scores.is_empty() {
        return Ok(());
    }
    let edges = [-1000, -500, -300, -100, -50, 50, 100, 300, 500, 1000];
    let mut counts = [0u64; 11];
    for &score in scores {
        counts[edges.partition_point(|&edge| edge <= score)] += 1;
    }
    let sum: i64 = scores.iter().map(|&s| s as i64).sum();
    let (min, max) = (
        scores.iter().min().copied().unwrap_or(0),
        scores.iter().max().copied().unwrap_or(0),
    );
    let view = match pov {
        Pov::White => "White's view",
        Pov::Stm => "side to move's view",
    };
    writeln!(
        out,
        "scores (centipawns, {view}): mean {:.1}, min {min}, max {max}",
        sum as f64 / scores.len() as f64
    )?;
    let widest = counts.iter().copied().max().unwrap_or(1).max(1);
    for (i, &c) in counts.iter().enumerate() {
        let label = match i {
            0 => format!("       < {}", edges[0]),
            10 => format!("      >= {}", edges[9]),
            _ => format!("{:>6} .. {:<5}", edges[i - 1], edges[i] - 1),
        };
        let bar = "#".repeat(((c * 50).div_ceil(widest)) as usize);
        writeln!(
            out,
            "{label:>16} {c:>10} {:>5.1}% {bar}",
            100.0 * c as f64 / scores.len() as f64
        )?;
    }
    Ok(())
}

fn print_breakdown(
    out: &mut impl Write,
    position: &Position,
    b: &eval::Breakdown,
) -> io::Result<()> {
    let pawns = |cp: i32| format!("{:+.2}", cp as f64 / 100.0);
    writeln!(out, "{position}")?;
    writeln!(out, "      Term               |    MG      EG   |  Final")?;
    writeln!(out, " ------------------------+-----------------+--------")?;
    for term in Term::ALL {
        let i = term as usize;
        writeln!(
            out,
            " {:<23} | {:>7} {:>7} | {:>6}",
            term.name(),
            pawns(b.mg[i]),
            pawns(b.eg[i]),
            pawns(b.term_final(term))
        )?;
    }
    writeln!(out, " ------------------------+-----------------+--------")?;
    writeln!(
        out,
        " {:<23} | {:>7} {:>7} |",
        "total",
        pawns(b.total_mg),
        pawns(b.total_eg)
    )?;
    let f = &b.finished;
    writeln!(
        out,
        "\nPhase {}/{} (24 = middlegame), scale {}/64, rule: {}",
        f.phase,
        pawnstorm::eval::endgame::MAX_PHASE,
        f.scale,
        f.rule.name()
    )?;
    let stm = if position.side_to_move() == pawnstorm::Color::White {
        f.score
    } else {
        -f.score
    };
    writeln!(
        out,
        "Final evaluation: {} (White side) [{} cp]; {} for the side to move",
        pawns(f.score),
        f.score,
        pawns(stm)
    )?;
    Ok(())
}
