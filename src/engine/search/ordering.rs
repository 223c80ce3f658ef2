//! Move ordering: the hash move, then winning and equal captures by the victim's value and
//! the capture history, killers and the counter-move, quiet moves by history, and losing
//! captures last. Moves are picked one at a time (selection), since most nodes cut off
//! after the first few.

use crate::movegen::{Move, MoveList};
use crate::position::board::{PieceType, Position};
use std::mem::MaybeUninit;

use super::see::{SEE_VALUES, captured, kind_at, see_ge};

const HASH_MOVE: i32 = 1 << 30;
const GOOD_CAPTURE: i32 = 1 << 28;
const KILLER: [i32; 2] = [(1 << 27) + 2, (1 << 27) + 1];
const COUNTER: i32 = 1 << 27;
const BAD_CAPTURE: i32 = -(1 << 28);
/// History values stay within ±HISTORY_MAX (the update pulls them toward the bound).
pub const HISTORY_MAX: i32 = 16_384;
/// A capture's victim outweighs its history by this much per centipawn of the victim: a
/// pawn is worth 2,400 of the history's ±16,384, so a history near its bound reorders
/// victims up to about a rook apart (about Stockfish's proportion of the two).
const CAPTURE_VICTIM_WEIGHT: i32 = 24;
/// The capture history's slot for a promotion that captures nothing.
const NO_VICTIM: usize = 6;
/// Correction-history entries per side, indexed by the low bits of the pawn key.
const CORRECTION_ENTRIES: usize = 16_384;
/// Correction entries are kept in 1/CORRECTION_GRAIN centipawns...
const CORRECTION_GRAIN: i32 = 256;
/// ... move toward a new observation by weight/CORRECTION_SCALE (at most 16/256) ...
const CORRECTION_SCALE: i32 = 256;
/// ... and correct the eval by at most this many centipawns.
const CORRECTION_MAX_CP: i32 = 64;

/// What the search remembers between nodes for ordering quiet moves.
pub struct Heuristics {
    /// Butterfly history: side, from, to.
    history: Box<[[[i32; 64]; 64]; 2]>,
    /// The reply that refuted a move last time, by the refuted move's piece (colour x 6 +
    /// kind) and destination.
    counters: Box<[[Move; 64]; 12]>,
    /// Capture history: the moving piece (colour x 6 + kind), destination and captured
    /// kind (or `NO_VICTIM`), rewarded when the capture caused a cut-off and punished when
    /// it was tried before another move that did.
    captures: Box<[[[i32; 7]; 64]; 12]>,
    /// Two quiet moves per ply that caused cut-offs.
    pub killers: Vec<[Move; 2]>,
    /// Static-evaluation correction: a running average, by side to move and pawn structure,
    /// of how far searches came out from the static eval (the evaluation misjudges some
    /// pawn structures consistently; the margins of pruning then use the corrected eval).
    correction: Box<[[i32; CORRECTION_ENTRIES]; 2]>,
}

impl Heuristics {
    pub fn new(max_ply: usize) -> Heuristics {
        Heuristics {
            history: Box::new([[[0; 64]; 64]; 2]),
            counters: Box::new([[Move::NULL; 64]; 12]),
            captures: Box::new([[[0; 7]; 64]; 12]),
            killers: vec![[Move::NULL; 2]; max_ply + 2],
            correction: Box::new([[0; CORRECTION_ENTRIES]; 2]),
        }
    }

    pub fn clear(&mut self) {
        *self.history = [[[0; 64]; 64]; 2];
        *self.counters = [[Move::NULL; 64]; 12];
        *self.captures = [[[0; 7]; 64]; 12];
        *self.correction = [[0; CORRECTION_ENTRIES]; 2];
        self.clear_killers();
    }

    pub fn clear_killers(&mut self) {
        self.killers.fill([Move::NULL; 2]);
    }

    #[inline]
    pub fn history(&self, side: usize, mv: Move) -> i32 {
        self.history[side][mv.from().index() as usize][mv.to().index() as usize]
    }

    fn capture_entry(&mut self, position: &Position, mv: Move) -> &mut i32 {
        let (piece, victim) = capture_slot(position, mv);
        &mut self.captures[piece][mv.to().index() as usize]
            [victim.map_or(NO_VICTIM, PieceType::index)]
    }

