//! `Board`: a `Position` with its Zobrist keys and checkers kept up to date move by move
//! (copy-make: a move is played on a copy, so "unmake" is dropping the copy).

use pawnstorm_kernels::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use pawnstorm_kernels::{Bitboard, Color, File, Square};

use super::{Move, MoveKind};
use crate::position::board::{CastlingRights, CastlingSide, PieceType, Position, back_rank};
use crate::position::fen::{FenError, parse_fen};
use crate::position::zobrist;

/// A position ready for move generation: the `Position`, its full and pawn Zobrist keys
/// (updated incrementally, always equal to `Position::zobrist` and `Position::pawn_key`)
/// and the pieces giving check.
///
/// The en-passant square is kept only when a pawn of the side to move stands beside the
/// pawn that double-pushed (as `Position::en_passant_capturable` counts it), so the square
/// is stored exactly when it is in the key.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Board {
    position: Position,
    key: u64,
    pawn_key: u64,
    checkers: Bitboard,
    /// The squares a move must leave or land on to lose a castling right: the rooks of the
    /// rights and the kings of the sides that have any. Most moves touch none, and skip the
    /// rights altogether.
    castling_squares: Bitboard,
}

impl Board {
    /// A board for `position`, dropping an en-passant square no pawn could capture on.
    pub fn new(mut position: Position) -> Board {
        if position.en_passant_capturable().is_none() {
            position.set_en_passant(None);
        }
        let checkers = attackers_to(&position, position.king(position.side_to_move()))
            & position.color(!position.side_to_move());
        Board {
            key: position.zobrist(),
            pawn_key: position.pawn_key(),
            castling_squares: castling_squares(&position),
            position,
            checkers,
        }
    }

    /// The standard starting position.
    pub fn startpos() -> Board {
        Board::new(Position::startpos())
    }

    /// Parses a FEN (see `fen::parse_fen`).
    pub fn from_fen(fen: &str) -> Result<Board, FenError> {
        parse_fen(fen).map(Board::new)
    }

    /// The position.
    #[inline(always)]
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The Zobrist key of the whole position, equal to `position().zobrist()`.
    #[inline(always)]
    pub fn key(&self) -> u64 {
        self.key
    }

    /// The Zobrist key of the pawns, equal to `position().pawn_key()`.
    #[inline(always)]
    pub fn pawn_key(&self) -> u64 {
        self.pawn_key
    }

    /// The side to move.
    #[inline(always)]
    pub fn side_to_move(&self) -> Color {
        self.position.side_to_move()
    }

    /// The enemy pieces attacking the king of the side to move.
    #[inline(always)]
    pub fn checkers(&self) -> Bitboard {
        self.checkers
    }

    /// Whether the side to move is in check.
    #[inline(always)]
    pub fn in_check(&self) -> bool {
        !self.checkers.is_empty()
    }

    /// Whether the side not to move is in check: a position no game reaches (its king
    /// could be taken), which move generation and search must not be given.
    pub fn opponent_in_check(&self) -> bool {
        let them = !self.position.side_to_move();
        !(attackers_to(&self.position, self.position.king(them))
            & self.position.color(self.position.side_to_move()))
        .is_empty()
    }

    /// The FEN of the position.
    pub fn to_fen(&self) -> String {
        self.position.to_fen()
    }

    /// Whether castling here needs Chess960 notation to be read back unambiguously: some
    /// castling right's king or rook is not where standard chess puts it.
    pub fn has_chess960_castling(&self) -> bool {
        let castling = self.position.castling();
        Color::ALL.into_iter().any(|color| {
            let standard_king = Square::from_coords(File::new(4).expect("e"), back_rank(color));
            let rights = [CastlingSide::King, CastlingSide::Queen]
                .map(|side| (side, castling.rook_file(color, side)));
            let any = rights.iter().any(|(_, file)| file.is_some());
            let rooks_off_corner = rights.iter().any(|&(side, file)| {
                file.is_some_and(|f| f.index() != if side == CastlingSide::King { 7 } else { 0 })
            });
            any && (self.position.king(color) != standard_king || rooks_off_corner)
        })
    }

    /// The position after `mv`, which must be a legal move of this position.
    #[inline]
    pub fn play(&self, mv: Move) -> Board {
        let mut next = self.clone();
        next.make_move(mv);
        next
    }

