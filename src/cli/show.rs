//! `pawnstorm show`: a board diagram with its FEN and keys, from a FEN or a DB row.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use pawnstorm::db::{Columns, Database, U16_LABELS};
use pawnstorm::position::labels;
use pawnstorm::{pictures::svg, position::fen};

use super::{Global, fen_error_with_caret, output};

#[derive(clap::Args)]
pub struct Args {
    /// A FEN (quoted), or a DB path
    target: String,
    /// Which position of the DB (0-based)
    #[arg(long, default_value_t = 0)]
    index: u64,
    /// Also draw the board as SVG into this file
    #[arg(long, value_name = "OUT.svg")]
    svg: Option<PathBuf>,
    /// Squares to mark on the SVG board: pawn-structure masks (white_passed,
    /// black_isolated, ...), white_attacks, black_attacks, white_king_zone, black_king_zone
    #[arg(long, value_name = "NAME,...", value_delimiter = ',', requires = "svg")]
    mask: Vec<String>,
    /// Arrows to draw on the SVG board, as UCI moves (e2e4,g8f6)
    #[arg(long, value_name = "MOVE,...", value_delimiter = ',', requires = "svg")]
    arrows: Vec<String>,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let (target, index) = (args.target.as_str(), args.index);
    let path = Path::new(target);
    // A FEN always has spaces between its fields; a path without one that names no file
    // is a missing DB, not a bad FEN.
    if !path.exists() && !target.contains(' ') {
        bail!("{target}: no such file (and not a FEN: a FEN has space-separated fields)");
    }
    let mut out = output::stdout();
    let position = if path.is_file() {
        let db = Database::open_with(path, global.verify)?;
        if index >= db.len() {
            bail!(
                "{} holds {} positions; there is no index {index}",
                path.display(),
                db.len()
            );
        }
        let record = db.record(index)?;
        let labels = record.labels;
        let mut notes = Vec::new();
        if let Some(result) = labels.result {
            notes.push(format!("result {}", result.as_pgn()));
        }
        if let Some(score) = labels.score {
            notes.push(format!("score {score} cp (White's view)"));
        }
        if let Some(game) = labels.game_id {
            notes.push(format!("game {game}"));
        }
        if let Some(ply) = labels.ply {
            notes.push(format!("ply {ply}"));
        }
        for ((column, name), value) in U16_LABELS.into_iter().zip(labels.u16_labels()) {
            let Some(value) = value else { continue };
            notes.push(match column {
                Columns::MOVE => format!(
                    "move {}",
                    labels::move_to_uci(value).unwrap_or_else(|| format!("code {value}"))
                ),
                Columns::CLOCK => format!("clock {value} s"),
                _ => format!("{name} {value}"),
            });
        }
        writeln!(out, "{}[{index}] {}", path.display(), notes.join(", "))?;
        record.position
    } else {
        fen::parse_fen(target).map_err(|e| fen_error_with_caret(target, &e))?
    };
    writeln!(out, "{position}")?;
    out.flush()?;
    if let Some(svg_path) = &args.svg {
        let marks = svg::marks(&position, &args.mask).map_err(|e| anyhow!("--mask: {e}"))?;
        let arrows = args
            .arrows
            .iter()
            .map(|text| svg::parse_arrow(text).map_err(|e| anyhow!("--arrows: {e}")))
            .collect::<Result<Vec<_>>>()?;
        let picture = svg::board(&position, &marks, &arrows);
        output::write_atomically(svg_path, |sink| Ok(sink.write_all(picture.as_bytes())?))?;
    }
    Ok(())
}
