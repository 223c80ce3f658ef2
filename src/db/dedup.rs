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

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::mem::size_of;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use bytemuck::{Pod, Zeroable};
use rayon::prelude::*;
use tempfile::NamedTempFile;

use super::layout::{NO_RESULT, NO_SCORE, NO_SQUARE};
use super::writer::BlockFile;
use super::{Block, Database, DbError, NO_GAME, NO_PLY, NO_U16};
use crate::io::durable::Pending;
use crate::position::zobrist::row_key;

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

/// Bytes a distinct key may take in a partition's table on disk (slot and group, with the
/// slack of growing them by doubling).
const BYTES_PER_DISTINCT: u64 = 192;
/// Rows of a bucket in memory: its table (slots and groups) stays in a core's L2.
const BUCKET_ROWS: usize = 8192;
/// Partition files open at once at most: within the common limit of 1,024 open files.
const MAX_PARTITIONS: u64 = 512;

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

/// A row as a group takes it.
#[derive(Clone, Copy)]
struct Seen {
    key: u64,
    row: u64,
    score: i32,
    result: i8,
}

/// The rows of one position so far.
#[derive(Clone, Copy)]
struct Group {
    first: u64,
    last: u64,
    count: u64,
    score_sum: i64,
    scores: u64,
    result_sum: i64,
    results: u64,
}

impl Group {
    fn new(e: Seen) -> Group {
        let mut group = Group {
            first: e.row,
            last: e.row,
            count: 1,
            score_sum: 0,
            scores: 0,
            result_sum: 0,
            results: 0,
        };
        group.add_labels(e);
        group
    }

    fn add(&mut self, e: Seen) {
        self.last = e.row;
        self.count += 1;
        self.add_labels(e);
    }

    #[inline]
    fn add_labels(&mut self, e: Seen) {
        if e.score != NO_SCORE {
            self.score_sum += i64::from(e.score);
            self.scores += 1;
        }
        if e.result != NO_RESULT {
            self.result_sum += i64::from(e.result);
            self.results += 1;
        }
    }

    /// The mean score, rounded half away from zero (so that White's and Black's views
    /// round alike); "none" when no row has a score.
    fn mean_score(&self) -> i32 {
        if self.scores == 0 {
            return NO_SCORE;
        }
        let (sum, n) = (self.score_sum.unsigned_abs(), self.scores);
        let rounded = ((2 * sum as u128 + n as u128) / (2 * n as u128)) as i64;
        // The mean of i32s other than i32::MIN stays among them.
        (rounded * self.score_sum.signum()) as i32
    }

    /// The mean result rounded to the nearest of -1, 0, 1: decisive only when more than
    /// half the way there, so an exact tie (one win, one draw) is a draw.
    fn mean_result(&self) -> i8 {
        if self.results == 0 {
            return NO_RESULT;
        }
        if 2 * self.result_sum.unsigned_abs() > self.results {
            self.result_sum.signum() as i8
        } else {
            0
        }
    }
}

/// An open-addressing table from key to the rows of its position: keeping the first or
/// the last, the row itself sits in the slot; keeping the mean, a [`Group`] of the rows.
struct Groups {
    keep: Keep,
    /// (key, row + 1 or group index + 1); 0 marks an empty slot.
    slots: Vec<(u64, u64)>,
    distinct: usize,
    groups: Vec<Group>,
}

impl Groups {
    fn new(keep: Keep) -> Groups {
        Groups {
            keep,
            slots: Vec::new(),
            distinct: 0,
            groups: Vec::new(),
        }
    }

    /// Empties the table, sized for `expected` keys without growing.
    fn reset(&mut self, expected: usize) {
        let capacity = (expected * 2).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(capacity, (0, 0));
        self.distinct = 0;
        self.groups.clear();
    }

    #[inline]
    fn add(&mut self, e: Seen) {
        if (self.distinct + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = e.key;
        let mask = self.slots.len() - 1;
        // The keys' low bits: the top ones chose the bucket or partition.
        let mut i = key as usize & mask;
        loop {
            let (k, value) = self.slots[i];
            if value == 0 {
                self.distinct += 1;
                self.slots[i] = (
                    key,
                    if self.keep == Keep::Mean {
                        self.groups.push(Group::new(e));
                        self.groups.len() as u64
                    } else {
                        e.row + 1
                    },
                );
                return;
            }
            if k == key {
                match self.keep {
                    Keep::First => {}
                    Keep::Last => self.slots[i].1 = e.row + 1,
                    Keep::Mean => self.groups[value as usize - 1].add(e),
                }
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0); (old.len() * 2).max(16)];
        let mask = self.slots.len() - 1;
        for (key, value) in old.into_iter().filter(|&(_, value)| value != 0) {
            let mut i = key as usize & mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, value);
        }
    }

