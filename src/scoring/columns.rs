//! The evaluation of positions that live outside a DB file: structure-of-arrays columns in
//! the DB's layout held by someone else (numpy arrays, read where they are), or FEN text.
//! The rows go through the DB pass's own code ([`batch::rows_scores`] on [`Block`]s of
//! them, after the check every DB block read gets), so a position scores here exactly what
//! `pawnstorm eval` gives it.

use rayon::prelude::*;

use crate::Bitboard;
use crate::db::{self, Block, NO_SCORE};
use crate::eval::Prepared;
use crate::eval::batch;
use crate::eval::features::Path;
use crate::nnue::{NnueEvaluator, bulk};
use crate::position::board::CastlingRights;
use crate::position::fen;

/// Rows a worker takes at a time: a DB block's worth, so the work is cut as a DB pass's.
pub const CHUNK_ROWS: usize = 4096;

/// Positions as the DB stores them, one slice a column, every slice the same length:
/// the six piece-type boards (both colours), the two colour boards, the side to move (0
/// White, 1 Black), and, if given, the castling and en-passant columns (checked, not read
/// by the evaluation).
#[derive(Clone, Copy)]
pub struct BoardColumns<'a> {
    pub pieces: [&'a [Bitboard]; 6],
    pub colors: [&'a [Bitboard]; 2],
    pub side_to_move: &'a [u8],
    pub castling: Option<&'a [u16]>,
    pub en_passant: Option<&'a [u8]>,
}

impl<'a> BoardColumns<'a> {
    pub fn len(&self) -> usize {
        self.side_to_move.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether every column holds as many rows as the side to move.
    pub fn lengths_agree(&self) -> bool {
        let n = self.len();
        self.pieces.iter().chain(&self.colors).all(|c| c.len() == n)
            && self.castling.is_none_or(|c| c.len() == n)
            && self.en_passant.is_none_or(|c| c.len() == n)
    }

    fn cut(&self, rows: std::ops::Range<usize>) -> BoardColumns<'a> {
        BoardColumns {
            pieces: self.pieces.map(|c| &c[rows.clone()]),
            colors: self.colors.map(|c| &c[rows.clone()]),
            side_to_move: &self.side_to_move[rows.clone()],
            castling: self.castling.map(|c| &c[rows.clone()]),
            en_passant: self.en_passant.map(|c| &c[rows]),
        }
    }
}

/// A row that is no position: its index among all the rows, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadRow {
    pub index: u64,
    pub reason: String,
}

/// Rows copied into columns of their own, padded with empty boards to whole vectors: the
/// last rows of a run whose length is no multiple of 8, and FENs once parsed.
struct Scratch {
    pieces: [Vec<Bitboard>; 6],
    colors: [Vec<Bitboard>; 2],
    side_to_move: Vec<u8>,
}

impl Scratch {
    /// Room for `rows` rows, all empty boards.
    fn empty(rows: usize) -> Scratch {
        let padded = rows.next_multiple_of(8);
        Scratch {
            pieces: std::array::from_fn(|_| vec![Bitboard(0); padded]),
            colors: std::array::from_fn(|_| vec![Bitboard(0); padded]),
            side_to_move: vec![0; padded],
        }
    }

    fn of(columns: &BoardColumns<'_>) -> Scratch {
        let mut scratch = Scratch::empty(columns.len());
        let n = columns.len();
        for (to, from) in scratch.pieces.iter_mut().zip(&columns.pieces) {
            to[..n].copy_from_slice(from);
        }
        for (to, from) in scratch.colors.iter_mut().zip(&columns.colors) {
            to[..n].copy_from_slice(from);
        }
        scratch.side_to_move[..n].copy_from_slice(columns.side_to_move);
        scratch
    }

    fn block(&self, len: usize) -> Block<'_> {
        Block::of_boards(
            len,
            std::array::from_fn(|i| self.pieces[i].as_slice()),
            std::array::from_fn(|i| self.colors[i].as_slice()),
            &self.side_to_move,
        )
    }
}

/// The evaluation a pass over columns scores with.
#[derive(Clone, Copy)]
pub enum Scorer<'a> {
    /// The hand-crafted terms on a SIMD path.
    Terms { path: Path, prepared: &'a Prepared },
    /// The network: each worker clones the evaluator and carries it through its rows in
    /// order ([`crate::nnue::bulk`]).
    Network(&'a NnueEvaluator),
}

impl Scorer<'_> {
    /// A worker's evaluator, for the network.
    fn worker(&self) -> Option<NnueEvaluator> {
        match self {
            Scorer::Terms { .. } => None,
            Scorer::Network(prototype) => Some((*prototype).clone()),
        }
    }
}

