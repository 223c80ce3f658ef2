//! `Move`, a move in 16 bits, its UCI text, and `MoveList`, a fixed-capacity list of moves.

use std::fmt;

use pawnstorm_kernels::{File, Square};
use thiserror::Error;

use super::{Board, legal_moves};
use crate::position::board::PieceType;

/// What a move does besides carrying a piece from one square to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A plain move or capture.
    Normal,
    /// A pawn's two-square first move (it may set an en-passant square).
    DoublePush,
    /// Castling, encoded as the king capturing its own rook: `to` is the rook's square, so
    /// Chess960 castles with the king already on its destination stay unambiguous.
    Castle,
    /// An en-passant capture: `to` is the empty square the pawn moves to.
    EnPassant,
    /// A pawn reaching the last rank and becoming this piece (knight to queen).
    Promotion(PieceType),
}

const FLAG_NORMAL: u16 = 0;
const FLAG_DOUBLE_PUSH: u16 = 1;
const FLAG_CASTLE: u16 = 2;
const FLAG_EN_PASSANT: u16 = 3;
/// Promotion flags are 4 + (piece index - knight index), so bit 2 marks a promotion.
const FLAG_PROMOTION: u16 = 4;

/// A move in 16 bits: from square (bits 0-5), to square (bits 6-11), kind (bits 12-15).
///
/// Only meaningful together with the position it was generated for.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Move(u16);

impl Move {
    /// The all-zero move (a1 to a1), never generated: a placeholder for empty slots.
    pub const NULL: Move = Move(0);

    /// A move of `kind` from `from` to `to`. Promotions to pawn or king are not moves.
    #[inline(always)]
    pub const fn new(from: Square, to: Square, kind: MoveKind) -> Move {
        let flag = match kind {
            MoveKind::Normal => FLAG_NORMAL,
            MoveKind::DoublePush => FLAG_DOUBLE_PUSH,
            MoveKind::Castle => FLAG_CASTLE,
            MoveKind::EnPassant => FLAG_EN_PASSANT,
            MoveKind::Promotion(piece) => Move::promotion_flag(piece),
        };
        Move::from_parts(from.index(), to.index(), flag)
    }

    #[inline(always)]
    pub(crate) const fn from_parts(from: u8, to: u8, flag: u16) -> Move {
        Move(from as u16 | (to as u16) << 6 | flag << 12)
    }

    #[inline(always)]
    pub(crate) const fn promotion_flag(piece: PieceType) -> u16 {
        FLAG_PROMOTION
            + match piece {
                PieceType::Knight => 0,
                PieceType::Bishop => 1,
                PieceType::Rook => 2,
                // Pawns and kings cannot be promoted to; the generator never asks.
                PieceType::Queen | PieceType::Pawn | PieceType::King => 3,
            }
    }

    pub(crate) const DOUBLE_PUSH_FLAG: u16 = FLAG_DOUBLE_PUSH;
    pub(crate) const EN_PASSANT_FLAG: u16 = FLAG_EN_PASSANT;
    pub(crate) const CASTLE_FLAG: u16 = FLAG_CASTLE;

    /// The square the moving piece leaves (the king's square when castling).
    #[inline(always)]
    pub fn from(self) -> Square {
        Square::new((self.0 & 63) as u8).expect("six bits")
    }

    /// The destination square; for castling, the castling rook's square.
    #[inline(always)]
    pub fn to(self) -> Square {
        Square::new((self.0 >> 6 & 63) as u8).expect("six bits")
    }

    #[inline(always)]
    fn flag(self) -> u16 {
        self.0 >> 12
    }

    /// What the move does.
    #[inline(always)]
    pub fn kind(self) -> MoveKind {
        match self.flag() {
            FLAG_NORMAL => MoveKind::Normal,
            FLAG_DOUBLE_PUSH => MoveKind::DoublePush,
            FLAG_CASTLE => MoveKind::Castle,
            FLAG_EN_PASSANT => MoveKind::EnPassant,
            flag => MoveKind::Promotion(PROMOTION_PIECES[(flag & 3) as usize]),
        }
    }

