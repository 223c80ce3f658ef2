//! Which rows of a DB the filters keep: the row rules in parallel over blocks, then the
//! ordered ones (`--unique`, `--wdl-skip`, `--piece-skip`) over what those kept, in DB
//! order. The training arrays, `features` and `export` all select this way.

use rayon::prelude::*;

use crate::db::{Block, Database, NO_RESULT};
use crate::export::filters::{Dropped, Filter};
use crate::export::random::draw_key;
use crate::export::skips::{Traits, decide_in_order};

/// The rows the filters keep, per block.
pub struct Selection {
    /// `None`: every row of every block.
    rows: Option<Vec<Vec<u32>>>,
    pub count: u64,
    pub dropped: Dropped,
}

impl Selection {
    /// The kept rows of each block, `None` when every row is.
    pub fn rows(&self) -> Option<&Vec<Vec<u32>>> {
        self.rows.as_ref()
    }

    pub fn into_rows(self) -> Option<Vec<Vec<u32>>> {
        self.rows
    }

    /// The kept rows of block `block_index`.
    pub(crate) fn rows_of(&self, block_index: usize, block: &Block<'_>) -> Vec<u32> {
        match &self.rows {
            Some(rows) => rows[block_index].clone(),
            None => (0..block.len as u32).collect(),
        }
    }
}

/// Runs `filter` over `db` (in parallel over blocks).
pub fn select(db: &Database, filter: &Filter) -> anyhow::Result<Selection> {
    select_range(db, 0..db.len(), filter)
}

/// Runs `filter` over the rows `range` of `db`: the row rules in parallel over blocks,
/// then the ordered ones (`--unique`, `--wdl-skip`, `--piece-skip`) over what they kept,
/// in DB order, with the shares of the whole selection.
pub fn select_range(
    db: &Database,
    range: std::ops::Range<u64>,
    filter: &Filter,
) -> anyhow::Result<Selection> {
    let end = range.end.min(db.len());
    if filter.is_empty() && range.start == 0 && end == db.len() {
        return Ok(Selection {
            rows: None,
            count: db.len(),
            dropped: Dropped::default(),
        });
    }
    let n = db.block_size() as u64;
    let ordered = filter.has_ordered_rules();
    type Part = (Vec<u32>, Vec<Traits>, Dropped);
    let per_block: Vec<Part> = (0..db.block_count())
        .into_par_iter()
        .map_init(
            || filter.evaluator(),
            |evaluator, index| -> anyhow::Result<Part> {
                let base = index as u64 * n;
                let rows =
                    range.start.clamp(base, base + n) - base..end.clamp(base, base + n) - base;
                if rows.is_empty() {
                    return Ok((Vec::new(), Vec::new(), Dropped::default()));
                }
                let block = db.block(index)?;
                let rows = rows.start as usize..(rows.end as usize).min(block.len);
                let mut keep = Vec::with_capacity(rows.len());
                let mut dropped = Dropped::default();
                filter.block_rows(
                    &block,
                    rows,
                    base,
                    || db.block(index + 1).ok(),
                    evaluator,
                    &mut keep,
                    &mut dropped,
                );
                let traits = if ordered {
                    keep.iter()
                        .map(|&row| traits_of_row(filter, &block, row as usize, base))
                        .collect()
                } else {
                    Vec::new()
                };
                Ok((keep, traits, dropped))
            },
        )
        .collect::<anyhow::Result<_>>()?;
    let mut dropped = Dropped::default();
    let mut per_block = per_block;
    if ordered {
        let all: Vec<Traits> = per_block
            .iter_mut()
            .flat_map(|(_, traits, _)| std::mem::take(traits))
            .collect();
        let decided = decide_in_order(filter, &all, &mut dropped);
        let mut decided = decided.into_iter();
        for (keep, _, _) in &mut per_block {
            keep.retain(|_| decided.next().expect("one decision a kept row"));
        }
    }
    let mut rows = Vec::with_capacity(per_block.len());
    let mut count = 0;
    for (keep, _, d) in per_block {
        dropped.merge(&d);
        count += keep.len() as u64;
        rows.push(keep);
    }
    Ok(Selection {
        rows: Some(rows),
        count,
        dropped,
    })
}

/// What the ordered rules need of row `row` of `block`, whose row 0 is DB row `base`.
pub fn traits_of_row(filter: &Filter, block: &Block<'_>, row: usize, base: u64) -> Traits {
    let key = if filter.unique {
        block
            .record(row)
            .map_or(0, |r| crate::position::zobrist::full_key(&r.position))
    } else {
        0
    };
    Traits {
        key,
        draw: draw_key(0, 0, base + row as u64),
        result: block.result.map(|c| c[row]).filter(|&r| r != NO_RESULT),
        pieces: (block.colors[0][row].0 | block.colors[1][row].0).count_ones() as u8,
    }
}
