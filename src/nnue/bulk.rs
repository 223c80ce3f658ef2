//! The network over DB rows: the bulk passes' `--eval nnue`.
//!
//! A DB holds games in order, so a row is usually a move away from the one before it. Each
//! worker carries one [`NnueEvaluator`] through its rows in order (ply 0 throughout), so
//! every row's accumulators come from the previous row's by the few pieces that changed,
//! or from scratch when a new game starts or the rows are in no order (a shuffled DB runs
//! at the refresh rate). Workers take contiguous runs of blocks (rayon splits ranges in
//! halves), so only the first row of a run has no predecessor.

use std::ops::Range;
use std::sync::Arc;

use pawnstorm_kernels::simd::{self, LevelFn, Path};
use rayon::prelude::*;

use super::{Network, NnueEvaluator};
use crate::db::{Block, Database, DbError};
use crate::eval::endgame;

/// The twelve piece boards (colour × 6 + type, White first) of row `row` of `block`.
#[inline(always)]
pub fn block_boards(block: &Block<'_>, row: usize) -> [u64; 12] {
    let (white, black) = (block.colors[0][row].0, block.colors[1][row].0);
    std::array::from_fn(|i| {
        let kind = block.pieces[i % 6][row].0;
        kind & if i < 6 { white } else { black }
    })
}

/// The network's score of row `row` of `block`, White's point of view, with the exact
/// endgame rules on top ([`NnueEvaluator::score`]'s, read off the DB's own columns).
#[inline(always)]
pub fn row_score(evaluator: &mut NnueEvaluator, block: &Block<'_>, row: usize) -> i32 {
    let boards = block_boards(block, row);
    // Every rule needs a side without pawns: most rows are ruled out without gathering the
    // row's boards for the rules (a copy read back before its stores could be forwarded,
    // the pass's hottest instruction).
    if (boards[0] == 0 || boards[6] == 0)
        && let Some((white, _)) = endgame::exact_rule(&block.boards(row))
    {
        return white;
    }
    let black_to_move = block.side_to_move[row] != 0;
    let stm = evaluator.evaluate(&boards, black_to_move, 0);
    if black_to_move { -stm } else { stm }
}

/// Scores (White's point of view) of rows `rows` of `block` into `out[..rows.len()]`, in
/// order, each row's accumulators from the one before (the evaluator's ply 0 slot carries
/// over from the caller's last row). Rows past the block's positions (the padding of a
/// DB's last block) get 0.
///
/// The loop runs through [`simd::dispatch`]: compiled once per instruction-set level, with
/// the feature differences, the accumulator kernels and the output layer inlined into it
/// (called one by one from plain x86-64 code, the pass ran at 0.76 of a `target-cpu=native`
/// build's speed).
pub fn rows_scores(
    evaluator: &mut NnueEvaluator,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    assert!(out.len() >= rows.len());
    struct Rows<'e, 'b, 'd, 'o> {
        evaluator: &'e mut NnueEvaluator,
        block: &'b Block<'d>,
        rows: Range<usize>,
        out: &'o mut [i32],
    }
    impl LevelFn for Rows<'_, '_, '_, '_> {
        type Output = ();
        #[inline(always)]
        fn call(self) {
            rows_scores_inline(self.evaluator, self.block, self.rows, self.out)
        }
    }
    simd::dispatch_level(
        Path::scalar(),
        Rows {
            evaluator,
            block,
            rows,
            out,
        },
    )
}

/// [`rows_scores`]' loop, inlined into each level's function.
#[inline(always)]
fn rows_scores_inline(
    evaluator: &mut NnueEvaluator,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    let (start, end) = (rows.start, rows.end.min(block.len.max(rows.start)));
    for (slot, row) in out.iter_mut().zip(start..end) {
        *slot = row_score(evaluator, block, row);
    }
    out[end - start..rows.len()].fill(0);
}

/// The network's scores (White's point of view) of every position of `db`, in order, on
/// the current rayon pool, every worker a clone of `prototype`; `each_block` is called on
/// every block's scores once computed (in no particular order).
pub fn db_scores_with(
    db: &Database,
    prototype: &NnueEvaluator,
    each_block: impl Fn(&Block<'_>, &mut [i32]) + Sync,
) -> Result<Vec<i32>, DbError> {
    let n = db.block_size();
    let mut scores = vec![0i32; db.block_count() * n];
    scores.par_chunks_mut(n).enumerate().try_for_each_init(
        || prototype.clone(),
        |evaluator, (index, out)| {
            let block = db.block(index)?;
            rows_scores(evaluator, &block, 0..n, out);
            each_block(&block, out);
            Ok::<(), DbError>(())
        },
    )?;
    scores.truncate(db.len() as usize);
    Ok(scores)
}

/// [`db_scores_with`] with nothing done per block.
pub fn db_scores(db: &Database, prototype: &NnueEvaluator) -> Result<Vec<i32>, DbError> {
    db_scores_with(db, prototype, |_, _| {})
}

/// The network a bulk pass uses: `path`'s, or the one compiled into the binary (the
/// error says there is none).
pub fn load(path: Option<&std::path::Path>) -> anyhow::Result<Arc<Network>> {
    match path {
        Some(path) => Ok(Arc::new(Network::load(path)?)),
        None => super::default_network().map_err(anyhow::Error::msg),
    }
}