    /// The piece a promotion becomes.
    #[inline(always)]
    pub fn promotion(self) -> Option<PieceType> {
        (self.flag() & FLAG_PROMOTION != 0).then(|| PROMOTION_PIECES[(self.flag() & 3) as usize])
    }

    /// Whether this is castling.
    #[inline(always)]
    pub fn is_castle(self) -> bool {
        self.flag() == FLAG_CASTLE
    }

    /// Whether this is an en-passant capture.
    #[inline(always)]
    pub fn is_en_passant(self) -> bool {
        self.flag() == FLAG_EN_PASSANT
    }

    /// The 16 bits, e.g. for a transposition table.
    pub const fn bits(self) -> u16 {
        self.0
    }

    /// The move whose [`Move::bits`] these are (any 16 bits make a move; whether it is
    /// legal in a position is the caller's to check, as for a table's move).
    pub const fn from_bits(bits: u16) -> Move {
        Move(bits)
    }

    /// The UCI text of this move: castling as the king's two-square move (`e1g1`), or
    /// with `chess960` as the king taking its own rook (`e1h1`), as UCI_Chess960 asks.
    pub fn uci(self, chess960: bool) -> UciMove {
        UciMove { mv: self, chess960 }
    }

    /// The move as the DB's `move` label column stores it ([`crate::position::labels::encode_move`]):
    /// castling as the king's two-square move, as UCI writes it.
    pub fn label_code(self) -> u16 {
        let to = if self.is_castle() {
            self.castle_king_destination()
        } else {
            self.to()
        };
        let promotion = match self.promotion() {
            None => 0,
            Some(piece) => {
                1 + PROMOTION_PIECES
                    .iter()
                    .position(|&p| p == piece)
                    .unwrap_or(3) as u8
            }
        };
        crate::position::labels::encode_move(self.from().index(), to.index(), promotion)
    }

    /// The square the king ends on when this castling move is played.
    pub(crate) fn castle_king_destination(self) -> Square {
        let (from, rook) = (self.from(), self.to());
        let file = if rook.file() > from.file() { 6 } else { 2 };
        Square::from_coords(File::new(file).expect("g or c"), from.rank())
    }

    /// Reads UCI text (`e2e4`, `e7e8q`, `e1g1`, `e1h1`) as a legal move of `board`.
    ///
    /// Castling is accepted both as the king's two-square move and as the king taking its
    /// own rook; `chess960` decides which form wins where they differ (a Chess960 king on
    /// b1 may move to c1 or castle to c1), as the UCI_Chess960 option does.
    pub fn from_uci(text: &str, board: &Board, chess960: bool) -> Result<Move, UciMoveError> {
        // ASCII first: slicing other text at byte offsets could split a character.
        let shape_ok = text.is_ascii()
            && matches!(text.len(), 4 | 5)
            && Square::from_name(&text[..2]).is_some()
            && Square::from_name(&text[2..4]).is_some()
            && (text.len() == 4 || matches!(&text[4..], "n" | "b" | "r" | "q"));
        if !shape_ok {
            return Err(UciMoveError::Malformed(text.to_owned()));
        }
        let mut moves = MoveList::new();
        legal_moves(board, &mut moves);
        let matching = |notation: bool| {
            moves
                .iter()
                .copied()
                .find(|m| m.uci(notation).to_string() == text)
        };
        matching(chess960)
            .or_else(|| matching(!chess960).filter(|m| m.is_castle()))
            .ok_or_else(|| UciMoveError::Illegal(text.to_owned()))
    }
}

const PROMOTION_PIECES: [PieceType; 4] = [
    PieceType::Knight,
    PieceType::Bishop,
    PieceType::Rook,
    PieceType::Queen,
];

/// Why UCI text is not a move of a position.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum UciMoveError {
    #[error("{0:?} is not a move in UCI notation (like e2e4 or e7e8q)")]
    Malformed(String),
    #[error("{0:?} is not a legal move in this position")]
    Illegal(String),
}

/// A move's UCI text in one castling notation (see [`Move::uci`]).
#[derive(Clone, Copy, Debug)]
pub struct UciMove {
    mv: Move,
    chess960: bool,
}

