//! `Position`: the board as six piece-type and two colour bitboards, plus the state that FEN
//! carries. Construction always validates, so every `Position` that exists is well formed.
//!
//! This is the bottom of the crate's chess types: it imports neither `fen` nor `zobrist`.
//! Those sit above it and add their own methods to `Position` (`Position::startpos`,
//! `to_fen`, `Display` and `Debug` in `fen`; `zobrist` and `pawn_key` in `zobrist`).

use pawnstorm_kernels::{Bitboard, Color, File, Rank, Square};
use thiserror::Error;

/// A kind of piece, without its colour. The discriminant indexes `Position`'s piece boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum PieceType {
    Pawn = 0,
    Knight = 1,
    Bishop = 2,
    Rook = 3,
    Queen = 4,
    King = 5,
}

impl PieceType {
    pub const ALL: [PieceType; 6] = [
        PieceType::Pawn,
        PieceType::Knight,
        PieceType::Bishop,
        PieceType::Rook,
        PieceType::Queen,
        PieceType::King,
    ];

    pub const fn index(self) -> usize {
        self as usize
    }

    /// The lower-case FEN letter.
    pub const fn char(self) -> char {
        match self {
            PieceType::Pawn => 'p',
            PieceType::Knight => 'n',
            PieceType::Bishop => 'b',
            PieceType::Rook => 'r',
            PieceType::Queen => 'q',
            PieceType::King => 'k',
        }
    }
}

/// A piece of a colour, as FEN names it with one letter (upper case for White).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Piece {
    pub color: Color,
    pub kind: PieceType,
}

impl Piece {
    pub fn from_fen_char(c: char) -> Option<Piece> {
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let kind = match c.to_ascii_lowercase() {
            'p' => PieceType::Pawn,
            'n' => PieceType::Knight,
            'b' => PieceType::Bishop,
            'r' => PieceType::Rook,
            'q' => PieceType::Queen,
            'k' => PieceType::King,
            _ => return None,
        };
        Some(Piece { color, kind })
    }

    pub fn fen_char(self) -> char {
        match self.color {
            Color::White => self.kind.char().to_ascii_uppercase(),
            Color::Black => self.kind.char(),
        }
    }
}

/// Which side of the king a castling move goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CastlingSide {
    King = 0,
    Queen = 1,
}

/// Castling rights, each kept as the file of the rook it castles with so that Chess960 fits
/// the same representation as standard chess.
///
/// Packed in 16 bits (the DB column): four nibbles, index `color * 2 + side`, each
/// `0b1fff` when the right exists with the rook on file `fff`, 0 when it does not.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct CastlingRights(u16);

impl CastlingRights {
    pub const NONE: CastlingRights = CastlingRights(0);
    /// The standard rights `KQkq` with rooks on the a- and h-files.
    pub const STANDARD: CastlingRights = CastlingRights(0x8f8f);

    fn shift(color: Color, side: CastlingSide) -> u32 {
        (color.index() as u32 * 2 + side as u32) * 4
    }

    /// The rook file of this right, if the right exists.
    pub fn rook_file(self, color: Color, side: CastlingSide) -> Option<File> {
        let nibble = (self.0 >> Self::shift(color, side)) & 0xf;
        if nibble & 8 != 0 {
            File::new(nibble as u8 & 7)
        } else {
            None
        }
    }