    /// The ordering score of a capture or promotion among the others: the victim's value
    /// (the least valuable attacker first among equals) plus the capture history.
    #[inline]
    pub fn capture_order(&self, position: &Position, mv: Move) -> i32 {
        let (piece, victim) = capture_slot(position, mv);
        let value = victim.map_or(0, |kind| SEE_VALUES[kind.index()]);
        let promotion = mv
            .promotion()
            .map_or(0, |kind| SEE_VALUES[kind.index()] - SEE_VALUES[0]);
        (value + promotion) * CAPTURE_VICTIM_WEIGHT - (piece % 6) as i32
            + self.captures[piece][mv.to().index() as usize]
                [victim.map_or(NO_VICTIM, PieceType::index)]
    }

    /// A move caused a cut-off at `depth` after the captures in `tried`: reward it if it
    /// is one of them (`position` is the node's, before the moves).
    pub fn reward_captures(
        &mut self,
        position: &Position,
        depth: i32,
        best: Option<Move>,
        tried: &[Move],
    ) {
        let bonus = history_bonus(depth);
        if let Some(best) = best {
            update_history(self.capture_entry(position, best), bonus);
        }
        for &mv in tried.iter().filter(|&&mv| Some(mv) != best) {
            update_history(self.capture_entry(position, mv), -bonus);
        }
    }

    /// The static eval `raw` (side to move's view) corrected by what searches of positions
    /// with these pawns have shown.
    #[inline]
    pub fn corrected_eval(&self, side: usize, pawn_key: u64, raw: i32) -> i32 {
        raw + self.correction[side][pawn_key as usize % CORRECTION_ENTRIES] / CORRECTION_GRAIN
    }

    /// A search of `depth` found `searched` where the static eval said `raw`.
    pub fn correct(&mut self, side: usize, pawn_key: u64, depth: i32, raw: i32, searched: i32) {
        let limit = CORRECTION_MAX_CP * CORRECTION_GRAIN;
        let target = ((searched - raw) * CORRECTION_GRAIN).clamp(-limit, limit);
        let weight = (depth + 1).min(16);
        let entry = &mut self.correction[side][pawn_key as usize % CORRECTION_ENTRIES];
        *entry = (*entry * (CORRECTION_SCALE - weight) + target * weight) / CORRECTION_SCALE;
    }

    #[inline]
    pub fn counter(&self, previous: Option<(usize, Move)>) -> Move {
        previous.map_or(Move::NULL, |(piece, mv)| {
            self.counters[piece][mv.to().index() as usize]
        })
    }

    /// A quiet move caused a cut-off at `depth`: reward it, punish the quiets tried
    /// before it.
    pub fn reward(
        &mut self,
        side: usize,
        ply: usize,
        depth: i32,
        best: Move,
        tried: &[Move],
        previous: Option<(usize, Move)>,
    ) {
        let bonus = history_bonus(depth);
        update_history(
            &mut self.history[side][best.from().index() as usize][best.to().index() as usize],
            bonus,
        );
        for &mv in tried.iter().filter(|&&mv| mv != best) {
            update_history(
                &mut self.history[side][mv.from().index() as usize][mv.to().index() as usize],
                -bonus,
            );
        }
        let killers = &mut self.killers[ply];
        if killers[0] != best {
            killers[1] = killers[0];
            killers[0] = best;
        }
        if let Some((piece, mv)) = previous {
            self.counters[piece][mv.to().index() as usize] = best;
        }
    }
}

/// A history's reward for a cut-off at `depth` (and its penalty for a move tried before).
fn history_bonus(depth: i32) -> i32 {
    (depth * depth * 16 + depth * 32).min(1600)
}

/// Moves a history entry by `delta`, pulled toward ±HISTORY_MAX so it never passes it.
fn update_history(entry: &mut i32, delta: i32) {
    *entry += delta - *entry * delta.abs() / HISTORY_MAX;
}

/// Where `mv`'s capture history lives: its piece (colour x 6 + kind) and its victim (the
/// `NO_VICTIM` slot for none).
#[inline]
fn capture_slot(position: &Position, mv: Move) -> (usize, Option<PieceType>) {
    let kind = kind_at(position, mv.from()).map_or(0, PieceType::index);
    let piece = kind + 6 * position.side_to_move().index();
    (piece, captured(position, mv))
}

/// Whether `mv` captures or promotes (what quiescence searches and history skips).
#[inline]
pub fn is_tactical(position: &Position, mv: Move) -> bool {
    mv.promotion().is_some() || captured(position, mv).is_some()
}

