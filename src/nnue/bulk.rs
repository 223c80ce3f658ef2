//! The network over DB rows: the bulk passes' `--eval nnue`.
//!
//! A DB holds games in order, so a row is usually a move away from the one before it. Each
//! worker carries one [`NnueEvaluator`] through its rows in order (ply 0 throughout), so
//! every row's accumulators come from the previous row's by the few pieces that changed,
//! or from scratch when a new game starts or the rows are in no order (a shuffled DB runs
//! at the refresh rate). Workers take contiguous runs of blocks (rayon splits ranges in
//! halves), so only the first row of a run has no predecessor.
//!
//! A DB in no order (shuffled training data, a suite of positions) would refresh nearly
//! every row: there [`sorted_scores`] takes the rows in an order of its own instead, each
//! window of rows sorted by game and ply where the DB records them, else by pawns and
//! occupancy (positions with the same pawns are mostly a few moves apart in one game), and
//! puts each score back in its row's place. Same scores, a few pieces between most rows.

use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, Ordering};

use pawnstorm_kernels::simd::{self, LevelFn, Path};
use rayon::prelude::*;

use super::{Network, NnueEvaluator};
use crate::db::{Block, Database, DbError};
use crate::eval::endgame;
use crate::position::board::PositionBoards;

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
    let black_to_move = block.side_to_move[row] != 0;
    white_score(evaluator, &block_boards(block, row), black_to_move, || {
        block.boards(row)
    })
}

