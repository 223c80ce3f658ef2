//! Removing duplicate positions from a DB. Rows are the same position when their Zobrist
//! keys of boards, side to move, castling rights and en-passant square (as stored) are
//! equal ([`crate::position::zobrist::row_key`]); one row of each position is kept.
//!
//! Three passes. Keys: the workers key the rows block by block (each block's checksum and
//! rows checked as every read checks them). Groups: the (key, row) pairs are partitioned by
//! their keys' top bits into buckets small enough for a cache-resident hash table, and each
//! bucket's rows are grouped by key in row order. When the pairs would not fit the memory
//! budget, the partitions are temporary files beside the output, each grouped in turn, its
//! table holding only its distinct keys. Gather: the kept rows, in DB order, are copied
//! column by column into output blocks that the workers write in place.
//!
//! Besides the budget, a pass holds one bit per row (which rows are kept) and, keeping the
//! mean, the means of the positions that occur more than once (16 bytes each; on disk in
//! the partition pass).

mod gather;
mod groups;
mod partitions;

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;

use super::layout::{NO_RESULT, NO_SCORE};
use super::{Database, DbError};
use crate::position::zobrist::row_key;
use gather::write_kept;
use groups::{Groups, Seen};
use partitions::{Overrides, group_on_disk, partitions_for};

/// Which row of a position's rows a dedup keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Keep {
    /// The first in DB order.
    First,
    /// The last in DB order (placed where it stands, so the output stays in DB order).
    Last,
    /// The first, its score the rounded mean of the rows' scores (of those that have one)
    /// and its result the mean of their results rounded to the nearest of -1, 0, 1, a
    /// tie (as many wins as draws) going to the draw.
    Mean,
}

/// How a dedup runs.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub keep: Keep,
    /// Bytes the key tables may take; past it the partition pass on disk runs.
    pub memory: u64,
}

/// What a dedup reports as it goes.
#[derive(Clone, Copy, Debug)]
pub enum Event {
    /// Rows keyed.
    Read(u64),
    /// The rows to be written, once known.
    Writing(u64),
    /// Rows written.
    Written(u64),
}

/// What a dedup did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Deduped {
    /// Rows of the input.
    pub rows: u64,
    /// Distinct positions: the rows written.
    pub unique: u64,
    /// Temporary partition files of the pass on disk; 0 when the keys fit in memory.
    pub partitions: usize,
}

impl Deduped {
    pub fn duplicates(&self) -> u64 {
        self.rows - self.unique
    }
}

/// Rows of a bucket in memory: its table (slots and groups) stays in a core's L2.
const BUCKET_ROWS: usize = 8192;

