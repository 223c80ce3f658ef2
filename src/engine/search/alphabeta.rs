//! The search proper: the principal-variation alpha-beta and the quiescence search (the
//! iterative deepening around them is `deepening.rs`). Each pruning rule is a few lines
//! with its limits named below.

mod deepening;
mod extensions;

use extensions::{Singular, SingularOutcome};

use std::sync::atomic::Ordering;

use super::SearchEvaluator;
use super::ordering::{Heuristics, Picker, is_bad_tactical, is_tactical};
use super::see::{SEE_VALUES, captured, kind_at, see_ge};
use super::tb::{Outcome, Syzygy};
use super::tt::{Bound, TranspositionTable};
use super::tunables::{
    DELTA_MARGIN, FUTILITY_BASE, FUTILITY_DEPTH, FUTILITY_PER_DEPTH, IIR_DEPTH, LMP_DEPTH,
    LMR_DEPTH, NMP_DEPTH, RFP_DEPTH, RFP_MARGIN, SEE_CAPTURE_MARGIN, SEE_DEPTH, SEE_QUIET_MARGIN,
    lmr,
};
use super::{Control, Options, RootMove, Shared, TimeManager};
use crate::movegen::{Board, Move, MoveList, captures, count_legal_moves, legal_moves};
use crate::position::board::PieceType;
use crate::position::score::{DRAW, INFINITY, MAX_PLY, TB_WIN, TB_WIN_BOUND, mate_in, mated_in};

// The margins and depths of the pruning rules are tunables (`super::tunables`, which says
// what each does): reverse futility (RFP_*), null move (NMP_DEPTH), late-move pruning
// (LMP_DEPTH, after (3 + depth²) / (2 if not improving) quiets), futility (FUTILITY_*),
// SEE pruning (SEE_*), internal iterative reduction (IIR_DEPTH), late-move reductions
// (LMR_*), delta pruning (DELTA_MARGIN), aspiration (ASPIRATION_*).

/// Null move verified (no null move below) from this depth, or always when the side has
/// at most this many pieces besides pawns and king (zugzwang danger).
const NMP_VERIFY_DEPTH: i32 = 12;
const NMP_VERIFY_PIECES: u32 = 2;
/// Late-move reductions after this many moves (PV nodes one more).
const LMR_MOVES: usize = 2;
/// Nodes between looks at the clock and the stop flag.
const CHECK_INTERVAL: u64 = 1024;

#[derive(Clone, Copy, Default)]
struct Frame {
    static_eval: i32,
    /// The move played from this ply's position, and its piece (colour x 6 + kind).
    mv: Move,
    piece: usize,
    null: bool,
    /// Double extensions on the path to this ply (bounds the search's growth).
    double_extensions: u8,
}

/// What one thread of a search works with: the shared table and its own evaluator (with
/// its pawn table) and move-ordering heuristics.
pub(super) struct Parts<'a> {
    pub tt: &'a TranspositionTable,
    pub evaluator: &'a mut SearchEvaluator,
    pub heuristics: &'a mut Heuristics,
    pub syzygy: Option<&'a Syzygy>,
    pub options: &'a Options,
}

pub(super) struct Search<'a> {
    tt: &'a TranspositionTable,
    evaluator: &'a mut SearchEvaluator,
    heuristics: &'a mut Heuristics,
    syzygy: Option<&'a Syzygy>,
    options: &'a Options,
    control: &'a Control,
    time: &'a mut TimeManager,
    /// Keys of the positions before the current one: the game's, then the search path's.
    keys: Vec<u64>,
    pub root_moves: Vec<RootMove>,
    pub tbhits: u64,
    /// The tables' verdict on the root, when it is in them: what the reported score says
    /// unless the search has found a mate (the search itself sees only the evaluation
    /// until a capture or pawn move reaches a probe).
    pub root_outcome: Option<Outcome>,
    nodes: u64,
    node_limit: u64,
    seldepth: usize,
    stopped: bool,
    /// Whether the search started as `go ponder` and has seen the `ponderhit`.
    ponder: bool,
    frames: Vec<Frame>,
    pv: Vec<[Move; MAX_PLY + 1]>,
    pv_len: [usize; MAX_PLY + 1],
    nmp_min_ply: usize,
    /// The move a singular-extension search at this ply leaves out (NULL when none).
    excluded: Vec<Move>,
    pv_index: usize,
    /// The deepest iteration finished so far (0: none yet).
    completed_depth: i32,
    shared: &'a Shared,
    /// 0 for the main thread, which keeps the time, decides the move and reports; helpers
    /// (Lazy SMP) only fill the shared table until the main thread stops them.
    thread: usize,
}

