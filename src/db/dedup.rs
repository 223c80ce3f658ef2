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
use std::mem::{MaybeUninit, size_of};
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
const BUCKET_ROWS: usize = 2048;
/// More partition files than this and the budget is too small to be worth running.
const MAX_PARTITIONS: u64 = 1 << 16;

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
    let in_memory = rows.saturating_mul(2 * size_of::<E>() as u64) <= options.memory;
    let (overrides, partitions) = if in_memory {
        let entries = keys::<E>(db, progress)?;
        let means = group_in_memory(entries, options.keep, &marks);
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
    const LABELS: bool;
    fn new(key: u64, row: u64, score: i32, result: i8) -> Self;
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
    const LABELS: bool = false;
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
    const LABELS: bool = true;
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

/// The entries of block `index`'s rows into `out` (as long as the block has rows), the
/// block checked as [`Database::block`] checks every read.
fn block_entries<E: Entry>(
    db: &Database,
    index: usize,
    out: &mut [MaybeUninit<E>],
) -> Result<(), DbError> {
    let block = db.block(index)?;
    let first = (index * db.block_size()) as u64;
    let len = block.len;
    let p: [&[u64]; 6] = block.pieces.map(|c| &bytemuck::cast_slice(c)[..len]);
    let c: [&[u64]; 2] = block.colors.map(|c| &bytemuck::cast_slice(c)[..len]);
    let (side, castling, ep) = (
        &block.side_to_move[..len],
        &block.castling[..len],
        &block.en_passant[..len],
    );
    for (i, slot) in out[..len].iter_mut().enumerate() {
        let key = row_key(
            [p[0][i], p[1][i], p[2][i], p[3][i], p[4][i], p[5][i]],
            [c[0][i], c[1][i]],
            side[i],
            castling[i],
            ep[i],
        );
        let (score, result) = if E::LABELS {
            (
                block.score.map_or(NO_SCORE, |s| s[i]),
                block.result.map_or(NO_RESULT, |r| r[i]),
            )
        } else {
            (NO_SCORE, NO_RESULT)
        };
        slot.write(E::new(key, first + i as u64, score, result));
    }
    Ok(())
}

/// Every row's entry, in row order, the blocks keyed in parallel.
fn keys<E: Entry>(db: &Database, progress: &(dyn Fn(Event) + Sync)) -> Result<Vec<E>, DbError> {
    let rows = usize::try_from(db.len()).map_err(|_| DbError::Invalid {
        path: db.path().to_path_buf(),
        what: "too many positions for this machine's address space".to_string(),
    })?;
    let mut entries: Vec<E> = Vec::with_capacity(rows);
    entries.spare_capacity_mut()[..rows]
        .par_chunks_mut(db.block_size())
        .enumerate()
        .try_for_each(|(index, out)| {
            block_entries(db, index, out)?;
            progress(Event::Read(out.len() as u64));
            Ok::<(), DbError>(())
        })?;
    // SAFETY: every chunk is one block's rows, and each block wrote all of its rows.
    unsafe { entries.set_len(rows) };
    Ok(entries)
}

/// A pointer the scatter's workers write through, each to its own slots.
#[derive(Clone, Copy)]
struct Slots<E>(*mut E);
// SAFETY: used only for writes to disjoint slots (see `scatter`).
unsafe impl<E: Send> Send for Slots<E> {}
unsafe impl<E: Send> Sync for Slots<E> {}

/// `entries` ordered by the top `bits` of their keys, each bucket in row order (a stable
/// counting sort, one histogram per chunk of rows), and where each bucket starts.
fn scatter<E: Entry>(entries: &[E], bits: u32) -> (Vec<E>, Vec<usize>) {
    let buckets = 1usize << bits;
    let shift = 64 - bits;
    let chunk = entries
        .len()
        .div_ceil(rayon::current_num_threads() * 4)
        .max(1);
    let counts: Vec<Vec<usize>> = entries
        .par_chunks(chunk)
        .map(|part| {
            let mut counts = vec![0usize; buckets];
            for e in part {
                counts[(e.key() >> shift) as usize] += 1;
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
    let mut sorted: Vec<E> = Vec::with_capacity(entries.len());
    let slots = Slots(sorted.as_mut_ptr());
    entries
        .par_chunks(chunk)
        .zip(offsets)
        .for_each(|(part, mut next)| {
            let slots = slots;
            for e in part {
                let b = (e.key() >> shift) as usize;
                // SAFETY: chunk c's rows of bucket b go to `offsets[c][b]..` up to its count,
                // ranges that are disjoint across (chunk, bucket) and end by `entries.len()`.
                unsafe { slots.0.add(next[b]).write(*e) };
                next[b] += 1;
            }
        });
    // SAFETY: the ranges cover `0..entries.len()`, every slot written once above.
    unsafe { sorted.set_len(entries.len()) };
    (sorted, starts)
}

/// Groups the rows in memory: buckets by the keys' top bits, then a table per bucket.
fn group_in_memory<E: Entry>(entries: Vec<E>, keep: Keep, marks: &Marks) -> Vec<Mean> {
    let buckets = entries
        .len()
        .div_ceil(BUCKET_ROWS)
        .max(1)
        .next_power_of_two();
    let bits = buckets.trailing_zeros();
    let (sorted, starts) = if bits == 0 {
        let len = entries.len();
        (entries, vec![0, len])
    } else {
        scatter(&entries, bits)
    };
    let mut means = (0..starts.len() - 1)
        .into_par_iter()
        .fold(
            || (Groups::default(), Vec::new()),
            |(mut groups, mut means), b| {
                let bucket = &sorted[starts[b]..starts[b + 1]];
                groups.reset(bucket.len());
                for e in bucket {
                    groups.add(e);
                }
                groups.finish(keep, marks, &mut means);
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
    fn new<E: Entry>(e: &E) -> Group {
        let mut group = Group {
            first: e.row(),
            last: e.row(),
            count: 1,
            score_sum: 0,
            scores: 0,
            result_sum: 0,
            results: 0,
        };
        group.add_labels(e);
        group
    }

    fn add<E: Entry>(&mut self, e: &E) {
        self.last = e.row();
        self.count += 1;
        self.add_labels(e);
    }

    #[inline]
    fn add_labels<E: Entry>(&mut self, e: &E) {
        if E::LABELS {
            if e.score() != NO_SCORE {
                self.score_sum += i64::from(e.score());
                self.scores += 1;
            }
            if e.result() != NO_RESULT {
                self.result_sum += i64::from(e.result());
                self.results += 1;
            }
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

/// An open-addressing table from key to group, in first-seen order.
#[derive(Default)]
struct Groups {
    /// (key, group index + 1); 0 marks an empty slot.
    slots: Vec<(u64, usize)>,
    groups: Vec<Group>,
}

impl Groups {
    /// Empties the table, sized for `expected` keys without growing.
    fn reset(&mut self, expected: usize) {
        let capacity = (expected * 2).next_power_of_two().max(16);
        self.slots.clear();
        self.slots.resize(capacity, (0, 0));
        self.groups.clear();
    }

    #[inline]
    fn add<E: Entry>(&mut self, e: &E) {
        if (self.groups.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let key = e.key();
        let mask = self.slots.len() - 1;
        // The keys' low bits: the top ones chose the bucket or partition.
        let mut i = key as usize & mask;
        loop {
            let (k, g) = self.slots[i];
            if g == 0 {
                self.groups.push(Group::new(e));
                self.slots[i] = (key, self.groups.len());
                return;
            }
            if k == key {
                self.groups[g - 1].add(e);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![(0, 0); (old.len() * 2).max(16)];
        let mask = self.slots.len() - 1;
        for (key, g) in old.into_iter().filter(|&(_, g)| g != 0) {
            let mut i = key as usize & mask;
            while self.slots[i].1 != 0 {
                i = (i + 1) & mask;
            }
            self.slots[i] = (key, g);
        }
    }

    /// Marks each group's kept row; keeping the mean, adds the means of groups of more
    /// than one row.
    fn finish(&self, keep: Keep, marks: &Marks, means: &mut Vec<Mean>) {
        for group in &self.groups {
            match keep {
                Keep::First => marks.set(group.first),
                Keep::Last => marks.set(group.last),
                Keep::Mean => {
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
                "a memory budget of {memory} bytes is too small for {rows} positions \
                 ({needed} partition files); give more (--memory)"
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
    let mut batch: Vec<E> = Vec::new();
    for first in (0..db.block_count()).step_by(batch_blocks) {
        let last = (first + batch_blocks).min(db.block_count());
        let rows = ((last * n) as u64).min(db.len()) as usize - first * n;
        batch.clear();
        batch.reserve(rows);
        batch.spare_capacity_mut()[..rows]
            .par_chunks_mut(n)
            .enumerate()
            .try_for_each(|(i, out)| block_entries(db, first + i, out))?;
        // SAFETY: each chunk is one block's rows, all written.
        unsafe { batch.set_len(rows) };
        for e in &batch {
            writers[(e.key() >> shift) as usize]
                .write_all(bytemuck::bytes_of(e))
                .map_err(io)?;
        }
        progress(Event::Read(rows as u64));
    }
    for writer in writers {
        writer.into_inner().map_err(|e| io(e.into_error()))?;
    }
    drop(batch);
    let means = files
        .into_par_iter()
        .map(|(file, pending)| {
            let mut groups = Groups::default();
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
                    groups.add(e);
                }
                left -= take;
            }
            drop((file, pending));
            if options.keep != Keep::Mean {
                groups.finish(options.keep, marks, &mut Vec::new());
                return Ok(None);
            }
            let mut means = Vec::new();
            groups.finish(options.keep, marks, &mut means);
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
        let mut group = Group::new(&entries[0]);
        for e in &entries[1..] {
            group.add(e);
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
        let mut groups = Groups::default();
        groups.reset(0);
        // Keys equal in their low bits collide in every table size.
        let keys: Vec<u64> = (0..1000u64).map(|i| (i % 300) << 40).collect();
        for (row, &key) in keys.iter().enumerate() {
            groups.add(&KeyRow {
                key,
                row: row as u64,
            });
        }
        assert_eq!(groups.groups.len(), 300);
        for (i, g) in groups.groups.iter().enumerate() {
            assert_eq!(g.first, i as u64);
            assert_eq!(g.last, 900 + i as u64 - if i >= 100 { 300 } else { 0 });
            assert_eq!(g.count, if i < 100 { 4 } else { 3 });
        }
    }
}