    /// Marks each position's kept row; keeping the mean, adds the means of positions of
    /// more than one row.
    fn finish(&self, marks: &Marks, means: &mut Vec<Mean>) {
        if self.keep != Keep::Mean {
            for &(_, value) in &self.slots {
                if value != 0 {
                    marks.set(value - 1);
                }
            }
            return;
        }
        for group in &self.groups {
            marks.set(group.first);
            if group.count > 1 {
                means.push(Mean {
                    row: group.first,
                    score: group.mean_score(),
                    result: group.mean_result(),
                    _padding: [0; 3],
                });
            }
        }
    }
}

/// Partition files for `rows` rows under `memory` bytes: a power of two, enough that each
/// worker's partition table fits its share.
fn partitions_for(db: &Database, rows: u64, memory: u64) -> Result<usize, DbError> {
    let threads = rayon::current_num_threads() as u64;
    let needed = rows
        .saturating_mul(BYTES_PER_DISTINCT)
        .saturating_mul(threads)
        .div_ceil(memory.max(1))
        .max(2)
        .next_power_of_two();
    if needed > MAX_PARTITIONS {
        return Err(DbError::Invalid {
            path: db.path().to_path_buf(),
            what: format!(
                "a memory budget of {memory} bytes is too small for {rows} positions: the \
                 partition pass needs at least {} bytes (--memory)",
                rows.saturating_mul(BYTES_PER_DISTINCT * threads)
                    .div_ceil(MAX_PARTITIONS)
            ),
        });
    }
    Ok(needed as usize)
}

/// A temporary file beside `output`, removed when dropped or on an interrupt.
fn temp_beside(output: &Path, suffix: &str) -> Result<(NamedTempFile, Pending), DbError> {
    crate::io::durable::temp_file_for(output, ".psdb-dedup-", suffix)
        .map_err(|e| DbError::io(output, e))
}

