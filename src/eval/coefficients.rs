//! The evaluation as a linear function of its weights: for one position, how many times each
//! weight counts (White's minus Black's), and what the taper and the endgame rules need. The
//! training features (`features --kind terms`) and the tuner read these.
//!
//! The counts come from the term code itself: [`CoefficientSink`] is a [`Sink`] that records
//! `count` at the weight's place instead of multiplying, so a term cannot be counted one way
//! here and weighted another way in the evaluation. `docs/EVAL.md` gives the formula that
//! turns them back into the score; [`score`] implements it.

use super::endgame::{self, MAX_PHASE, Rule, SCALE_NORMAL};
use super::terms::{Boards, Sink, Term, Total, all_terms, psqt_planes};
use super::weights::{Prepared, Weight, Weights};
use crate::position::board::PositionBoards;
use pawnstorm_kernels::Lanes;

/// What besides the counts the score needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extras {
    /// The game phase, capped: 0 (bare kings and pawns) to 24.
    pub phase: u8,
    /// The endgame scale factor (out of 64) when White (`[0]`) or Black (`[1]`) is ahead in
    /// the eg sum: which applies depends on the weights.
    pub scale: [u8; 2],
    /// The endgame rule that replaces the tapered sum, if any.
    pub rule: Rule,
    /// The score the rule gives (0 under [`Rule::Terms`]); it depends on no weight.
    pub rule_score: i32,
}

/// Records counts into `rows` (`L::WIDTH` rows of [`Weights::COUNT`] `i16`s, one per
/// weight in file order) as the terms weigh, and sums the weighted values as [`Total`] does
/// (the sign of eg picks the scale factor the current weights use).
pub struct CoefficientSink<'a, L: Lanes> {
    weights: &'a Weights,
    rows: &'a mut [i16],
    psqt_base: usize,
    pub total: Total<L>,
}

impl<'a, L: Lanes> CoefficientSink<'a, L> {
    /// `rows` must hold `L::WIDTH` x [`Weights::COUNT`] zeros (or counts to add to).
    pub fn new(weights: &'a Weights, rows: &'a mut [i16]) -> CoefficientSink<'a, L> {
        assert_eq!(
            rows.len(),
            L::WIDTH * Weights::COUNT,
            "one count per weight and lane"
        );
        let psqt_base = weights
            .index_of(&weights.psqt[0][0])
            .expect("psqt is a field");
        CoefficientSink {
            weights,
            rows,
            psqt_base,
            total: Total::new(),
        }
    }
}

impl<L: Lanes> Sink<L> for CoefficientSink<'_, L> {
    #[inline(always)]
    fn add(&mut self, term: Term, value: L::Pair) {
        self.total.add(term, value);
    }

    #[inline(always)]
    fn times(&mut self, count: L, weight: &Weight) -> L::Pair {
        // A weight outside the prepared set would be a term reading a copy: a bug here.
        let place = self
            .weights
            .index_of(weight)
            .expect("terms weigh with fields of the prepared weights");
        let mut lanes = [0u64; 8];
        count.store(&mut lanes);
        // Counts are White's minus Black's in two's complement; every weight's count is far
        // inside i16 (`weights::max_count`).
        for (lane, &value) in lanes.iter().take(L::WIDTH).enumerate() {
            let slot = &mut self.rows[lane * Weights::COUNT + place];
            *slot = slot.wrapping_add(value as i64 as i16);
        }
        L::weigh(count, weight.mg, weight.eg)
    }

    #[inline(always)]
    fn psqt(&mut self, prepared: &Prepared, pieces: &[L; 12], count: L) -> L::Pair {
        for (set, board) in pieces.iter().enumerate() {
            let (kind, black) = (set / 2, set % 2 == 1);
            let mut lanes = [0u64; 8];
            board.store(&mut lanes);
            for (lane, &bits) in lanes.iter().take(L::WIDTH).enumerate() {
                let row = lane * Weights::COUNT + self.psqt_base + kind * 64;
                let mut squares = bits;
                while squares != 0 {
                    let square = squares.trailing_zeros() as usize;
                    squares &= squares - 1;
                    // Black reads the table vertically mirrored, and counts against White.
                    if black {
                        self.rows[row + (square ^ 56)] -= 1;
                    } else {
                        self.rows[row + square] += 1;
                    }
                }
            }
        }
        psqt_planes(prepared, pieces, count)
    }
}