impl fmt::Display for UciMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mv = self.mv;
        let to = if mv.is_castle() && !self.chess960 {
            mv.castle_king_destination()
        } else {
            mv.to()
        };
        write!(f, "{}{}", mv.from(), to)?;
        if let Some(piece) = mv.promotion() {
            write!(f, "{}", piece.char())?;
        }
        Ok(())
    }
}

/// Standard UCI notation (castling as `e1g1`).
impl fmt::Display for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.uci(false).fmt(f)
    }
}

impl fmt::Debug for Move {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Move({} {:?})", self.uci(true), self.kind())
    }
}

/// No legal chess position has more than 218 moves; 256 leaves room for the impossible
/// positions perft suites like to include.
pub const MAX_MOVES: usize = 256;

/// Moves in a fixed array on the stack: no heap allocation in the search or perft.
#[derive(Clone)]
pub struct MoveList {
    moves: [Move; MAX_MOVES],
    len: usize,
}

impl MoveList {
    /// An empty list.
    #[inline(always)]
    pub fn new() -> MoveList {
        MoveList {
            moves: [Move::NULL; MAX_MOVES],
            len: 0,
        }
    }

    /// Appends a move. Panics past [`MAX_MOVES`], which no position reaches.
    #[inline(always)]
    pub fn push(&mut self, mv: Move) {
        self.moves[self.len] = mv;
        self.len += 1;
    }

    /// Removes every move.
    pub fn clear(&mut self) {
        self.len = 0;
    }

    /// The moves as a mutable slice (e.g. to sort them).
    pub fn as_mut_slice(&mut self) -> &mut [Move] {
        &mut self.moves[..self.len]
    }
}

impl Default for MoveList {
    fn default() -> Self {
        MoveList::new()
    }
}

impl std::ops::Deref for MoveList {
    type Target = [Move];
    #[inline(always)]
    fn deref(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

impl<'a> IntoIterator for &'a MoveList {
    type Item = &'a Move;
    type IntoIter = std::slice::Iter<'a, Move>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl fmt::Debug for MoveList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sq(name: &str) -> Square {
        Square::from_name(name).unwrap()
    }

    #[test]
    fn label_codes_decode_to_the_uci_text() {
        // Castling both ways, promotions of each kind, en passant, plain moves.
        for fen in [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "r3k2r/1P6/8/2pP4/8/8/6p1/R3K2R b KQkq - 0 1",
            "r3k2r/1P6/8/2pP4/8/8/6p1/R3K2R w KQkq c6 0 1",
        ] {
            let board = Board::from_fen(fen).unwrap();
            let mut moves = MoveList::new();
            crate::movegen::legal_moves(&board, &mut moves);
            assert!(moves.iter().any(|m| m.is_castle()));
            for &mv in moves.iter() {
                assert_eq!(
                    crate::position::labels::move_to_uci(mv.label_code()),
                    Some(mv.uci(false).to_string()),
                    "{fen}"
                );
            }
        }
    }

    #[test]
    fn every_kind_round_trips_through_16_bits() {
        let kinds = [
            MoveKind::Normal,
            MoveKind::DoublePush,
            MoveKind::Castle,
            MoveKind::EnPassant,
            MoveKind::Promotion(PieceType::Knight),
            MoveKind::Promotion(PieceType::Bishop),
            MoveKind::Promotion(PieceType::Rook),
            MoveKind::Promotion(PieceType::Queen),
        ];
        for kind in kinds {
            for (from, to) in [("a1", "h8"), ("h8", "a1"), ("e7", "d8")] {
                let mv = Move::new(sq(from), sq(to), kind);
                assert_eq!((mv.from(), mv.to(), mv.kind()), (sq(from), sq(to), kind));
            }
        }
    }

    #[test]
    fn uci_text_writes_castling_in_both_notations() {
        let castle = Move::new(sq("e1"), sq("h1"), MoveKind::Castle);
        assert_eq!(castle.to_string(), "e1g1");
        assert_eq!(castle.uci(true).to_string(), "e1h1");
        let long = Move::new(sq("e8"), sq("a8"), MoveKind::Castle);
        assert_eq!(long.to_string(), "e8c8");
        let promotion = Move::new(sq("b7"), sq("a8"), MoveKind::Promotion(PieceType::Knight));
        assert_eq!(promotion.to_string(), "b7a8n");
    }
}
