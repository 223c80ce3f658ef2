//! `pawnstorm export`: a DB's positions as EPD lines, Parquet, Stockfish `.plain` text or
//! `.binpack`, or bullet `ChessBoard` records (`docs/EXPORT.md`).

use std::io::{IsTerminal, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use parquet::schema::types::SchemaDescriptor;
use pawnstorm::db::Columns;
use pawnstorm::db::Database;
use pawnstorm::db::binpack::{Unwritable, entry_of_record};
use pawnstorm::eval::default_weights;
use pawnstorm::export::binpack::BinpackSink;
use pawnstorm::export::filters::Filter;
use pawnstorm::export::parquet::{self as pq, Codec, ParquetSink};
use pawnstorm::export::plain::MissingMove;
use pawnstorm::export::{self, Chunk, Format, Tally, binpack, bullet, plain};
use pawnstorm::position::labels::{self, Record};
use pawnstorm::training::arrays;
use pawnstorm::training::mix::{self, Input, MixConfig};
use rayon::prelude::*;

use super::filters::FilterArgs;
use super::{Global, output, progress};

#[derive(clap::Args)]
pub struct Args {
    /// The DB to read (with --mix, one more input of weight 1; optional then)
    db: Option<PathBuf>,
    /// An input to interleave, PATH=WEIGHT (a DB, binpack, EPD, PGN, JSONL; WEIGHT 1 if
    /// left out; the last `=` splits, so no `:` clash with drive letters), repeated: the
    /// output takes WEIGHT / sum of weights of its positions from each; an input that ends
    /// starts again, and the export ends when every input was read to its end at least once
    #[arg(long, value_name = "PATH=WEIGHT", value_parser = mix::parse_input)]
    mix: Vec<Input>,
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
    check_output(&args, format)?;
    if !args.mix.is_empty() {
        return run_mixed(&args, format);
    }
    let Some(path) = args.db.as_ref() else {
        bail!("give a DB to export, or inputs to mix with --mix PATH=WEIGHT");
    };

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

/// Refuses an output the format cannot go to.
fn check_output(args: &Args, format: Format) -> Result<()> {
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
    Ok(())
}

/// One window of mixed records, encoded for `format`.
enum Encoded {
    Bytes(Vec<u8>),
    Entries(Vec<sfbinpack::TrainingDataEntry>),
    Group(pq::EncodedRowGroup),
}

/// `export --mix`: the inputs interleaved at their weights' rates ([`mix`]), read and
/// filtered on this thread, encoded in parallel a window of chunks at a time, written in
/// order.
fn run_mixed(args: &Args, format: Format) -> Result<()> {
    if args.range.is_some() {
        bail!("--range is for one DB, not for --mix");
    }
    let inputs: Vec<Input> = args
        .db
        .iter()
        .map(|path| Input {
            path: path.clone(),
            weight: 1.0,
        })
        .chain(args.mix.iter().cloned())
        .collect();
    let filter = args.filters.filter(default_weights())?;
    let config = MixConfig {
        inputs: inputs.clone(),
        mixing: true,
        filter: filter.clone(),
        shuffle_blocks: false,
        seed: filter.seed,
        split: Default::default(),
    };
    // Parquet's columns: every label a DB input has; any other input may carry any label.
    let mut columns = Columns::default();
    for input in &inputs {
        columns = match Database::open(&input.path) {
            Ok(db) => columns.union(db.columns()),
            Err(_) => Columns::ALL,
        };
    }
    let pool = pawnstorm::io::workers::pool(args.threads).context("starting worker threads")?;
    let window = 2 * pool.current_num_threads().max(1);
    let missing_move = if args.null_move {
        MissingMove::Null
    } else {
        MissingMove::Skip
    };
    let start = Instant::now();
    let mut tally = Tally::default();
    let mut written_rows = 0u64;
    let props = pq::properties(args.compression)?;
    let encode = |records: &[Record],
                  first: u64,
                  schema: Option<&SchemaDescriptor>|
     -> Result<(Encoded, Tally)> {
        let mut t = Tally::default();
        let encoded = match format {
            Format::Epd => {
                let mut out = String::with_capacity(records.len() * 80);
                for record in records {
                    labels::write_line(record, &mut out);
                    out.push('\n');
                }
                Encoded::Bytes(out.into_bytes())
            }
            Format::Plain => {
                let mut out = String::with_capacity(records.len() * 120);
                for record in records {
                    plain::write_record(record, missing_move, &mut out, &mut t.skipped);
                }
                Encoded::Bytes(out.into_bytes())
            }
            Format::Bullet => {
                let mut out = Vec::with_capacity(records.len() * 32);
                for record in records {
                    match (record.labels.score, record.labels.result) {
                        (None, _) => t.skipped.no_score += 1,
                        (_, None) => t.skipped.no_result += 1,
                        (Some(score), Some(result)) => {
                            out.extend_from_slice(&bullet::record(&record.position, score, result))
                        }
                    }
                }
                Encoded::Bytes(out)
            }
            Format::Binpack => {
                let mut out = Vec::with_capacity(records.len());
                for record in records {
                    match entry_of_record(record) {
                        Ok(entry) => out.push(entry),
                        Err(Unwritable::NoScore) => t.skipped.no_score += 1,
                        Err(Unwritable::NoResult) => t.skipped.no_result += 1,
                        Err(Unwritable::NoMove) => t.skipped.no_move += 1,
                    }
                }
                Encoded::Entries(out)
            }
            Format::Parquet => Encoded::Group(pq::records_group(
                records,
                first,
                columns,
                schema.expect("a Parquet schema"),
                &props,
            )?),
        };
        t.written = records.len() as u64 - t.skipped.total();
        Ok((encoded, t))
    };
    let mut bytes = 0u64;
    let mut counts = Vec::new();
    let mut write_all = |sink: &mut dyn FnMut(Encoded) -> Result<()>,
                         schema: Option<&SchemaDescriptor>|
     -> Result<()> {
        let mut pending: Vec<Vec<Record>> = Vec::with_capacity(window);
        let mut chunk: Vec<Record> = Vec::with_capacity(STREAM_CHUNK_ROWS);
        let mut first = 0u64;
        let mut failure: Option<anyhow::Error> = None;
        let mut flush = |pending: &mut Vec<Vec<Record>>, first: &mut u64| -> Result<()> {
            let starts: Vec<u64> = pending
                .iter()
                .scan(*first, |at, c| {
                    let s = *at;
                    *at += c.len() as u64;
                    Some(s)
                })
                .collect();
            let encoded: Vec<(Encoded, Tally)> = pool.install(|| {
                pending
                    .par_iter()
                    .zip(starts)
                    .map(|(records, start)| encode(records, start, schema))
                    .collect::<Result<_>>()
            })?;
            for (e, t) in encoded {
                tally.merge(&t);
                sink(e)?;
            }
            *first += pending.iter().map(|c| c.len() as u64).sum::<u64>();
            pending.clear();
            Ok(())
        };
        let (inputs_done, dropped) = mix::run(
            &config,
            |record: Record| {
                chunk.push(record);
                if chunk.len() == STREAM_CHUNK_ROWS {
                    pending.push(std::mem::replace(
                        &mut chunk,
                        Vec::with_capacity(STREAM_CHUNK_ROWS),
                    ));
                    if pending.len() == window
                        && let Err(e) = flush(&mut pending, &mut first)
                    {
                        let message = e.to_string();
                        failure = Some(e);
                        return Err(message);
                    }
                }
                Ok(())
            },
            |_, _| {},
        )
        .map_err(|message| failure.take().unwrap_or_else(|| anyhow::anyhow!(message)))?;
        if !chunk.is_empty() {
            pending.push(chunk);
        }
        flush(&mut pending, &mut first)?;
        written_rows = first;
        tally.dropped.merge(&dropped);
        tally.read = inputs_done.iter().map(|i| i.read).sum();
        counts = inputs_done;
        Ok(())
    };
    match (format, &args.output) {
        (Format::Parquet, Some(output)) => {
            let schema = pq::schema(columns)?;
            output::write_atomically(output, |sink| {
                let mut file = ParquetSink::new(sink, schema.clone(), props.clone())?;
                let descriptor = file.schema().clone();
                write_all(
                    &mut |e| match e {
                        Encoded::Group(group) => Ok(file.append(group)?),
                        _ => unreachable!("Parquet encodes row groups"),
                    },
                    Some(&descriptor),
                )?;
                file.finish()?;
                Ok(())
            })?;
            bytes = std::fs::metadata(output)
                .with_context(|| format!("{}: reading its size", output.display()))?
                .len();
        }
        (Format::Parquet, None) => unreachable!("checked before"),
        (Format::Binpack, _) => {
            let mut to = |sink: &mut dyn Write| -> Result<()> {
                let mut packer = BinpackSink::new(sink)?;
                write_all(
                    &mut |e| match e {
                        Encoded::Entries(entries) => Ok(packer.write(&entries)?),
                        _ => unreachable!("binpack encodes entries"),
                    },
                    None,
                )?;
                bytes = packer.finish()?;
                Ok(())
            };
            match &args.output {
                None => to(&mut output::stdout())?,
                Some(path) => output::write_atomically(path, |sink| to(sink))?,
            }
        }
        _ => {
            let mut to = |sink: &mut dyn Write| -> Result<()> {
                write_all(
                    &mut |e| match e {
                        Encoded::Bytes(data) => {
                            bytes += data.len() as u64;
                            Ok(sink.write_all(&data)?)
                        }
                        _ => unreachable!("text and bullet encode bytes"),
                    },
                    None,
                )?;
                sink.flush()?;
                Ok(())
            };
            match &args.output {
                None => to(&mut output::stdout())?,
                Some(path) => output::write_atomically(path, |sink| to(sink))?,
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let parts: Vec<String> = inputs
        .iter()
        .zip(&counts)
        .map(|(input, c)| {
            format!(
                "{} {} of {} read{}",
                input.path.display(),
                c.given,
                c.read,
                if c.rounds > 1 {
                    format!(", {} rounds", c.rounds)
                } else {
                    String::new()
                }
            )
        })
        .collect();
    let mut summary = format!(
        "exported {} positions as {format} from {} inputs ({})",
        tally.written,
        inputs.len(),
        parts.join("; ")
    );
    debug_assert_eq!(written_rows, counts.iter().map(|c| c.given).sum::<u64>());
    if !filter.is_empty() {
        summary.push_str(&format!(", {}", tally.dropped));
    }
    if tally.skipped.total() > 0 {
        summary.push_str(&format!(", {}", tally.skipped));
    }
    let rejected: u64 = counts.iter().map(|c| c.rejected).sum();
    if rejected > 0 {
        summary.push_str(&format!(", {rejected} bad records skipped"));
    }
    summary.push_str(&format!(
        ", {seconds:.2} s, {:.0} positions/s, {bytes} bytes",
        tally.written as f64 / seconds.max(1e-9)
    ));
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
