//! Zobrist keys: one random 64-bit number per (colour, piece type, square), per castling
//! right, per en-passant file and for Black to move, XORed over what a position holds.
//!
//! The numbers come from a fixed-seed SplitMix64 run at compile time, so keys are the same
//! in every build and can be stored.

use pawnstorm_kernels::Color;

use crate::position::board::{CastlingSide, PieceType, Position};

const fn splitmix64(state: u64) -> (u64, u64) {
    let state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (state, z ^ (z >> 31))
}

const PIECE_KEYS: usize = 2 * 6 * 64;
const CASTLING_KEYS: usize = 4;
const EP_KEYS: usize = 8;
const TOTAL_KEYS: usize = PIECE_KEYS + CASTLING_KEYS + EP_KEYS + 1;

const KEYS: [u64; TOTAL_KEYS] = {
    let mut keys = [0u64; TOTAL_KEYS];
    let mut state = 0x7061_776e_7374_6f72; // "pawnstor"
    let mut i = 0;
    while i < TOTAL_KEYS {
        let (next, value) = splitmix64(state);
        state = next;
        keys[i] = value;
        i += 1;
    }
    keys
};

#[inline]
pub(crate) fn piece_key(color: Color, kind: PieceType, square: u8) -> u64 {
    KEYS[(color.index() * 6 + kind.index()) * 64 + square as usize]
}

#[inline]
pub(crate) fn castling_key(color: Color, side: CastlingSide) -> u64 {
    KEYS[PIECE_KEYS + color.index() * 2 + side as usize]
}

#[inline]
pub(crate) fn en_passant_key(file: u8) -> u64 {
    KEYS[PIECE_KEYS + CASTLING_KEYS + file as usize]
}

pub(crate) const BLACK_TO_MOVE_KEY: u64 = KEYS[TOTAL_KEYS - 1];

fn pieces_key(position: &Position, kinds: &[PieceType]) -> u64 {
    let mut key = 0;
    for color in Color::ALL {
        for &kind in kinds {
            for square in position.pieces(color, kind).squares() {
                key ^= piece_key(color, kind, square.index());
            }
        }
    }
    key
}

pub(crate) fn full_key(position: &Position) -> u64 {
    let mut key = pieces_key(position, &PieceType::ALL);
    for color in Color::ALL {
        for side in [CastlingSide::King, CastlingSide::Queen] {
            if position.castling().rook_file(color, side).is_some() {
                key ^= castling_key(color, side);
            }
        }
    }
    if let Some(square) = position.en_passant_capturable() {
        key ^= en_passant_key(square.file().index());
    }
    if position.side_to_move() == Color::Black {
        key ^= BLACK_TO_MOVE_KEY;
    }
    key
}

/// The key of a DB row from its raw columns: [`full_key`]'s numbers, but the en-passant
/// square as the row stores it (`en_passant` 0xff for none), capturable or not, and the
/// castling rights as their stored bits (a right is its nibble's bit 3). Equal to
/// [`Position::zobrist`] whenever a stored square is capturable, which is how PGN import and
/// self-play store it; a FEN's uncapturable square makes a different key, as the stored
/// rows differ. Board by board rather than piece by piece, so that it needs no [`Position`].
#[inline]
pub fn row_key(pieces: [u64; 6], colors: [u64; 2], side: u8, castling: u16, en_passant: u8) -> u64 {
    let mut key = 0;
    for (c, &color) in colors.iter().enumerate() {
        for (k, &kind) in pieces.iter().enumerate() {
            let base = (c * 6 + k) * 64;
            let mut bb = kind & color;
            while bb != 0 {
                key ^= KEYS[base + bb.trailing_zeros() as usize];
                bb &= bb - 1;
            }
        }
    }
    for i in 0..CASTLING_KEYS {
        if castling >> (i * 4) & 8 != 0 {
            key ^= KEYS[PIECE_KEYS + i];
        }
    }
    if en_passant != 0xff {
        key ^= en_passant_key(en_passant & 7);
    }
    if side != 0 {
        key ^= BLACK_TO_MOVE_KEY;
    }
    key
}

pub(crate) fn pawn_key(position: &Position) -> u64 {
    pieces_key(position, &[PieceType::Pawn])
}

impl Position {
    /// Zobrist key of the whole position (pieces, side to move, castling, capturable e.p.).
    pub fn zobrist(&self) -> u64 {
        full_key(self)
    }

    /// Zobrist key of the pawns of both colours only, as the pawn hash table needs.
    pub fn pawn_key(&self) -> u64 {
        pawn_key(self)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use crate::position::board::Position;
    use crate::position::fen::parse_fen;

    #[test]
    fn row_key_is_the_position_key_when_en_passant_is_capturable() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "r3k2r/8/8/8/8/8/8/R3K2R b Kq - 3 20",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "4k3/8/8/8/3Pp3/8/8/4K3 b - d3 0 1",
        ] {
            let position: Position = parse_fen(fen).expect("valid FEN");
            let parts = position.parts();
            let key = super::row_key(
                parts.pieces.map(|b| b.0),
                parts.colors.map(|b| b.0),
                parts.side_to_move.index() as u8,
                parts.castling.bits(),
                parts.en_passant.map_or(0xff, |sq| sq.index()),
            );
            assert_eq!(key, position.zobrist(), "{fen}");
        }
    }

    #[test]
    fn keys_are_distinct_and_nonzero() {
        let distinct: HashSet<u64> = super::KEYS.iter().copied().collect();
        assert_eq!(distinct.len(), super::TOTAL_KEYS);
        assert!(!distinct.contains(&0));
    }
}
