//! Which positions a trainer wants: the filters of `features`, `tune`, `export` and the
//! loader.
//!
//! A position is dropped by the first filter it fails, in the order of [`Reason::ALL`] (the
//! cheap label checks first, the quiescence search after them, the random rules last), and
//! counted under that filter. [`Filter::check`] decides the rules that look at one row;
//! the rules that look at the rows before it (`--unique`, `--wdl-skip`, `--piece-skip`)
//! are [`super::skips::Ordered`]'s, applied afterwards in the input's order.

use std::fmt;
use std::ops::RangeInclusive;

use pawnstorm_kernels::Color;
use pawnstorm_kernels::geometry::pawn_attacks;
use pawnstorm_kernels::setwise::{bishop_attacks, king_attacks, knight_attacks, rook_attacks};

use crate::db::Block;
use crate::eval::Evaluator;
use crate::eval::Prepared;
use crate::export::random::{Rule, draw_key, uniform};
use crate::movegen::{Board, MoveList, captures};
use crate::position::board::PositionBoards;
use crate::position::labels::Record;
use crate::position::score::MATE_BOUND;

/// Why a position was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    NoResult,
    NoScore,
    Mate,
    MaxScore,
    Plies,
    Pieces,
    Check,
    Capture,
    NotQuiet,
    Random,
    Duplicate,
    Wdl,
    PieceSkip,
}

impl Reason {
    pub const ALL: [Reason; 13] = [
        Reason::NoResult,
        Reason::NoScore,
        Reason::Mate,
        Reason::MaxScore,
        Reason::Plies,
        Reason::Pieces,
        Reason::Check,
        Reason::Capture,
        Reason::NotQuiet,
        Reason::Random,
        Reason::Duplicate,
        Reason::Wdl,
        Reason::PieceSkip,
    ];

    /// The option that drops it, as the summary names it.
    pub fn option(self) -> &'static str {
        match self {
            Reason::NoResult => "--require-result",
            Reason::NoScore => "--require-score",
            Reason::Mate => "--drop-mates",
            Reason::MaxScore => "--max-score",
            Reason::Plies => "--skip-plies",
            Reason::Pieces => "--pieces",
            Reason::Check => "--skip-check",
            Reason::Capture => "--skip-capture",
            Reason::NotQuiet => "--quiet-only",
            Reason::Random => "--random-skip",
            Reason::Duplicate => "--unique",
            Reason::Wdl => "--wdl-skip",
            Reason::PieceSkip => "--piece-skip",
        }
    }
}

/// The filters asked for; the default keeps everything.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub require_result: bool,
    pub require_score: bool,
    /// Drop positions whose score label is a mate score (beyond [`MATE_BOUND`] either way).
    pub drop_mates: bool,
    /// Drop positions fewer than this many plies into their game (the `ply` label, else
    /// what the fullmove number and side to move say).
    pub skip_plies: u32,
    /// Keep positions with this many pieces, kings and pawns included.
    pub pieces: Option<RangeInclusive<u32>>,
    pub skip_check: bool,
    /// Keep positions where no capture or promotion sequence beats the static evaluation
    /// (a quiescence search with these weights); positions in check are not quiet.
    pub quiet_only: Option<Prepared>,
    /// Drop positions whose score label is beyond this many centipawns either way
    /// (Stockfish's learner, `eval_limit`).
    pub max_score: Option<u32>,
    /// Drop positions whose move played is a capture or a promotion (nnue-pytorch's and
    /// Stockfish's learner's "smart FEN skipping", with `skip_check`).
    pub skip_capture: bool,
    /// Drop each position with probability N / (N + 1) (nnue-pytorch's
    /// `random_fen_skipping`); 0 keeps all.
    pub random_skip: u32,
    /// Drop a position already kept (its Zobrist key seen), keeping the first.
    pub unique: bool,
    /// Skip at random so that wins, draws and losses come out in equal shares.
    pub wdl_skip: bool,
    /// Skip at random so that the piece counts follow nnue-pytorch's desired distribution,
    /// the parabola through (0, y0), (16, y16), (32, y32).
    pub piece_skip: Option<[f64; 3]>,
    /// Seed of the random rules: a row's draws depend only on it and the row's identity.
    pub seed: u64,
}

