//! `pawnstorm export`: a DB's positions as EPD lines, Parquet, Stockfish `.plain` text or
//! `.binpack`, or bullet `ChessBoard` records (`docs/EXPORT.md`).

use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use pawnstorm::db::Database;
use pawnstorm::eval::default_weights;
use pawnstorm::export::binpack::BinpackSink;
use pawnstorm::export::filters::Filter;
use pawnstorm::export::parquet::{self as pq, Codec, ParquetSink};
use pawnstorm::export::plain::MissingMove;
use pawnstorm::export::{self, Chunk, Format, Tally, binpack, bullet, plain};
use pawnstorm::training::arrays;

use super::filters::FilterArgs;
use super::{Global, output, progress};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to read
    db: PathBuf,
    /// Output file (standard output if not given; Parquet needs a file)
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Output format [default: from the output's extension (.parquet, .plain, .bullet or
    /// .data, .binpack, .epd), else epd]
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    /// Parquet compression: none, snappy, zstd, zstd:LEVEL
    #[arg(long, value_parser = Codec::parse, default_value = "zstd")]
    compression: Codec,
    /// .plain: write positions whose move is unknown with `move 0000` (UCI's null move)
    /// instead of leaving them out
    #[arg(long)]
    null_move: bool,
    /// Positions A..B (half-open, 0-based; A.. and ..B also work)
    #[arg(long, value_parser = parse_range)]
    range: Option<Range<u64>>,
    /// Worker threads (default: one per core)
    #[arg(long)]
    threads: Option<usize>,
    #[command(flatten)]
    filters: FilterArgs,
}

fn parse_format(text: &str) -> Result<Format, String> {
    Format::ALL
        .into_iter()
        .find(|f| f.name() == text)
        .ok_or_else(|| format!("{text:?} is not a format: epd, parquet, plain, bullet or binpack"))
}

fn parse_range(text: &str) -> Result<Range<u64>, String> {
    let (start, end) = text
        .split_once("..")
        .ok_or_else(|| format!("{text:?} is not a range like 10..20"))?;
    let number = |s: &str, default: u64| {
        if s.is_empty() {
            Ok(default)
        } else {
            s.parse::<u64>()
                .map_err(|_| format!("{s:?} is not a position number"))
        }
    };
    let range = number(start, 0)?..number(end, u64::MAX)?;
    if range.start > range.end {
        return Err(format!("range {text:?} ends before it starts"));
    }
    Ok(range)
}

/// Rows a chunk of the text and bullet formats holds (whole blocks): enough to keep the
/// per-chunk overhead small, small enough for an even spread over the threads.
const STREAM_CHUNK_ROWS: usize = 1 << 14;

/// The format: `--format`, else the output's extension, else EPD. A `--format` that
/// contradicts the extension is refused rather than guessed.
fn resolve_format(args: &Args) -> Result<Format> {
    let by_extension = args.output.as_deref().and_then(Format::from_extension);
    match (args.format, by_extension) {
        (Some(asked), Some(named)) if asked != named => bail!(
            "--format {asked} but {} names {named}: give a matching extension, or leave one of them out",
            args.output
                .as_deref()
                .map_or(String::new(), |p| p.display().to_string())
        ),
        (Some(asked), _) => Ok(asked),
        (None, Some(named)) => Ok(named),
        (None, None) => Ok(Format::Epd),
    }
}