    pub fn set(&mut self, color: Color, side: CastlingSide, rook: Option<File>) {
        let shift = Self::shift(color, side);
        self.0 &= !(0xf << shift);
        if let Some(file) = rook {
            self.0 |= (8 | file.index() as u16) << shift;
        }
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub const fn bits(self) -> u16 {
        self.0
    }

    /// Reads the packed form; `None` if a nibble has bits set without its presence bit.
    pub fn from_bits(bits: u16) -> Option<CastlingRights> {
        let valid = (0..4).all(|i| {
            let nibble = (bits >> (i * 4)) & 0xf;
            nibble == 0 || nibble & 8 != 0
        });
        valid.then_some(CastlingRights(bits))
    }
}

/// Why a set of boards and state is not a position pawnstorm accepts.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PositionError {
    #[error("{color} has {count} kings (exactly one is required)", color = color.name())]
    KingCount { color: Color, count: u32 },
    #[error("pawn on {square} (pawns cannot stand on rank 1 or 8)")]
    PawnOnBackRank { square: Square },
    #[error("{color} has {count} pieces (at most 16 are possible)", color = color.name())]
    TooManyPieces { color: Color, count: u32 },
    #[error("{color} may castle but its king is not on its first rank", color = color.name())]
    CastlingWithoutKing { color: Color },
    #[error("{color} castling right names the {file}-file but no {color} rook stands there on the {side} side of the king", color = color.name(), side = match side { CastlingSide::King => "king", CastlingSide::Queen => "queen" })]
    CastlingWithoutRook {
        color: Color,
        side: CastlingSide,
        file: File,
    },
    #[error("en-passant square {square} is impossible: {reason}")]
    EnPassant {
        square: Square,
        reason: &'static str,
    },
    #[error("boards overlap or disagree: {0}")]
    InconsistentBoards(&'static str),
    #[error("{color} is in check with {mover} to move (no position can arise where the side not to move is in check)", color = color.name(), mover = (!*color).name())]
    NotToMoveInCheck { color: Color },
}

/// A chess position: 6 piece-type bitboards, 2 colour bitboards and the FEN state.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Position {
    pieces: [Bitboard; 6],
    colors: [Bitboard; 2],
    side_to_move: Color,
    castling: CastlingRights,
    en_passant: Option<Square>,
    halfmove_clock: u16,
    fullmove_number: u16,
}

/// The raw parts of a position, before validation (what a FEN or a DB row holds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PositionParts {
    pub pieces: [Bitboard; 6],
    pub colors: [Bitboard; 2],
    pub side_to_move: Color,
    pub castling: CastlingRights,
    pub en_passant: Option<Square>,
    pub halfmove_clock: u16,
    pub fullmove_number: u16,
}

/// The boards of one position as plain words: the piece-type and colour boards and the side
/// to move, what the special endgames, the coefficients and the trainers' filters read
/// ([`Position::boards`], a DB row's [`crate::db::Block::boards`]).
#[derive(Clone, Copy, Debug)]
pub struct PositionBoards {
    pub pieces: [u64; 6],
    pub colors: [u64; 2],
    pub black_to_move: bool,
}

impl Position {
    /// Validates `parts`: one king a side, no pawn on rank 1 or 8, at most 16 pieces a side,
    /// castling rights only with king and rook on their squares, an en-passant square only
    /// where the side not to move could just have double-pushed.
    pub fn from_parts(parts: PositionParts) -> Result<Position, PositionError> {
        let PositionParts {
            pieces,
            colors,
            side_to_move,
            castling,
            en_passant,
            halfmove_clock,
            fullmove_number,
        } = parts;
        let mut union = Bitboard::EMPTY;
        for bb in pieces {
            if !(union & bb).is_empty() {
                return Err(PositionError::InconsistentBoards(
                    "a square holds two piece types",
                ));
            }
            union |= bb;
        }
        if !(colors[0] & colors[1]).is_empty() {
            return Err(PositionError::InconsistentBoards(
                "a square holds both colours",
            ));
        }
        if union != colors[0] | colors[1] {
            return Err(PositionError::InconsistentBoards(
                "the colour boards do not cover exactly the pieces",
            ));
        }
        let position = Position {
            pieces,
            colors,
            side_to_move,
            castling,
            en_passant,
            halfmove_clock,
            fullmove_number,
        };
        position.validate()?;
        Ok(position)
    }

