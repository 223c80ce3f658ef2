//! Static exchange evaluation: the material balance of the captures and recaptures on one
//! square, each side taking with its least valuable attacker and free to stop.

use pawnstorm_kernels::attacks::{
    bishop_attacks, king_attacks, knight_attacks, pawn_attacks, rook_attacks,
};
use pawnstorm_kernels::{Bitboard, Color, Square};

use crate::movegen::{Move, MoveKind};
use crate::position::board::{PieceType, Position};

/// Exchange values: pawn, knight, bishop, rook, queen, king.
pub const SEE_VALUES: [i32; 6] = [100, 320, 330, 500, 900, 20_000];

/// The kind of the piece on `square`, if any.
#[inline]
pub fn kind_at(position: &Position, square: Square) -> Option<PieceType> {
    let bit = Bitboard::from(square);
    if (position.occupied() & bit).is_empty() {
        return None;
    }
    PieceType::ALL
        .into_iter()
        .find(|&kind| !(position.piece_type(kind) & bit).is_empty())
}

/// The piece `mv` captures (a pawn for en passant; none for castling).
#[inline]
pub fn captured(position: &Position, mv: Move) -> Option<PieceType> {
    match mv.kind() {
        MoveKind::EnPassant => Some(PieceType::Pawn),
        MoveKind::Castle => None,
        _ => {
            let them = position.color(!position.side_to_move());
            if them.contains(mv.to()) {
                kind_at(position, mv.to())
            } else {
                None
            }
        }
    }
}

fn attackers(position: &Position, square: Square, occupied: Bitboard) -> Bitboard {
    let queens = position.piece_type(PieceType::Queen);
    let rook_like = position.piece_type(PieceType::Rook) | queens;
    let bishop_like = position.piece_type(PieceType::Bishop) | queens;
    ((knight_attacks(square) & position.piece_type(PieceType::Knight))
        | (king_attacks(square) & position.piece_type(PieceType::King))
        | (pawn_attacks(Color::White, square) & position.pieces(Color::Black, PieceType::Pawn))
        | (pawn_attacks(Color::Black, square) & position.pieces(Color::White, PieceType::Pawn))
        | (rook_attacks(square, occupied) & rook_like)
        | (bishop_attacks(square, occupied) & bishop_like))
        & occupied
}

/// The exchange value of `mv` for the side playing it, in centipawns (pins ignored).
pub fn see(position: &Position, mv: Move) -> i32 {
    if mv.kind() == MoveKind::Castle {
        return 0;
    }
    let (from, to) = (mv.from(), mv.to());
    let Some(mover) = kind_at(position, from) else {
        return 0;
    };
    let mut gain = [0i32; 32];
    gain[0] = captured(position, mv).map_or(0, |kind| SEE_VALUES[kind.index()]);
    let mut on_square = SEE_VALUES[mover.index()];
    if let Some(promoted) = mv.promotion() {
        gain[0] += SEE_VALUES[promoted.index()] - SEE_VALUES[0];
        on_square = SEE_VALUES[promoted.index()];
    }
    let mut occupied = position.occupied() ^ Bitboard::from(from);
    if mv.kind() == MoveKind::EnPassant {
        let victim = Square::new(to.index() ^ 8).expect("en-passant victims are on the board");
        occupied ^= Bitboard::from(victim);
    }
    let mut side = !position.side_to_move();
    let mut depth = 0;
    loop {
        let candidates = attackers(position, to, occupied) & position.color(side);
        let Some((kind, square)) = least_valuable(position, candidates) else {
            break;
        };
        // A king may only take last: not onto a square the other side still attacks.
        if kind == PieceType::King
            && !(attackers(position, to, occupied ^ Bitboard::from(square)) & position.color(!side))
                .is_empty()
        {
            break;
        }
        depth += 1;
        gain[depth] = on_square - gain[depth - 1];
        if depth == gain.len() - 1 {
            break;
        }
        on_square = SEE_VALUES[kind.index()];
        occupied ^= Bitboard::from(square);
        side = !side;
    }
    while depth > 0 {
        gain[depth - 1] = -(-gain[depth - 1]).max(gain[depth]);
        depth -= 1;
    }
    gain[0]
}

fn least_valuable(position: &Position, candidates: Bitboard) -> Option<(PieceType, Square)> {
    PieceType::ALL.into_iter().find_map(|kind| {
        (candidates & position.piece_type(kind))
            .first()
            .map(|square| (kind, square))
    })
}
