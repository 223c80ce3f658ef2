//! `pawnstorm info`: checks a whole DB (unless --no-verify) and describes it; `info --net
//! [FILE]` describes a network (the compiled-in one without FILE): its shape, checksum and
//! how it was made.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use pawnstorm::db::{Database, Verify};

use super::{Global, output};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to describe
    #[arg(required_unless_present_any = ["net", "cpu"])]
    db: Option<PathBuf>,
    /// Describe this CPU and the vector code this process runs on it instead (the level
    /// detected, the one chosen and why; `PAWNSTORM_SIMD=avx512|avx2|sse4|scalar` lowers it)
    #[arg(long, conflicts_with_all = ["db", "net"])]
    cpu: bool,
    /// Describe a network file instead (pawnstorm's or a raw bullet one); without FILE the
    /// network compiled into this binary
    #[arg(long, value_name = "FILE", num_args = 0..=1, conflicts_with = "db")]
    net: Option<Option<PathBuf>>,
    /// The architecture of a raw --net file (`king-buckets=MAP,output-buckets=B`)
    #[arg(long, value_name = "ARCH", requires = "net", value_parser = super::evaluator::parse_arch)]
    arch: Option<pawnstorm::nnue::Arch>,
}

fn describe_network(file: Option<&Path>, arch: Option<&pawnstorm::nnue::Arch>) -> Result<()> {
    let (net, name) = match file {
        Some(path) => (
            std::sync::Arc::new(pawnstorm::nnue::Network::load_as(path, arch)?),
            path.display().to_string(),
        ),
        None => (
            pawnstorm::nnue::default_network().map_err(anyhow::Error::msg)?,
            "the compiled-in network".to_string(),
        ),
    };
    let mut out = output::stdout();
    writeln!(
        out,
        "{name}: ({inputs} -> {hidden}) x 2 -> 1 SCReLU{buckets}, QA 255, QB 64, scale 400, \
         checksum {:08x} (of the raw payload), {} kernels",
        net.checksum(),
        pawnstorm::nnue::simd::Level::best().name(),
        inputs = match net.inputs() {
            i if i.is_mirrored() => format!(
                "{} = {} mirrored king buckets {} x 768",
                i.inputs(),
                i.king_buckets(),
                i.map_text()
            ),
            _ => "768".to_string(),
        },
        hidden = net.hidden(),
        buckets = match net.buckets() {
            1 => String::new(),
            b => format!(", {b} output buckets by piece count"),
        },
    )?;
    if net.provenance().is_empty() {
        writeln!(out, "no provenance (a raw file)")?;
    } else {
        writeln!(out, "{}", net.provenance().trim_end())?;
    }
    out.flush()?;
    Ok(())
}

/// `info --cpu`: one `key: value` line each, for people and for scripts (`grep '^level:'`).
fn describe_cpu() -> Result<()> {
    use pawnstorm_kernels::simd;
    let cpu = simd::cpu();
    let mut out = output::stdout();
    writeln!(out, "cpu: {}", cpu.model)?;
    writeln!(out, "arch: {}", std::env::consts::ARCH)?;
    writeln!(out, "detected: {}", cpu.detected.name())?;
    writeln!(out, "level: {} ({})", cpu.level.name(), cpu.reason)?;
    writeln!(
        out,
        "batch lanes: {}",
        pawnstorm::eval::features::Path::native().describe()
    )?;
    writeln!(
        out,
        "nnue kernels: {}",
        pawnstorm::nnue::simd::Level::best().name()
    )?;
    writeln!(
        out,
        "sliding attacks: {}",
        pawnstorm_kernels::attacks::slider_index()
    )?;
    let popcnt = cpu.level >= simd::Level::Sse4 || cfg!(target_feature = "popcnt");
    writeln!(
        out,
        "scalar popcount: {}",
        if popcnt { "popcnt" } else { "portable" }
    )?;
    writeln!(
        out,
        "built for: {}",
        // Plain x86-64 stops at SSE2: a build with SSE3 or more was given a target CPU.
        if cfg!(target_feature = "sse3") {
            "this CPU's class (a target-cpu build)"
        } else {
            "any CPU of the architecture (run-time dispatch)"
        }
    )?;
    out.flush()?;
    Ok(())
}

pub fn run(args: Args, global: Global) -> Result<()> {
    if args.cpu {
        return describe_cpu();
    }
    if let Some(file) = &args.net {
        return describe_network(file.as_deref(), args.arch.as_ref());
    }
    let Some(path) = args.db.as_deref() else {
        anyhow::bail!("info: give a DB, or --net");
    };
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