impl<'a> Search<'a> {
    pub fn new(
        parts: Parts<'a>,
        history: &[u64],
        control: &'a Control,
        time: &'a mut TimeManager,
        shared: &'a Shared,
        thread: usize,
    ) -> Search<'a> {
        let Parts {
            tt,
            evaluator,
            heuristics,
            syzygy,
            options,
        } = parts;
        Search {
            tt,
            evaluator,
            heuristics,
            syzygy,
            options,
            control,
            time,
            keys: history.to_vec(),
            root_moves: Vec::new(),
            tbhits: 0,
            root_outcome: None,
            nodes: 0,
            node_limit: u64::MAX,
            seldepth: 0,
            stopped: false,
            ponder: false,
            frames: vec![Frame::default(); MAX_PLY + 4],
            pv: vec![[Move::NULL; MAX_PLY + 1]; MAX_PLY + 1],
            pv_len: [0; MAX_PLY + 1],
            nmp_min_ply: 0,
            excluded: vec![Move::NULL; MAX_PLY + 4],
            pv_index: 0,
            completed_depth: 0,
            shared,
            thread,
        }
    }

    fn is_main(&self) -> bool {
        self.thread == 0
    }

    /// Nodes of every thread so far: what every thread has published, and this thread's
    /// since it last did.
    fn total_nodes(&self) -> u64 {
        self.shared.nodes.load(Ordering::Relaxed) + self.nodes % CHECK_INTERVAL
    }

    /// Counts a node; every CHECK_INTERVAL nodes looks at the stop flag and the clock.
    #[inline]
    fn count_node(&mut self) {
        if self.stopped {
            return;
        }
        self.nodes += 1;
        if self.nodes.is_multiple_of(CHECK_INTERVAL) {
            self.shared
                .nodes
                .fetch_add(CHECK_INTERVAL, Ordering::Relaxed);
        }
        // `go nodes` counts every thread's nodes; whichever thread sees the total reach the
        // limit stops them all.
        if self.node_limit != u64::MAX && self.total_nodes() >= self.node_limit {
            self.stopped = true;
            self.shared.helpers_stop.store(true, Ordering::Relaxed);
        }
        if self.nodes.is_multiple_of(CHECK_INTERVAL) {
            if self.control.stopped() {
                self.stopped = true;
            }
            if !self.is_main() {
                if self.shared.helpers_stop.load(Ordering::Relaxed) {
                    self.stopped = true;
                }
                return;
            }
            let pondering = self.control.pondering.load(Ordering::Relaxed);
            if self.ponder && !pondering {
                // ponderhit: our clock runs from now.
                self.ponder = false;
                self.time.restart(self.total_nodes());
            }
            // The first iteration goes on past the hard limit, up to most of the clock: a
            // move from an unfinished one is a fallback (`stop` and `go nodes` end it too).
            let nodes = self.total_nodes();
            if !pondering
                && if self.completed_depth > 0 {
                    self.time.hard_expired(nodes)
                } else {
                    self.time.emergency_expired(nodes)
                }
            {
                self.stopped = true;
            }
        }
    }

    /// The static evaluation from the side to move's view.
    #[inline]
    fn evaluate(&mut self, board: &Board, ply: usize) -> i32 {
        let white = self
            .evaluator
            .evaluate_at(board.position(), board.pawn_key(), ply);
        let score = match board.side_to_move() {
            pawnstorm_kernels::Color::White => white,
            pawnstorm_kernels::Color::Black => -white,
        };
        score.clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// The static eval with the correction history applied, kept off the mate range.
    #[inline]
    fn corrected(&self, board: &Board, raw: i32) -> i32 {
        if !self.options.features.correction_history {
            return raw;
        }
        let side = board.side_to_move().index();
        self.heuristics
            .corrected_eval(side, board.pawn_key(), raw)
            .clamp(-TB_WIN_BOUND + 1, TB_WIN_BOUND - 1)
    }

    /// Draws by the fifty-move rule, repetition (one earlier occurrence, in the game or the
    /// search) or bare minor pieces.
    fn is_draw(&self, board: &Board) -> bool {
        let position = board.position();
        let halfmove = usize::from(position.halfmove_clock());
        if halfmove >= 100 {
            return !(board.in_check() && count_legal_moves(board) == 0);
        }
        let n = self.keys.len();
        let key = board.key();
        let mut back = 4;
        while back <= halfmove.min(n) {
            if self.keys[n - back] == key {
                return true;
            }
            back += 2;
        }
        let heavy = position.piece_type(PieceType::Pawn)
            | position.piece_type(PieceType::Rook)
            | position.piece_type(PieceType::Queen);
        let minors =
            position.piece_type(PieceType::Knight) | position.piece_type(PieceType::Bishop);
        heavy.is_empty() && minors.count() <= 1
    }

    /// Double extensions on the path to the node at `ply`.
    fn double_extensions_before(&self, ply: usize) -> u8 {
        ply.checked_sub(1)
            .map_or(0, |parent| self.frames[parent].double_extensions)
    }

    fn update_pv(&mut self, ply: usize, mv: Move) {
        let child_len = self.pv_len[ply + 1].max(ply + 1);
        self.pv[ply][ply] = mv;
        for i in ply + 1..child_len {
            self.pv[ply][i] = self.pv[ply + 1][i];
        }
        self.pv_len[ply] = child_len;
    }

    fn negamax(
        &mut self,
        board: &Board,
        mut alpha: i32,
        mut beta: i32,
        mut depth: i32,
        ply: usize,
        cut_node: bool,
    ) -> i32 {
        let root = ply == 0;
        let pv_node = beta - alpha > 1;
        self.pv_len[ply] = ply;
        if depth <= 0 {
            return self.quiescence(board, alpha, beta, ply);
        }
        self.count_node();
        if self.stopped {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        let in_check = board.in_check();
        if !root {
            if self.is_draw(board) {
                return DRAW;
            }
            if ply >= MAX_PLY - 4 {
                return if in_check {
                    DRAW
                } else {
                    self.evaluate(board, ply)
                };
            }
            // Mate-distance pruning: no line from here beats a mate already found nearer.
            alpha = alpha.max(mated_in(ply));
            beta = beta.min(mate_in(ply + 1));
            if alpha >= beta {
                return alpha;
            }
        }

        let key = board.key();
        let excluded = self.excluded[ply];
        let singular_search = excluded != Move::NULL;
        let hit = self.tt.probe(key, ply);
        let hash_move = hit.map_or(Move::NULL, |h| h.mv);
        if let Some(h) = hit
            && !pv_node
            && !singular_search
            && h.depth >= depth
            && board.position().halfmove_clock() < 90
            && match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            }
        {
            return h.score;
        }

        if !root
            && !singular_search
            && board.position().halfmove_clock() == 0
            && let Some(syzygy) = self.syzygy
            && let Some(outcome) = syzygy.probe_wdl(board)
        {
            self.tbhits += 1;
            let (score, bound) = match outcome {
                Outcome::Win => (TB_WIN - ply as i32, Bound::Lower),
                Outcome::Loss => (-TB_WIN + ply as i32, Bound::Upper),
                Outcome::Draw => (DRAW, Bound::Exact),
            };
            if bound == Bound::Exact
                || (bound == Bound::Lower && score >= beta)
                || (bound == Bound::Upper && score <= alpha)
            {
                self.tt
                    .store(key, ply, Move::NULL, score, 0, depth + 6, bound);
                return score;
            }
        }

        let side = board.side_to_move().index();
        // The table keeps the raw eval; the search uses it corrected.
        let (raw_eval, static_eval) = if in_check {
            (-INFINITY, -INFINITY)
        } else {
            let raw = hit.map_or_else(|| self.evaluate(board, ply), |h| h.eval);
            (raw, self.corrected(board, raw))
        };
        self.frames[ply].static_eval = static_eval;
        let improving = !in_check && ply >= 2 && static_eval > self.frames[ply - 2].static_eval;

        if !pv_node && !in_check {
            // Reverse futility: far enough above beta, a shallow search will not come down.
            if depth <= RFP_DEPTH.get()
                && static_eval - RFP_MARGIN.get() * (depth - improving as i32) >= beta
                && static_eval < TB_WIN_BOUND
            {
                return static_eval;
            }
            if !singular_search
                && let Some(score) = self.null_move(board, beta, depth, ply, static_eval, cut_node)
            {
                return score;
            }
        }

        if depth >= IIR_DEPTH.get() && hash_move == Move::NULL {
            depth -= 1;
        }

        let mut moves = MoveList::new();
        legal_moves(board, &mut moves);
        if moves.is_empty() {
            return if in_check { mated_in(ply) } else { DRAW };
        }
        let previous =
            (ply > 0 && !self.frames[ply - 1].null && self.frames[ply - 1].mv != Move::NULL)
                .then(|| (self.frames[ply - 1].piece, self.frames[ply - 1].mv));
        let mut picker = if root {
            let order: Vec<Move> = self.root_moves.iter().map(|rm| rm.mv).collect();
            let skip = self.pv_index;
            Picker::ranked(&mut moves, |mv| match order.iter().position(|&m| m == mv) {
                Some(i) if i >= skip => 1000 - i as i32,
                _ => i32::MIN,
            })
        } else {
            Picker::new(
                board.position(),
                &mut moves,
                hash_move,
                self.heuristics,
                ply,
                previous,
            )
        };

        let original_alpha = alpha;
        let mut best_score = -INFINITY;
        let mut best_move = Move::NULL;
        let mut searched = 0usize;
        let mut quiets_tried = [Move::NULL; 64];
        let mut quiet_count = 0usize;
        let mut captures_tried = [Move::NULL; 32];
        let mut capture_count = 0usize;
        let mut skip_quiets = false;
        let double_extensions = self.double_extensions_before(ply);
        let lmp_limit = (3 + depth * depth) / if improving { 1 } else { 2 };
        while let Some((mv, order)) = picker.pick() {
            if (root && order == i32::MIN) || mv == excluded {
                continue;
            }
            let tactical = is_tactical(board.position(), mv);
            if !root && best_score > -TB_WIN_BOUND {
                if !tactical {
                    if skip_quiets {
                        continue;
                    }
                    if depth <= LMP_DEPTH.get() && quiet_count as i32 >= lmp_limit {
                        skip_quiets = true;
                        picker.skip_quiets();
                        continue;
                    }
                    if depth <= SEE_DEPTH.get()
                        && !see_ge(board.position(), mv, SEE_QUIET_MARGIN.get() * depth)
                    {
                        continue;
                    }
                } else if depth <= SEE_DEPTH.get()
                    && is_bad_tactical(order)
                    && !see_ge(board.position(), mv, SEE_CAPTURE_MARGIN.get() * depth)
                {
                    continue;
                }
            }
            // In place rather than by `play`, whose result was copied again just after
            // `make_move` wrote it (loads the CPU cannot forward from those stores).
            let mut child = board.clone();
            child.make_move(mv);
            self.tt.prefetch(child.key());
            let gives_check = child.in_check();
            // Futility: a quiet move that gives no check cannot lift a hopeless eval.
            if !root
                && !tactical
                && !in_check
                && !gives_check
                && best_score > -TB_WIN_BOUND
                && depth <= FUTILITY_DEPTH.get()
                && static_eval + FUTILITY_BASE.get() + FUTILITY_PER_DEPTH.get() * depth <= alpha
            {
                // Only this move: a later quiet may still give check.
                continue;
            }

            let (extension, doubled) = match self.singular_extension(Singular {
                board,
                mv,
                hit: hit.filter(|_| !root && !singular_search && mv == hash_move),
                depth,
                ply,
                beta,
                pv_node,
                cut_node,
                double_extensions,
            }) {
                SingularOutcome::Extend(plies, doubled) => (plies, doubled),
                SingularOutcome::Plain => (gives_check as i32, false),
                SingularOutcome::Cut(score) => return score,
                SingularOutcome::Stopped => return 0,
            };

            let piece = kind_at(board.position(), mv.from()).map_or(0, PieceType::index) + 6 * side;
            self.frames[ply] = Frame {
                static_eval,
                mv,
                piece,
                null: false,
                double_extensions: double_extensions + doubled as u8,
            };
            let new_depth = depth - 1 + extension;
            let nodes_before = self.nodes;
            self.keys.push(key);
            let score = if searched == 0 {
                -self.negamax(&child, -beta, -alpha, new_depth, ply + 1, false)
            } else {
                let mut reduction = 0;
                if depth >= LMR_DEPTH.get()
                    && searched >= LMR_MOVES + pv_node as usize
                    && (!tactical || is_bad_tactical(order))
                {
                    reduction = lmr(depth.max(0) as usize, searched);
                    reduction += !pv_node as i32 + cut_node as i32 - improving as i32;
                    reduction -= gives_check as i32;
                    if !tactical {
                        reduction -= self.heuristics.history(side, mv) / 6000;
                    }
                    reduction = reduction.clamp(0, new_depth - 1);
                }
                let mut score = -self.negamax(
                    &child,
                    -alpha - 1,
                    -alpha,
                    new_depth - reduction,
                    ply + 1,
                    true,
                );
                if score > alpha && reduction > 0 {
                    score =
                        -self.negamax(&child, -alpha - 1, -alpha, new_depth, ply + 1, !cut_node);
                }
                if score > alpha && score < beta {
                    score = -self.negamax(&child, -beta, -alpha, new_depth, ply + 1, false);
                }
                score
            };
            self.keys.pop();
            if self.stopped {
                return 0;
            }
            searched += 1;
            if !tactical && quiet_count < quiets_tried.len() {
                quiets_tried[quiet_count] = mv;
                quiet_count += 1;
            } else if tactical && capture_count < captures_tried.len() {
                captures_tried[capture_count] = mv;
                capture_count += 1;
            }
            if root {
                let pv_len = self.pv_len[ply + 1].max(ply + 1);
                let line: Vec<Move> = std::iter::once(mv)
                    .chain(self.pv[ply + 1][ply + 1..pv_len].iter().copied())
                    .collect();
                if let Some(rm) = self.root_moves.iter_mut().find(|rm| rm.mv == mv) {
                    rm.nodes += self.nodes - nodes_before;
                    if searched == 1 || score > alpha {
                        rm.score = score;
                        rm.pv = line;
                        rm.bound = if score >= beta { Some(true) } else { None };
                    } else {
                        rm.score = -INFINITY;
                    }
                }
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = mv;
                    alpha = score;
                    self.update_pv(ply, mv);
                    if score >= beta {
                        if !tactical {
                            self.heuristics.reward(
                                side,
                                ply,
                                depth,
                                mv,
                                &quiets_tried[..quiet_count],
                                previous,
                            );
                        }
                        if self.options.features.capture_history {
                            self.heuristics.reward_captures(
                                board.position(),
                                depth,
                                tactical.then_some(mv),
                                &captures_tried[..capture_count],
                            );
                        }
                        break;
                    }
                }
            }
        }
        if searched == 0 {
            // Every move was pruned: the position is at least as bad as the static eval.
            return if in_check { mated_in(ply) } else { alpha };
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if pv_node && best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        // A later MultiPV line, and a singular-extension search, search only part of the
        // moves: the score is not the position's, so neither the table nor the correction
        // history learns from it.
        let part_of_the_moves = singular_search || (root && self.pv_index > 0);
        let whole_node = !part_of_the_moves;
        if whole_node {
            self.tt
                .store(key, ply, best_move, best_score, raw_eval, depth, bound);
        }
        // Learn from quiet outcomes whose bound says which way the eval erred.
        if whole_node
            && self.options.features.correction_history
            && !in_check
            && (best_move == Move::NULL || !is_tactical(board.position(), best_move))
            && best_score.abs() < TB_WIN_BOUND
            && !(bound == Bound::Lower && best_score <= static_eval)
            && !(bound == Bound::Upper && best_score >= static_eval)
        {
            self.heuristics
                .correct(side, board.pawn_key(), depth, raw_eval, best_score);
        }
        best_score
    }

    /// Null-move pruning: if passing still fails high at a reduced depth, so would a move.
    /// Verified by a search without null moves below when zugzwang is likely.
    fn null_move(
        &mut self,
        board: &Board,
        beta: i32,
        depth: i32,
        ply: usize,
        static_eval: i32,
        cut_node: bool,
    ) -> Option<i32> {
        let position = board.position();
        let us = position.color(board.side_to_move());
        let pieces =
            us & !(position.piece_type(PieceType::Pawn) | position.piece_type(PieceType::King));
        if depth < NMP_DEPTH.get()
            || static_eval < beta
            || pieces.is_empty()
            || ply < self.nmp_min_ply
            || (ply > 0 && self.frames[ply - 1].null)
            || beta.abs() >= TB_WIN_BOUND
        {
            return None;
        }
        let reduction = 3 + depth / 4 + ((static_eval - beta) / 200).min(3);
        let child = board.null_move();
        self.frames[ply] = Frame {
            static_eval,
            mv: Move::NULL,
            piece: 0,
            null: true,
            double_extensions: self.double_extensions_before(ply),
        };
        self.keys.push(board.key());
        let score = -self.negamax(
            &child,
            -beta,
            -beta + 1,
            depth - reduction - 1,
            ply + 1,
            !cut_node,
        );
        self.keys.pop();
        if self.stopped || score < beta {
            return None;
        }
        let score = if score >= TB_WIN_BOUND { beta } else { score };
        if depth < NMP_VERIFY_DEPTH && pieces.count() > NMP_VERIFY_PIECES {
            return Some(score);
        }
        self.nmp_min_ply = ply + (3 * (depth - reduction) / 4) as usize;
        let verified = self.negamax(board, beta - 1, beta, depth - reduction, ply, false);
        self.nmp_min_ply = 0;
        (verified >= beta).then_some(score)
    }

    /// Captures and queen promotions until the position is quiet (all moves when in check).
    fn quiescence(&mut self, board: &Board, mut alpha: i32, beta: i32, ply: usize) -> i32 {
        self.count_node();
        if self.stopped {
            return 0;
        }
        self.seldepth = self.seldepth.max(ply);
        if self.is_draw(board) {
            return DRAW;
        }
        let in_check = board.in_check();
        if ply >= MAX_PLY - 4 {
            return if in_check {
                DRAW
            } else {
                self.evaluate(board, ply)
            };
        }
        let key = board.key();
        let hit = self.tt.probe(key, ply);
        if let Some(h) = hit
            && match h.bound {
                Bound::Exact => true,
                Bound::Lower => h.score >= beta,
                Bound::Upper => h.score <= alpha,
            }
        {
            return h.score;
        }
        let mut best_score;
        let raw_eval;
        let static_eval;
        let mut moves = MoveList::new();
        if in_check {
            raw_eval = -INFINITY;
            static_eval = -INFINITY;
            best_score = -INFINITY;
            legal_moves(board, &mut moves);
            if moves.is_empty() {
                return mated_in(ply);
            }
        } else {
            raw_eval = hit.map_or_else(|| self.evaluate(board, ply), |h| h.eval);
            static_eval = self.corrected(board, raw_eval);
            best_score = static_eval;
            if best_score >= beta {
                return best_score;
            }
            alpha = alpha.max(best_score);
            captures(board, &mut moves);
        }
        let original_alpha = alpha;
        let mut best_move = Move::NULL;
        let mut picker = Picker::captures(board.position(), &mut moves, self.heuristics);
        while let Some((mv, _)) = picker.pick() {
            if !in_check {
                if mv.promotion().is_some_and(|p| p != PieceType::Queen) {
                    continue;
                }
                let gain = captured(board.position(), mv).map_or(0, |k| SEE_VALUES[k.index()]);
                if mv.promotion().is_none() && static_eval + gain + DELTA_MARGIN.get() <= alpha {
                    continue;
                }
                if !see_ge(board.position(), mv, 0) {
                    continue;
                }
            }
            let mut child = board.clone();
            child.make_move(mv);
            self.keys.push(key);
            let score = -self.quiescence(&child, -beta, -alpha, ply + 1);
            self.keys.pop();
            if self.stopped {
                return 0;
            }
            if score > best_score {
                best_score = score;
                if score > alpha {
                    best_move = mv;
                    alpha = score;
                    if score >= beta {
                        break;
                    }
                }
            }
        }
        let bound = if best_score >= beta {
            Bound::Lower
        } else if best_score > original_alpha {
            Bound::Exact
        } else {
            Bound::Upper
        };
        self.tt
            .store(key, ply, best_move, best_score, raw_eval, 0, bound);
        best_score
    }
}
