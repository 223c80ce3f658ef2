//! The evaluation over position DB blocks: the term code of [`super::terms`] on `L::WIDTH`
//! positions at a time, then [`super::endgame::finish`] per position, blocks spread over
//! threads.

use std::ops::Range;

use pawnstorm_kernels::Lanes;
use pawnstorm_kernels::simd::{LanesFn, dispatch};
use rayon::prelude::*;

use super::endgame::{self, Finished};
use super::lanes_finish::finish_lanes;
use super::terms::{
    Boards, Meta, PerTerm, Sink, Staged, Term, Total, all_terms, first_terms, staged_king_terms,
    staged_last_terms,
};
use super::weights::Prepared;
use crate::db::{Block, Database, DbError};
use crate::eval::features::{Path, check_rows};

/// Values per position of a breakdown row: score, phase, scale, rule, then each term's mg,
/// eg and final.
pub const BREAKDOWN_WIDTH: usize = 4 + 3 * Term::COUNT;

/// Column names of a breakdown row, in order.
pub fn breakdown_names() -> Vec<String> {
    let mut names: Vec<String> = ["score", "phase", "scale", "rule"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for term in Term::ALL {
        for part in ["mg", "eg", "final"] {
            names.push(format!("{}_{part}", term.name()));
        }
    }
    names
}

/// Rule codes of the breakdown's `rule` column.
pub fn rule_code(rule: endgame::Rule) -> i32 {
    match rule {
        endgame::Rule::Terms => 0,
        endgame::Rule::Insufficient => 1,
        endgame::Rule::Kpk => 2,
        endgame::Rule::Kbnk => 3,
        endgame::Rule::Kxk => 4,
    }
}

#[inline(always)]
fn load_boards<L: Lanes>(block: &Block<'_>, row: usize) -> Boards<L> {
    let mut black_to_move = [0u64; 8];
    for (lane, side) in black_to_move
        .iter_mut()
        .zip(&block.side_to_move[row..row + L::WIDTH])
    {
        *lane = 0u64.wrapping_sub((*side != 0) as u64);
    }
    let mut pieces = [L::splat(0); 6];
    for (lanes, column) in pieces.iter_mut().zip(&block.pieces) {
        *lanes = L::load(bytemuck::cast_slice(&column[row..row + L::WIDTH]));
    }
    let mut colors = [L::splat(0); 2];
    for (lanes, column) in colors.iter_mut().zip(&block.colors) {
        *lanes = L::load(bytemuck::cast_slice(&column[row..row + L::WIDTH]));
    }
    Boards {
        pieces,
        colors,
        black_to_move: L::load(&black_to_move),
    }
}

/// Runs the terms on `L::WIDTH` rows from `row` into `sink`, and finishes each position.
#[inline(always)]
fn lanes_finished<L: Lanes, S: Sink<L>>(
    prepared: &Prepared,
    block: &Block<'_>,
    row: usize,
    sink: &mut S,
    total: impl Fn(&S) -> (L, L),
    each: impl FnMut(usize, Finished),
) {
    let boards = load_boards::<L>(block, row);
    let meta = all_terms(prepared, &boards, sink);
    let (mg, eg) = total(sink);
    finish_each(
        block,
        row,
        [mg, eg, meta.phase, meta.signature],
        |_| true,
        each,
    );
}

/// The scalar [`endgame::finish`] of the lanes `wanted` picks, given each lane's
/// `[mg, eg, phase, signature]`.
#[inline(always)]
fn finish_each<L: Lanes>(
    block: &Block<'_>,
    row: usize,
    lanes: [L; 4],
    wanted: impl Fn(usize) -> bool,
    mut each: impl FnMut(usize, Finished),
) {
    let mut values = [[0u64; 8]; 4];
    for (value, out) in lanes.iter().zip(&mut values) {
        value.store(out);
    }
    let [mg, eg, phase, signature] = values;
    for lane in (0..L::WIDTH).filter(|&lane| wanted(lane)) {
        let finished = endgame::finish(
            mg[lane] as i32,
            eg[lane] as i32,
            phase[lane],
            signature[lane],
            || block.boards(row + lane),
        );
        each(lane, finished);
    }
}

#[inline(always)]
fn rows_scores_with<L: Lanes>(
    prepared: &Prepared,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    if L::WIDTH > 1 {
        rows_scores_staged::<L>(prepared, block, rows, out);
        return;
    }
    // One position at a time: the scalar finish is the cheaper one.
    for row in rows.clone() {
        let mut total = Total::<L>::new();
        let at = row - rows.start;
        lanes_finished(
            prepared,
            block,
            row,
            &mut total,
            |t| t.sums(),
            |lane, finished| out[at + lane] = finished.score,
        );
    }
}

/// Positions a batch takes through each stage of the terms before the next (see
/// [`Staged`]): their staged sets stay in the L1 data cache (1.4 KB each at four lanes).
const STAGE_ROWS: usize = 32;

/// [`rows_scores_with`] for more than one lane: the three stages of the terms each over
/// [`STAGE_ROWS`] positions in turn, each loop's code a third of the whole kernel's (see
/// [`Staged`]). The sums are the same as [`all_terms`]'s, in wrapping integer arithmetic.
#[inline(always)]
fn rows_scores_staged<L: Lanes>(
    prepared: &Prepared,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    const GROUPS: usize = 8;
    debug_assert!(L::WIDTH * GROUPS >= STAGE_ROWS);
    let mut staged = [Staged::<L>::empty(); GROUPS];
    let mut totals = [Total::<L>::new(); GROUPS];
    for start in rows.clone().step_by(STAGE_ROWS) {
        let groups = (rows.end.min(start + STAGE_ROWS) - start) / L::WIDTH;
        for group in 0..groups {
            let boards = load_boards::<L>(block, start + group * L::WIDTH);
            totals[group] = Total::new();
            staged[group] = first_terms(prepared, &boards, &mut totals[group]);
        }
        for group in 0..groups {
            staged_king_terms(prepared, &staged[group], &mut totals[group]);
        }
        for group in 0..groups {
            let meta = staged_last_terms(prepared, &staged[group], &mut totals[group]);
            let row = start + group * L::WIDTH;
            let at = row - rows.start;
            finish_scores(block, row, totals[group], meta, &mut out[at..at + L::WIDTH]);
        }
    }
}

/// The scores of `L::WIDTH` positions from `row`, given their terms' total, into `out`.
#[inline(always)]
fn finish_scores<L: Lanes>(
    block: &Block<'_>,
    row: usize,
    total: Total<L>,
    meta: Meta<L>,
    out: &mut [i32],
) {
    let (mg, eg) = total.sums();
    let lanes = finish_lanes(mg, eg, meta.phase, meta.signature);
    let mut values = [[0u64; 8]; 2];
    lanes.score.store(&mut values[0]);
    lanes.fallback.store(&mut values[1]);
    let [scores, fallback] = values;
    for (slot, score) in out.iter_mut().zip(scores) {
        *slot = score as i32;
    }
    if fallback[..L::WIDTH].iter().all(|&f| f == 0) {
        return;
    }
    finish_each(
        block,
        row,
        [mg, eg, meta.phase, meta.signature],
        |lane| fallback[lane] != 0,
        |lane, finished| out[lane] = finished.score,
    );
}

/// Scores (White's point of view) of rows `rows` of `block` into `out[..rows.len()]`. The
/// range starts and ends on multiples of 8 (blocks hold a power of two of at least 64 rows).
pub fn rows_scores(
    path: Path,
    prepared: &Prepared,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    check_rows(&rows, out.len(), 1);
    dispatch(
        path,
        Rows {
            prepared,
            block,
            rows,
            out,
            breakdown: false,
        },
    );
}

/// A batch of rows for [`dispatch`]: their scores, or their breakdown rows.
struct Rows<'a, 'b> {
    prepared: &'a Prepared,
    block: &'a Block<'b>,
    rows: Range<usize>,
    out: &'a mut [i32],
    breakdown: bool,
}

impl LanesFn for Rows<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn call<L: Lanes>(self) {
        if self.breakdown {
            rows_breakdown_with::<L>(self.prepared, self.block, self.rows, self.out)
        } else {
            rows_scores_with::<L>(self.prepared, self.block, self.rows, self.out)
        }
    }
}

