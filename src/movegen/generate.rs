//! Legal move generation: check and pin masks instead of playing moves to test them, pawns
//! shifted set-wise, and the captures/quiet split the search's quiescence needs.
//!
//! One generic routine feeds a sink: the move list pushes moves, the counter only
//! popcounts the target sets (bulk counting for perft's last ply).

use pawnstorm_kernels::attacks::{
    between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, line, pawn_attacks,
    rook_attacks, rook_rays,
};
use pawnstorm_kernels::{Bitboard, Color, File, Square, pawns};

use super::state::attackers_to_with;
use super::{Board, Move, MoveList};
use crate::position::board::{CastlingSide, PieceType, Position, back_rank};

/// Every legal move of `board`, appended to `list`.
#[inline]
pub fn legal_moves(board: &Board, list: &mut MoveList) {
    generate::<_, true, true>(board, list);
}

/// The legal captures (en passant included) and promotions (quiet ones included) of
/// `board`, appended to `list`: the moves quiescence search looks at.
pub fn captures(board: &Board, list: &mut MoveList) {
    generate::<_, true, false>(board, list);
}

/// The legal moves that are neither captures nor promotions (castling included).
pub fn quiets(board: &Board, list: &mut MoveList) {
    generate::<_, false, true>(board, list);
}

/// The number of legal moves, without listing them.
#[inline]
pub fn count_legal_moves(board: &Board) -> u64 {
    let mut counter = Counter(0);
    generate::<_, true, true>(board, &mut counter);
    counter.0
}

/// Whether the side to move has no legal move (checkmate or stalemate).
pub fn has_no_legal_moves(board: &Board) -> bool {
    count_legal_moves(board) == 0
}

/// Where generated moves go.
trait Sink {
    /// Moves of the piece on `from` to each of `targets`.
    fn piece_moves(&mut self, from: Square, targets: Bitboard);
    /// Pawn moves to each of `targets`, from the square `from_offset` away (to - from).
    fn pawn_moves(&mut self, targets: Bitboard, from_offset: i8, flag: u16);
    /// Promotions (one per piece) to each of `targets`, from `from_offset` away.
    fn promotions(&mut self, targets: Bitboard, from_offset: i8);
    /// One move.
    fn single(&mut self, mv: Move);
}

impl Sink for MoveList {
    #[inline(always)]
    fn piece_moves(&mut self, from: Square, targets: Bitboard) {
        let mut bits = targets.0;
        while bits != 0 {
            let to = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            self.push(Move::from_parts(from.index(), to, 0));
        }
    }
    #[inline(always)]
    fn pawn_moves(&mut self, targets: Bitboard, from_offset: i8, flag: u16) {
        let mut bits = targets.0;
        while bits != 0 {
            let to = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            self.push(Move::from_parts(
                to.wrapping_sub(from_offset as u8),
                to,
                flag,
            ));
        }
    }
    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, from_offset: i8) {
        let mut bits = targets.0;
        while bits != 0 {
            let to = bits.trailing_zeros() as u8;
            bits &= bits - 1;
            let from = to.wrapping_sub(from_offset as u8);
            // Queen first: the move the search should try first.
            for piece in [
                PieceType::Queen,
                PieceType::Knight,
                PieceType::Rook,
                PieceType::Bishop,
            ] {
                self.push(Move::from_parts(from, to, Move::promotion_flag(piece)));
            }
        }
    }
    #[inline(always)]
    fn single(&mut self, mv: Move) {
        self.push(mv);
    }
}

struct Counter(u64);

impl Sink for Counter {
    #[inline(always)]
    fn piece_moves(&mut self, _: Square, targets: Bitboard) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn pawn_moves(&mut self, targets: Bitboard, _: i8, _: u16) {
        self.0 += targets.count() as u64;
    }
    #[inline(always)]
    fn promotions(&mut self, targets: Bitboard, _: i8) {
        self.0 += 4 * targets.count() as u64;
    }
    #[inline(always)]
    fn single(&mut self, _: Move) {
        self.0 += 1;
    }
}

#[inline(always)]
fn square(index: u32) -> Square {
    Square::new(index as u8).expect("a bit index of a u64 is below 64")
}