/// Adds the counts of `boards` into `row` ([`Weights::COUNT`] long, normally zeros) and
/// returns the rest of what [`score`] needs.
pub fn coefficients(prepared: &Prepared, boards: &PositionBoards, row: &mut [i16]) -> Extras {
    let mut extras = [None; 1];
    coefficients_lanes::<u64>(prepared, std::slice::from_ref(boards), row, &mut extras);
    let (extras, _) = extras[0].expect("one position");
    extras
}

/// [`coefficients`] of up to `L::WIDTH` positions at once: `rows` holds `L::WIDTH` rows (the
/// ones past `boards.len()` are scratch); `out[i]` gets position i's extras and its eg sum
/// under `prepared` (whose sign picks the scale the evaluation uses).
#[inline(always)]
pub fn coefficients_lanes<L: Lanes>(
    prepared: &Prepared,
    boards: &[PositionBoards],
    rows: &mut [i16],
    out: &mut [Option<(Extras, i32)>],
) {
    assert!(boards.len() <= L::WIDTH && out.len() >= boards.len());
    let mut lanes = [[0u64; 8]; 9];
    for (lane, b) in boards.iter().enumerate() {
        for (kind_lanes, board) in lanes.iter_mut().zip(b.pieces) {
            kind_lanes[lane] = board;
        }
        lanes[6][lane] = b.colors[0];
        lanes[7][lane] = b.colors[1];
        lanes[8][lane] = 0u64.wrapping_sub(b.black_to_move as u64);
    }
    let boards_lanes = Boards {
        pieces: std::array::from_fn(|kind| L::load(&lanes[kind])),
        colors: [L::load(&lanes[6]), L::load(&lanes[7])],
        black_to_move: L::load(&lanes[8]),
    };
    let mut sink = CoefficientSink::<L>::new(&prepared.weights, rows);
    let meta = all_terms(prepared, &boards_lanes, &mut sink);
    let (_, eg) = sink.total.sums();
    let mut values = [[0u64; 8]; 3];
    eg.store(&mut values[0]);
    meta.phase.store(&mut values[1]);
    meta.signature.store(&mut values[2]);
    for (lane, b) in boards.iter().enumerate() {
        let (eg, phase, signature) = (values[0][lane] as i32, values[1][lane], values[2][lane]);
        let material = endgame::Material::from_signature(signature);
        // The special endgames' scores depend on the pieces alone, not on mg and eg.
        let finished = endgame::finish(0, 0, phase, signature, || *b);
        let rule_score = match finished.rule {
            Rule::Terms => 0,
            _ => finished.score,
        };
        let extras = Extras {
            phase: finished.phase as u8,
            scale: [material.scale(0) as u8, material.scale(1) as u8],
            rule: finished.rule,
            rule_score,
        };
        out[lane] = Some((extras, eg));
    }
}