    fn validate(&self) -> Result<(), PositionError> {
        for color in Color::ALL {
            let count = self.pieces(color, PieceType::King).count();
            if count != 1 {
                return Err(PositionError::KingCount { color, count });
            }
        }
        let stray_pawns = self.pieces[0] & (Bitboard::RANK_1 | Bitboard::RANK_8);
        if let Some(square) = stray_pawns.first() {
            return Err(PositionError::PawnOnBackRank { square });
        }
        for color in Color::ALL {
            let count = self.colors[color.index()].count();
            if count > 16 {
                return Err(PositionError::TooManyPieces { color, count });
            }
        }
        for color in Color::ALL {
            for side in [CastlingSide::King, CastlingSide::Queen] {
                if let Some(file) = self.castling.rook_file(color, side) {
                    self.check_castling(color, side, file)?;
                }
            }
        }
        if let Some(square) = self.en_passant {
            self.check_en_passant(square)?;
        }
        // As python-chess's `is_valid`: the side that just moved cannot have left its king
        // attacked. The move generator's promises (no king capture) rest on it.
        if self.side_not_to_move_in_check() {
            return Err(PositionError::NotToMoveInCheck {
                color: !self.side_to_move,
            });
        }
        Ok(())
    }

    /// Whether the side to move attacks the other king. Sliders by set-wise fills rather
    /// than the magic tables: every imported position passes here once, each with its own
    /// king square and occupancy, and a table lookup per position is a cache miss that
    /// cost the binpack import a quarter of its speed.
    fn side_not_to_move_in_check(&self) -> bool {
        use pawnstorm_kernels::attacks::{king_attacks, knight_attacks, pawn_attacks};
        use pawnstorm_kernels::setwise;
        let us = self.side_to_move;
        let king = self.king(!us);
        let ours = |kind| self.pieces(us, kind);
        let leapers = (knight_attacks(king) & ours(PieceType::Knight))
            | (king_attacks(king) & ours(PieceType::King))
            | (pawn_attacks(!us, king) & ours(PieceType::Pawn));
        if !leapers.is_empty() {
            return true;
        }
        let queens = ours(PieceType::Queen).0;
        let (rook_like, bishop_like) = (
            ours(PieceType::Rook).0 | queens,
            ours(PieceType::Bishop).0 | queens,
        );
        let (from, empty) = (1u64 << king.index(), !self.occupied().0);
        setwise::rook_attacks(from, empty) & rook_like != 0
            || setwise::bishop_attacks(from, empty) & bishop_like != 0
    }

    fn check_castling(
        &self,
        color: Color,
        side: CastlingSide,
        file: File,
    ) -> Result<(), PositionError> {
        let back_rank = back_rank(color);
        let king = self.pieces(color, PieceType::King) & Bitboard::rank(back_rank);
        let Some(king) = king.first() else {
            return Err(PositionError::CastlingWithoutKing { color });
        };
        let rook_square = Square::from_coords(file, back_rank);
        let on_correct_side = match side {
            CastlingSide::King => file > king.file(),
            CastlingSide::Queen => file < king.file(),
        };
        if !on_correct_side || !self.pieces(color, PieceType::Rook).contains(rook_square) {
            return Err(PositionError::CastlingWithoutRook { color, side, file });
        }
        Ok(())
    }

    fn check_en_passant(&self, square: Square) -> Result<(), PositionError> {
        let us = self.side_to_move;
        // The side not to move has just pushed a pawn two squares, passing over `square`.
        let (expected_rank, forward) = match us {
            Color::White => (5, 1i8),
            Color::Black => (2, -1i8),
        };
        let err = |reason| Err(PositionError::EnPassant { square, reason });
        if square.rank().index() != expected_rank {
            return err(if us == Color::White {
                "with White to move it must be on rank 6"
            } else {
                "with Black to move it must be on rank 3"
            });
        }
        let occupied = self.occupied();
        if occupied.contains(square) {
            return err("the square is occupied");
        }
        let origin = square
            .offset_ranks(forward)
            .expect("rank 3 or 6 has neighbours");
        if occupied.contains(origin) {
            return err("the pawn's start square is occupied");
        }
        let pushed = square
            .offset_ranks(-forward)
            .expect("rank 3 or 6 has neighbours");
        if !self.pieces(!us, PieceType::Pawn).contains(pushed) {
            return err("no pawn stands where the double push would have ended");
        }
        Ok(())
    }