/// Pieces of `us` that stand alone between their king and an enemy slider aimed at it.
#[inline(always)]
fn pinned_pieces(position: &Position, us: Color, king: Square, occupied: Bitboard) -> Bitboard {
    let them = !us;
    let queens = position.pieces(them, PieceType::Queen);
    let snipers = (rook_rays(king) & (position.pieces(them, PieceType::Rook) | queens))
        | (bishop_rays(king) & (position.pieces(them, PieceType::Bishop) | queens));
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers.squares() {
        let blockers = between(king, sniper) & occupied;
        if blockers.count() == 1 {
            pinned |= blockers;
        }
    }
    pinned & position.color(us)
}

/// Whether `square` is attacked by `them` if the board held `occupied`.
#[inline(always)]
fn attacked(position: &Position, them: Color, square: Square, occupied: Bitboard) -> bool {
    !(attackers_to_with(position, square, occupied) & position.color(them)).is_empty()
}

#[inline(always)]
fn generate<S: Sink, const NOISY: bool, const QUIET: bool>(board: &Board, sink: &mut S) {
    let position = board.position();
    let us = position.side_to_move();
    let them = !us;
    let ours = position.color(us);
    let theirs = position.color(them);
    let occupied = ours | theirs;
    let empty = !occupied;
    let king = position.king(us);
    let king_bb = Bitboard::from(king);

    // What a move may land on in this generation: enemy pieces, empty squares, or both.
    let kind_mask = match (NOISY, QUIET) {
        (true, true) => !ours,
        (true, false) => theirs,
        _ => empty,
    };

    let without_king = occupied ^ king_bb;
    let mut king_targets = king_attacks(king) & kind_mask;
    while !king_targets.is_empty() {
        let to = square(king_targets.0.trailing_zeros());
        king_targets.0 &= king_targets.0 - 1;
        // The king's own square is left out so it cannot hide behind itself on a line.
        if !attacked(position, them, to, without_king) {
            sink.piece_moves(king, Bitboard::from(to));
        }
    }

    let checkers = board.checkers();
    if checkers.count() > 1 {
        return;
    }
    // In check, other pieces must capture the checker or block its line.
    let check_mask = match checkers.first() {
        Some(checker) => between(king, checker) | checkers,
        None => Bitboard::FULL,
    };
    let pinned = pinned_pieces(position, us, king, occupied);
    let targets = kind_mask & check_mask;

    let knights = position.pieces(us, PieceType::Knight) & !pinned;
    for from in knights.squares() {
        sink.piece_moves(from, knight_attacks(from) & targets);
    }
    let queens = position.pieces(us, PieceType::Queen);
    for from in (position.pieces(us, PieceType::Bishop) | queens).squares() {
        let mut moves = bishop_attacks(from, occupied) & targets;
        if pinned.contains(from) {
            moves &= line(king, from);
        }
        sink.piece_moves(from, moves);
    }
    for from in (position.pieces(us, PieceType::Rook) | queens).squares() {
        let mut moves = rook_attacks(from, occupied) & targets;
        if pinned.contains(from) {
            moves &= line(king, from);
        }
        sink.piece_moves(from, moves);
    }

    pawn_moves::<S, NOISY, QUIET>(position, us, king, pinned, check_mask, sink);

    if QUIET && checkers.is_empty() {
        castling_moves(position, us, king, occupied, sink);
    }
}