/// Scores `block`'s rows into `out` (one a row, `out.len() == block.len`); `evaluator` is
/// the worker's, for [`Scorer::Network`].
fn score_block(
    scorer: Scorer<'_>,
    evaluator: &mut Option<NnueEvaluator>,
    block: &Block<'_>,
    stm_pov: bool,
    out: &mut [i32],
) {
    match (scorer, evaluator) {
        (_, Some(evaluator)) => bulk::rows_scores(evaluator, block, 0..out.len(), out),
        (Scorer::Terms { path, prepared }, None) => {
            let padded = block.pieces[0].len();
            if out.len() == padded {
                batch::rows_scores(path, prepared, block, 0..padded, out);
            } else {
                let mut all = vec![0; padded];
                batch::rows_scores(path, prepared, block, 0..padded, &mut all);
                out.copy_from_slice(&all[..out.len()]);
            }
        }
        (Scorer::Network(_), None) => unreachable!("every network worker has an evaluator"),
    }
    if stm_pov {
        batch::turn_for_black(block, out, 1);
    }
}

/// Checks what the evaluation does not read but a position must have right: castling
/// rights as the DB encodes them, an en-passant square or none.
fn check_extras(columns: &BoardColumns<'_>) -> Result<(), (usize, String)> {
    if let Some(castling) = columns.castling
        && let Some(row) = castling
            .iter()
            .position(|&bits| CastlingRights::from_bits(bits).is_none())
    {
        return Err((
            row,
            format!("castling bits {:#06x} are invalid", castling[row]),
        ));
    }
    if let Some(en_passant) = columns.en_passant
        && let Some(row) = en_passant
            .iter()
            .position(|&sq| sq >= 64 && sq != db::NO_SQUARE)
    {
        return Err((
            row,
            format!(
                "en-passant byte {} is no square (0..63, {} for none)",
                en_passant[row],
                db::NO_SQUARE
            ),
        ));
    }
    Ok(())
}