    pub fn pieces(&self, color: Color, kind: PieceType) -> Bitboard {
        self.pieces[kind.index()] & self.colors[color.index()]
    }
    /// The board of one piece type, both colours.
    pub fn piece_type(&self, kind: PieceType) -> Bitboard {
        self.pieces[kind.index()]
    }
    pub fn piece_boards(&self) -> &[Bitboard; 6] {
        &self.pieces
    }
    pub fn color(&self, color: Color) -> Bitboard {
        self.colors[color.index()]
    }
    pub fn color_boards(&self) -> &[Bitboard; 2] {
        &self.colors
    }
    pub fn occupied(&self) -> Bitboard {
        self.colors[0] | self.colors[1]
    }
    pub fn side_to_move(&self) -> Color {
        self.side_to_move
    }
    pub fn castling(&self) -> CastlingRights {
        self.castling
    }
    pub fn en_passant(&self) -> Option<Square> {
        self.en_passant
    }
    pub fn halfmove_clock(&self) -> u16 {
        self.halfmove_clock
    }
    pub fn fullmove_number(&self) -> u16 {
        self.fullmove_number
    }
    pub fn king(&self, color: Color) -> Square {
        self.pieces(color, PieceType::King)
            .first()
            .expect("validated: one king a side")
    }

    pub fn piece_at(&self, square: Square) -> Option<Piece> {
        let color = if self.colors[0].contains(square) {
            Color::White
        } else if self.colors[1].contains(square) {
            Color::Black
        } else {
            return None;
        };
        let kind = PieceType::ALL
            .into_iter()
            .find(|kind| self.pieces[kind.index()].contains(square))?;
        Some(Piece { color, kind })
    }

    /// Whether a pawn of the side to move could capture on the en-passant square (ignoring
    /// pins): only then does the square change what can happen next, so only then does it
    /// enter the Zobrist key.
    pub fn en_passant_capturable(&self) -> Option<Square> {
        let square = self.en_passant?;
        let target = Bitboard::from(square);
        let attackers_from = match self.side_to_move {
            Color::White => target.south(),
            Color::Black => target.north(),
        };
        let attackers = attackers_from.east() | attackers_from.west();
        let ours = self.pieces(self.side_to_move, PieceType::Pawn);
        (!(attackers & ours).is_empty()).then_some(square)
    }

    pub fn parts(&self) -> PositionParts {
        PositionParts {
            pieces: self.pieces,
            colors: self.colors,
            side_to_move: self.side_to_move,
            castling: self.castling,
            en_passant: self.en_passant,
            halfmove_clock: self.halfmove_clock,
            fullmove_number: self.fullmove_number,
        }
    }

    /// The position's boards as the endgame rules read them.
    #[inline(always)]
    pub fn boards(&self) -> PositionBoards {
        PositionBoards {
            pieces: PieceType::ALL.map(|kind| self.piece_type(kind).0),
            colors: Color::ALL.map(|color| self.color(color).0),
            black_to_move: self.side_to_move() == Color::Black,
        }
    }
}

/// Raw edits for make-move (`movegen::Board`), which keeps the invariants `validate` checks;
/// nothing else may change a validated position.
impl Position {
    /// Flips `squares` on the boards of `kind` and `color` (adds or removes the pieces).
    #[inline(always)]
    pub(crate) fn toggle_pieces(&mut self, color: Color, kind: PieceType, squares: Bitboard) {
        self.pieces[kind.index()] ^= squares;
        self.colors[color.index()] ^= squares;
    }
    #[inline(always)]
    pub(crate) fn set_side_to_move(&mut self, color: Color) {
        self.side_to_move = color;
    }
    #[inline(always)]
    pub(crate) fn set_castling(&mut self, castling: CastlingRights) {
        self.castling = castling;
    }
    #[inline(always)]
    pub(crate) fn set_en_passant(&mut self, square: Option<Square>) {
        self.en_passant = square;
    }
    #[inline(always)]
    pub(crate) fn set_clocks(&mut self, halfmove_clock: u16, fullmove_number: u16) {
        self.halfmove_clock = halfmove_clock;
        self.fullmove_number = fullmove_number;
    }
}

pub(crate) fn back_rank(color: Color) -> Rank {
    match color {
        Color::White => Rank::new(0),
        Color::Black => Rank::new(7),
    }
    .expect("ranks 0 and 7 exist")
}