/// The move played from a row, as the capture rule sees it.
#[derive(Clone, Copy, Debug, Default)]
pub enum Played {
    /// Neither the move nor the next position of the game is known.
    #[default]
    Unknown,
    /// The `move` label.
    Move(u16),
    /// The next row of the same game (same game id, ply + 1): what changed tells.
    Next(PositionBoards),
}

/// How many positions each filter dropped.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    pub counts: [u64; Reason::ALL.len()],
}

impl Dropped {
    pub fn add(&mut self, reason: Reason) {
        self.counts[reason as usize] += 1;
    }

    pub fn merge(&mut self, other: &Dropped) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    pub fn count(&self, reason: Reason) -> u64 {
        self.counts[reason as usize]
    }
}

/// `dropped N (--skip-check 3, --quiet-only 7)`, naming only the filters in use.
impl fmt::Display for Dropped {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "dropped {}", self.total())?;
        let parts: Vec<String> = Reason::ALL
            .iter()
            .filter(|r| self.count(**r) > 0)
            .map(|r| format!("{} {}", r.option(), self.count(*r)))
            .collect();
        if !parts.is_empty() {
            write!(f, " ({})", parts.join(", "))?;
        }
        Ok(())
    }
}

/// One position as the filters see it.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub boards: PositionBoards,
    pub result: Option<i8>,
    pub score: Option<i32>,
    pub ply: Option<u16>,
    pub fullmove_number: u16,
    pub played: Played,
    /// The row's identity for the random rules (see [`super::random::draw_key`]): the same
    /// identity gets the same draws, whichever thread looks at it.
    pub draw: u64,
}

impl Row {
    /// Row `row` of `block` (labels as unknown where the DB has no such column or marks
    /// them unknown).
    pub fn of_block(block: &Block<'_>, row: usize) -> Row {
        use crate::db::{NO_PLY, NO_RESULT, NO_SCORE};
        Row {
            boards: block.boards(row),
            result: block.result.map(|c| c[row]).filter(|&r| r != NO_RESULT),
            score: block.score.map(|c| c[row]).filter(|&s| s != NO_SCORE),
            ply: block.ply.map(|c| c[row]).filter(|&p| p != NO_PLY),
            fullmove_number: block.fullmove_number[row],
            played: Played::Unknown,
            draw: 0,
        }
    }

    /// [`Row::of_block`] with the move played: the `move` label, else the next row of the
    /// same game, found in `block` or, for its last row, in `next` (the following block,
    /// asked for only then).
    pub fn of_block_in_game<'a>(
        block: &Block<'a>,
        row: usize,
        next: impl FnOnce() -> Option<Block<'a>>,
    ) -> Row {
        let mut view = Row::of_block(block, row);
        view.played = played_in_block(block, row, next);
        view
    }

    pub fn of_record(record: &Record) -> Row {
        let p = &record.position;
        Row {
            boards: p.boards(),
            result: record.labels.result.map(|r| r.to_i8()),
            score: record.labels.score,
            ply: record.labels.ply,
            fullmove_number: p.fullmove_number(),
            played: record
                .labels
                .move_played
                .map_or(Played::Unknown, Played::Move),
            draw: 0,
        }
    }

    /// Fills in the move from `next`, the record after this one in its input, when this
    /// row has no move label and `next` is the next position of the same game.
    pub fn with_next_record(mut self, this: &Record, next: Option<&Record>) -> Row {
        if matches!(self.played, Played::Unknown)
            && let Some(next) = next
            && same_game_next(
                (this.labels.game_id, this.labels.ply),
                (next.labels.game_id, next.labels.ply),
            )
        {
            self.played = Played::Next(next.position.boards());
        }
        self
    }

    /// Half-moves played: the label, else from the fullmove number.
    pub fn ply(&self) -> u32 {
        match self.ply {
            Some(ply) => ply as u32,
            None => 2 * (self.fullmove_number.max(1) as u32 - 1) + self.boards.black_to_move as u32,
        }
    }

    /// Whether the side to move's king is attacked.
    pub fn in_check(&self) -> bool {
        let b = &self.boards;
        let us = b.black_to_move as usize;
        let them = 1 - us;
        let occupied = b.colors[0] | b.colors[1];
        let empty = !occupied;
        let theirs = |kind: usize| b.pieces[kind] & b.colors[them];
        let enemy = if them == 0 {
            Color::White
        } else {
            Color::Black
        };
        let queens = theirs(4);
        let attacks = pawn_attacks(enemy, theirs(0))
            | knight_attacks(theirs(1))
            | bishop_attacks(theirs(2) | queens, empty)
            | rook_attacks(theirs(3) | queens, empty)
            | king_attacks(theirs(5));
        attacks & b.pieces[5] & b.colors[us] != 0
    }

    pub fn piece_count(&self) -> u32 {
        (self.boards.colors[0] | self.boards.colors[1]).count_ones()
    }

    /// Whether the move played is known to capture or promote.
    pub fn capture_or_promotion(&self) -> bool {
        match self.played {
            Played::Unknown => false,
            Played::Move(code) => move_is_noisy(&self.boards, code),
            Played::Next(after) => transition_is_noisy(&self.boards, &after),
        }
    }
}