/// A move list with a score per move, handed out best first.
pub struct Picker<'a> {
    /// Borrowed, not moved in: the list and the scores are 1.5 KB, and moving them into
    /// the picker and the picker into the search's frame were two copies a node (3% of
    /// datagen's time in `memcpy`).
    moves: &'a mut MoveList,
    /// Written for the first `moves.len()` entries only, the rest never read: zeroing all
    /// 256 was a kilobyte of stores a node (1.4% of datagen's time in `perf`).
    scores: [MaybeUninit<i32>; crate::movegen::MAX_MOVES],
    next: usize,
    /// Moves from `end` on are dropped (`skip_quiets`).
    end: usize,
}

impl<'a> Picker<'a> {
    /// Orders every move of `moves` for the main search.
    pub fn new(
        position: &Position,
        moves: &'a mut MoveList,
        hash_move: Move,
        heuristics: &Heuristics,
        ply: usize,
        previous: Option<(usize, Move)>,
    ) -> Picker<'a> {
        let side = position.side_to_move().index();
        let killers = heuristics.killers[ply];
        let counter = heuristics.counter(previous);
        let mut scores = [const { MaybeUninit::uninit() }; crate::movegen::MAX_MOVES];
        for (score, &mv) in scores.iter_mut().zip(moves.iter()) {
            score.write(if mv == hash_move {
                HASH_MOVE
            } else if is_tactical(position, mv) {
                let order = heuristics.capture_order(position, mv);
                // Underpromotions are rarely good: after the quiets.
                if mv.promotion().is_some_and(|p| p != PieceType::Queen) {
                    BAD_CAPTURE + order
                } else if see_ge(position, mv, 0) {
                    GOOD_CAPTURE + order
                } else {
                    BAD_CAPTURE + order
                }
            } else if mv == killers[0] {
                KILLER[0]
            } else if mv == killers[1] {
                KILLER[1]
            } else if mv == counter {
                COUNTER
            } else {
                heuristics.history(side, mv)
            });
        }
        let end = moves.len();
        Picker {
            moves,
            scores,
            next: 0,
            end,
        }
    }

    /// Orders captures for quiescence (and evasions in check) as the main search orders
    /// captures among themselves.
    pub fn captures(
        position: &Position,
        moves: &'a mut MoveList,
        heuristics: &Heuristics,
    ) -> Picker<'a> {
        Picker::ranked(moves, |mv| heuristics.capture_order(position, mv))
    }

    /// Orders moves by a given score per move (the root, by the last iteration).
    pub fn ranked(moves: &'a mut MoveList, rank: impl Fn(Move) -> i32) -> Picker<'a> {
        let mut scores = [const { MaybeUninit::uninit() }; crate::movegen::MAX_MOVES];
        for (score, &mv) in scores.iter_mut().zip(moves.iter()) {
            score.write(rank(mv));
        }
        let end = moves.len();
        Picker {
            moves,
            scores,
            next: 0,
            end,
        }
    }

    /// How many moves the picker hands out in all (the list's, less those `skip_quiets`
    /// dropped).
    pub fn len(&self) -> usize {
        self.end
    }

    pub fn is_empty(&self) -> bool {
        self.end == 0
    }

    /// The best remaining move and its ordering score.
    #[inline]
    pub fn pick(&mut self) -> Option<(Move, i32)> {
        if self.next >= self.end {
            return None;
        }
        let (best, best_score) = self.best_remaining();
        let moves = self.moves.as_mut_slice();
        moves.swap(self.next, best);
        self.scores.swap(self.next, best);
        let picked = (moves[self.next], best_score);
        self.next += 1;
        Some(picked)
    }

    /// The index and score of the first of the best-scored moves still to come (there
    /// must be one).
    #[inline]
    fn best_remaining(&self) -> (usize, i32) {
        let mut best = self.next;
        let mut best_score = self.score(best);
        for i in self.next + 1..self.end {
            let s = self.score(i);
            if s > best_score {
                (best, best_score) = (i, s);
            }
        }
        (best, best_score)
    }

    #[inline(always)]
    fn score(&self, i: usize) -> i32 {
        debug_assert!(i < self.end);
        // SAFETY: the constructors wrote every score below `moves.len()`, `end` never
        // passes it, and swaps and `skip_quiets` keep the written ones below `end`.
        unsafe { self.scores[i].assume_init() }
    }

    /// Drops the quiet moves still to come, for a picker made by `new` once it has handed
    /// out a quiet other than the hash move (late-move pruning gave up on them): `pick`
    /// then hands out the losing captures and underpromotions that remain, in the order
    /// it would have handed them out after the quiets.
    ///
    /// The quiets (scored from −HISTORY_MAX up) all come before those (scored below
    /// −2^27), and those come out best first. Only among equal scores does the order
    /// depend on where the quiets' swaps left them; so when no two tie they are moved up
    /// at once, and otherwise the quiets' picks are played through. Picking each quiet
    /// and discarding it had been 45% of the main search's picks.
    pub fn skip_quiets(&mut self) {
        debug_assert!(
            (self.next..self.end).all(|i| self.score(i) <= KILLER[0]),
            "only quiets and losing tacticals may remain"
        );
        // The losing tacticals are few: a tie is found by comparing each with those after it.
        let remaining = self.next..self.end;
        let ties = remaining.clone().any(|i| {
            let s = self.score(i);
            is_bad_tactical(s) && (i + 1..self.end).any(|j| self.score(j) == s)
        });
        if !ties {
            let mut kept = self.next;
            for i in remaining {
                if is_bad_tactical(self.score(i)) {
                    self.moves.as_mut_slice().swap(kept, i);
                    self.scores.swap(kept, i);
                    kept += 1;
                }
            }
            self.end = kept;
        } else {
            while self.next < self.end {
                let (best, best_score) = self.best_remaining();
                if is_bad_tactical(best_score) {
                    break;
                }
                self.moves.as_mut_slice().swap(self.next, best);
                self.scores.swap(self.next, best);
                self.next += 1;
            }
        }
    }
}