    /// Plays `mv`, which must be a legal move of this position (one the generator gave):
    /// anything else leaves the board in an unspecified (but memory-safe) state.
    #[inline]
    pub fn make_move(&mut self, mv: Move) {
        let us = self.position.side_to_move();
        let them = !us;
        let (from, to) = (mv.from(), mv.to());
        let from_bb = Bitboard::from(from);
        let to_bb = Bitboard::from(to);
        let moved = self.kind_at(from_bb);

        let mut key = self.key ^ zobrist::BLACK_TO_MOVE_KEY;
        let mut pawn_key = self.pawn_key;
        if let Some(ep) = self.position.en_passant() {
            key ^= zobrist::en_passant_key(ep.file().index());
            self.position.set_en_passant(None);
        }
        let mut halfmove_clock = self.position.halfmove_clock().saturating_add(1);

        match mv.kind() {
            MoveKind::Castle => {
                let king_to = mv.castle_king_destination();
                let rook_file = if king_to.file().index() == 6 { 5 } else { 3 };
                let rook_to = Square::from_coords(File::new(rook_file).expect("f or d"), to.rank());
                // XOR toggles stay right when a square is both left and entered.
                self.position
                    .toggle_pieces(us, PieceType::King, from_bb ^ Bitboard::from(king_to));
                self.position
                    .toggle_pieces(us, PieceType::Rook, to_bb ^ Bitboard::from(rook_to));
                key ^=
                    piece_key(us, PieceType::King, from) ^ piece_key(us, PieceType::King, king_to);
                key ^= piece_key(us, PieceType::Rook, to) ^ piece_key(us, PieceType::Rook, rook_to);
            }
            MoveKind::EnPassant => {
                let captured = en_passant_victim(us, to);
                self.position
                    .toggle_pieces(us, PieceType::Pawn, from_bb | to_bb);
                self.position
                    .toggle_pieces(them, PieceType::Pawn, Bitboard::from(captured));
                let change = piece_key(us, PieceType::Pawn, from)
                    ^ piece_key(us, PieceType::Pawn, to)
                    ^ piece_key(them, PieceType::Pawn, captured);
                key ^= change;
                pawn_key ^= change;
                halfmove_clock = 0;
            }
            kind => {
                if !(self.position.color(them) & to_bb).is_empty() {
                    let captured = self.kind_at(to_bb);
                    self.position.toggle_pieces(them, captured, to_bb);
                    let change = piece_key(them, captured, to);
                    key ^= change;
                    if captured == PieceType::Pawn {
                        pawn_key ^= change;
                    }
                    halfmove_clock = 0;
                }
                let arriving = mv.promotion().unwrap_or(moved);
                self.position.toggle_pieces(us, moved, from_bb);
                self.position.toggle_pieces(us, arriving, to_bb);
                key ^= piece_key(us, moved, from) ^ piece_key(us, arriving, to);
                if moved == PieceType::Pawn {
                    pawn_key ^= piece_key(us, PieceType::Pawn, from);
                    if arriving == PieceType::Pawn {
                        pawn_key ^= piece_key(us, PieceType::Pawn, to);
                    }
                    halfmove_clock = 0;
                }
                if kind == MoveKind::DoublePush {
                    let passed = en_passant_victim(us, to);
                    let capturers =
                        pawn_attacks(us, passed) & self.position.pieces(them, PieceType::Pawn);
                    if !capturers.is_empty() {
                        self.position.set_en_passant(Some(passed));
                        key ^= zobrist::en_passant_key(passed.file().index());
                    }
                }
            }
        }

        let castling = self.position.castling();
        if !((from_bb | to_bb) & self.castling_squares).is_empty() {
            let lost = lost_castling_rights(castling, us, moved, from_bb | to_bb);
            if !lost.is_empty() {
                let mut remaining = castling;
                for color in Color::ALL {
                    for side in [CastlingSide::King, CastlingSide::Queen] {
                        if lost.rook_file(color, side).is_some() {
                            remaining.set(color, side, None);
                            key ^= zobrist::castling_key(color, side);
                        }
                    }
                }
                self.position.set_castling(remaining);
                self.castling_squares = castling_squares(&self.position);
            }
        }

        let fullmove_number = self.position.fullmove_number() + (us == Color::Black) as u16;
        self.position.set_clocks(halfmove_clock, fullmove_number);
        self.position.set_side_to_move(them);
        self.key = key;
        self.pawn_key = pawn_key;
        self.checkers =
            attackers_to(&self.position, self.position.king(them)) & self.position.color(us);
    }