#[inline(always)]
fn pawn_moves<S: Sink, const NOISY: bool, const QUIET: bool>(
    position: &Position,
    us: Color,
    king: Square,
    pinned: Bitboard,
    check_mask: Bitboard,
    sink: &mut S,
) {
    let them = !us;
    let theirs = position.color(them);
    let empty = !position.occupied();
    let pawns = position.pieces(us, PieceType::Pawn);
    let (up, promotion_rank) = match us {
        Color::White => (8i8, Bitboard::RANK_8),
        Color::Black => (-8i8, Bitboard::RANK_1),
    };
    // Offsets (to - from) of captures toward the a-file and toward the h-file.
    let (west_offset, east_offset) = (up - 1, up + 1);

    // Pinned pawns move one at a time along their pin line; the rest move set-wise.
    let free = (pawns & !pinned).0;
    let capture_targets = theirs.0 & check_mask.0;
    let pushes = Bitboard(pawns::single_pushes(us, free, empty.0)) & check_mask;
    let doubles = Bitboard(pawns::double_pushes(us, free, empty.0)) & check_mask;
    let west = Bitboard(pawns::captures_west(us, free, capture_targets));
    let east = Bitboard(pawns::captures_east(us, free, capture_targets));
    if NOISY {
        sink.promotions(pushes & promotion_rank, up);
        sink.promotions(west & promotion_rank, west_offset);
        sink.promotions(east & promotion_rank, east_offset);
        sink.pawn_moves(west & !promotion_rank, west_offset, 0);
        sink.pawn_moves(east & !promotion_rank, east_offset, 0);
    }
    if QUIET {
        sink.pawn_moves(pushes & !promotion_rank, up, 0);
        sink.pawn_moves(doubles, 2 * up, Move::DOUBLE_PUSH_FLAG);
    }

    for from in (pawns & pinned).squares() {
        let allowed = line(king, from) & check_mask;
        let from_bb = Bitboard::from(from).0;
        let push = Bitboard(pawns::single_pushes(us, from_bb, empty.0)) & allowed;
        let double = Bitboard(pawns::double_pushes(us, from_bb, empty.0)) & allowed;
        let captures = pawn_attacks(us, from) & theirs & allowed;
        if NOISY {
            for to in ((push | captures) & promotion_rank).squares() {
                sink.promotions(
                    Bitboard::from(to),
                    (to.index() as i8) - (from.index() as i8),
                );
            }
            sink.piece_moves(from, captures & !promotion_rank);
        }
        if QUIET {
            sink.piece_moves(from, push & !promotion_rank);
            sink.pawn_moves(double, 2 * up, Move::DOUBLE_PUSH_FLAG);
        }
    }

    if NOISY && let Some(target) = position.en_passant() {
        en_passant_moves(position, us, king, target, pawns, sink);
    }
}

/// En-passant captures, each tested in full: taking two pawns off one rank can expose the
/// king along it, which no pin mask sees.
#[inline(never)]
fn en_passant_moves<S: Sink>(
    position: &Position,
    us: Color,
    king: Square,
    target: Square,
    pawns: Bitboard,
    sink: &mut S,
) {
    let them = !us;
    let victim = match us {
        Color::White => target.index() - 8,
        Color::Black => target.index() + 8,
    };
    let victim_bb = Bitboard(1 << victim);
    for from in (pawn_attacks(them, target) & pawns).squares() {
        let occupied =
            (position.occupied() ^ Bitboard::from(from) ^ victim_bb) | Bitboard::from(target);
        let attackers = attackers_to_with(position, king, occupied) & position.color(them);
        if (attackers & !victim_bb).is_empty() {
            sink.single(Move::from_parts(
                from.index(),
                target.index(),
                Move::EN_PASSANT_FLAG,
            ));
        }
    }
}

/// Castling with the rook files of the castling rights (so Chess960 works): every square
/// the king and rook cross or land on empty but for themselves, and no square the king
/// stands on, crosses or lands on attacked. The caller has checked the king is not in
/// check.
#[inline(always)]
fn castling_moves<S: Sink>(
    position: &Position,
    us: Color,
    king: Square,
    occupied: Bitboard,
    sink: &mut S,
) {
    let castling = position.castling();
    if castling.is_empty() {
        return;
    }
    let rank = back_rank(us);
    for (side, king_file, rook_file) in [(CastlingSide::King, 6, 5), (CastlingSide::Queen, 2, 3)] {
        let Some(file) = castling.rook_file(us, side) else {
            continue;
        };
        let rook = Square::from_coords(file, rank);
        let king_to = Square::from_coords(File::new(king_file).expect("g or c"), rank);
        let rook_to = Square::from_coords(File::new(rook_file).expect("f or d"), rank);
        let movers = Bitboard::from(king) | Bitboard::from(rook);
        let others = occupied ^ movers;
        let king_path = between(king, king_to) | Bitboard::from(king_to);
        let rook_path = between(rook, rook_to) | Bitboard::from(rook_to);
        if !((king_path | rook_path) & others).is_empty() {
            continue;
        }
        // The rook is lifted off: in Chess960 it may be what shields the king's
        // destination from a rook or queen further along the rank.
        if king_path
            .squares()
            .any(|sq| attacked(position, !us, sq, others))
        {
            continue;
        }
        sink.single(Move::from_parts(
            king.index(),
            rook.index(),
            Move::CASTLE_FLAG,
        ));
    }
}