/// Groups the rows through partition files: the entries appended to the file of their
/// keys' top bits in row order, then each file grouped by one worker with a table of its
/// distinct keys. Returns the means, in files sorted by row.
fn group_on_disk<E: Entry>(
    db: &Database,
    output: &Path,
    options: &Options,
    partitions: usize,
    marks: &Marks,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<Overrides, DbError> {
    let shift = 64 - partitions.trailing_zeros();
    let threads = rayon::current_num_threads();
    let n = db.block_size();
    let buffer = (options.memory / (4 * partitions as u64)).clamp(4096, 1 << 20) as usize;
    let batch_blocks =
        (options.memory / (4 * (n * size_of::<E>()) as u64)).clamp(1, 4 * threads as u64) as usize;
    let files = (0..partitions)
        .map(|_| temp_beside(output, ".part"))
        .collect::<Result<Vec<_>, _>>()?;
    let io = |e| DbError::io(output, e);
    let mut writers = files
        .iter()
        .map(|(file, _)| Ok(BufWriter::with_capacity(buffer, file.reopen()?)))
        .collect::<Result<Vec<_>, std::io::Error>>()
        .map_err(io)?;
    let labels = options.keep == Keep::Mean;
    let mut keys = vec![0u64; batch_blocks * n];
    let (mut scores, mut results) = if labels {
        (vec![0i32; batch_blocks * n], vec![0i8; batch_blocks * n])
    } else {
        (Vec::new(), Vec::new())
    };
    for first in (0..db.block_count()).step_by(batch_blocks) {
        let last = (first + batch_blocks).min(db.block_count());
        let rows = ((last * n) as u64).min(db.len()) as usize - first * n;
        keys[..rows]
            .par_chunks_mut(n)
            .enumerate()
            .try_for_each(|(i, out)| block_keys(db, first + i, out))?;
        if labels {
            scores[..rows]
                .par_chunks_mut(n)
                .zip(results[..rows].par_chunks_mut(n))
                .enumerate()
                .try_for_each(|(i, (s, r))| block_labels(db, first + i, s, r))?;
        }
        for (i, &key) in keys[..rows].iter().enumerate() {
            let row = (first * n + i) as u64;
            let (score, result) = if labels {
                (scores[i], results[i])
            } else {
                (NO_SCORE, NO_RESULT)
            };
            writers[(key >> shift) as usize]
                .write_all(bytemuck::bytes_of(&E::new(key, row, score, result)))
                .map_err(io)?;
        }
        progress(Event::Read(rows as u64));
    }
    for writer in writers {
        writer.into_inner().map_err(|e| io(e.into_error()))?;
    }
    drop((keys, scores, results));
    let means = files
        .into_par_iter()
        .map(|(file, pending)| {
            let mut groups = Groups::new(options.keep);
            groups.reset(0);
            let mut reader = BufReader::with_capacity(buffer, file.reopen().map_err(io)?);
            let mut chunk = vec![E::zeroed(); (buffer / size_of::<E>()).max(1)];
            let mut left = file.as_file().metadata().map_err(io)?.len() as usize / size_of::<E>();
            while left > 0 {
                let take = left.min(chunk.len());
                reader
                    .read_exact(bytemuck::cast_slice_mut(&mut chunk[..take]))
                    .map_err(io)?;
                for e in &chunk[..take] {
                    groups.add(e.seen());
                }
                left -= take;
            }
            drop((file, pending));
            let mut means = Vec::new();
            groups.finish(marks, &mut means);
            if options.keep != Keep::Mean {
                return Ok(None);
            }
            drop(groups);
            means.sort_unstable_by_key(|m| m.row);
            let (file, pending) = temp_beside(output, ".means")?;
            let mut out = BufWriter::with_capacity(buffer, file.reopen().map_err(io)?);
            out.write_all(bytemuck::cast_slice(&means)).map_err(io)?;
            out.flush().map_err(io)?;
            Ok(Some((file, pending)))
        })
        .collect::<Result<Vec<_>, DbError>>()?;
    let mut merge = Merge {
        heads: Vec::new(),
        readers: Vec::new(),
        heap: BinaryHeap::new(),
    };
    for (file, pending) in means.into_iter().flatten() {
        let reader = BufReader::with_capacity(buffer, file.reopen().map_err(io)?);
        merge.readers.push((reader, file, pending));
        merge.heads.push(None);
        merge.refill(merge.readers.len() - 1).map_err(io)?;
    }
    Ok(Overrides::Files(merge))
}

/// The means of duplicated positions, handed out in row order.
enum Overrides {
    Sorted(Vec<Mean>, usize),
    Files(Merge),
}

/// A merge of the partitions' files of means, each sorted by row.
struct Merge {
    heads: Vec<Option<Mean>>,
    readers: Vec<(BufReader<File>, NamedTempFile, Pending)>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
}

impl Merge {
    fn refill(&mut self, i: usize) -> std::io::Result<()> {
        let mut mean = Mean::zeroed();
        match self.readers[i]
            .0
            .read_exact(bytemuck::bytes_of_mut(&mut mean))
        {
            Ok(()) => {
                self.heads[i] = Some(mean);
                self.heap.push(Reverse((mean.row, i)));
                Ok(())
            }
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.heads[i] = None;
                Ok(())
            }
            Err(e) => Err(e),
        }
    }
}

impl Overrides {
    /// The means of rows before `end` not handed out yet, in row order, into `out`.
    fn take_below(&mut self, end: u64, out: &mut Vec<Mean>, path: &Path) -> Result<(), DbError> {
        out.clear();
        match self {
            Overrides::Sorted(means, next) => {
                let until = *next + means[*next..].partition_point(|m| m.row < end);
                out.extend_from_slice(&means[*next..until]);
                *next = until;
            }
            Overrides::Files(merge) => {
                while let Some(&Reverse((row, i))) = merge.heap.peek() {
                    if row >= end {
                        break;
                    }
                    merge.heap.pop();
                    out.push(merge.heads[i].expect("a head in the heap"));
                    merge.refill(i).map_err(|e| DbError::io(path, e))?;
                }
            }
        }
        Ok(())
    }
}

/// Where kept rows are in the input: per block, the kept rows before it.
struct Kept<'a> {
    marks: &'a [u64],
    before: Vec<u64>,
    block_size: usize,
}