/// Scores (White's point of view, or the side to move's with `stm_pov`) of every row of
/// `runs`, one after another, into `out` (as long as all the runs together), computed on
/// the current rayon pool. The columns are read where they are; only a run's last rows
/// past a multiple of 8 are copied (the kernels read 8 rows at a time). A row that is no
/// position stops the pass: the error names the first such row. The network takes rows in
/// no order (shuffled training positions) in an order of its own, as `eval` takes a
/// shuffled DB ([`bulk::blocks_sorted_scores`]).
pub fn board_scores(
    scorer: Scorer<'_>,
    runs: &[BoardColumns<'_>],
    stm_pov: bool,
    out: &mut [i32],
) -> Result<(), BadRow> {
    assert!(runs.iter().all(BoardColumns::lengths_agree));
    assert_eq!(runs.iter().map(BoardColumns::len).sum::<usize>(), out.len());
    if let Scorer::Network(prototype) = scorer
        && sorted_board_scores(prototype, runs, stm_pov, out)?
    {
        return Ok(());
    }
    // (run, first row in it, first row overall, output)
    let mut tasks = Vec::new();
    let mut rest = out;
    let mut before = 0;
    for (r, run) in runs.iter().enumerate() {
        for start in (0..run.len()).step_by(CHUNK_ROWS) {
            let len = CHUNK_ROWS.min(run.len() - start);
            let (piece, tail) = std::mem::take(&mut rest).split_at_mut(len);
            tasks.push((r, start, before + start, piece));
            rest = tail;
        }
        before += run.len();
    }
    let errors: Vec<BadRow> = tasks
        .into_par_iter()
        .map_init(
            || scorer.worker(),
            |evaluator, (r, start, first, out)| {
                let columns = runs[r].cut(start..start + out.len());
                let scratch;
                let block = if out.len().is_multiple_of(8) {
                    Block::of_boards(
                        out.len(),
                        columns.pieces,
                        columns.colors,
                        columns.side_to_move,
                    )
                } else {
                    scratch = Scratch::of(&columns);
                    scratch.block(out.len())
                };
                if let Err(error) = check_block(&block, &columns, first) {
                    return Some(error);
                }
                score_block(scorer, evaluator, &block, stm_pov, out);
                None
            },
        )
        .flatten()
        .collect();
    first_error(errors)
}

/// The first of `errors` by row, if any.
fn first_error(errors: Vec<BadRow>) -> Result<(), BadRow> {
    match errors.into_iter().min_by_key(|e| e.index) {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// The checks every row gets before it is evaluated: `block` holds `columns`' rows (padded
/// or not), the first of them row `first` of the whole input.
fn check_block(block: &Block<'_>, columns: &BoardColumns<'_>, first: usize) -> Result<(), BadRow> {
    db::check_positions(block)
        .and_then(|()| check_extras(columns))
        .map_err(|(row, reason)| BadRow {
            index: (first + row) as u64,
            reason,
        })
}

/// [`board_scores`] for the network where the rows given are in no order (most of a
/// sample of them would be summed from scratch): every chunk checked, then all the rows
/// scored in an order of their own. `false` (nothing done) where the order given is as
/// good.
fn sorted_board_scores(
    prototype: &NnueEvaluator,
    runs: &[BoardColumns<'_>],
    stm_pov: bool,
    out: &mut [i32],
) -> Result<bool, BadRow> {
    // Each chunk's rows as they are, and the place of its first row overall.
    let mut columns = Vec::new();
    let mut placed = Vec::new();
    let mut before = 0;
    for run in runs {
        for start in (0..run.len()).step_by(CHUNK_ROWS) {
            let chunk = run.cut(start..(start + CHUNK_ROWS).min(run.len()));
            let block =
                Block::of_boards(chunk.len(), chunk.pieces, chunk.colors, chunk.side_to_move);
            columns.push(chunk);
            placed.push((block, before + start));
        }
        before += run.len();
    }
    if !bulk::blocks_order_refreshes(&placed) {
        return Ok(false);
    }
    let errors: Vec<BadRow> = placed
        .par_iter()
        .zip(&columns)
        .filter_map(|((block, first), columns)| {
            // The checks read whole vectors of 8 rows, as the kernels do.
            let scratch;
            let padded = if block.len.is_multiple_of(8) {
                block
            } else {
                scratch = Scratch::of(columns);
                &scratch.block(block.len)
            };
            check_block(padded, columns, *first).err()
        })
        .collect();
    first_error(errors)?;
    bulk::blocks_sorted_scores(&placed, prototype, bulk::SORT_WINDOW_ROWS, out);
    if stm_pov {
        for (block, first) in &placed {
            batch::turn_for_black(block, &mut out[*first..*first + block.len], 1);
        }
    }
    Ok(true)
}

/// Scores of positions given as FEN text (`fen(i)` the `i`-th of `out.len()`, `None` for
/// a missing one), computed on the current rayon pool, parsed and evaluated a chunk of
/// rows per worker. Every row that is no FEN gets [`NO_SCORE`] and is listed, in order,
/// with the reason.
pub fn fen_scores<'f>(
    scorer: Scorer<'_>,
    fen: &(dyn Fn(usize) -> Option<&'f [u8]> + Sync),
    stm_pov: bool,
    out: &mut [i32],
) -> Vec<BadRow> {
    out.par_chunks_mut(CHUNK_ROWS)
        .enumerate()
        .map_init(
            || scorer.worker(),
            |evaluator, (chunk, out)| {
                let first = chunk * CHUNK_ROWS;
                let mut scratch = Scratch::empty(out.len());
                let mut bad = Vec::new();
                for row in 0..out.len() {
                    let parsed = match fen(first + row) {
                        None => Err("no FEN (None)".to_string()),
                        Some(bytes) => std::str::from_utf8(bytes)
                            .map_err(|_| "not valid UTF-8".to_string())
                            .and_then(|text| {
                                fen::parse_fen(text.trim()).map_err(|e| e.to_string())
                            }),
                    };
                    match parsed {
                        Ok(position) => {
                            let parts = position.parts();
                            for (column, board) in scratch.pieces.iter_mut().zip(parts.pieces) {
                                column[row] = board;
                            }
                            for (column, board) in scratch.colors.iter_mut().zip(parts.colors) {
                                column[row] = board;
                            }
                            scratch.side_to_move[row] = parts.side_to_move.index() as u8;
                        }
                        // Left empty: the kernels take an empty board as they take padding.
                        Err(reason) => bad.push(BadRow {
                            index: (first + row) as u64,
                            reason,
                        }),
                    }
                }
                score_block(scorer, evaluator, &scratch.block(out.len()), stm_pov, out);
                for error in &bad {
                    out[error.index as usize - first] = NO_SCORE;
                }
                bad
            },
        )
        .flatten_iter()
        .collect()
}
