//! A DB's scores, or breakdown rows, as a table ([`ScoreTable`]) by either evaluator: the
//! hand-crafted terms ([`crate::eval::batch`]) or the network ([`crate::nnue::bulk`]).

use std::sync::OnceLock;

use crate::db::{Block, Database};
use crate::eval::Prepared;
use crate::eval::batch::{
    BREAKDOWN_WIDTH, breakdown_names, rows_breakdown, rows_scores, turn_for_black,
};
use crate::eval::features::Path;
use crate::io::table::{ColumnType, TableSource};
use crate::nnue::NnueEvaluator;

/// Scores, or breakdown rows, of every position of a DB as a table: one piece a DB block.
pub struct ScoreTable<'a> {
    pub db: &'a Database,
    pub path: Path,
    pub prepared: &'a Prepared,
    /// Breakdown rows ([`BREAKDOWN_WIDTH`] values) rather than scores alone.
    pub breakdown: bool,
    /// Whether column 0 is the position's index.
    pub with_index: bool,
    /// Scores from the side to move's point of view rather than White's.
    pub stm_pov: bool,
    /// Add `win`, `draw` and `loss` columns (per mille, from the scores' point of view) by
    /// the WDL model of [`crate::eval::wdl`].
    pub wdl: bool,
    /// Score with this network rather than the terms (`path` and `prepared` unused; no
    /// breakdown): every worker clones the evaluator and carries it through its rows in
    /// order ([`crate::nnue::bulk`]).
    pub network: Option<&'a NnueEvaluator>,
    /// The network's scores of a DB in no order, from [`TableSource::prepare`]
    /// ([`crate::nnue::bulk::sorted_scores`]); leave it `Default::default()`.
    pub sorted: SortedScores,
}

/// Scores computed before the table's pieces, in an order of the pass's own (empty until
/// then, and where the DB's own order serves).
#[derive(Default)]
pub struct SortedScores(OnceLock<Option<Vec<i32>>>);

impl ScoreTable<'_> {
    /// The table's columns: the index if asked for, then the score or the breakdown.
    pub fn columns(&self) -> Vec<(String, ColumnType)> {
        let mut columns = Vec::new();
        if self.with_index {
            columns.push(("index".to_string(), ColumnType::U64));
        }
        if self.breakdown {
            columns.extend(breakdown_names().into_iter().map(|n| (n, ColumnType::I32)));
        } else {
            columns.push(("score".to_string(), ColumnType::I32));
        }
        if self.wdl {
            for name in ["win", "draw", "loss"] {
                columns.push((name.to_string(), ColumnType::I32));
            }
        }
        columns
    }

    /// Values a position: the score or breakdown, then the WDL columns.
    fn width(&self) -> usize {
        self.score_width() + if self.wdl { 3 } else { 0 }
    }

    fn score_width(&self) -> usize {
        if self.breakdown { BREAKDOWN_WIDTH } else { 1 }
    }
}

/// Fills the last three values of each row with the WDL of its score (the row's first
/// value), from the side the score is from: the side to move's with `stm_pov`, else White's.
fn fill_wdl(block: &Block<'_>, values: &mut [i32], width: usize, stm_pov: bool) {
    for (row, values) in values.chunks_exact_mut(width).enumerate().take(block.len) {
        let count = |bitboards: &[crate::Bitboard]| bitboards[row].count();
        let material = crate::eval::wdl::material(
            count(block.pieces[0]),
            count(block.pieces[1]),
            count(block.pieces[2]),
            count(block.pieces[3]),
            count(block.pieces[4]),
        );
        // Turned to the side to move for the model, and back.
        let turn = block.side_to_move[row] != 0 && !stm_pov;
        let stm = crate::eval::wdl::wdl(if turn { -values[0] } else { values[0] }, material);
        let shown = if turn { stm.flipped() } else { stm };
        values[width - 3] = shown.win as i32;
        values[width - 2] = shown.draw as i32;
        values[width - 1] = shown.loss as i32;
    }
}

impl TableSource for ScoreTable<'_> {
    /// The block's values, the index of its first position, the worker's evaluator.
    type Scratch = (Vec<i32>, u64, Option<NnueEvaluator>);
    type Error = anyhow::Error;

    fn scratch(&self) -> Self::Scratch {
        (
            vec![0; self.width() * self.db.block_size()],
            0,
            self.network.cloned(),
        )
    }

    fn prepare(&self, done: &(dyn Fn(usize) + Sync)) -> anyhow::Result<bool> {
        let Some(evaluator) = self.network else {
            return Ok(false);
        };
        // A table filled again (another output) copies what the first fill computed; its
        // pieces then report their rows.
        if self.sorted.0.get().is_some() {
            return Ok(false);
        }
        let scores = crate::nnue::bulk::sorted_scores(
            self.db,
            evaluator,
            crate::nnue::bulk::SORT_WINDOW_ROWS,
            done,
        )?;
        let reported = scores.is_some();
        // Set before any piece reads it.
        let _ = self.sorted.0.set(scores);
        Ok(reported)
    }

    fn compute(
        &self,
        (out, first, network): &mut Self::Scratch,
        piece: usize,
    ) -> anyhow::Result<usize> {
        let n = self.db.block_size();
        let sorted = self.sorted.0.get().and_then(Option::as_deref);
        // The sorted pass checked every block already.
        let block = match sorted {
            Some(_) => self.db.block_checked_before(piece)?,
            None => self.db.block(piece)?,
        };
        let (width, score_width) = (self.width(), self.score_width());
        let mut scores = |out: &mut [i32]| {
            if let Some(sorted) = sorted {
                let start = (piece * n).min(sorted.len());
                let rows = &sorted[start..(start + n).min(sorted.len())];
                out[..rows.len()].copy_from_slice(rows);
                out[rows.len()..n].fill(0);
            } else if let Some(evaluator) = network {
                assert!(!self.breakdown, "a network has no terms to break down");
                crate::nnue::bulk::rows_scores(evaluator, &block, 0..n, out);
            } else if !self.breakdown {
                rows_scores(self.path, self.prepared, &block, 0..n, out);
            } else {
                rows_breakdown(self.path, self.prepared, &block, 0..n, out);
            }
            if self.stm_pov {
                turn_for_black(&block, out, score_width);
            }
        };
        if width == score_width {
            scores(out);
        } else {
            // The kernels write packed rows; spread them out to leave room for the WDL.
            let mut packed = vec![0; score_width * n];
            scores(&mut packed);
            for (row, values) in packed.chunks_exact(score_width).enumerate() {
                out[row * width..row * width + score_width].copy_from_slice(values);
            }
            fill_wdl(&block, out, width, self.stm_pov);
        }
        *first = (piece * n) as u64;
        Ok(block.len)
    }

    #[inline]
    fn value(&self, (out, first, _): &Self::Scratch, row: usize, column: usize) -> u64 {
        match (self.with_index, column) {
            (true, 0) => first + row as u64,
            (true, c) => out[row * self.width() + c - 1] as i64 as u64,
            (false, c) => out[row * self.width() + c] as i64 as u64,
        }
    }
}
