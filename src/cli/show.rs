//! `pawnstorm show`: a board diagram with its FEN and keys, from a FEN or a DB row.

use std::io::Write;
use std::path::Path;

use anyhow::{Result, bail};

use pawnstorm::db::Database;
use pawnstorm::fen;

use super::{Global, fen_error_with_caret, output};

#[derive(clap::Args)]
pub struct Args {
    /// A FEN (quoted), or a DB path
    target: String,
    /// Which position of the DB (0-based)
    #[arg(long, default_value_t = 0)]
    index: u64,
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
        writeln!(out, "{}[{index}] {}", path.display(), notes.join(", "))?;
        record.position
    } else {
        fen::parse_fen(target).map_err(|e| fen_error_with_caret(target, &e))?
    };
    writeln!(out, "{position}")?;
    out.flush()?;
    Ok(())
}
