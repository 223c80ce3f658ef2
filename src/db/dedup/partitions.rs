//! The partition pass on disk, for keys that do not fit the memory budget: the rows'
//! entries appended to the partition file of their keys' top bits, each file then grouped
//! with a table of its distinct keys, and the means merged back in row order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::mem::size_of;
use std::path::Path;

use bytemuck::Zeroable;
use rayon::prelude::*;
use tempfile::NamedTempFile;

use super::groups::Groups;
use super::{Entry, Event, Keep, Marks, Mean, Options, block_keys, block_labels};
use crate::db::layout::{NO_RESULT, NO_SCORE};
use crate::db::{Database, DbError};
use crate::io::durable::Pending;

/// Bytes a distinct key may take in a partition's table on disk (slot and group, with the
/// slack of growing them by doubling).
const BYTES_PER_DISTINCT: u64 = 192;
/// Partition files open at once at most: within the common limit of 1,024 open files.
const MAX_PARTITIONS: u64 = 512;

/// Partition files for `rows` rows under `memory` bytes: a power of two, enough that each
/// worker's partition table fits its share.
pub(super) fn partitions_for(db: &Database, rows: u64, memory: u64) -> Result<usize, DbError> {
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
pub(super) fn temp_beside(
    output: &Path,
    suffix: &str,
) -> Result<(NamedTempFile, Pending), DbError> {
    crate::io::durable::temp_file_for(output, ".psdb-dedup-", suffix)
        .map_err(|e| DbError::io(output, e))
}

/// Groups the rows through partition files: the entries appended to the file of their
/// keys' top bits in row order, then each file grouped by one worker with a table of its
/// distinct keys. Returns the means, in files sorted by row.
pub(super) fn group_on_disk<E: Entry>(
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
pub(super) enum Overrides {
    Sorted(Vec<Mean>, usize),
    Files(Merge),
}

/// A merge of the partitions' files of means, each sorted by row.
pub(super) struct Merge {
    heads: Vec<Option<Mean>>,
    readers: Vec<(BufReader<File>, NamedTempFile, Pending)>,
    heap: BinaryHeap<Reverse<(u64, usize)>>,
}

impl Merge {
    pub(super) fn refill(&mut self, i: usize) -> std::io::Result<()> {
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
    pub(super) fn take_below(
        &mut self,
        end: u64,
        out: &mut Vec<Mean>,
        path: &Path,
    ) -> Result<(), DbError> {
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
