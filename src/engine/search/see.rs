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
    match first_exchange(position, mv) {
        Some((gain, on_square)) => exchange(position, mv, gain, on_square),
        None => 0,
    }
}

/// Whether `see(position, mv) >= threshold`, exactly, settled without the exchange where
/// its first capture does: the value is at most what `mv` takes (it must be played), and
/// at least that less the piece it puts on the square (the other side takes it back at
/// most, and then the side may stop). Most of the search's tests end there.
pub fn see_ge(position: &Position, mv: Move, threshold: i32) -> bool {
    let Some((gain, on_square)) = first_exchange(position, mv) else {
        return 0 >= threshold;
    };
    if gain < threshold {
        return false;
    }
    if gain - on_square >= threshold {
        return true;
    }
    exchange_ge(position, mv, gain, on_square, threshold)
}

/// What `mv` takes (with a promotion's gain), the value of the piece it leaves on the
/// square; `None` for castling or an empty from-square (an exchange of 0).
#[inline]
fn first_exchange(position: &Position, mv: Move) -> Option<(i32, i32)> {
    if mv.kind() == MoveKind::Castle {
        return None;
    }
    let mover = kind_at(position, mv.from())?;
    let mut gain = captured(position, mv).map_or(0, |kind| SEE_VALUES[kind.index()]);
    let mut on_square = SEE_VALUES[mover.index()];
    if let Some(promoted) = mv.promotion() {
        gain += SEE_VALUES[promoted.index()] - SEE_VALUES[0];
        on_square = SEE_VALUES[promoted.index()];
    }
    Some((gain, on_square))
}

/// The exchange after `mv`'s first capture (`first_exchange`), each side taking with its
/// least valuable attacker and free to stop.
fn exchange(position: &Position, mv: Move, first: i32, mut on_square: i32) -> i32 {
    let (from, to) = (mv.from(), mv.to());
    let mut gain = [0i32; 32];
    gain[0] = first;
    let mut occupied = position.occupied() ^ Bitboard::from(from);
    if mv.kind() == MoveKind::EnPassant {
        let victim = Square::new(to.index() ^ 8).expect("en-passant victims are on the board");
        occupied ^= Bitboard::from(victim);
    }
    let mut side = !position.side_to_move();
    let mut depth = 0;
    let queens = position.piece_type(PieceType::Queen);
    let rook_like = position.piece_type(PieceType::Rook) | queens;
    let bishop_like = position.piece_type(PieceType::Bishop) | queens;
    // Computed once and then kept up to date: a piece that takes leaves the set, and the
    // sliders behind it on its line join (x-rays). The same set as `attackers` recomputed
    // for each capture (occupancy only shrinks, so no slider already in it is blocked),
    // at a fraction of the lookups: SEE was an eighth of datagen's time.
    let mut all = attackers(position, to, occupied);
    loop {
        let candidates = all & position.color(side);
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
        // What stood behind the piece that took, on its line to the square: a diagonal
        // for a pawn or bishop, a rank or file for a rook, either for a queen or king.
        if matches!(
            kind,
            PieceType::Pawn | PieceType::Bishop | PieceType::Queen | PieceType::King
        ) {
            all |= bishop_attacks(to, occupied) & bishop_like;
        }
        if matches!(kind, PieceType::Rook | PieceType::Queen | PieceType::King) {
            all |= rook_attacks(to, occupied) & rook_like;
        }
        all &= occupied;
        side = !side;
    }
    while depth > 0 {
        gain[depth - 1] = -(-gain[depth - 1]).max(gain[depth]);
        depth -= 1;
    }
    gain[0]
}