/// Whether an ordering score marks a capture that loses material by SEE (or an
/// underpromotion).
#[inline]
pub fn is_bad_tactical(score: i32) -> bool {
    score < -(1 << 27)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_history_reorders_captures_of_equal_victims_and_not_a_queen_below_a_pawn() {
        // White's knight and bishop can each take the d5 pawn; the rook can take the queen on a4.
        let board =
            crate::movegen::Board::from_fen("7k/8/8/3p4/q7/2N2B2/8/R6K w - - 0 1").expect("a FEN");
        let position = board.position();
        let mv = |uci: &str| {
            let mut moves = MoveList::new();
            crate::movegen::legal_moves(&board, &mut moves);
            *moves
                .iter()
                .find(|m| m.to_string() == uci)
                .expect("a legal move")
        };
        let (knight, bishop, rook) = (mv("c3d5"), mv("f3d5"), mv("a1a4"));
        let mut heuristics = Heuristics::new(8);
        // Without history: the knight (the less valuable attacker) first among equals.
        assert!(
            heuristics.capture_order(position, knight) > heuristics.capture_order(position, bishop)
        );
        // The bishop's capture keeps cutting off after the knight's was tried.
        for _ in 0..50 {
            heuristics.reward_captures(position, 10, Some(bishop), &[knight, bishop]);
        }
        assert!(
            heuristics.capture_order(position, bishop) > heuristics.capture_order(position, knight)
        );
        // However much the pawn captures are rewarded, taking the queen comes first.
        assert!(
            heuristics.capture_order(position, rook) > heuristics.capture_order(position, bishop)
        );
        heuristics.clear();
        assert!(
            heuristics.capture_order(position, knight) > heuristics.capture_order(position, bishop)
        );
    }

    /// The losing tacticals `pick` hands out after a quiet at pick `skip_at` (or the end),
    /// by picking on (the reference) or by `skip_quiets` (`skip`).
    fn tacticals_after_quiets(
        board: &crate::movegen::Board,
        heuristics: &Heuristics,
        hash_move: Move,
        skip_at: usize,
        skip: bool,
    ) -> Vec<(Move, i32)> {
        let mut moves = MoveList::new();
        crate::movegen::legal_moves(board, &mut moves);
        let position = board.position();
        let mut picker = Picker::new(position, &mut moves, hash_move, heuristics, 2, None);
        let mut picks = 0;
        while let Some((mv, _)) = picker.pick() {
            picks += 1;
            // As late-move pruning does: at a quiet other than the hash move, which comes
            // after every winning capture.
            if picks > skip_at && !is_tactical(position, mv) && mv != hash_move {
                break;
            }
        }
        if skip {
            picker.skip_quiets();
        }
        let handed_out_before = picker.next;
        let rest: Vec<(Move, i32)> = std::iter::from_fn(|| picker.pick()).collect();
        assert_eq!(picker.len(), handed_out_before + rest.len());
        rest.into_iter()
            .filter(|&(_, score)| {
                !skip || is_bad_tactical(score) || panic!("a quiet after the skip")
            })
            .filter(|&(mv, _)| skip || is_tactical(position, mv))
            .collect()
    }

    #[test]
    fn skipping_the_quiets_leaves_the_losing_tacticals_in_the_order_picking_gives() {
        use crate::training::tune::Rng;
        let starts = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
            "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
            "2r3k1/1q1nbppp/r3p3/3pP3/pPpP4/P1Q2N2/2RN1PPP/2R4K b - b3 0 23",
        ];
        let mut rng = Rng::new(0x5eed);
        let (mut with_ties, mut without_ties, mut positions) = (0, 0, 0);
        for start in starts {
            let mut board = crate::movegen::Board::from_fen(start).expect("a FEN");
            for _ in 0..40 {
                let mut moves = MoveList::new();
                crate::movegen::legal_moves(&board, &mut moves);
                let moves: Vec<Move> = moves.iter().copied().collect();
                if moves.is_empty() {
                    break;
                }
                // Histories from nothing (many ties) to random (few).
                let mut heuristics = Heuristics::new(8);
                for _ in 0..rng.below(4) {
                    let best = moves[rng.below(moves.len())];
                    let tried: Vec<Move> = moves.iter().copied().take(rng.below(6)).collect();
                    if is_tactical(board.position(), best) {
                        heuristics.reward_captures(board.position(), 6, Some(best), &tried);
                    } else {
                        heuristics.reward(board.side_to_move().index(), 2, 6, best, &tried, None);
                    }
                }
                let hash_move = moves[rng.below(moves.len())];
                for skip_at in 0..moves.len() {
                    let picked =
                        tacticals_after_quiets(&board, &heuristics, hash_move, skip_at, false);
                    let skipped =
                        tacticals_after_quiets(&board, &heuristics, hash_move, skip_at, true);
                    assert_eq!(skipped, picked, "{} after {skip_at} picks", board.to_fen());
                    let mut scores: Vec<i32> = picked.iter().map(|&(_, s)| s).collect();
                    scores.dedup();
                    if scores.len() < picked.len() {
                        with_ties += 1;
                    } else if picked.len() > 1 {
                        without_ties += 1;
                    }
                }
                positions += 1;
                let next = moves[rng.below(moves.len())];
                board = board.play(next);
            }
        }
        // Both ways through `skip_quiets` were taken, many times.
        assert!(positions > 100, "{positions}");
        assert!(
            with_ties > 100 && without_ties > 100,
            "{with_ties} {without_ties}"
        );
    }

    #[test]
    fn correction_converges_to_the_searched_error_within_its_bound() {
        let mut heuristics = Heuristics::new(8);
        let (pawns, other_pawns) = (0x1234_5678_9abc_def0, 0x0fed_cba9_8765_4321);
        assert_eq!(heuristics.corrected_eval(0, pawns, 10), 10);
        for _ in 0..200 {
            heuristics.correct(0, pawns, 20, 10, 40);
        }
        // The eval said 10, searches said 40: the correction learns the +30.
        let learned = heuristics.corrected_eval(0, pawns, 10);
        assert!((39..=40).contains(&learned), "{learned}");
        // Only for that side and those pawns.
        assert_eq!(heuristics.corrected_eval(1, pawns, 10), 10);
        assert_eq!(heuristics.corrected_eval(0, other_pawns, 10), 10);
        // A shallow search moves it less than a deep one.
        let mut shallow = Heuristics::new(8);
        let mut deep = Heuristics::new(8);
        shallow.correct(0, pawns, 1, 0, 50);
        deep.correct(0, pawns, 12, 0, 50);
        assert!(shallow.corrected_eval(0, pawns, 0) < deep.corrected_eval(0, pawns, 0));
        // However wrong the eval, the correction stays within its bound.
        for _ in 0..500 {
            heuristics.correct(0, pawns, 30, 0, 5_000);
        }
        let capped = heuristics.corrected_eval(0, pawns, 0);
        assert!(
            (CORRECTION_MAX_CP - 1..=CORRECTION_MAX_CP).contains(&capped),
            "{capped}"
        );
        heuristics.clear();
        assert_eq!(heuristics.corrected_eval(0, pawns, 0), 0);
    }
}
