//! Syzygy tablebases through `shakmaty-syzygy`: WDL probes in the search (after captures
//! and pawn moves, where the tables' values are exact) and WDL/DTZ filtering of the root
//! moves. A board is converted only when its piece count is within the tables'.

use std::path::Path;

use shakmaty::{ByColor, ByRole, CastlingMode, Chess, FromSetup, Setup};
use shakmaty_syzygy::{AmbiguousWdl, Tablebase, Wdl};

use crate::movegen::{Board, Move, count_legal_moves};
use crate::position::board::PieceType;

/// Loaded tables.
pub struct Syzygy {
    tables: Tablebase<Chess>,
    max_pieces: u32,
}

/// How a position stands for the side to move, by the tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    Loss,
    Draw,
    Win,
}

/// The directories of a Syzygy path (`:` or `;` between them, as UCI's `SyzygyPath`).
pub fn directories(path: &str) -> impl Iterator<Item = &str> {
    path.split([':', ';']).filter(|d| !d.is_empty())
}

impl Syzygy {
    /// The tables in every directory of `path` (separated by `:` as Stockfish's
    /// `SyzygyPath`); `None` when no table was found.
    pub fn open(path: &str) -> std::io::Result<Option<Syzygy>> {
        let mut tables = Tablebase::new();
        let mut found = 0;
        for directory in directories(path) {
            found += tables.add_directory(Path::new(directory))?;
        }
        let max_pieces = tables.max_pieces() as u32;
        Ok((found > 0).then_some(Syzygy { tables, max_pieces }))
    }

    pub fn max_pieces(&self) -> u32 {
        self.max_pieces
    }

    /// Whether `board` may be in the tables (few enough pieces, no castling rights).
    #[inline]
    pub fn covers(&self, board: &Board) -> bool {
        board.position().occupied().count() <= self.max_pieces
            && board.position().castling().is_empty()
    }

    fn convert(board: &Board) -> Option<Chess> {
        let position = board.position();
        let bb = |b: pawnstorm_kernels::Bitboard| shakmaty::Bitboard(b.0);
        let role = |kind: PieceType| bb(position.piece_type(kind));
        let by_role = ByRole {
            pawn: role(PieceType::Pawn),
            knight: role(PieceType::Knight),
            bishop: role(PieceType::Bishop),
            rook: role(PieceType::Rook),
            queen: role(PieceType::Queen),
            king: role(PieceType::King),
        };
        let by_color = ByColor {
            white: bb(position.color(pawnstorm_kernels::Color::White)),
            black: bb(position.color(pawnstorm_kernels::Color::Black)),
        };
        let mut setup = Setup::empty();
        setup.board = shakmaty::Board::try_from_bitboards(by_role, by_color).ok()?;
        setup.turn = match position.side_to_move() {
            pawnstorm_kernels::Color::White => shakmaty::Color::White,
            pawnstorm_kernels::Color::Black => shakmaty::Color::Black,
        };
        setup.ep_square = position
            .en_passant()
            .and_then(|square| shakmaty::Square::try_from(square.index()).ok());
        setup.halfmoves = u32::from(position.halfmove_clock());
        setup.fullmoves = std::num::NonZeroU32::MIN;
        Chess::from_setup(setup, CastlingMode::Standard).ok()
    }

    /// The WDL of `board`, which must have been reached by a capture or pawn move (or be
    /// the root); `None` when it is not in the tables.
    pub fn probe_wdl(&self, board: &Board) -> Option<Outcome> {
        if !self.covers(board) {
            return None;
        }
        let position = Syzygy::convert(board)?;
        let wdl = self.tables.probe_wdl_after_zeroing(&position).ok()?;
        Some(match wdl {
            Wdl::Win => Outcome::Win,
            Wdl::Loss => Outcome::Loss,
            // Cursed wins and blessed losses are draws under the fifty-move rule.
            Wdl::CursedWin | Wdl::BlessedLoss | Wdl::Draw => Outcome::Draw,
        })
    }

    /// The root moves worth searching by the tables (as Stockfish ranks them): when
    /// winning, every move that keeps the win inside the fifty-move rule (or, if none can,
    /// those nearest to it); when drawing, the drawing moves; when losing, the moves that
    /// resist longest. `None` when the root is not in the tables.
    pub fn root_moves(&self, board: &Board, moves: &[Move]) -> Option<(Outcome, Vec<Move>)> {
        if !self.covers(board) || moves.is_empty() {
            return None;
        }
        let mut ranked = Vec::with_capacity(moves.len());
        for &mv in moves {
            let child = board.play(mv);
            if child.in_check() && count_legal_moves(&child) == 0 {
                ranked.push((Outcome::Win, i32::MAX, mv));
                continue;
            }
            let position = Syzygy::convert(&child)?;
            // The child's value is the opponent's: negate it.
            let outcome = match self.tables.probe_wdl(&position).ok()? {
                AmbiguousWdl::Loss | AmbiguousWdl::MaybeLoss => Outcome::Win,
                AmbiguousWdl::Win | AmbiguousWdl::MaybeWin => Outcome::Loss,
                _ => Outcome::Draw,
            };
            // Plies to the next capture or pawn move, and those already played.
            let to_zeroing = self
                .tables
                .probe_dtz(&position)
                .ok()?
                .ignore_rounding()
                .0
                .abs();
            let played = i32::from(child.position().halfmove_clock());
            let rank = match outcome {
                Outcome::Win if to_zeroing + played <= 100 => 1000,
                Outcome::Win => 1000 - (to_zeroing + played),
                Outcome::Draw => 0,
                Outcome::Loss => -1000 + to_zeroing,
            };
            ranked.push((outcome, rank, mv));
        }
        let (best_outcome, best_rank) = ranked.iter().map(|r| (r.0, r.1.min(1000))).max()?;
        let kept = ranked
            .into_iter()
            .filter(|r| r.0 == best_outcome && r.1.min(1000) == best_rank)
            .map(|r| r.2)
            .collect();
        Some((best_outcome, kept))
    }
}
