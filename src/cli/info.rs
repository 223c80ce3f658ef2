//! `pawnstorm info`: checks a whole DB and describes it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use pawnstorm::db::Database;

use super::output;

#[derive(clap::Args)]
pub struct Args {
    /// The DB to describe
    db: PathBuf,
}

pub fn run(args: Args) -> Result<()> {
    let path: &Path = &args.db;
    let db = Database::open(path)?;
    db.verify()?;
    let bytes = std::fs::metadata(path)
        .with_context(|| format!("{}", path.display()))?
        .len();
    let header = db.header();
    let mut columns = vec![
        "pawns",
        "knights",
        "bishops",
        "rooks",
        "queens",
        "kings",
        "white",
        "black",
        "side_to_move",
        "castling",
        "en_passant",
        "halfmove_clock",
        "fullmove_number",
    ];
    columns.extend(db.columns().names());
    let mut out = output::stdout();
    writeln!(out, "file:               {}", path.display())?;
    writeln!(out, "format version:     {}", header.version)?;
    writeln!(out, "positions:          {}", db.len())?;
    writeln!(
        out,
        "blocks:             {} of {} positions ({} bytes each)",
        db.block_count(),
        db.block_size(),
        header.block_bytes
    )?;
    writeln!(out, "columns:            {}", columns.join(", "))?;
    writeln!(out, "bytes:              {bytes}")?;
    if db.is_empty() {
        writeln!(out, "bytes per position: -")?;
    } else {
        writeln!(
            out,
            "bytes per position: {:.2}",
            bytes as f64 / db.len() as f64
        )?;
    }
    writeln!(
        out,
        "checksum:           ok (crc32 {:08x})",
        header.payload_crc
    )?;
    out.flush()?;
    Ok(())
}
