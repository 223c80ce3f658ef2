//! `pawnstorm info`: checks a whole DB (unless --no-verify) and describes it.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use pawnstorm::db::{Database, Verify};

use super::{Global, output};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to describe
    db: PathBuf,
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let path: &Path = &args.db;
    // Off here, whatever the flag: `verify` below checks everything once, where opening
    // would make a version 1 file's pass over the payload first.
    let db = Database::open_with(path, Verify::Off)?;
    let verified = global.verify == Verify::Checksums;
    if verified {
        db.verify()?;
    }
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
    let crc = header.payload_crc;
    match (verified, header.has_block_crcs()) {
        (false, _) => writeln!(out, "checksums:          not checked (--no-verify)")?,
        (true, false) => writeln!(
            out,
            "checksums:          ok (one crc32 for all blocks, {crc:08x}; format 1 has no block checksums)"
        )?,
        (true, true) => writeln!(
            out,
            "checksums:          ok ({} block crc32s; crc32 of them {crc:08x})",
            db.block_count()
        )?,
    }
    if verified {
        writeln!(
            out,
            "boards:             ok (every row: consistent boards, one king a side)"
        )?;
    }
    out.flush()?;
    Ok(())
}