    /// The position after the side to move passes (the search's null move). The side to
    /// move must not be in check; the en-passant square lapses and the clocks advance.
    pub fn null_move(&self) -> Board {
        debug_assert!(!self.in_check());
        let mut next = self.clone();
        let mut key = self.key ^ zobrist::BLACK_TO_MOVE_KEY;
        if let Some(ep) = next.position.en_passant() {
            key ^= zobrist::en_passant_key(ep.file().index());
            next.position.set_en_passant(None);
        }
        let us = self.position.side_to_move();
        next.position.set_clocks(
            self.position.halfmove_clock().saturating_add(1),
            self.position.fullmove_number() + (us == Color::Black) as u16,
        );
        next.position.set_side_to_move(!us);
        next.key = key;
        // The side that passed was not in check, so the mover cannot be attacked either:
        // the position before would have let its king be taken.
        next.checkers = Bitboard::EMPTY;
        next
    }

    /// The kind of the piece on the one square of `square`, which must be occupied.
    #[inline(always)]
    fn kind_at(&self, square: Bitboard) -> PieceType {
        let boards = self.position.piece_boards();
        PieceType::ALL
            .into_iter()
            .find(|kind| !(boards[kind.index()] & square).is_empty())
            .unwrap_or(PieceType::King)
    }
}

#[inline(always)]
fn piece_key(color: Color, kind: PieceType, square: Square) -> u64 {
    zobrist::piece_key(color, kind, square.index())
}

/// The square one rank behind `target` as `color` moves: the pawn an en-passant capture by
/// `color` onto `target` removes, or the square a double push by `color` to `target`
/// passed over.
#[inline(always)]
fn en_passant_victim(color: Color, target: Square) -> Square {
    let index = match color {
        Color::White => target.index() - 8,
        Color::Black => target.index() + 8,
    };
    Square::new(index).expect("en-passant squares are on ranks 3 to 6")
}

/// See `Board::castling_squares`.
fn castling_squares(position: &Position) -> Bitboard {
    let castling = position.castling();
    let mut squares = Bitboard::EMPTY;
    for color in Color::ALL {
        for side in [CastlingSide::King, CastlingSide::Queen] {
            if let Some(file) = castling.rook_file(color, side) {
                squares |= Bitboard::from(Square::from_coords(file, back_rank(color)))
                    | Bitboard::from(position.king(color));
            }
        }
    }
    squares
}

/// The rights a move of `mover`'s `moved` piece touching `squares` (its from and to
/// squares) removes: both of `mover`'s if the king moves, and any whose rook square is
/// left or captured on.
fn lost_castling_rights(
    castling: CastlingRights,
    mover: Color,
    moved: PieceType,
    squares: Bitboard,
) -> CastlingRights {
    let mut lost = CastlingRights::NONE;
    for color in Color::ALL {
        for side in [CastlingSide::King, CastlingSide::Queen] {
            let Some(file) = castling.rook_file(color, side) else {
                continue;
            };
            let rook_square = Square::from_coords(file, back_rank(color));
            if (color == mover && moved == PieceType::King) || squares.contains(rook_square) {
                lost.set(color, side, Some(file));
            }
        }
    }
    lost
}

/// Pieces of both colours attacking `square` with the position's occupancy.
#[inline(always)]
pub(crate) fn attackers_to(position: &Position, square: Square) -> Bitboard {
    attackers_to_with(position, square, position.occupied())
}

/// Pieces of both colours attacking `square` if the board held `occupied` (pieces that
/// `occupied` leaves out still count as attackers: callers mask them off).
#[inline(always)]
pub(crate) fn attackers_to_with(
    position: &Position,
    square: Square,
    occupied: Bitboard,
) -> Bitboard {
    let boards = position.piece_boards();
    let queens = boards[PieceType::Queen.index()];
    let rook_like = boards[PieceType::Rook.index()] | queens;
    let bishop_like = boards[PieceType::Bishop.index()] | queens;
    (knight_attacks(square) & boards[PieceType::Knight.index()])
        | (king_attacks(square) & boards[PieceType::King.index()])
        | (pawn_attacks(Color::White, square) & position.pieces(Color::Black, PieceType::Pawn))
        | (pawn_attacks(Color::Black, square) & position.pieces(Color::White, PieceType::Pawn))
        | (rook_attacks(square, occupied) & rook_like)
        | (bishop_attacks(square, occupied) & bishop_like)
}