/// The network's score of `boards` (ply 0), White's point of view, with the exact endgame
/// rules on top, the rules reading `rule_boards()`.
#[inline(always)]
fn white_score(
    evaluator: &mut NnueEvaluator,
    boards: &[u64; 12],
    black_to_move: bool,
    rule_boards: impl FnOnce() -> PositionBoards,
) -> i32 {
    // Every rule needs a side without pawns: most rows are ruled out without gathering the
    // row's boards for the rules (a copy read back before its stores could be forwarded,
    // the pass's hottest instruction).
    if (boards[0] == 0 || boards[6] == 0)
        && let Some((white, _)) = endgame::exact_rule(&rule_boards())
    {
        return white;
    }
    let stm = evaluator.evaluate(boards, black_to_move, 0);
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

/// The network's scores (White's point of view) of every position of `db`, on the current
/// rayon pool, every worker a clone of `prototype`: in the DB's order, or in the order of
/// [`sorted_scores`] where the DB's is no order. `each_block` is called on every block's
/// scores once computed (in no particular order).
pub fn db_scores_with(
    db: &Database,
    prototype: &NnueEvaluator,
    each_block: impl Fn(&Block<'_>, &mut [i32]) + Sync,
) -> Result<Vec<i32>, DbError> {
    if let Some(mut scores) = sorted_scores(db, prototype, SORT_WINDOW_ROWS, |_| {})? {
        let n = db.block_size();
        scores.resize(db.block_count() * n, 0);
        scores
            .par_chunks_mut(n)
            .enumerate()
            .try_for_each(|(index, out)| {
                each_block(&db.block_checked_before(index)?, out);
                Ok::<(), DbError>(())
            })?;
        scores.truncate(db.len() as usize);
        return Ok(scores);
    }
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

/// Rows the sorted pass takes at once: a copy of their boards and keys (72 bytes a row)
/// stays within 310 MB however large the DB. Rows are only brought together within a
/// window: a shuffled DB of up to this many rows gains the whole of the order, a larger one
/// less the larger it is.
pub const SORT_WINDOW_ROWS: usize = 1 << 22;

/// The sampled rows ([`stored_order_refreshes`]) need a refresh this often or more in
/// stored order before the DB is sorted (a DB of games refreshes about 1 row in 100, a
/// shuffled one more than 9 in 10).
const SORT_ABOVE_REFRESH_SHARE: f64 = 0.3;

/// Every position's score as [`db_scores`] gives it (White's point of view, `db.len()`
/// scores in the DB's order), when `db`'s stored order would make most rows refreshes:
/// the rows are taken window by window (`window_rows`, rounded to whole blocks;
/// [`SORT_WINDOW_ROWS`] for a pass) in an order of their own, so that most rows are a few
/// pieces from the one before. `None` (and nothing computed but a look at a sample of the
/// rows) where the stored order is as good. Every block is checked as [`Database::block`]
/// checks it. `done(rows)` is called as rows are scored (for progress), only where sorted.
pub fn sorted_scores(
    db: &Database,
    prototype: &NnueEvaluator,
    window_rows: usize,
    done: impl Fn(usize) + Sync,
) -> Result<Option<Vec<i32>>, DbError> {
    let n = db.block_size();
    let window_blocks = (window_rows.min(SORT_WINDOW_ROWS) / n).max(1);
    let blocks = db.block_count();
    if blocks == 0 || !stored_order_refreshes(db)? {
        return Ok(None);
    }
    let mut scores = vec![0i32; db.len() as usize];
    for first in (0..blocks).step_by(window_blocks) {
        let last = (first + window_blocks).min(blocks);
        let window: Vec<(Block<'_>, usize)> = (first..last)
            .into_par_iter()
            .map(|index| Ok((db.block(index)?, index * n)))
            .collect::<Result<_, DbError>>()?;
        let start = first * n;
        let end = (last * n).min(scores.len());
        window_scores(&window, prototype, &mut scores[start..end], &done);
    }
    Ok(Some(scores))
}

/// The scores (White's point of view) of the rows of `blocks`, each given with the place
/// of its first row in `out` (the blocks one after another, filling `out`), taken in an
/// order of their own as [`sorted_scores`] takes a DB's, window by window (whole blocks
/// of at most `window_rows` rows together, [`SORT_WINDOW_ROWS`] for a pass): for positions
/// held outside a DB (`scoring::columns`). The blocks' rows are read as they are; the
/// caller has checked them.
pub fn blocks_sorted_scores(
    blocks: &[(Block<'_>, usize)],
    prototype: &NnueEvaluator,
    window_rows: usize,
    out: &mut [i32],
) {
    let window_rows = window_rows.min(SORT_WINDOW_ROWS);
    let mut place = 0;
    for (block, first) in blocks {
        assert_eq!(
            *first, place,
            "the blocks one after another from `out`'s first row"
        );
        place += block.len;
    }
    assert_eq!(place, out.len(), "the blocks fill `out`");
    let mut next = 0;
    while next < blocks.len() {
        let start = blocks[next].1;
        let mut end = next;
        let mut rows = 0;
        while end < blocks.len() && (end == next || rows + blocks[end].0.len <= window_rows) {
            rows += blocks[end].0.len;
            end += 1;
        }
        window_scores(
            &blocks[next..end],
            prototype,
            &mut out[start..start + rows],
            &|_| {},
        );
        next = end;
    }
}

/// Whether `blocks`' rows (each block with its first row's place), in the order given,
/// refresh at least [`SORT_ABOVE_REFRESH_SHARE`] of the time, judged on
/// [`ORDER_SAMPLE_BLOCKS`] of them spread over the list (see [`stored_order_refreshes`]).
pub fn blocks_order_refreshes(blocks: &[(Block<'_>, usize)]) -> bool {
    let step = blocks.len().div_ceil(ORDER_SAMPLE_BLOCKS).max(1);
    let (refreshes, rows) = blocks
        .par_iter()
        .step_by(step)
        .map(|(block, _)| sample_refreshes(block))
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    refreshes_enough(refreshes, rows)
}

/// Rows of `block` that would be summed from scratch in stored order, and its rows.
fn sample_refreshes(block: &Block<'_>) -> (usize, usize) {
    let mut before = [0u64; 12];
    let mut refreshes = 0usize;
    for row in 0..block.len {
        let boards = block_boards(block, row);
        let (changed, pieces) =
            boards
                .iter()
                .zip(&before)
                .fold((0, 0), |(changed, pieces), (now, was)| {
                    (
                        changed + (now ^ was).count_ones(),
                        pieces + now.count_ones(),
                    )
                });
        refreshes += (changed >= pieces) as usize;
        before = boards;
    }
    (refreshes, block.len)
}

fn refreshes_enough(refreshes: usize, rows: usize) -> bool {
    rows > 0 && refreshes as f64 >= SORT_ABOVE_REFRESH_SHARE * rows as f64
}

/// Blocks [`stored_order_refreshes`] looks at, spread over the DB.
const ORDER_SAMPLE_BLOCKS: usize = 4;

/// Whether `db`'s rows, in stored order, refresh at least [`SORT_ABOVE_REFRESH_SHARE`] of
/// the time, judged on [`ORDER_SAMPLE_BLOCKS`] blocks spread over it: a row whose pieces
/// differ from the row before's in as many squares as it has pieces is summed from scratch
/// ([`NnueEvaluator::evaluate`]'s rule). The sample is read without its checks (the pass
/// checks every block it reads); it only chooses an order.
fn stored_order_refreshes(db: &Database) -> Result<bool, DbError> {
    let blocks = db.block_count();
    let step = blocks.div_ceil(ORDER_SAMPLE_BLOCKS).max(1);
    let sample: Vec<usize> = (0..blocks).step_by(step).collect();
    let (refreshes, rows) = sample
        .into_par_iter()
        .map(|index| Ok::<_, DbError>(sample_refreshes(&db.block_checked_before(index)?)))
        .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 + b.1)))?;
    Ok(refreshes_enough(refreshes, rows))
}

/// A row of a window in the sorted pass, 72 bytes: its boards (six pieces, then White's:
/// Black's are the rest), its game-and-ply key where the window is labelled ([`sort_key`];
/// the pawn key is read off the boards), its place in the window (with the side to move in
/// [`SIDE_BIT`]) and, once evaluated, its score. A window's items are memory touched for
/// the first time, which costs more than the copying: the fewer bytes the better.
#[derive(Clone, Copy, bytemuck::Zeroable)]
#[repr(C)]
struct Item {
    boards: [u64; 7],
    label: u64,
    place: u32,
    score: i32,
}

impl Item {
    /// White's and Black's boards.
    #[inline(always)]
    fn colors(&self) -> [u64; 2] {
        let occupied = self.boards[..6].iter().fold(0, |all, board| all | board);
        [self.boards[6], occupied & !self.boards[6]]
    }

    /// The order key ([`sort_key`]'s).
    #[inline(always)]
    fn key(&self, labelled: bool) -> [u64; 2] {
        if labelled {
            return [self.label, 0];
        }
        let [white, black] = self.colors();
        pawn_key(self.boards[0], white, black)
    }
}

/// The bit of an [`Item`]'s place that says Black is to move (a window's rows fit in the
/// bits below it).
const SIDE_BIT: u32 = 1 << 31;
const _: () = assert!(SORT_WINDOW_ROWS < SIDE_BIT as usize);

/// A window's rows are spread over `1 << BUCKET_BITS` buckets by their key's first part
/// (game, or White's pawns), each then sorted on its own, in cache. With 4,096 buckets the
/// spreading wrote to more pages at once than the TLB holds: 1,024 ran 1.2× as fast over 2M
/// shuffled rows (256 no faster).
const BUCKET_BITS: u32 = 10;

/// The order key of `row`: its game and ply where the window knows every row's
/// (`labelled`), for the order the games were played in; else its pawns, White's then
/// Black's, and then the occupancy of the top half of the board, which puts rows with the
/// same pawns together and, among them, most of one game's rows a move or two apart.
#[inline(always)]
fn sort_key(block: &Block<'_>, row: usize, labelled: bool) -> [u64; 2] {
    if labelled && let (Some(games), Some(plies)) = (block.game_id, block.ply) {
        return [(games[row] as u64) << 16 | plies[row] as u64, 0];
    }
    let (white, black) = (block.colors[0][row].0, block.colors[1][row].0);
    pawn_key(block.pieces[0][row].0, white, black)
}

/// [`sort_key`] without labels, from a row's pawns and colours.
#[inline(always)]
fn pawn_key(pawns: u64, white: u64, black: u64) -> [u64; 2] {
    const RANKS_2_TO_7: u64 = (1 << 48) - 1;
    let (ours, theirs) = (
        (pawns & white) >> 8 & RANKS_2_TO_7,
        (pawns & black) >> 8 & RANKS_2_TO_7,
    );
    // 128 bits: White's 48 pawn squares, Black's, the top 32 squares' occupancy.
    [
        ours << 16 | theirs >> 32,
        theirs << 32 | (white | black) >> 32,
    ]
}

/// The bucket of a key: a hash of its first 48 bits (the game, or White's pawns), so that
/// one game's rows, or the rows with the same white pawns, share a bucket.
#[inline(always)]
fn bucket_of(key: &[u64; 2]) -> usize {
    ((key[0] >> 16).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - BUCKET_BITS)) as usize
}

/// Whether every row of `window` has a known game and ply.
fn window_is_labelled(window: &[(Block<'_>, usize)]) -> bool {
    window
        .iter()
        .all(|(block, _)| match (block.game_id, block.ply) {
            (Some(games), Some(plies)) => {
                games[..block.len].iter().all(|&g| g != u32::MAX)
                    && plies[..block.len].iter().all(|&p| p != u16::MAX)
            }
            _ => false,
        })
}

/// A pointer workers write disjoint items through.
#[derive(Clone, Copy)]
struct ItemsPtr(*mut Item);
// SAFETY: each worker writes only the items its own offsets name (disjoint ranges).
unsafe impl Send for ItemsPtr {}
unsafe impl Sync for ItemsPtr {}

impl ItemsPtr {
    /// # Safety
    /// `index` is within the items and no other thread writes or reads it meanwhile.
    unsafe fn write(self, index: usize, item: Item) {
        // SAFETY: as the caller promises.
        unsafe { self.0.add(index).write(item) }
    }
}

/// Scores of every row of `window` (blocks, each with the place of its first row; the
/// first block's is `out`'s first) into `out` (its rows in place, up to the last block's
/// last position), taken in sorted order: the rows are spread over buckets with their
/// boards (one pass over the blocks), each bucket sorted by key and evaluated in that
/// order.
fn window_scores(
    window: &[(Block<'_>, usize)],
    prototype: &NnueEvaluator,
    out: &mut [i32],
    done: &(impl Fn(usize) + Sync),
) {
    let labelled = window_is_labelled(window);
    let buckets = 1usize << BUCKET_BITS;
    let start = window.first().map_or(0, |(_, first)| *first);
    // A block's rows in `out`, which ends at the last position: every row of it is one.
    let rows_of = |first: usize, block: &Block<'_>| block.len.min(out.len() - (first - start));
    let counts: Vec<Vec<u32>> = window
        .par_iter()
        .map(|(block, first)| {
            let mut counts = vec![0u32; buckets];
            for row in 0..rows_of(*first, block) {
                counts[bucket_of(&sort_key(block, row, labelled))] += 1;
            }
            counts
        })
        .collect();
    // Each block's first item in each bucket, the buckets one after another.
    let mut starts = vec![0usize; buckets + 1];
    let mut offsets: Vec<Vec<usize>> = vec![vec![0; buckets]; window.len()];
    let mut next = 0;
    for bucket in 0..buckets {
        starts[bucket] = next;
        for (block, counts) in counts.iter().enumerate() {
            offsets[block][bucket] = next;
            next += counts[bucket] as usize;
        }
    }
    starts[buckets] = next;
    assert_eq!(next, out.len(), "one item a row");
    // Zeroed by the system as the workers first write it (a `vec!` of items would be
    // written whole by this thread first).
    let mut items: Vec<Item> = bytemuck::zeroed_vec(next);
    let base = ItemsPtr(items.as_mut_ptr());
    window
        .par_iter()
        .zip(offsets.par_iter_mut())
        .for_each(|((block, first), offsets)| {
            for row in 0..rows_of(*first, block) {
                let key = sort_key(block, row, labelled);
                let slot = &mut offsets[bucket_of(&key)];
                let black = if block.side_to_move[row] != 0 {
                    SIDE_BIT
                } else {
                    0
                };
                let item = Item {
                    boards: std::array::from_fn(|i| match i {
                        0..6 => block.pieces[i][row].0,
                        _ => block.colors[0][row].0,
                    }),
                    label: key[0],
                    place: (first - start + row) as u32 | black,
                    score: 0,
                };
                // SAFETY: the offsets of this block in each bucket are its own (counted
                // above), within `next` items, and each is taken once.
                unsafe { base.write(*slot, item) };
                *slot += 1;
            }
        });
    let mut pieces: Vec<&mut [Item]> = Vec::with_capacity(buckets);
    let mut rest = &mut items[..];
    for bucket in 0..buckets {
        let (piece, after) = rest.split_at_mut(starts[bucket + 1] - starts[bucket]);
        pieces.push(piece);
        rest = after;
    }
    pieces.par_iter_mut().for_each_init(
        || (prototype.clone(), Vec::new()),
        |(evaluator, order), piece| {
            items_scores(evaluator, piece, labelled, order);
            done(piece.len());
        },
    );
    // Apart from the evaluation: a row's place is anywhere in the window, and a store that
    // misses the cache in the middle of the evaluation's loop costs more than here.
    let places: &[AtomicI32] = atomic_slice(out);
    items.par_iter().for_each(|item| {
        places[(item.place & !SIDE_BIT) as usize].store(item.score, Ordering::Relaxed)
    });
}

/// `out` as atomics, for workers that write rows in an order of their own (each row once).
fn atomic_slice(out: &mut [i32]) -> &[AtomicI32] {
    // SAFETY: `AtomicI32` has the size and alignment of `i32`, and the exclusive borrow of
    // `out` lasts as long as the atomics' shared one.
    unsafe { std::slice::from_raw_parts(out.as_mut_ptr().cast::<AtomicI32>(), out.len()) }
}

/// [`row_score`] for an item's boards.
#[inline(always)]
fn boards_score(evaluator: &mut NnueEvaluator, row: &Item, black_to_move: bool) -> i32 {
    let (pieces, colors) = (&row.boards[..6], row.colors());
    let boards: [u64; 12] = std::array::from_fn(|i| pieces[i % 6] & colors[i / 6]);
    white_score(evaluator, &boards, black_to_move, || PositionBoards {
        pieces: std::array::from_fn(|i| pieces[i]),
        colors,
        black_to_move,
    })
}

/// The scores of a bucket's `items`, taken in their keys' order (`order` is the worker's
/// space for it: the keys and the items' indices, sorted rather than the items).
fn items_scores(
    evaluator: &mut NnueEvaluator,
    items: &mut [Item],
    labelled: bool,
    order: &mut Vec<([u64; 2], u32)>,
) {
    order.clear();
    order.extend(
        items
            .iter()
            .enumerate()
            .map(|(i, item)| (item.key(labelled), i as u32)),
    );
    order.sort_unstable();
    struct Items<'e, 'w> {
        evaluator: &'e mut NnueEvaluator,
        items: &'w mut [Item],
        order: &'w [([u64; 2], u32)],
    }
    impl LevelFn for Items<'_, '_> {
        type Output = ();
        #[inline(always)]
        fn call(self) {
            for &(_, index) in self.order {
                let item = &mut self.items[index as usize];
                let black = item.place & SIDE_BIT != 0;
                item.score = boards_score(self.evaluator, item, black);
            }
        }
    }
    simd::dispatch_level(
        Path::scalar(),
        Items {
            evaluator,
            items,
            order,
        },
    )
}