#[inline(always)]
fn rows_breakdown_with<L: Lanes>(
    prepared: &Prepared,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    for row in rows.clone().step_by(L::WIDTH) {
        let mut terms = PerTerm::<L>::new();
        let at = row - rows.start;
        let sum = |t: &PerTerm<L>| t.total().sums();
        let mut finished = [None; 8];
        lanes_finished(prepared, block, row, &mut terms, sum, |lane, f| {
            finished[lane] = Some(f)
        });
        let mut lanes = [0u64; 8];
        for lane in 0..L::WIDTH {
            let Some(f) = finished[lane] else { continue };
            let values = &mut out[(at + lane) * BREAKDOWN_WIDTH..][..BREAKDOWN_WIDTH];
            values[0] = f.score;
            values[1] = f.phase;
            values[2] = f.scale;
            values[3] = rule_code(f.rule);
        }
        for (term, kind) in Term::ALL.into_iter().enumerate() {
            let mut mg = [0u64; 8];
            let (term_mg, term_eg) = terms.sums(kind);
            term_mg.store(&mut mg);
            term_eg.store(&mut lanes);
            for lane in 0..L::WIDTH {
                let Some(f) = finished[lane] else { continue };
                let (m, e) = (mg[lane] as i32, lanes[lane] as i32);
                let values = &mut out[(at + lane) * BREAKDOWN_WIDTH + 4 + 3 * term..][..3];
                values[0] = m;
                values[1] = e;
                values[2] = endgame::taper(m, e, f.phase, f.scale);
            }
        }
    }
}