/// `exchange(position, mv, first, on_square) >= threshold`, for `see_ge` once its two
/// checks left the answer open (`first >= threshold > first - on_square`). Stockfish's
/// swap loop: `swap` is what the side to capture next must win back for the answer to
/// turn its way, and the loop stops as soon as a capture cannot turn it, where
/// `exchange` plays out every capture and then folds the gains back (SEE was a ninth of
/// datagen's time). The same captures, x-rays and king rule as `exchange`.
fn exchange_ge(position: &Position, mv: Move, first: i32, on_square: i32, threshold: i32) -> bool {
    let (from, to) = (mv.from(), mv.to());
    let mut occupied = position.occupied() ^ Bitboard::from(from);
    if mv.kind() == MoveKind::EnPassant {
        let victim = Square::new(to.index() ^ 8).expect("en-passant victims are on the board");
        occupied ^= Bitboard::from(victim);
    }
    let queens = position.piece_type(PieceType::Queen);
    let rook_like = position.piece_type(PieceType::Rook) | queens;
    let bishop_like = position.piece_type(PieceType::Bishop) | queens;
    let mut all = attackers(position, to, occupied);
    let mut side = !position.side_to_move();
    // Whether the exchange so far (the side that moved last free to stop) reaches the
    // threshold, and the margin by which the next capture's piece must be worth more.
    let mut reached = true;
    let mut swap = on_square - (first - threshold);
    loop {
        let candidates = all & position.color(side);
        let Some((kind, square)) = least_valuable(position, candidates) else {
            break;
        };
        if kind == PieceType::King
            && !(attackers(position, to, occupied ^ Bitboard::from(square)) & position.color(!side))
                .is_empty()
        {
            break;
        }
        reached = !reached;
        swap = SEE_VALUES[kind.index()] - swap;
        if swap < reached as i32 {
            break;
        }
        occupied ^= Bitboard::from(square);
        if matches!(
            kind,
            PieceType::Pawn | PieceType::Bishop | PieceType::Queen | PieceType::King
        ) {
            all |= bishop_attacks(to, occupied) & bishop_like;
        }
        if matches!(kind, PieceType::Rook | PieceType::Queen | PieceType::King) {
            all |= rook_attacks(to, occupied) & rook_like;
        }
        all &= occupied;
        side = !side;
    }
    reached
}

fn least_valuable(position: &Position, candidates: Bitboard) -> Option<(PieceType, Square)> {
    PieceType::ALL.into_iter().find_map(|kind| {
        (candidates & position.piece_type(kind))
            .first()
            .map(|square| (kind, square))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::movegen::{Board, MoveList, legal_moves};

    /// SEE as first written: every capture's attackers looked up afresh. The kept version
    /// updates one set instead, and must give the same value for every move.
    fn see_recomputed(position: &Position, mv: Move) -> i32 {
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
            occupied ^= Bitboard::from(Square::new(to.index() ^ 8).expect("on the board"));
        }
        let mut side = !position.side_to_move();
        let mut depth = 0;
        loop {
            let candidates = attackers(position, to, occupied) & position.color(side);
            let Some((kind, square)) = least_valuable(position, candidates) else {
                break;
            };
            if kind == PieceType::King
                && !(attackers(position, to, occupied ^ Bitboard::from(square))
                    & position.color(!side))
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

    /// Every legal move of the tactical suites' positions and of the positions a few
    /// pseudo-random plies on from them: x-rays through pawns, bishops, rooks, queens and
    /// kings, promotions and en passant all occur.
    #[test]
    fn the_updated_attackers_and_the_thresholds_give_the_recomputed_exchange_values() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/epd");
        let mut compared = 0;
        let mut nonzero = 0;
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for file in ["wac-mates.epd", "ecm.epd", "arasan21.epd", "sts.epd"] {
            let text = std::fs::read_to_string(format!("{dir}/{file}")).expect(file);
            for line in text.lines().filter(|l| !l.trim().is_empty()) {
                let fen: Vec<&str> = line.split_whitespace().take(4).collect();
                let fen = format!("{} 0 1", fen.join(" "));
                let Ok(position) = crate::position::fen::parse_fen(&fen) else {
                    continue;
                };
                let mut board = Board::new(position);
                for _ in 0..6 {
                    let mut moves = MoveList::new();
                    legal_moves(&board, &mut moves);
                    if moves.is_empty() {
                        break;
                    }
                    for &mv in moves.iter() {
                        let (fast, slow) = (
                            see(board.position(), mv),
                            see_recomputed(board.position(), mv),
                        );
                        assert_eq!(fast, slow, "{fen} after some plies: {mv:?}");
                        // The search's thresholds, the values around them, and the
                        // exchange's own value and its neighbours (where a swap loop that
                        // stops early would get a tie wrong).
                        for threshold in [
                            -1000,
                            -480,
                            -300,
                            -120,
                            -100,
                            -60,
                            -10,
                            -1,
                            0,
                            1,
                            100,
                            220,
                            900,
                            slow - 1,
                            slow,
                            slow + 1,
                        ] {
                            assert_eq!(
                                see_ge(board.position(), mv, threshold),
                                slow >= threshold,
                                "{fen} after some plies: {mv:?} against {threshold}"
                            );
                        }
                        compared += 1;
                        nonzero += (fast != 0) as usize;
                    }
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    board = board.play(
                        moves
                            .iter()
                            .copied()
                            .nth(state as usize % moves.len())
                            .expect("a move"),
                    );
                }
            }
        }
        assert!(
            compared > 100_000 && nonzero > 10_000,
            "{compared} moves, {nonzero} not 0"
        );
    }
}