/// Whether move `code` (the DB's `move` encoding) played from `before` captures (en passant
/// included; castling onto the own rook is no capture) or promotes.
pub fn move_is_noisy(before: &PositionBoards, code: u16) -> bool {
    let (from, to, promotion) = (code & 63, (code >> 6) & 63, code >> 12);
    if promotion != 0 {
        return true;
    }
    let us = before.black_to_move as usize;
    let them = 1 - us;
    if before.colors[them] >> to & 1 != 0 {
        return true;
    }
    let occupied = before.colors[0] | before.colors[1];
    let pawn_moves = (before.pieces[0] & before.colors[us]) >> from & 1 != 0;
    pawn_moves && from % 8 != to % 8 && occupied >> to & 1 == 0
}

/// Whether the move from `before` to `after` (the game's next position) captured or
/// promoted: the opponent lost a piece, or the mover a pawn (only promotion removes one).
pub fn transition_is_noisy(before: &PositionBoards, after: &PositionBoards) -> bool {
    let us = before.black_to_move as usize;
    let them = 1 - us;
    let pawns = |b: &PositionBoards| (b.pieces[0] & b.colors[us]).count_ones();
    after.colors[them].count_ones() < before.colors[them].count_ones()
        || pawns(after) < pawns(before)
}

/// Whether labels (game id, ply) `b` are those of the position after `a` in its game.
fn same_game_next(a: (Option<u32>, Option<u16>), b: (Option<u32>, Option<u16>)) -> bool {
    matches!((a, b), ((Some(ga), Some(pa)), (Some(gb), Some(pb))) if ga == gb && pa.checked_add(1) == Some(pb))
}

/// The move played from `row` of `block`: the `move` column, else the next row's boards
/// when it is the same game's next position.
fn played_in_block<'a>(
    block: &Block<'a>,
    row: usize,
    next: impl FnOnce() -> Option<Block<'a>>,
) -> Played {
    use crate::db::{NO_GAME, NO_PLY, NO_U16};
    if let Some(code) = block.u16_labels[MOVE_LABEL]
        .map(|c| c[row])
        .filter(|&m| m != NO_U16)
    {
        return Played::Move(code);
    }
    let (Some(games), Some(plies)) = (block.game_id, block.ply) else {
        return Played::Unknown;
    };
    let labels = |games: &[u32], plies: &[u16], r: usize| {
        (
            Some(games[r]).filter(|&g| g != NO_GAME),
            Some(plies[r]).filter(|&p| p != NO_PLY),
        )
    };
    let this = labels(games, plies, row);
    if row + 1 < block.len {
        if same_game_next(this, labels(games, plies, row + 1)) {
            return Played::Next(block.boards(row + 1));
        }
        return Played::Unknown;
    }
    match next() {
        Some(following)
            if following.len > 0
                && following.game_id.is_some()
                && following.ply.is_some()
                && same_game_next(
                    this,
                    labels(
                        following.game_id.expect("checked"),
                        following.ply.expect("checked"),
                        0,
                    ),
                ) =>
        {
            Played::Next(following.boards(0))
        }
        _ => Played::Unknown,
    }
}

/// Where the `move` column sits among the DB's `u16` label columns.
const MOVE_LABEL: usize = 4;

/// Deepest capture sequence the quiet test follows; longer ones count as quiet.
const QUIET_MAX_PLY: usize = 16;

