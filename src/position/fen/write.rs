//! Writing FEN, and the `Position` methods that go through FEN text (`startpos`,
//! `to_fen`, `Debug`, the `Display` diagram).

use std::fmt::{self, Write};

use pawnstorm_kernels::{Bitboard, Color, Square};

use super::{STARTPOS, parse_fen};
use crate::position::board::{CastlingSide, Piece, PieceType, Position, back_rank};

impl Position {
    /// The standard starting position.
    pub fn startpos() -> Position {
        parse_fen(STARTPOS).expect("the start position is valid")
    }

    /// The six-field FEN (see `write_fen`).
    pub fn to_fen(&self) -> String {
        write_fen(self)
    }
}

impl fmt::Debug for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Position({})", self.to_fen())
    }
}

/// A board diagram, rank 8 at the top, then the FEN and the keys.
impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let border = "  +---+---+---+---+---+---+---+---+";
        for rank in (0..8u8).rev() {
            writeln!(f, "{border}")?;
            write!(f, "{} |", rank + 1)?;
            for file in 0..8u8 {
                let square = Square::new(rank * 8 + file).expect("in range");
                let c = self.piece_at(square).map_or(' ', Piece::fen_char);
                write!(f, " {c} |")?;
            }
            writeln!(f)?;
        }
        writeln!(f, "{border}")?;
        writeln!(f, "    a   b   c   d   e   f   g   h")?;
        writeln!(f)?;
        writeln!(f, "FEN: {}", self.to_fen())?;
        writeln!(f, "Key: {:016X}", self.zobrist())?;
        write!(f, "Pawn key: {:016X}", self.pawn_key())
    }
}

/// Writes the six-field FEN. Castling is written `KQkq` where the right's rook is the
/// outermost on its side (standard chess and X-FEN), as a file letter otherwise.
pub fn write_fen(position: &Position) -> String {
    let mut fen = String::with_capacity(90);
    write_position_fields(position, &mut fen);
    let _ = write!(
        fen,
        " {} {}",
        position.halfmove_clock(),
        position.fullmove_number()
    );
    fen
}

/// Writes the four position fields (board, side, castling, en passant), as EPD starts.
pub fn write_position_fields(position: &Position, out: &mut String) {
    // A letter a square, filled from the boards' pieces (at most 32) rather than asking
    // each of the 64 squares which board holds it: exports write a FEN per position.
    let mut letters = [0u8; 64];
    for color in Color::ALL {
        for kind in PieceType::ALL {
            let letter = Piece { color, kind }.fen_char() as u8;
            for square in position.pieces(color, kind).squares() {
                letters[square.index() as usize] = letter;
            }
        }
    }
    // Written into a local buffer, then appended once: a `String::push` a character
    // costs more than the rest of this loop.
    let mut field = [0u8; 71];
    let mut len = 0;
    for rank in (0..8usize).rev() {
        let mut empty = 0u8;
        for &letter in &letters[rank * 8..rank * 8 + 8] {
            if letter == 0 {
                empty += 1;
                continue;
            }
            if empty > 0 {
                field[len] = b'0' + empty;
                len += 1;
                empty = 0;
            }
            field[len] = letter;
            len += 1;
        }
        if empty > 0 {
            field[len] = b'0' + empty;
            len += 1;
        }
        if rank > 0 {
            field[len] = b'/';
            len += 1;
        }
    }
    out.push_str(std::str::from_utf8(&field[..len]).expect("ASCII letters and digits"));
    out.push(' ');
    out.push(position.side_to_move().fen_char());
    out.push(' ');
    let rights = position.castling();
    if rights.is_empty() {
        out.push('-');
    }
    for color in Color::ALL {
        let rank = back_rank(color);
        let rooks = position.pieces(color, PieceType::Rook) & Bitboard::rank(rank);
        for side in [CastlingSide::King, CastlingSide::Queen] {
            let Some(file) = rights.rook_file(color, side) else {
                continue;
            };
            let outer = rooks.squares().map(Square::file);
            let outermost = match side {
                CastlingSide::King => outer.max(),
                CastlingSide::Queen => outer.min(),
            };
            let c = if outermost == Some(file) {
                match side {
                    CastlingSide::King => 'k',
                    CastlingSide::Queen => 'q',
                }
            } else {
                file.to_char()
            };
            out.push(match color {
                Color::White => c.to_ascii_uppercase(),
                Color::Black => c,
            });
        }
    }
    out.push(' ');
    match position.en_passant() {
        Some(square) => {
            let _ = write!(out, "{square}");
        }
        None => out.push('-'),
    }
}