impl Kept<'_> {
    /// The input row of kept row `k`, which must exist.
    fn input_row(&self, k: u64) -> u64 {
        let block = self.before.partition_point(|&b| b <= k) - 1;
        let mut skip = k - self.before[block];
        let words = self.block_size / 64;
        for w in block * words..(block + 1) * words {
            let mut bits = self.marks[w];
            let count = u64::from(bits.count_ones());
            if skip < count {
                for _ in 0..skip {
                    bits &= bits - 1;
                }
                return w as u64 * 64 + u64::from(bits.trailing_zeros());
            }
            skip -= count;
        }
        unreachable!("kept row {k} is counted in block {block}")
    }
}

/// One worker's buffers for building output blocks.
struct Scratch {
    block: Vec<u64>,
    /// The input rows of the output block, within their blocks.
    rows: Vec<u32>,
    /// (input block, range of `rows`).
    runs: Vec<(usize, std::ops::Range<usize>)>,
}

/// Writes the marked rows of `db`, with the means, to `output`.
fn write_kept(
    db: &Database,
    marks: &[u64],
    kept: u64,
    mut overrides: Overrides,
    output: &Path,
    progress: &(dyn Fn(Event) + Sync),
) -> Result<(), DbError> {
    let n = db.block_size();
    let words = n / 64;
    let counts: Vec<u64> = marks
        .par_chunks(words.max(1))
        .map(|w| w.iter().map(|w| u64::from(w.count_ones())).sum())
        .collect();
    let mut before = Vec::with_capacity(counts.len() + 1);
    let mut at = 0;
    before.push(0);
    for c in counts {
        at += c;
        before.push(at);
    }
    let kept_rows = Kept {
        marks,
        before,
        block_size: n,
    };
    let file = BlockFile::create(output, n as u32, db.columns(), kept)?;
    let layout = file.layout();
    let out_blocks = kept.div_ceil(n as u64);
    let window = (rayon::current_num_threads() as u64 * 16).max(1);
    let mut crc = crc32fast::Hasher::new();
    let mut means = Vec::new();
    for start in (0..out_blocks).step_by(window as usize) {
        let end = (start + window).min(out_blocks);
        let end_row = if end * n as u64 >= kept {
            u64::MAX
        } else {
            kept_rows.input_row(end * n as u64)
        };
        overrides.take_below(end_row, &mut means, output)?;
        let crcs = (start..end)
            .into_par_iter()
            .map_init(
                || Scratch {
                    block: vec![0; layout.block_bytes as usize / 8],
                    rows: Vec::with_capacity(n),
                    runs: Vec::new(),
                },
                |scratch, j| {
                    let len = (kept - j * n as u64).min(n as u64) as usize;
                    build_block(db, &kept_rows, &layout, j * n as u64, len, &means, scratch)?;
                    let crc = file.write_block(j, bytemuck::cast_slice_mut(&mut scratch.block))?;
                    progress(Event::Written(len as u64));
                    Ok::<u32, DbError>(crc)
                },
            )
            .collect::<Result<Vec<u32>, DbError>>()?;
        for c in crcs {
            crc.update(&c.to_le_bytes());
        }
    }
    file.finish(crc.finalize())?;
    Ok(())
}

/// Fills `scratch.block` with kept rows `first..first + len`, padded.
fn build_block(
    db: &Database,
    kept: &Kept<'_>,
    layout: &super::Layout,
    first: u64,
    len: usize,
    means: &[Mean],
    scratch: &mut Scratch,
) -> Result<(), DbError> {
    let n = kept.block_size;
    scratch.rows.clear();
    scratch.runs.clear();
    let start = kept.input_row(first);
    let mut w = (start / 64) as usize;
    let mut bits = kept.marks[w] & (!0u64 << (start % 64));
    while scratch.rows.len() < len {
        while bits == 0 {
            w += 1;
            bits = kept.marks[w];
        }
        let row = w * 64 + bits.trailing_zeros() as usize;
        bits &= bits - 1;
        let block = row / n;
        let at = scratch.rows.len();
        match scratch.runs.last_mut() {
            Some((b, range)) if *b == block => range.end = at + 1,
            _ => scratch.runs.push((block, at..at + 1)),
        }
        scratch.rows.push((row % n) as u32);
    }
    let out: &mut [u8] = bytemuck::cast_slice_mut(&mut scratch.block);
    for (block, range) in &scratch.runs {
        let source = db.block_checked_before(*block)?;
        let rows = &scratch.rows[range.clone()];
        copy_rows(out, layout, n, range.start, &source, rows);
        if !means.is_empty() {
            apply_means(out, layout, n, range.start, (block * n) as u64, rows, means);
        }
    }
    pad(out, layout, n, len);
    Ok(())
}

