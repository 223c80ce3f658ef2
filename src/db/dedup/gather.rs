//! The kept rows, in DB order, copied column by column into output blocks that the
//! workers build and write in place.

use std::mem::size_of;
use std::path::Path;

use bytemuck::Pod;
use rayon::prelude::*;

use super::partitions::Overrides;
use super::{Event, Mean};
use crate::db::layout::{NO_RESULT, NO_SCORE, NO_SQUARE};
use crate::db::writer::BlockFile;
use crate::db::{Block, Database, DbError, Layout, NO_GAME, NO_PLY, NO_U16};

/// Where kept rows are in the input: per block, the kept rows before it.
pub(super) struct Kept<'a> {
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
pub(super) struct Scratch {
    block: Vec<u64>,
    /// The input rows of the output block, within their blocks.
    rows: Vec<u32>,
    /// (input block, range of `rows`).
    runs: Vec<(usize, std::ops::Range<usize>)>,
}

/// Writes the marked rows of `db`, with the means, to `output`.
pub(super) fn write_kept(
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
pub(super) fn build_block(
    db: &Database,
    kept: &Kept<'_>,
    layout: &Layout,
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
pub(super) fn column<T: Pod>(out: &mut [u8], offset: usize, n: usize) -> &mut [T] {
    bytemuck::cast_slice_mut(&mut out[offset..offset + n * size_of::<T>()])
}

pub(super) fn gather<T: Pod>(
    out: &mut [u8],
    offset: usize,
    n: usize,
    at: usize,
    source: &[T],
    rows: &[u32],
) {
    let target = &mut column::<T>(out, offset, n)[at..at + rows.len()];
    for (t, &r) in target.iter_mut().zip(rows) {
        *t = source[r as usize];
    }
}

/// Copies `rows` of `source`, every column, to rows `at..` of the output block.
pub(super) fn copy_rows(
    out: &mut [u8],
    layout: &Layout,
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
pub(super) fn apply_means(
    out: &mut [u8],
    layout: &Layout,
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
pub(super) fn pad(out: &mut [u8], layout: &Layout, n: usize, len: usize) {
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