/// The counts of many positions, `L::WIDTH` at a time: `each(i, counts, extras, eg)` for
/// `items[i]` in order, with the boards `boards_of(&items[i])` gives (the counts are valid
/// only during the call).
#[inline(always)]
pub fn for_each_counted<L: Lanes, T>(
    prepared: &Prepared,
    items: &[T],
    boards_of: impl Fn(&T) -> PositionBoards,
    mut each: impl FnMut(usize, &[i16], &Extras, i32),
) {
    let w = Weights::COUNT;
    let mut rows = vec![0i16; L::WIDTH * w];
    let mut out = [None; 8];
    let mut boards = [PositionBoards {
        pieces: [0; 6],
        colors: [0; 2],
        black_to_move: false,
    }; 8];
    for (chunk_index, chunk) in items.chunks(L::WIDTH).enumerate() {
        for (b, item) in boards.iter_mut().zip(chunk) {
            *b = boards_of(item);
        }
        rows.fill(0);
        coefficients_lanes::<L>(prepared, &boards[..chunk.len()], &mut rows, &mut out);
        for (lane, result) in out.iter().take(chunk.len()).enumerate() {
            let (extras, eg) = result.expect("one per position");
            each(
                chunk_index * L::WIDTH + lane,
                &rows[lane * w..(lane + 1) * w],
                &extras,
                eg,
            );
        }
    }
}

/// The score from counts (one row, [`Weights::COUNT`] long), as `docs/EVAL.md` defines it:
/// mg and eg are the sums of count x weight, the scale is White's when eg >= 0 and Black's
/// otherwise, the taper rounds toward zero, and a rule's score replaces the result.
pub fn score(weights: &[Weight], row: &[i16], extras: &Extras) -> i32 {
    if extras.rule != Rule::Terms {
        return extras.rule_score;
    }
    let (mut mg, mut eg) = (0i64, 0i64);
    for (weight, &count) in weights.iter().zip(row) {
        mg += weight.mg as i64 * count as i64;
        eg += weight.eg as i64 * count as i64;
    }
    let scale = extras.scale[if eg >= 0 { 0 } else { 1 }] as i64;
    let phase = extras.phase as i64;
    let max = MAX_PHASE as i64;
    // i64 division truncates toward zero, as the evaluation's i32 arithmetic does.
    ((mg * phase + eg * (max - phase) * scale / SCALE_NORMAL as i64) / max) as i32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::evaluate_with;

    fn boards(fen: &str) -> PositionBoards {
        let position = crate::position::fen::parse_fen(fen).expect("fen");
        position.boards()
    }

    #[test]
    fn counts_rebuild_the_score() {
        let prepared = Prepared::default();
        let values = prepared.weights.values();
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9",
            "8/8/4k3/8/8/3KP3/8/8 w - - 0 1",
            "8/5k2/8/8/8/8/2B5/K6N b - - 0 1",
            "4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1",
            "8/2b5/5k2/8/1P6/2K5/8/5B2 w - - 0 1",
        ] {
            let position = crate::position::fen::parse_fen(fen).expect("fen");
            let mut row = vec![0i16; Weights::COUNT];
            let extras = coefficients(&prepared, &boards(fen), &mut row);
            assert_eq!(
                score(&values, &row, &extras),
                evaluate_with(&prepared, &position),
                "{fen}"
            );
        }
    }

    /// The start position is symmetric: every count is zero but the side to move's tempo.
    #[test]
    fn start_position_counts_only_tempo() {
        let prepared = Prepared::default();
        let mut row = vec![0i16; Weights::COUNT];
        let fen = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let extras = coefficients(&prepared, &boards(fen), &mut row);
        let tempo = prepared.weights.index_of(&prepared.weights.tempo);
        for (place, &count) in row.iter().enumerate() {
            let piece_square = (5..5 + 384).contains(&place);
            if Some(place) == tempo {
                assert_eq!(count, 1);
            } else if !piece_square {
                assert_eq!(count, 0, "weight {place}");
            }
        }
        // The tables count White's a1 rook +1 at a1 and Black's a8 rook -1 at its mirror.
        let rook_a1 = prepared
            .weights
            .index_of(&prepared.weights.psqt[3][0])
            .expect("field");
        assert_eq!(row[rook_a1], 0);
        assert_eq!(extras.phase, 24);
        assert_eq!(extras.rule, Rule::Terms);
    }
}