pub fn run(args: Args, global: Global) -> Result<()> {
    let format = resolve_format(&args)?;
    if args.output.is_none() {
        if format == Format::Parquet {
            bail!(
                "Parquet needs an output file (-o OUT.parquet): readers seek to its footer, which is written last"
            );
        }
        if format.is_binary() && std::io::stdout().is_terminal() {
            bail!(
                "{format} records are binary: give -o FILE, or send standard output to a file or a pipe"
            );
        }
    }
    let path = &args.db;
    // Each block is checked as it is read: standard output may get the blocks before a
    // damaged one; a file (-o) is written only when every block was whole.
    let db = Database::open_with(path, global.verify)?;
    let range = args.range.clone().unwrap_or(0..db.len());
    if range.start > db.len() {
        bail!(
            "range starts at {} but {} holds {} positions",
            range.start,
            path.display(),
            db.len()
        );
    }
    let filter = args.filters.filter(default_weights())?;
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let bar = progress::positions_bar(range.end.min(db.len()) - range.start);
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut bytes = 0u64;
    let missing_move = if args.null_move {
        MissingMove::Null
    } else {
        MissingMove::Skip
    };
    // The ordered rules need the rows before each row: the kept rows are chosen first, in
    // a pass of their own, then encoded in parallel as usual.
    let picked = if filter.has_ordered_rules() {
        let selection = pool.install(|| arrays::select_range(&db, range.clone(), &filter))?;
        tally.dropped.merge(&selection.dropped);
        Some(Arc::new(selection.into_rows().unwrap_or_default()))
    } else {
        None
    };
    let chunks_of = |rows: usize| -> Vec<Chunk> {
        let mut chunks = export::chunks(&db, &range, rows);
        for chunk in &mut chunks {
            chunk.picked = picked.clone();
        }
        chunks
    };
    pool.install(|| -> Result<()> {
        if format == Format::Parquet {
            let output = args.output.as_deref().expect("checked above");
            let chunks = chunks_of(pq::ROW_GROUP_ROWS);
            bytes = write_parquet(&db, &chunks, &filter, output, args.compression, |t| {
                tally.merge(t);
                bar.inc(t.read);
            })?;
            return Ok(());
        }
        let chunks = chunks_of(STREAM_CHUNK_ROWS);
        if format == Format::Binpack {
            let mut write_all = |sink: &mut dyn Write| -> Result<()> {
                let mut packer = BinpackSink::new(sink)?;
                export::run(
                    &chunks,
                    &filter,
                    |chunk, evaluator| {
                        binpack::chunk(&db, chunk, &filter, evaluator).map_err(anyhow::Error::from)
                    },
                    |(entries, t): (Vec<_>, Tally)| {
                        packer.write(&entries)?;
                        tally.merge(&t);
                        bar.inc(t.read);
                        Ok(())
                    },
                )?;
                bytes = packer.finish()?;
                Ok(())
            };
            return match &args.output {
                None => write_all(&mut output::stdout()),
                Some(path) => output::write_atomically(path, |sink| write_all(sink)),
            };
        }
        let encode = |chunk: &Chunk, evaluator: &mut _| match format {
            Format::Epd => export::epd_chunk(&db, chunk, &filter, evaluator),
            Format::Plain => plain::chunk(&db, chunk, &filter, evaluator, missing_move),
            Format::Bullet => bullet::chunk(&db, chunk, &filter, evaluator),
            Format::Parquet | Format::Binpack => unreachable!("written above"),
        };
        let mut write_all = |sink: &mut dyn Write| -> Result<()> {
            export::run(
                &chunks,
                &filter,
                |chunk, evaluator| encode(chunk, evaluator).map_err(anyhow::Error::from),
                |(data, t): (Vec<u8>, Tally)| {
                    sink.write_all(&data)?;
                    bytes += data.len() as u64;
                    tally.merge(&t);
                    bar.inc(t.read);
                    Ok(())
                },
            )?;
            sink.flush()?;
            Ok(())
        };
        match &args.output {
            None => write_all(&mut output::stdout()),
            Some(path) => output::write_atomically(path, |sink| write_all(sink)),
        }
    })?;
    bar.finish_and_clear();
    let seconds = start.elapsed().as_secs_f64();
    let mut summary = format!("exported {} positions as {format}", tally.written);
    if !filter.is_empty() {
        summary.push_str(&format!(", {}", tally.dropped));
    }
    if tally.skipped.total() > 0 {
        let why = match format {
            Format::Plain if !args.null_move => {
                " (.plain needs a score, a result and a move; --null-move writes positions without a move)"
            }
            Format::Binpack => " (binpack needs a score, a result and a move)",
            _ => "",
        };
        summary.push_str(&format!(", {}{why}", tally.skipped));
    }
    summary.push_str(&format!(
        ", {seconds:.2} s, {:.0} positions/s, {bytes} bytes",
        tally.written as f64 / seconds.max(1e-9)
    ));
    if tally.written > 0 {
        summary.push_str(&format!(
            " ({:.1} bytes/position)",
            bytes as f64 / tally.written as f64
        ));
    }
    eprintln!("{summary}");
    Ok(())
}

/// Writes `chunks` as a Parquet file at `output`, whole or not at all; returns its size.
fn write_parquet(
    db: &Database,
    chunks: &[Chunk],
    filter: &Filter,
    output: &Path,
    codec: Codec,
    mut progress: impl FnMut(&Tally),
) -> Result<u64> {
    let schema = pq::schema(db.columns())?;
    let props = pq::properties(codec)?;
    output::write_atomically(output, |sink| {
        let mut file = ParquetSink::new(sink, schema.clone(), props.clone())?;
        let descriptor = file.schema().clone();
        export::run(
            chunks,
            filter,
            |chunk, evaluator| pq::chunk(db, chunk, filter, evaluator, &descriptor, &props),
            |(group, t)| {
                progress(&t);
                file.append(group)
            },
        )?;
        file.finish()?;
        Ok(())
    })?;
    Ok(std::fs::metadata(output)
        .with_context(|| format!("{}: reading its size", output.display()))?
        .len())
}