impl Filter {
    /// Whether every position passes.
    pub fn is_empty(&self) -> bool {
        !self.has_row_rules() && !self.has_ordered_rules()
    }

    /// Whether a rule that looks at earlier rows is asked for: `--unique`, `--wdl-skip`,
    /// `--piece-skip` ([`super::skips::Ordered`] applies them, after [`Filter::check`]).
    pub fn has_ordered_rules(&self) -> bool {
        self.unique || self.wdl_skip || self.piece_skip.is_some()
    }

    /// Whether [`Filter::check`] needs the move played (so the row's `played`).
    pub fn needs_move(&self) -> bool {
        self.skip_capture
    }

    /// Why `row` is dropped, or `None` to keep it. `board` builds the full position, which
    /// only the quiet test needs (castling and en passant matter to captures); `evaluator`
    /// is this thread's, with the quiet test's weights.
    pub fn check(
        &self,
        row: &Row,
        board: impl FnOnce() -> Option<Board>,
        evaluator: Option<&mut Evaluator>,
    ) -> Option<Reason> {
        if self.require_result && row.result.is_none() {
            return Some(Reason::NoResult);
        }
        if self.require_score && row.score.is_none() {
            return Some(Reason::NoScore);
        }
        if self.drop_mates
            && row
                .score
                .is_some_and(|s| s.unsigned_abs() >= MATE_BOUND as u32)
        {
            return Some(Reason::Mate);
        }
        if let Some(bound) = self.max_score
            && row.score.is_some_and(|s| s.unsigned_abs() > bound)
        {
            return Some(Reason::MaxScore);
        }
        if row.ply() < self.skip_plies {
            return Some(Reason::Plies);
        }
        if let Some(range) = &self.pieces
            && !range.contains(&row.piece_count())
        {
            return Some(Reason::Pieces);
        }
        let in_check = (self.skip_check || self.quiet_only.is_some()) && row.in_check();
        if self.skip_check && in_check {
            return Some(Reason::Check);
        }
        if self.skip_capture && row.capture_or_promotion() {
            return Some(Reason::Capture);
        }
        if self.quiet_only.is_some() {
            if in_check {
                return Some(Reason::NotQuiet);
            }
            let quiet = match (board(), evaluator) {
                (Some(board), Some(evaluator)) => is_quiet(&board, evaluator),
                // A position that cannot be built (a validated DB row always can) or no
                // evaluator: not known to be quiet.
                _ => false,
            };
            if !quiet {
                return Some(Reason::NotQuiet);
            }
        }
        if self.random_skip > 0
            && uniform(self.seed, row.draw, Rule::Random) * (self.random_skip as f64 + 1.0)
                < self.random_skip as f64
        {
            return Some(Reason::Random);
        }
        None
    }

    /// An evaluator for [`Filter::check`], when the quiet test needs one.
    pub fn evaluator(&self) -> Option<Evaluator> {
        self.quiet_only
            .as_ref()
            .map(|prepared| Evaluator::new(prepared.clone(), 1 << 12))
    }

    /// The rows of `block` within `rows` to keep, in order, appended to `keep`; the dropped
    /// ones counted. `first` is the DB index of the block's row 0 (the rows' identity for
    /// the random rules); `next` gives the following block, asked for only when the move
    /// of the block's last row must be found there. The ordered rules are not applied.
    #[allow(clippy::too_many_arguments)]
    pub fn block_rows<'a>(
        &self,
        block: &Block<'a>,
        rows: std::ops::Range<usize>,
        first: u64,
        next: impl FnOnce() -> Option<Block<'a>>,
        evaluator: &mut Option<Evaluator>,
        keep: &mut Vec<u32>,
        dropped: &mut Dropped,
    ) {
        if !self.has_row_rules() {
            keep.extend(rows.start as u32..rows.end as u32);
            return;
        }
        let mut next = Some(next);
        for row in rows {
            let mut view = if self.needs_move() {
                let next = || next.take().and_then(|f| f());
                Row::of_block_in_game(block, row, next)
            } else {
                Row::of_block(block, row)
            };
            view.draw = draw_key(0, 0, first + row as u64);
            let board = || block.record(row).ok().map(|r| Board::new(r.position));
            match self.check(&view, board, evaluator.as_mut()) {
                None => keep.push(row as u32),
                Some(reason) => dropped.add(reason),
            }
        }
    }

    /// Whether a rule that [`Filter::check`] decides is asked for.
    pub fn has_row_rules(&self) -> bool {
        self.require_result
            || self.require_score
            || self.drop_mates
            || self.skip_plies > 0
            || self.pieces.is_some()
            || self.skip_check
            || self.quiet_only.is_some()
            || self.max_score.is_some()
            || self.skip_capture
            || self.random_skip > 0
    }
}

