//! Singular extensions and multi-cut: a search of the other moves, with the hash move left
//! out, at half depth and a margin below the table's score for it.

use super::Search;
use crate::engine::search::tt::{Bound, Hit};
use crate::engine::search::tunables::{SE_DEPTH, SE_DOUBLE_MARGIN};
use crate::movegen::{Board, Move};
use crate::position::score::TB_WIN_BOUND;

/// Singular extensions from SE_DEPTH (a tunable), when the table's entry for the hash
/// move is at most this many plies shallower and a lower bound (or exact). A hash move
/// SE_DOUBLE_MARGIN (a tunable) below the singular margin is extended twice, at most
/// DOUBLE_LIMIT times on a path.
const SE_TT_DEPTH_SLACK: i32 = 3;
const SE_DOUBLE_LIMIT: u8 = 6;
/// Where the question is asked: the node and the hash move with its table entry (`None`
/// where no singular search is made: the root, a singular search itself, another move).
pub(super) struct Singular<'b> {
    pub board: &'b Board,
    pub mv: Move,
    pub hit: Option<Hit>,
    pub depth: i32,
    pub ply: usize,
    pub beta: i32,
    pub pv_node: bool,
    pub cut_node: bool,
    /// Double extensions on the path so far.
    pub double_extensions: u8,
}

pub(super) enum SingularOutcome {
    /// The move's extension in plies (-1 to 2), and whether it is a double one.
    Extend(i32, bool),
    /// No singular search, or one that changes nothing: the move's usual extension.
    Plain,
    /// The node cuts with this score (multi-cut).
    Cut(i32),
    Stopped,
}

impl Search<'_> {
    /// When every other move falls well short of the table's score for the hash move, the
    /// hash move is the position's only good one and gets a ply more (two off the PV when
    /// far short); when even the others reach beta, this node cuts (multi-cut); when the
    /// table's score already beats beta, the hash move gets a ply less.
    pub(super) fn singular_extension(&mut self, at: Singular) -> SingularOutcome {
        let features = self.options.features;
        let Some(h) = at.hit else {
            return SingularOutcome::Plain;
        };
        if !(features.singular_extensions || features.multi_cut)
            || at.depth < SE_DEPTH.get()
            || h.depth < at.depth - SE_TT_DEPTH_SLACK
            || h.bound == Bound::Upper
            || h.score.abs() >= TB_WIN_BOUND
        {
            return SingularOutcome::Plain;
        }
        let singular_beta = h.score - 2 * at.depth;
        self.excluded[at.ply] = at.mv;
        let score = self.negamax(
            at.board,
            singular_beta - 1,
            singular_beta,
            (at.depth - 1) / 2,
            at.ply,
            at.cut_node,
        );
        self.excluded[at.ply] = Move::NULL;
        self.pv_len[at.ply] = at.ply;
        if self.stopped {
            return SingularOutcome::Stopped;
        }
        if score < singular_beta {
            if !features.singular_extensions {
                return SingularOutcome::Plain;
            }
            let double = !at.pv_node
                && score < singular_beta - SE_DOUBLE_MARGIN.get()
                && at.double_extensions < SE_DOUBLE_LIMIT;
            SingularOutcome::Extend(if double { 2 } else { 1 }, double)
        } else if singular_beta >= at.beta {
            if features.multi_cut {
                SingularOutcome::Cut(singular_beta)
            } else {
                SingularOutcome::Plain
            }
        } else if h.score >= at.beta && features.singular_extensions {
            SingularOutcome::Extend(-1, false)
        } else {
            SingularOutcome::Plain
        }
    }
}