/// The column of `T`s at `offset` of an `n`-row block.
fn column<T: Pod>(out: &mut [u8], offset: usize, n: usize) -> &mut [T] {
    bytemuck::cast_slice_mut(&mut out[offset..offset + n * size_of::<T>()])
}

fn gather<T: Pod>(out: &mut [u8], offset: usize, n: usize, at: usize, source: &[T], rows: &[u32]) {
    let target = &mut column::<T>(out, offset, n)[at..at + rows.len()];
    for (t, &r) in target.iter_mut().zip(rows) {
        *t = source[r as usize];
    }
}

/// Copies `rows` of `source`, every column, to rows `at..` of the output block.
fn copy_rows(
    out: &mut [u8],
    layout: &super::Layout,
    n: usize,
    at: usize,
    source: &Block<'_>,
    rows: &[u32],
) {
    for (i, &offset) in layout.bitboards.iter().enumerate() {
        let column = if i < 6 {
            source.pieces[i]
        } else {
            source.colors[i - 6]
        };
        gather(out, offset, n, at, column, rows);
    }
    gather(out, layout.side_to_move, n, at, source.side_to_move, rows);
    gather(out, layout.castling, n, at, source.castling, rows);
    gather(out, layout.en_passant, n, at, source.en_passant, rows);
    gather(
        out,
        layout.halfmove_clock,
        n,
        at,
        source.halfmove_clock,
        rows,
    );
    gather(
        out,
        layout.fullmove_number,
        n,
        at,
        source.fullmove_number,
        rows,
    );
    // The output has the input's columns: each is in both or in neither.
    if let (Some(o), Some(c)) = (layout.result, source.result) {
        gather(out, o, n, at, c, rows);
    }
    if let (Some(o), Some(c)) = (layout.score, source.score) {
        gather(out, o, n, at, c, rows);
    }
    if let (Some(o), Some(c)) = (layout.game_id, source.game_id) {
        gather(out, o, n, at, c, rows);
    }
    if let (Some(o), Some(c)) = (layout.ply, source.ply) {
        gather(out, o, n, at, c, rows);
    }
    for (offset, c) in layout.u16_labels.iter().zip(source.u16_labels) {
        if let (Some(o), Some(c)) = (*offset, c) {
            gather(out, o, n, at, c, rows);
        }
    }
}

/// Puts the means of the rows that have one (`means` sorted by row) over the copied score
/// and result of output rows `at..` (input rows `first + rows[i]`).
fn apply_means(
    out: &mut [u8],
    layout: &super::Layout,
    n: usize,
    at: usize,
    first: u64,
    rows: &[u32],
    means: &[Mean],
) {
    let from = means.partition_point(|m| m.row < first + u64::from(rows[0]));
    let mut means = means[from..].iter().peekable();
    for (i, &r) in rows.iter().enumerate() {
        let row = first + u64::from(r);
        while means.next_if(|m| m.row < row).is_some() {}
        if let Some(mean) = means.next_if(|m| m.row == row) {
            if let Some(o) = layout.score {
                column::<i32>(out, o, n)[at + i] = mean.score;
            }
            if let Some(o) = layout.result {
                column::<i8>(out, o, n)[at + i] = mean.result;
            }
        }
    }
}