/// The static evaluation from the side to move's point of view.
fn side_eval(board: &Board, evaluator: &mut Evaluator) -> i32 {
    let score = evaluator.evaluate_keyed(board.position(), board.pawn_key());
    if board.side_to_move() == Color::White {
        score
    } else {
        -score
    }
}

/// Whether no capture or promotion line beats standing pat: a null-window quiescence search
/// around the static evaluation.
pub fn is_quiet(board: &Board, evaluator: &mut Evaluator) -> bool {
    let stand = side_eval(board, evaluator);
    quiescence(board, evaluator, stand, stand + 1, 0) <= stand
}

/// Fail-hard quiescence over captures and promotions (the side to move stands pat).
fn quiescence(
    board: &Board,
    evaluator: &mut Evaluator,
    mut alpha: i32,
    beta: i32,
    ply: usize,
) -> i32 {
    let stand = side_eval(board, evaluator);
    if stand >= beta {
        return beta;
    }
    if ply >= QUIET_MAX_PLY {
        return alpha.max(stand);
    }
    alpha = alpha.max(stand);
    let mut moves = MoveList::new();
    captures(board, &mut moves);
    for &mv in moves.iter() {
        let child = board.play(mv);
        let score = -quiescence(&child, evaluator, -beta, -alpha, ply + 1);
        if score >= beta {
            return beta;
        }
        alpha = alpha.max(score);
    }
    alpha
}