/// Breakdown rows ([`BREAKDOWN_WIDTH`] values each, names from [`breakdown_names`]) of rows
/// `rows` of `block`, row-major into `out`.
pub fn rows_breakdown(
    path: Path,
    prepared: &Prepared,
    block: &Block<'_>,
    rows: Range<usize>,
    out: &mut [i32],
) {
    check_rows(&rows, out.len(), BREAKDOWN_WIDTH);
    dispatch(
        path,
        Rows {
            prepared,
            block,
            rows,
            out,
            breakdown: true,
        },
    );
}

/// The scores of every position of `db`, in order, computed on the current rayon pool.
pub fn db_scores(db: &Database, path: Path, prepared: &Prepared) -> Result<Vec<i32>, DbError> {
    db_scores_with(db, path, prepared, |_, _| {})
}

/// [`db_scores`], calling `each_block` on every block's scores once computed (in no
/// particular order): to adjust them, to report progress.
pub fn db_scores_with(
    db: &Database,
    path: Path,
    prepared: &Prepared,
    each_block: impl Fn(&Block<'_>, &mut [i32]) + Sync,
) -> Result<Vec<i32>, DbError> {
    let n = db.block_size();
    let mut scores = vec![0i32; db.block_count() * n];
    scores
        .par_chunks_mut(n)
        .enumerate()
        .try_for_each(|(index, out)| {
            let block = db.block(index)?;
            rows_scores(path, prepared, &block, 0..n, out);
            each_block(&block, out);
            Ok::<(), DbError>(())
        })?;
    scores.truncate(db.len() as usize);
    Ok(scores)
}

/// The side to move's point of view: every score-like value of Black's rows turned round
/// (in a breakdown row of `width` values, the score and each term's values, not the phase,
/// scale and rule).
pub fn turn_for_black(block: &Block<'_>, values: &mut [i32], width: usize) {
    for (row, values) in values.chunks_exact_mut(width).enumerate().take(block.len) {
        if block.side_to_move[row] != 0 {
            for (c, value) in values.iter_mut().enumerate() {
                if c == 0 || c >= 4 {
                    *value = -*value;
                }
            }
        }
    }
}
