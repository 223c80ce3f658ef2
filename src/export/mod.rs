//! `export`: a DB's positions in the formats that other tools read: EPD lines, Parquet
//! (pyarrow, polars, DuckDB), Stockfish's `.plain` training text and `.binpack`, and bullet's
//! `ChessBoard` records. `docs/EXPORT.md` specifies each.
//!
//! One driver for all of them: the DB is cut into chunks of whole blocks, the worker
//! threads encode a window of chunks at once (filters, then the format), and the caller
//! receives the encoded chunks in DB order, so the output is the same whatever the thread
//! count and no serial per-position tail is left on the writing thread.

pub mod binpack;
pub mod bullet;
pub mod columns;
pub mod filters;
pub mod parquet;
pub mod plain;
pub mod random;
pub mod skips;

use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use crate::db::{Database, DbError};
use crate::eval::Evaluator;
use crate::export::filters::{Dropped, Filter};
use crate::position::labels::{self, Record};

/// An export format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// EPD lines with the labels as operations (`c9`, `ce`, `game`, `ply`).
    Epd,
    /// Apache Parquet, one row per position.
    Parquet,
    /// Stockfish's `.plain` training text.
    Plain,
    /// bullet's 32-byte `ChessBoard` records.
    Bullet,
    /// Stockfish's `.binpack` training data.
    Binpack,
}

impl Format {
    pub const ALL: [Format; 5] = [
        Format::Epd,
        Format::Parquet,
        Format::Plain,
        Format::Bullet,
        Format::Binpack,
    ];

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Format::Epd => "epd",
            Format::Parquet => "parquet",
            Format::Plain => "plain",
            Format::Bullet => "bullet",
            Format::Binpack => "binpack",
        }
    }

    /// The format an output file's extension names: `.parquet`, `.plain`, `.bullet` or
    /// `.data` (bullet's own examples name their files `.data`), `.epd`, `.binpack`; `None`
    /// for others.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let extension = path.extension()?.to_str()?.to_ascii_lowercase();
        match extension.as_str() {
            "parquet" | "pq" => Some(Format::Parquet),
            "plain" => Some(Format::Plain),
            "bullet" | "data" => Some(Format::Bullet),
            "epd" => Some(Format::Epd),
            "binpack" => Some(Format::Binpack),
            _ => None,
        }
    }

    /// Whether the output is binary (not for a terminal).
    pub fn is_binary(self) -> bool {
        matches!(self, Format::Parquet | Format::Bullet | Format::Binpack)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Positions a format cannot hold without a label it lacks, left out and counted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Skipped {
    pub no_score: u64,
    pub no_result: u64,
    pub no_move: u64,
}

impl Skipped {
    pub fn total(&self) -> u64 {
        self.no_score + self.no_result + self.no_move
    }

    fn merge(&mut self, other: &Skipped) {
        self.no_score += other.no_score;
        self.no_result += other.no_result;
        self.no_move += other.no_move;
    }
}

/// `skipped N (no score 3, no move 7)`, naming only the causes that occurred.
impl fmt::Display for Skipped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "skipped {}", self.total())?;
        let parts: Vec<String> = [
            ("no score", self.no_score),
            ("no result", self.no_result),
            ("no move", self.no_move),
        ]
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(what, n)| format!("{what} {n}"))
        .collect();
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

/// What an export did: positions read, written, dropped by the filters, skipped by the
/// format.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub read: u64,
    pub written: u64,
    pub dropped: Dropped,
    pub skipped: Skipped,
}

impl Tally {
    pub fn merge(&mut self, other: &Tally) {
        self.read += other.read;
        self.written += other.written;
        self.dropped.merge(&other.dropped);
        self.skipped.merge(&other.skipped);
    }
}

/// Rows of one chunk: the blocks and, within them, the DB rows to read.
#[derive(Clone, Debug)]
pub struct Chunk {
    pub blocks: Range<usize>,
    /// The DB rows (positions) of the chunk that the export's range covers.
    pub rows: Range<u64>,
    /// The rows kept, decided beforehand for the whole export (per block of the DB, rows
    /// within it): the ordered rules (`--unique`, `--wdl-skip`, `--piece-skip`) need the
    /// rows before. `None`: the filter decides each row here.
    pub picked: Option<Arc<Vec<Vec<u32>>>>,
}