/// Rows `len..` of the block as padding (empty boards, unknown labels), as
/// [`super::DbWriter`] writes them.
fn pad(out: &mut [u8], layout: &super::Layout, n: usize, len: usize) {
    if len == n {
        return;
    }
    for &offset in &layout.bitboards {
        column::<u64>(out, offset, n)[len..].fill(0);
    }
    column::<u8>(out, layout.side_to_move, n)[len..].fill(0);
    column::<u16>(out, layout.castling, n)[len..].fill(0);
    column::<u8>(out, layout.en_passant, n)[len..].fill(NO_SQUARE);
    column::<u16>(out, layout.halfmove_clock, n)[len..].fill(0);
    column::<u16>(out, layout.fullmove_number, n)[len..].fill(0);
    if let Some(o) = layout.result {
        column::<i8>(out, o, n)[len..].fill(NO_RESULT);
    }
    if let Some(o) = layout.score {
        column::<i32>(out, o, n)[len..].fill(NO_SCORE);
    }
    if let Some(o) = layout.game_id {
        column::<u32>(out, o, n)[len..].fill(NO_GAME);
    }
    if let Some(o) = layout.ply {
        column::<u16>(out, o, n)[len..].fill(NO_PLY);
    }
    for o in layout.u16_labels.iter().flatten() {
        column::<u16>(out, *o, n)[len..].fill(NO_U16);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(scores: &[i32], results: &[i8]) -> Group {
        let entries: Vec<KeyRowLabels> = (0..scores.len().max(results.len()))
            .map(|i| {
                KeyRowLabels::new(
                    7,
                    i as u64,
                    scores.get(i).copied().unwrap_or(NO_SCORE),
                    results.get(i).copied().unwrap_or(NO_RESULT),
                )
            })
            .collect();
        let mut group = Group::new(entries[0].seen());
        for e in &entries[1..] {
            group.add(e.seen());
        }
        group
    }

    #[test]
    fn mean_score_rounds_half_away_from_zero() {
        assert_eq!(group(&[10, 11], &[]).mean_score(), 11);
        assert_eq!(group(&[-10, -11], &[]).mean_score(), -11);
        assert_eq!(group(&[10, 10, 11], &[]).mean_score(), 10);
        assert_eq!(group(&[NO_SCORE, 30], &[]).mean_score(), 30);
        assert_eq!(group(&[NO_SCORE, NO_SCORE], &[]).mean_score(), NO_SCORE);
        assert_eq!(group(&[i32::MAX, i32::MAX], &[]).mean_score(), i32::MAX);
        assert_eq!(
            group(&[i32::MIN + 1, i32::MIN + 1], &[]).mean_score(),
            i32::MIN + 1
        );
    }

    #[test]
    fn mean_result_is_decisive_only_past_half_way() {
        assert_eq!(group(&[], &[1, 0]).mean_result(), 0);
        assert_eq!(group(&[], &[1, 1, 0]).mean_result(), 1);
        assert_eq!(group(&[], &[-1, -1, 0]).mean_result(), -1);
        assert_eq!(group(&[], &[1, -1]).mean_result(), 0);
        assert_eq!(group(&[], &[NO_RESULT, -1]).mean_result(), -1);
        assert_eq!(group(&[], &[NO_RESULT, NO_RESULT]).mean_result(), NO_RESULT);
    }

    #[test]
    fn the_table_groups_keys_through_growth_and_collisions() {
        // Keys equal in their low bits collide in every table size; key i % 300 at row i.
        let keys: Vec<u64> = (0..1000u64).map(|i| (i % 300) << 40).collect();
        let last = |i: u64| if i < 100 { 900 + i } else { 600 + i };
        for keep in [Keep::First, Keep::Last, Keep::Mean] {
            let mut groups = Groups::new(keep);
            groups.reset(0);
            for (row, &key) in keys.iter().enumerate() {
                groups.add(KeyRowLabels::new(key, row as u64, row as i32, 0).seen());
            }
            let marks = Marks((0..16).map(|_| AtomicU64::new(0)).collect());
            let mut means = Vec::new();
            groups.finish(&marks, &mut means);
            let marked: Vec<u64> = (0..1000)
                .filter(|&r| marks.0[r as usize / 64].load(Ordering::Relaxed) >> (r % 64) & 1 != 0)
                .collect();
            let expected: Vec<u64> = match keep {
                Keep::First | Keep::Mean => (0..300).collect(),
                Keep::Last => {
                    let mut rows: Vec<u64> = (0..300).map(last).collect();
                    rows.sort();
                    rows
                }
            };
            assert_eq!(marked, expected, "{keep:?}");
            if keep == Keep::Mean {
                assert_eq!(means.len(), 300);
                for m in &means {
                    let rows: Vec<i64> = (m.row as i64..1000).step_by(300).collect();
                    let mean = rows.iter().sum::<i64>() as f64 / rows.len() as f64;
                    assert_eq!(m.score, mean.round() as i32, "row {}", m.row);
                }
            }
        }
    }
}
