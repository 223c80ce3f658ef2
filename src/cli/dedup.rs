//! `pawnstorm dedup`: a DB with one row per position (board, side to move, castling rights,
//! en-passant square), keeping the first, the last or the mean of each position's rows.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use pawnstorm::db::Database;
use pawnstorm::db::dedup::{self, Event, Keep};

use super::{Global, progress};

#[derive(Clone, Copy, clap::ValueEnum)]
enum KeepArg {
    /// The first row of each position, in DB order
    First,
    /// The last row of each position (the output stays in DB order)
    Last,
    /// The first row, with the mean score (rounded) and the mean result (rounded to the
    /// nearest of -1, 0, 1; a tie is a draw) of the position's rows that have them
    Mean,
}

#[derive(clap::Args)]
pub struct Args {
    /// The DB to deduplicate
    input: PathBuf,
    /// The DB to write (written whole or not at all; may be the input)
    #[arg(short, long)]
    output: PathBuf,
    /// Which row of a position's rows to keep
    #[arg(long, value_enum, default_value = "first")]
    keep: KeepArg,
    /// Memory for the key tables, as bytes or with a K, M or G suffix (powers of 1024).
    /// Keys that do not fit go through partition files beside the output. Default: a
    /// quarter of the memory the machine (or its cgroup) allows
    #[arg(long, value_parser = parse_size)]
    memory: Option<u64>,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
}

/// `123`, `64K`, `512M`, `2G` (binary multiples) as bytes.
fn parse_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let (digits, unit) = match trimmed.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => trimmed.split_at(at),
        None => (trimmed, ""),
    };
    let shift = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        _ => {
            return Err(format!(
                "{text:?}: expected bytes with an optional K, M, G or T"
            ));
        }
    };
    let value: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?}: expected bytes with an optional K, M, G or T"))?;
    value
        .checked_mul(1 << shift)
        .filter(|&bytes| bytes > 0)
        .ok_or_else(|| format!("{text:?}: must be at least 1 byte and fit in 64 bits"))
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let start = Instant::now();
    let db = Database::open_with(&args.input, global.verify)?;
    let memory = match args.memory {
        Some(bytes) => bytes,
        None => pawnstorm::engine::search::tt::available_memory().map_or(4 << 30, |m| m / 4),
    };
    if memory == 0 {
        bail!("--memory must be at least 1 byte");
    }
    let options = dedup::Options {
        keep: match args.keep {
            KeepArg::First => Keep::First,
            KeepArg::Last => Keep::Last,
            KeepArg::Mean => Keep::Mean,
        },
        memory,
    };
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let bar = progress::count_bar(db.len(), "positions keyed");
    let on_event = |event: Event| match event {
        Event::Read(rows) | Event::Written(rows) => bar.inc(rows),
        Event::Writing(rows) => {
            bar.set_position(0);
            bar.set_length(rows);
            bar.set_style(progress::count_bar(rows, "positions written").style());
        }
    };
    let done = pool.install(|| dedup::dedup(&db, &args.output, &options, &on_event))?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    eprintln!(
        "dedup: {} positions in, {} unique, {} duplicates removed ({:.2}%)",
        done.rows,
        done.unique,
        done.duplicates(),
        100.0 * done.duplicates() as f64 / done.rows.max(1) as f64
    );
    let how = if done.partitions == 0 {
        "keys in memory".to_string()
    } else {
        format!("{} partitions on disk", done.partitions)
    };
    eprintln!(
        "dedup: kept {} of {} positions (keep {}, {how}), {seconds:.2} s, {:.0} positions/s -> {}",
        done.unique,
        done.rows,
        match options.keep {
            Keep::First => "first",
            Keep::Last => "last",
            Keep::Mean => "mean",
        },
        done.rows as f64 / seconds.max(1e-9),
        args.output.display()
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_suffixes_and_refuse_the_rest() {
        assert_eq!(parse_size("123"), Ok(123));
        assert_eq!(parse_size("64K"), Ok(64 << 10));
        assert_eq!(parse_size("512m"), Ok(512 << 20));
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        for bad in ["", "0", "12X", "M", "-5", "99999999999T"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }
}