/// Writes the rows of `db` with one row per position to `output` (whole or not at all),
/// in DB order, with `db`'s label columns and block size. Runs on the current rayon pool.
pub fn dedup(
    db: &Database,
    output: &Path,
    options: &Options,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<Deduped, DbError> {
    match options.keep {
        Keep::Mean => run::<KeyRowLabels>(db, output, options, progress),
        Keep::First | Keep::Last => run::<KeyRow>(db, output, options, progress),
    }
}

fn run<E: Entry>(
    db: &Database,
    output: &Path,
    options: &Options,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<Deduped, DbError> {
    let rows = db.len();
    let words = db.block_count() * db.block_size() / 64;
    let marks = Marks((0..words).map(|_| AtomicU64::new(0)).collect());
    // Keys, then keys and row indices scattered: 20 bytes a row (25 with the labels).
    let labels = options.keep == Keep::Mean;
    let per_row = if labels { 25 } else { 20 };
    let in_memory = rows < u64::from(u32::MAX) && rows.saturating_mul(per_row) <= options.memory;
    let (overrides, partitions) = if in_memory {
        let columns = keys(db, labels, progress)?;
        let means = group_in_memory(columns, options.keep, &marks);
        (Overrides::Sorted(means, 0), 0)
    } else {
        let partitions = partitions_for(db, rows, options.memory)?;
        let overrides = group_on_disk::<E>(db, output, options, partitions, &marks, progress)?;
        (overrides, partitions)
    };
    let marks: Vec<u64> = marks.0.into_iter().map(AtomicU64::into_inner).collect();
    let unique = marks.par_iter().map(|w| u64::from(w.count_ones())).sum();
    progress(Event::Writing(unique));
    write_kept(db, &marks, unique, overrides, output, progress)?;
    Ok(Deduped {
        rows,
        unique,
        partitions,
    })
}

/// A row's key, its index, and (keeping the mean) its score and result.
trait Entry: Pod + Send + Sync {
    fn new(key: u64, row: u64, score: i32, result: i8) -> Self;
    fn seen(&self) -> Seen {
        Seen {
            key: self.key(),
            row: self.row(),
            score: self.score(),
            result: self.result(),
        }
    }
    fn key(&self) -> u64;
    fn row(&self) -> u64;
    fn score(&self) -> i32 {
        NO_SCORE
    }
    fn result(&self) -> i8 {
        NO_RESULT
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct KeyRow {
    key: u64,
    row: u64,
}

impl Entry for KeyRow {
    fn new(key: u64, row: u64, _: i32, _: i8) -> Self {
        KeyRow { key, row }
    }
    fn key(&self) -> u64 {
        self.key
    }
    fn row(&self) -> u64 {
        self.row
    }
}

#[repr(C)]
#[derive(Clone, Copy, Pod, Zeroable)]
struct KeyRowLabels {
    key: u64,
    row: u64,
    score: i32,
    result: i8,
    _padding: [u8; 3],
}

impl Entry for KeyRowLabels {
    fn new(key: u64, row: u64, score: i32, result: i8) -> Self {
        KeyRowLabels {
            key,
            row,
            score,
            result,
            _padding: [0; 3],
        }
    }
    fn key(&self) -> u64 {
        self.key
    }
    fn row(&self) -> u64 {
        self.row
    }
    fn score(&self) -> i32 {
        self.score
    }
    fn result(&self) -> i8 {
        self.result
    }
}

/// The mean score and result of a position seen more than once, for its kept row.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
struct Mean {
    row: u64,
    score: i32,
    result: i8,
    _padding: [u8; 3],
}

/// The rows kept, one bit each: set by the buckets' workers, each row by one of them.
struct Marks(Vec<AtomicU64>);

impl Marks {
    fn set(&self, row: u64) {
        self.0[(row / 64) as usize].fetch_or(1 << (row % 64), Ordering::Relaxed);
    }
}

/// The keys of block `index`'s rows into `out` (as long as the block has rows), the block
/// checked as [`Database::block`] checks every read.
fn block_keys(db: &Database, index: usize, out: &mut [u64]) -> Result<(), DbError> {
    let block = db.block(index)?;
    let len = block.len;
    let p: [&[u64]; 6] = block.pieces.map(|c| &bytemuck::cast_slice(c)[..len]);
    let c: [&[u64]; 2] = block.colors.map(|c| &bytemuck::cast_slice(c)[..len]);
    let (side, castling, ep) = (
        &block.side_to_move[..len],
        &block.castling[..len],
        &block.en_passant[..len],
    );
    for (i, key) in out[..len].iter_mut().enumerate() {
        *key = row_key(
            [p[0][i], p[1][i], p[2][i], p[3][i], p[4][i], p[5][i]],
            [c[0][i], c[1][i]],
            side[i],
            castling[i],
            ep[i],
        );
    }
    Ok(())
}

/// The scores and results of block `index`'s rows (checked by [`block_keys`] before).
fn block_labels(
    db: &Database,
    index: usize,
    scores: &mut [i32],
    results: &mut [i8],
) -> Result<(), DbError> {
    let block = db.block_checked_before(index)?;
    let len = block.len;
    match block.score {
        Some(s) => scores[..len].copy_from_slice(&s[..len]),
        None => scores[..len].fill(NO_SCORE),
    }
    match block.result {
        Some(r) => results[..len].copy_from_slice(&r[..len]),
        None => results[..len].fill(NO_RESULT),
    }
    Ok(())
}

/// The rows in memory, a column each: keys, and keeping the mean, scores and results
/// (empty otherwise); `rows` their indices where they are not `0..`.
#[derive(Default)]
struct KeyColumns {
    keys: Vec<u64>,
    rows: Vec<u32>,
    scores: Vec<i32>,
    results: Vec<i8>,
}

impl KeyColumns {
    #[inline(always)]
    fn seen(&self, i: usize) -> Seen {
        Seen {
            key: self.keys[i],
            row: self.rows.get(i).map_or(i as u64, |&r| u64::from(r)),
            score: self.scores.get(i).copied().unwrap_or(NO_SCORE),
            result: self.results.get(i).copied().unwrap_or(NO_RESULT),
        }
    }
}

/// Every row's key (and labels, with `labels`), in row order, the blocks keyed in parallel.
fn keys(
    db: &Database,
    labels: bool,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<KeyColumns, DbError> {
    let rows = db.len() as usize;
    let n = db.block_size();
    // Zeroed allocations come as fresh pages from the system: no pass of their own.
    let mut keys = vec![0u64; rows];
    keys.par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(index, out)| {
            block_keys(db, index, out)?;
            progress(Event::Read(out.len() as u64));
            Ok::<(), DbError>(())
        })?;
    let mut columns = KeyColumns {
        keys,
        ..KeyColumns::default()
    };
    if labels {
        columns.scores = vec![0; rows];
        columns.results = vec![0; rows];
        columns
            .scores
            .par_chunks_mut(n)
            .zip(columns.results.par_chunks_mut(n))
            .enumerate()
            .try_for_each(|(index, (scores, results))| block_labels(db, index, scores, results))?;
    }
    Ok(columns)
}

/// A pointer the scatter's workers write through, each to its own slots.
struct Slots<T>(*mut T);
impl<T> Clone for Slots<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Slots<T> {}
// SAFETY: used only for writes to disjoint slots (see `scatter`).
unsafe impl<T: Send> Send for Slots<T> {}
unsafe impl<T: Send> Sync for Slots<T> {}

impl<T> Slots<T> {
    fn of(column: &mut Vec<T>) -> Slots<T> {
        Slots(column.as_mut_ptr())
    }
}

/// `columns` ordered by the top `bits` of their keys, each bucket in row order (a stable
/// counting sort, one histogram per chunk of rows), and where each bucket starts.
fn scatter(columns: &KeyColumns, bits: u32) -> (KeyColumns, Vec<usize>) {
    let len = columns.keys.len();
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    let chunk = len.div_ceil(rayon::current_num_threads() * 4).max(1);
    let counts: Vec<Vec<usize>> = columns
        .keys
        .par_chunks(chunk)
        .map(|part| {
            let mut counts = vec![0usize; buckets];
            for key in part {
                counts[(key >> shift) as usize] += 1;
            }
            counts
        })
        .collect();
    let mut offsets = counts.clone();
    let mut starts = Vec::with_capacity(buckets + 1);
    let mut at = 0;
    for b in 0..buckets {
        starts.push(at);
        for (c, counts) in counts.iter().enumerate() {
            offsets[c][b] = at;
            at += counts[b];
        }
    }
    starts.push(at);
    let labels = !columns.scores.is_empty();
    let mut sorted = KeyColumns {
        keys: Vec::with_capacity(len),
        rows: Vec::with_capacity(len),
        scores: Vec::with_capacity(if labels { len } else { 0 }),
        results: Vec::with_capacity(if labels { len } else { 0 }),
    };
    let (keys, rows) = (Slots::of(&mut sorted.keys), Slots::of(&mut sorted.rows));
    let (scores, results) = (
        Slots::of(&mut sorted.scores),
        Slots::of(&mut sorted.results),
    );
    columns
        .keys
        .par_chunks(chunk)
        .zip(offsets)
        .enumerate()
        .for_each(|(c, (part, mut next))| {
            let (keys, rows, scores, results) = (keys, rows, scores, results);
            let first = c * chunk;
            for (i, &key) in part.iter().enumerate() {
                let b = (key >> shift) as usize;
                let to = next[b];
                next[b] += 1;
                let from = first + i;
                // SAFETY: chunk c's rows of bucket b go to `offsets[c][b]..` up to its
                // count, ranges disjoint across (chunk, bucket) that end by `len`; the
                // label columns have `len` slots when they are written.
                unsafe {
                    keys.0.add(to).write(key);
                    rows.0.add(to).write(from as u32);
                    if labels {
                        scores.0.add(to).write(columns.scores[from]);
                        results.0.add(to).write(columns.results[from]);
                    }
                }
            }
        });
    // SAFETY: the ranges cover `0..len`, every slot written once above.
    unsafe {
        sorted.keys.set_len(len);
        sorted.rows.set_len(len);
        if labels {
            sorted.scores.set_len(len);
            sorted.results.set_len(len);
        }
    }
    (sorted, starts)
}

/// Groups the rows in memory: buckets by the keys' top bits, then a table per bucket.
fn group_in_memory(columns: KeyColumns, keep: Keep, marks: &Marks) -> Vec<Mean> {
    let len = columns.keys.len();
    let buckets = len.div_ceil(BUCKET_ROWS).max(1).next_power_of_two();
    let bits = buckets.trailing_zeros();
    let (sorted, starts) = if bits == 0 {
        (columns, vec![0, len])
    } else {
        let sorted = scatter(&columns, bits);
        drop(columns);
        sorted
    };
    let mut means = (0..starts.len() - 1)
        .into_par_iter()
        .fold(
            || (Groups::new(keep), Vec::new()),
            |(mut groups, mut means), b| {
                groups.reset(starts[b + 1] - starts[b]);
                for i in starts[b]..starts[b + 1] {
                    groups.add(sorted.seen(i));
                }
                groups.finish(marks, &mut means);
                (groups, means)
            },
        )
        .map(|(_, means)| means)
        .reduce(Vec::new, |mut a, mut b| {
            a.append(&mut b);
            a
        });
    means.par_sort_unstable_by_key(|m| m.row);
    means
}