/// Parses `MIN..MAX`, `MIN..` or `..MAX` (inclusive) for `--pieces`.
pub fn parse_piece_range(text: &str) -> Result<RangeInclusive<u32>, String> {
    let (min, max) = text
        .split_once("..")
        .ok_or_else(|| format!("`{text}` is not MIN..MAX (for example 6..20)"))?;
    let bound = |s: &str, default: u32| -> Result<u32, String> {
        if s.is_empty() {
            Ok(default)
        } else {
            s.trim_start_matches('=')
                .parse()
                .map_err(|_| format!("`{s}` in `{text}` is not a number"))
        }
    };
    let (min, max) = (bound(min, 2)?, bound(max, 32)?);
    if min > max {
        return Err(format!("`{text}`: {min} is more than {max}"));
    }
    Ok(min..=max)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::Prepared;

    fn row(fen: &str) -> (Row, Board) {
        let board = Board::from_fen(fen).expect("fen");
        let record = Record {
            position: board.position().clone(),
            labels: Default::default(),
        };
        (Row::of_record(&record), board)
    }

    fn boards(fen: &str) -> PositionBoards {
        crate::position::fen::parse_fen(fen).unwrap().boards()
    }

    fn code(uci: &str) -> u16 {
        crate::position::labels::move_from_uci(uci).unwrap()
    }

    #[test]
    fn captures_en_passant_and_promotions_are_noisy_castling_is_not() {
        let ep = boards("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2");
        assert!(move_is_noisy(&ep, code("e5d6")));
        assert!(!move_is_noisy(&ep, code("e5e6")));
        let take = boards("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1");
        assert!(move_is_noisy(&take, code("e4d5")));
        assert!(!move_is_noisy(&take, code("e4e5")));
        let promote = boards("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        assert!(move_is_noisy(&promote, code("a7a8q")));
        assert!(move_is_noisy(&promote, code("a7a8n")));
        let castle = boards("4k3/8/8/8/8/8/8/4K2R w K - 0 1");
        assert!(!move_is_noisy(&castle, code("e1g1")));
        // Black captures too.
        let black = boards("4k3/8/8/3p4/4P3/8/8/4K3 b - - 0 1");
        assert!(move_is_noisy(&black, code("d5e4")));
        assert!(!move_is_noisy(&black, code("d5d4")));
    }

    #[test]
    fn the_next_position_tells_a_capture_or_a_promotion() {
        let before = boards("4k3/8/8/3p4/4P3/8/8/4K3 w - - 0 1");
        let took = boards("4k3/8/8/3P4/8/8/8/4K3 b - - 0 1");
        let pushed = boards("4k3/8/8/3pP3/8/8/8/4K3 b - - 0 1");
        assert!(transition_is_noisy(&before, &took));
        assert!(!transition_is_noisy(&before, &pushed));
        let promote = boards("4k3/P7/8/8/8/8/8/4K3 w - - 0 1");
        let queened = boards("Q3k3/8/8/8/8/8/8/4K3 b - - 0 1");
        assert!(transition_is_noisy(&promote, &queened));
    }

    #[test]
    fn check_is_seen_by_every_kind() {
        for (fen, check) in [
            ("4k3/8/8/8/8/8/8/4K2r w - - 0 1", true),
            ("4k3/8/8/8/8/8/3p4/4K3 w - - 0 1", true),
            ("4k3/8/8/8/8/8/4p3/4K3 w - - 0 1", false),
            ("4k3/8/8/8/1b6/8/8/4K3 w - - 0 1", true),
            ("4k3/8/8/8/1b6/2P5/8/4K3 w - - 0 1", false),
            ("4k3/8/8/8/8/5n2/8/4K3 w - - 0 1", true),
            ("4k3/8/8/8/8/8/8/R3K3 b - - 0 1", false),
            ("4k3/8/8/8/8/8/8/4R1K1 b - - 0 1", true),
            ("4k3/5P2/8/8/8/8/8/6K1 b - - 0 1", true),
        ] {
            let (row, board) = row(fen);
            assert_eq!(row.in_check(), check, "{fen}");
            assert_eq!(board.in_check(), check, "{fen}");
        }
    }

    #[test]
    fn quiet_means_no_winning_capture() {
        let mut evaluator = Evaluator::new(Prepared::default(), 1 << 10);
        // A queen en prise to a pawn is not quiet; the start position is.
        let loud = Board::from_fen("4k3/8/8/3q4/4P3/8/8/4K3 w - - 0 1").expect("fen");
        assert!(!is_quiet(&loud, &mut evaluator));
        assert!(is_quiet(&Board::startpos(), &mut evaluator));
        // A defended pawn attacked by a queen: taking loses the queen, so it is quiet.
        let defended = Board::from_fen("4k3/8/2p5/3p4/8/8/3Q4/4K3 w - - 0 1").expect("fen");
        assert!(is_quiet(&defended, &mut evaluator));
    }

    #[test]
    fn piece_ranges() {
        assert_eq!(parse_piece_range("6..20"), Ok(6..=20));
        assert_eq!(parse_piece_range("..10"), Ok(2..=10));
        assert_eq!(parse_piece_range("12.."), Ok(12..=32));
        assert!(parse_piece_range("20..6").is_err());
        assert!(parse_piece_range("x..6").is_err());
        assert!(parse_piece_range("12").is_err());
    }

    #[test]
    fn each_filter_drops_what_it_names() {
        let (mut start, _) = row("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        let keep_all = Filter::default();
        assert_eq!(keep_all.check(&start, || None, None), None);
        let need_result = Filter {
            require_result: true,
            ..Filter::default()
        };
        assert_eq!(
            need_result.check(&start, || None, None),
            Some(Reason::NoResult)
        );
        start.result = Some(0);
        assert_eq!(need_result.check(&start, || None, None), None);
        let mates = Filter {
            drop_mates: true,
            ..Filter::default()
        };
        start.score = Some(MATE_BOUND + 3);
        assert_eq!(mates.check(&start, || None, None), Some(Reason::Mate));
        start.score = Some(-(MATE_BOUND + 3));
        assert_eq!(mates.check(&start, || None, None), Some(Reason::Mate));
        start.score = Some(900);
        assert_eq!(mates.check(&start, || None, None), None);
        let plies = Filter {
            skip_plies: 1,
            ..Filter::default()
        };
        assert_eq!(plies.check(&start, || None, None), Some(Reason::Plies));
        start.ply = Some(1);
        assert_eq!(plies.check(&start, || None, None), None);
        let pieces = Filter {
            pieces: Some(2..=31),
            ..Filter::default()
        };
        assert_eq!(pieces.check(&start, || None, None), Some(Reason::Pieces));
    }
}