/// The chunks of whole blocks, about `target_rows` rows each, that cover `range`.
pub fn chunks(db: &Database, range: &Range<u64>, target_rows: usize) -> Vec<Chunk> {
    let n = db.block_size() as u64;
    let end = range.end.min(db.len());
    if range.start >= end {
        return Vec::new();
    }
    let per_chunk = (target_rows as u64 / n).max(1);
    let (first, last) = (range.start / n, (end - 1) / n);
    (first..=last)
        .step_by(per_chunk as usize)
        .map(|b| {
            let blocks = b..(b + per_chunk).min(last + 1);
            let rows = (blocks.start * n).max(range.start)..(blocks.end * n).min(end);
            Chunk {
                blocks: blocks.start as usize..blocks.end as usize,
                rows,
                picked: None,
            }
        })
        .collect()
}

/// Calls `f` with every record of `chunk` that the filter keeps, in order, with its DB
/// index and the chunk's count of skipped records (a format that cannot write a record
/// counts it there). Counts what the filter drops, and what was written: every kept record
/// `f` did not skip. Each block is read (and checked) once.
pub fn for_each_kept(
    db: &Database,
    chunk: &Chunk,
    filter: &Filter,
    evaluator: &mut Option<Evaluator>,
    tally: &mut Tally,
    mut f: impl FnMut(u64, Record, &mut Skipped) -> Result<(), DbError>,
) -> Result<(), DbError> {
    let n = db.block_size() as u64;
    let mut keep = Vec::with_capacity(db.block_size());
    let mut kept = 0u64;
    for b in chunk.blocks.clone() {
        let block = db.block(b)?;
        let base = b as u64 * n;
        let rows = chunk.rows.start.max(base) - base..chunk.rows.end.min(base + n) - base;
        tally.read += rows.end - rows.start;
        keep.clear();
        match &chunk.picked {
            Some(picked) => keep.extend_from_slice(&picked[b]),
            None => filter.block_rows(
                &block,
                rows.start as usize..rows.end as usize,
                base,
                || db.block(b + 1).ok(),
                evaluator,
                &mut keep,
                &mut tally.dropped,
            ),
        }
        for &row in &keep {
            let index = base + row as u64;
            let record = block
                .record(row as usize)
                .map_err(|reason| DbError::BadRecord {
                    path: db.path().to_path_buf(),
                    index,
                    reason,
                })?;
            f(index, record, &mut tally.skipped)?;
            kept += 1;
        }
    }
    tally.written = kept - tally.skipped.total();
    Ok(())
}

/// Runs `encode` on every chunk in parallel (in the current rayon pool), a window of
/// chunks at a time, and hands the results to `sink` in chunk order. `encode` gets the
/// thread's filter evaluator. The first error stops the export.
pub fn run<T, E>(
    chunks: &[Chunk],
    filter: &Filter,
    encode: impl Fn(&Chunk, &mut Option<Evaluator>) -> Result<T, E> + Sync,
    mut sink: impl FnMut(T) -> Result<(), E>,
) -> Result<(), E>
where
    T: Send,
    E: Send,
{
    // Two chunks a thread in flight: enough to keep every worker busy while the writer
    // catches up, little enough memory (a Parquet chunk is ~30 MB before encoding).
    let window = 2 * rayon::current_num_threads().max(1);
    for group in chunks.chunks(window) {
        let encoded: Vec<T> = group
            .par_iter()
            .map_init(
                || filter.evaluator(),
                |evaluator, chunk| encode(chunk, evaluator),
            )
            .collect::<Result<_, E>>()?;
        for item in encoded {
            sink(item)?;
        }
    }
    Ok(())
}

/// A chunk's EPD lines (see [`labels::write_line`]).
pub fn epd_chunk(
    db: &Database,
    chunk: &Chunk,
    filter: &Filter,
    evaluator: &mut Option<Evaluator>,
) -> Result<(Vec<u8>, Tally), DbError> {
    let mut tally = Tally::default();
    let mut out = String::with_capacity((chunk.rows.end - chunk.rows.start) as usize * 80);
    for_each_kept(db, chunk, filter, evaluator, &mut tally, |_, record, _| {
        labels::write_line(&record, &mut out);
        out.push('\n');
        Ok(())
    })?;
    Ok((out.into_bytes(), tally))
}
