//! Movetext tokens and moves read exactly as python-chess reads them (`chess.pgn`'s
//! `MOVETEXT_REGEX` and `Board.parse_san`, python-chess 1.11), so that every game
//! python-chess reads cleanly is replayed move for move the same: long algebraic
//! (`Ng1-f3`, `e2e4`), promotions without `=` (`e8Q`), glyphs glued to a move (`e4!?`),
//! check marks in any number (`Qh5++`) and other text between tokens (`Nf3ch`) all read
//! the way python-chess reads them.
//!
//! Moves are found and played on pawnstorm's own board ([`Board`]): a move token names a
//! piece and a square, and [`candidates`] finds that piece's legal moves to that square
//! alone, as shakmaty's `san_candidates` does (and is held to in the tests), without
//! generating the rest.

use pawnstorm_kernels::attacks::{
    between, bishop_attacks, bishop_rays, king_attacks, knight_attacks, line, pawn_attacks,
    rook_attacks, rook_rays,
};
use pawnstorm_kernels::{Bitboard, Color, Square};

use crate::movegen::{Board, Move, MoveKind, MoveList, legal_moves};
use crate::position::board::{CastlingSide, PieceType, Position};

/// A move token as `MOVETEXT_REGEX`'s first alternative matches it:
/// `[NBKRQ]?[a-h]?[1-8]?[-x]?[a-h][1-8](=?[nbrqkNBRQK])?`, and how its parts split (the
/// regex's first match in its backtracking order, which `SAN_REGEX` repeats on the token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SanToken {
    pub piece: Option<PieceType>,
    /// The from-square's file (0 = a) and rank (0 = 1), where the token gives them.
    pub file: Option<u8>,
    pub rank: Option<u8>,
    pub to: Square,
    pub promotion: Option<PieceType>,
    /// The token's length in bytes.
    pub len: usize,
}

fn piece_letter(b: u8) -> Option<PieceType> {
    Some(match b {
        b'N' => PieceType::Knight,
        b'B' => PieceType::Bishop,
        b'K' => PieceType::King,
        b'R' => PieceType::Rook,
        b'Q' => PieceType::Queen,
        _ => return None,
    })
}

fn promotion_letter(b: u8) -> Option<PieceType> {
    Some(match b.to_ascii_lowercase() {
        b'n' => PieceType::Knight,
        b'b' => PieceType::Bishop,
        b'r' => PieceType::Rook,
        b'q' => PieceType::Queen,
        b'k' => PieceType::King,
        _ => return None,
    })
}

fn file_of(b: u8) -> Option<u8> {
    (b'a'..=b'h').contains(&b).then(|| b - b'a')
}

fn rank_of(b: u8) -> Option<u8> {
    (b'1'..=b'8').contains(&b).then(|| b - b'1')
}

/// The move token starting at `text[0]`, if the move pattern matches there, split as a
/// backtracking regex splits it: each optional part tried taken before left out, in order,
/// the first way that reaches a target square winning, then the promotion suffix taken if
/// present. The ways are few enough to decide from the bytes' kinds directly, in the
/// regex's order (`move_token_backtracking`, in the tests, tries them one by one).
pub(super) fn move_token(text: &[u8]) -> Option<SanToken> {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    let is_separator = |b: u8| matches!(b, b'-' | b'x');
    // A piece letter is never a file, rank or separator, so it is always taken.
    let piece = piece_letter(at(0));
    let i0 = usize::from(piece.is_some());
    let [a, b, c, d, e] = [0, 1, 2, 3, 4].map(|k| at(i0 + k));
    let square = |f: u8, r: u8| Some((file_of(f)?, rank_of(r)?));
    // (from file, from rank, target, bytes up to the target's end)
    let (file, rank, (to_file, to_rank), end) = match (file_of(a), rank_of(a)) {
        (Some(file), None) => match rank_of(b) {
            Some(rank) => {
                if is_separator(c)
                    && let Some(to) = square(d, e)
                {
                    (Some(file), Some(rank), to, 5)
                } else if let Some(to) = square(c, d) {
                    (Some(file), Some(rank), to, 4)
                } else {
                    (None, None, (file, rank), 2)
                }
            }
            None if is_separator(b) => (Some(file), None, square(c, d)?, 4),
            None => (Some(file), None, square(b, c)?, 3),
        },
        (None, Some(rank)) => {
            if is_separator(b) {
                (None, Some(rank), square(c, d)?, 4)
            } else {
                (None, Some(rank), square(b, c)?, 3)
            }
        }
        _ if is_separator(a) => (None, None, square(b, c)?, 3),
        _ => return None,
    };
    let (promotion, len) = promotion_suffix(text, i0 + end);
    Some(SanToken {
        piece,
        file,
        rank,
        to: Square::new(to_rank * 8 + to_file).expect("a file and a rank"),
        promotion,
        len,
    })
}

/// The promotion after a move's target square ending at `end` (`=Q`, or `Q` alone), and
/// where the token ends.
fn promotion_suffix(text: &[u8], end: usize) -> (Option<PieceType>, usize) {
    let at = |i: usize| text.get(i).copied().unwrap_or(0);
    match (at(end), promotion_letter(at(end + 1))) {
        (b'=', Some(piece)) => (Some(piece), end + 2),
        (letter, _) => match promotion_letter(letter) {
            Some(piece) => (Some(piece), end + 1),
            None => (None, end),
        },
    }
}

/// Why a move token is not a legal move of the position (python-chess's error classes).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum SanError {
    Illegal,
    Ambiguous,
    MissingPromotion,
}

impl std::fmt::Display for SanError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SanError::Illegal => "illegal move",
            SanError::Ambiguous => "ambiguous move",
            SanError::MissingPromotion => "promotion without its piece",
        })
    }
}

/// The legal move a move token names, as `Board.parse_san` finds it.
/// `chess960` is the game's mode: castling as the king's two-square move only without it.
pub(super) fn to_move(board: &Board, token: &SanToken, chess960: bool) -> Result<Move, SanError> {
    let position = board.position();
    let to = token.to;
    let file_of = |square: Square| square.file().index();
    let rank_of = |square: Square| square.rank().index();
    if let Some(role) = token.piece {
        let mut found = None;
        // Castling is never a king move here: python-chess aims it at the king's own rook.
        for &mv in candidates(board, role, to).as_slice() {
            let from = mv.from();
            if token.file.is_some_and(|f| f != file_of(from))
                || token.rank.is_some_and(|r| r != rank_of(from))
                || mv.promotion() != token.promotion
            {
                continue;
            }
            if found.is_some() {
                return Err(SanError::Ambiguous);
            }
            found = Some(mv);
        }
        return found.ok_or(SanError::Illegal);
    }
    if let (Some(file), Some(rank)) = (token.file, token.rank) {
        let from = Square::new(rank * 8 + file).expect("a file and a rank");
        return coordinate_move(board, from, token, chess960);
    }
    if position.color(position.side_to_move()).contains(to) {
        return Err(SanError::Illegal);
    }
    // A pawn move; without a file, the pawn's own file only (no captures).
    let file = token.file.unwrap_or(file_of(to));
    let mut found = None;
    for &mv in candidates(board, PieceType::Pawn, to).as_slice() {
        if file_of(mv.from()) != file || mv.promotion() != token.promotion {
            continue;
        }
        if found.is_some() {
            return Err(SanError::Ambiguous);
        }
        found = Some(mv);
    }
    found.ok_or(SanError::Illegal)
}

/// The legal moves to one square: at most ten pieces of a kind reach it, or three pawns
/// with four promotions each.
pub(super) struct Candidates {
    moves: [Move; 16],
    len: usize,
}

impl Candidates {
    fn push(&mut self, mv: Move) {
        // Sixteen is more than any legal position gives; past it the list only stops.
        if let Some(slot) = self.moves.get_mut(self.len) {
            *slot = mv;
            self.len += 1;
        }
    }

    pub(super) fn as_slice(&self) -> &[Move] {
        &self.moves[..self.len]
    }
}

/// The legal moves of a `role` piece of the side to move to `to`, castling never among
/// them: shakmaty's `san_candidates`. Only that piece's moves to that square are looked
/// at: the pieces that reach it, then whether a pin or a check forbids each.
pub(super) fn candidates(board: &Board, role: PieceType, to: Square) -> Candidates {
    let mut list = Candidates {
        moves: [Move::NULL; 16],
        len: 0,
    };
    let position = board.position();
    let stm = position.side_to_move();
    let us = position.color(stm);
    let occupied = position.occupied();
    let king = position.king(stm);
    let to_bb = Bitboard::from_square(to);
    if role == PieceType::King {
        // The king steps onto a square no enemy piece attacks once the king has left.
        if king_attacks(king).contains(to)
            && !us.contains(to)
            && (attackers(position, !stm, to, occupied ^ Bitboard::from_square(king))).is_empty()
        {
            list.push(Move::new(king, to, MoveKind::Normal));
        }
        return list;
    }
    let checkers = board.checkers();
    if checkers.count() > 1 {
        return list;
    }
    // In check, a move must take the checker or stand between it and the king.
    let answers_check = match checkers.first() {
        Some(checker) => (between(king, checker) | Bitboard::from_square(checker)).contains(to),
        None => true,
    };
    let pinned = pinned(position, stm, king);
    let allowed = |from: Square| !pinned.contains(from) || line(king, from).contains(to);
    if role != PieceType::Pawn {
        if !answers_check || us.contains(to) {
            return list;
        }
        // A slider is found by its empty-board rays and the squares between it and the
        // target (two small tables) rather than the attack tables, whose rook part is
        // larger than many cores' L2 cache: a side has one or two pieces of a kind.
        let (reach, slides) = match role {
            PieceType::Knight => (knight_attacks(to), false),
            PieceType::Bishop => (bishop_rays(to), true),
            PieceType::Rook => (rook_rays(to), true),
            _ => (rook_rays(to) | bishop_rays(to), true),
        };
        for from in (reach & position.pieces(stm, role)).squares() {
            if slides && !(between(from, to) & occupied).is_empty() {
                continue;
            }
            if allowed(from) {
                list.push(Move::new(from, to, MoveKind::Normal));
            }
        }
        return list;
    }
    let pawns = position.pieces(stm, PieceType::Pawn);
    let promotes = to.rank().index() == if stm == Color::White { 7 } else { 0 };
    let pawn_move = |list: &mut Candidates, from: Square, kind: MoveKind| {
        if !allowed(from) {
            return;
        }
        if promotes {
            for piece in [
                PieceType::Queen,
                PieceType::Rook,
                PieceType::Bishop,
                PieceType::Knight,
            ] {
                list.push(Move::new(from, to, MoveKind::Promotion(piece)));
            }
        } else {
            list.push(Move::new(from, to, kind));
        }
    };
    if answers_check && !us.contains(to) {
        if !(occupied & to_bb).is_empty() {
            for from in (pawn_attacks(!stm, to) & pawns).squares() {
                pawn_move(&mut list, from, MoveKind::Normal);
            }
        } else {
            let back = if stm == Color::White { -1 } else { 1 };
            if let Some(one) = to.offset_ranks(back) {
                if pawns.contains(one) {
                    pawn_move(&mut list, one, MoveKind::Normal);
                } else if !occupied.contains(one)
                    && to.rank().index() == if stm == Color::White { 3 } else { 4 }
                    && let Some(two) = one.offset_ranks(back)
                    && pawns.contains(two)
                {
                    pawn_move(&mut list, two, MoveKind::DoublePush);
                }
            }
        }
    }
    if position.en_passant() == Some(to) {
        for mv in en_passant_captures(board) {
            list.push(mv);
        }
    }
    list
}

/// The legal en-passant captures of the board. Each is checked by playing it: it can
/// uncover the king along the rank of the two pawns, and it answers a check by the pawn
/// it takes.
fn en_passant_captures(board: &Board) -> impl Iterator<Item = Move> + '_ {
    let position = board.position();
    let stm = position.side_to_move();
    let target = position.en_passant();
    let pawns = position.pieces(stm, PieceType::Pawn);
    target
        .into_iter()
        .flat_map(move |to| {
            (pawn_attacks(!stm, to) & pawns)
                .squares()
                .map(move |from| Move::new(from, to, MoveKind::EnPassant))
        })
        .filter(|&mv| !board.play(mv).opponent_in_check())
}

/// Whether an en-passant capture is legal on the board (python-chess writes the square in
/// a FEN only then).
pub(super) fn legal_en_passant(board: &Board) -> bool {
    en_passant_captures(board).next().is_some()
}

/// The pieces of `color` that would attack `square` on a board occupied by `occupied`.
fn attackers(position: &Position, color: Color, square: Square, occupied: Bitboard) -> Bitboard {
    let piece = |kind| position.pieces(color, kind);
    let queens = piece(PieceType::Queen);
    (knight_attacks(square) & piece(PieceType::Knight))
        | (king_attacks(square) & piece(PieceType::King))
        | (pawn_attacks(!color, square) & piece(PieceType::Pawn))
        | (rook_attacks(square, occupied) & (piece(PieceType::Rook) | queens))
        | (bishop_attacks(square, occupied) & (piece(PieceType::Bishop) | queens))
}

/// The pieces of `stm` that alone stand between their king and an enemy slider on its line.
fn pinned(position: &Position, stm: Color, king: Square) -> Bitboard {
    let them = !stm;
    let queens = position.pieces(them, PieceType::Queen);
    let snipers = (rook_rays(king) & (position.pieces(them, PieceType::Rook) | queens))
        | (bishop_rays(king) & (position.pieces(them, PieceType::Bishop) | queens));
    let mut pinned = Bitboard::EMPTY;
    for sniper in snipers.squares() {
        let blockers = between(king, sniper) & position.occupied();
        if blockers.count() == 1 {
            pinned |= blockers & position.color(stm);
        }
    }
    pinned
}

/// Every legal move of the board.
fn all_moves(board: &Board) -> MoveList {
    let mut list = MoveList::new();
    legal_moves(board, &mut list);
    list
}

/// `e2e4`, `g1f3`, `e1g1`: python-chess's `find_move`, which also takes castling as the
/// king taking its own rook, and in standard chess as the king's two-square move.
fn coordinate_move(
    board: &Board,
    from: Square,
    token: &SanToken,
    chess960: bool,
) -> Result<Move, SanError> {
    let position = board.position();
    let stm = position.side_to_move();
    let to = token.to;
    let mut promotion = token.promotion;
    let is_pawn = position.pieces(stm, PieceType::Pawn).contains(from);
    if promotion.is_none() && is_pawn && matches!(to.rank().index(), 0 | 7) {
        promotion = Some(PieceType::Queen);
    }
    let rooks = position.pieces(Color::White, PieceType::Rook)
        | position.pieces(Color::Black, PieceType::Rook);
    let found = all_moves(board).iter().copied().find(|mv| {
        if mv.is_castle() {
            let king = mv.from();
            king == from
                && promotion.is_none()
                && (mv.to() == to
                    || (!chess960
                        && matches!(king.index(), 4 | 60)
                        && mv.castle_king_destination() == to
                        && !rooks.contains(to)))
        } else {
            mv.from() == from && mv.to() == to && mv.promotion() == promotion
        }
    });
    match found {
        None => Err(SanError::Illegal),
        Some(mv) if mv.promotion() != token.promotion => Err(SanError::MissingPromotion),
        Some(mv) => Ok(mv),
    }
}

/// `O-O` or `O-O-O`: the castling move of that side, if legal.
pub(super) fn castle(board: &Board, side: CastlingSide) -> Result<Move, SanError> {
    all_moves(board)
        .iter()
        .copied()
        .find(|mv| mv.is_castle() && castling_side(*mv) == side)
        .ok_or(SanError::Illegal)
}

/// The side a castling move castles to: where its rook stands from the king.
fn castling_side(mv: Move) -> CastlingSide {
    if mv.to().file() > mv.from().file() {
        CastlingSide::King
    } else {
        CastlingSide::Queen
    }
}

/// Whether castling rights say Chess960 (a king or rook off its standard square), as
/// python-chess switches its board to Chess960 for them.
pub(super) fn is_chess960(position: &shakmaty::Chess) -> bool {
    use shakmaty::Position as _;
    let castles = position.castles();
    let rights = castles.castling_rights();
    if rights.is_empty() {
        return false;
    }
    let corners = shakmaty::Bitboard::CORNERS;
    let kings = position.board().kings();
    (rights & !corners).any()
        || ((rights & shakmaty::Bitboard::from_rank(shakmaty::Rank::First)).any()
            && !kings.contains(shakmaty::Square::E1))
        || ((rights & shakmaty::Bitboard::from_rank(shakmaty::Rank::Eighth)).any()
            && !kings.contains(shakmaty::Square::E8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;
    use shakmaty::{CastlingMode, Chess, Position as _};

    /// [`move_token`] as the regex runs: each optional
    /// part is tried taken before left out, in order, as a backtracking regex does; the first
    /// way that reaches a target square wins, then the promotion suffix is taken if present.
    fn move_token_backtracking(text: &[u8]) -> Option<SanToken> {
        let at = |i: usize| text.get(i).copied().unwrap_or(0);
        let piece = piece_letter(at(0));
        for take_piece in [true, false] {
            if take_piece && piece.is_none() {
                continue;
            }
            let i0 = usize::from(take_piece);
            let file = file_of(at(i0));
            for take_file in [true, false] {
                if take_file && file.is_none() {
                    continue;
                }
                let i1 = i0 + usize::from(take_file);
                let rank = rank_of(at(i1));
                for take_rank in [true, false] {
                    if take_rank && rank.is_none() {
                        continue;
                    }
                    let i2 = i1 + usize::from(take_rank);
                    let separator = matches!(at(i2), b'-' | b'x');
                    for take_separator in [true, false] {
                        if take_separator && !separator {
                            continue;
                        }
                        let i3 = i2 + usize::from(take_separator);
                        let (Some(to_file), Some(to_rank)) = (file_of(at(i3)), rank_of(at(i3 + 1)))
                        else {
                            continue;
                        };
                        let (promotion, len) = promotion_suffix(text, i3 + 2);
                        return Some(SanToken {
                            piece: piece.filter(|_| take_piece),
                            file: file.filter(|_| take_file),
                            rank: rank.filter(|_| take_rank),
                            to: Square::new(to_rank * 8 + to_file).expect("a file and a rank"),
                            promotion,
                            len,
                        });
                    }
                }
            }
        }
        None
    }

    #[test]
    fn tokens_split_as_the_backtracking_regex_splits_them() {
        let alphabet = b"NBKRQabh1278-x=nqkQ +.";
        let mut state = 7u64;
        let mut matched = 0;
        for _ in 0..300_000 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (state >> 61) as usize;
            let text: Vec<u8> = (0..len)
                .map(|i| alphabet[((state >> (5 * i + 3)) % alphabet.len() as u64) as usize])
                .collect();
            let want = move_token_backtracking(&text);
            matched += usize::from(want.is_some());
            assert_eq!(
                move_token(&text),
                want,
                "{:?}",
                String::from_utf8_lossy(&text)
            );
        }
        assert!(matched > 1000, "only {matched} tokens matched");
        // And every text of up to six bytes over the letters that play several parts
        // (`b` a file and a promotion, `B` a piece and a promotion).
        let alphabet = b"NBbx1-=q.";
        let mut text = Vec::new();
        for len in 1..=6u32 {
            for mut code in 0..alphabet.len().pow(len) {
                text.clear();
                for _ in 0..len {
                    text.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                assert_eq!(
                    move_token(&text),
                    move_token_backtracking(&text),
                    "{:?}",
                    String::from_utf8_lossy(&text)
                );
            }
        }
    }

    fn token(text: &str) -> Option<(String, usize)> {
        move_token(text.as_bytes()).map(|t| {
            let parts = format!(
                "{:?} {:?} {:?} {} {:?}",
                t.piece,
                t.file.map(|f| char::from(b'a' + f)),
                t.rank.map(|r| char::from(b'1' + r)),
                t.to,
                t.promotion
            );
            (parts, t.len)
        })
    }

    #[test]
    fn tokens_split_as_the_regex_does() {
        assert_eq!(
            token("Nf3"),
            Some(("Some(Knight) None None f3 None".into(), 3))
        );
        assert_eq!(token("e4!?"), Some(("None None None e4 None".into(), 2)));
        assert_eq!(
            token("Ng1-f3"),
            Some(("Some(Knight) Some('g') Some('1') f3 None".into(), 6))
        );
        assert_eq!(
            token("exd5"),
            Some(("None Some('e') None d5 None".into(), 4))
        );
        assert_eq!(
            token("R1a3"),
            Some(("Some(Rook) None Some('1') a3 None".into(), 4))
        );
        assert_eq!(
            token("e8Q"),
            Some(("None None None e8 Some(Queen)".into(), 3))
        );
        assert_eq!(
            token("e8=n"),
            Some(("None None None e8 Some(Knight)".into(), 4))
        );
        assert_eq!(
            token("Qh5++"),
            Some(("Some(Queen) None None h5 None".into(), 3))
        );
        assert_eq!(token("1-0"), None);
        assert_eq!(token("0-1"), None);
        assert_eq!(token("O-O"), None);
        assert_eq!(token("12."), None);
    }

    fn chess(fen: &str) -> Chess {
        Fen::from_ascii(fen.as_bytes())
            .unwrap()
            .into_position(CastlingMode::Chess960)
            .unwrap()
    }

    fn play(fen: &str, text: &str) -> Result<String, SanError> {
        let position = chess(fen);
        let board = Board::new(crate::import::pgn::from_shakmaty(&position).unwrap());
        let t = move_token(text.as_bytes()).unwrap();
        to_move(&board, &t, is_chess960(&position)).map(|m| m.uci(true).to_string())
    }

    const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    #[test]
    fn moves_read_as_python_chess_reads_them() {
        assert_eq!(play(START, "e4").unwrap(), "e2e4");
        assert_eq!(play(START, "Ng1-f3").unwrap(), "g1f3");
        assert_eq!(play(START, "g1f3").unwrap(), "g1f3");
        assert_eq!(play(START, "e2-e4").unwrap(), "e2e4");
        // python-chess reads a pawn push written as a capture.
        assert_eq!(play(START, "xe4").unwrap(), "e2e4");
        assert_eq!(play(START, "exd3"), Err(SanError::Illegal));
        let promote = "8/4P3/8/8/8/8/k7/7K w - - 0 1";
        assert_eq!(play(promote, "e8Q").unwrap(), "e7e8q");
        assert_eq!(play(promote, "e8"), Err(SanError::Illegal));
        assert_eq!(play(promote, "e7e8"), Err(SanError::MissingPromotion));
        assert_eq!(play(promote, "e7e8r").unwrap(), "e7e8r");
        let castle = "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1";
        assert_eq!(play(castle, "e1g1").unwrap(), "e1h1");
        assert_eq!(play(castle, "e1h1").unwrap(), "e1h1");
        // The king's own rook is never a king move's target.
        assert_eq!(play(castle, "Kg1"), Err(SanError::Illegal));
        let knights = "4k3/8/8/8/8/8/8/1N2KN2 w - - 0 1";
        assert_eq!(play(knights, "Nd2"), Err(SanError::Ambiguous));
        assert_eq!(play(knights, "Nbd2").unwrap(), "b1d2");
    }

    /// The move as shakmaty writes it in UCI, for a pawnstorm move.
    fn uci(mv: Move) -> String {
        mv.uci(true).to_string()
    }

    /// Every position of the fixture games (and positions made to have pins, checks and
    /// en passant): for every piece kind and every square, [`candidates`] gives the moves
    /// shakmaty's `san_candidates` gives, and [`legal_en_passant`] agrees with shakmaty's
    /// legal en-passant square.
    #[test]
    fn candidates_are_shakmatys_san_candidates() {
        let mut fens = vec![
            // Pins along files, ranks and diagonals; a checker a pawn can take en passant.
            "4k3/8/8/2KPp2r/8/8/8/8 w - e6 0 2".to_string(),
            "4k3/8/8/r2Pp1K1/8/8/8/8 w - e6 0 2".to_string(),
            "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1".to_string(),
            "8/8/3k4/4pP2/3K4/8/8/8 w - e6 0 2".to_string(),
            "4k3/4r3/8/8/4N3/2b5/4K3/8 w - - 0 1".to_string(),
            "rnb1kbnr/pppp1ppp/8/4p3/5PPq/8/PPPPP2P/RNBQKBNR w KQkq - 1 3".to_string(),
            "4k3/1P6/8/8/8/8/6p1/4K2R w K - 0 1".to_string(),
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1".to_string(),
            "3r4/8/8/1b1q4/2NBR3/3K4/8/7k w - - 0 1".to_string(),
        ];
        let text = ["famous-games.pgn", "lichess-2025-05-sample.pgn"]
            .map(|name| {
                std::fs::read_to_string(format!(
                    "{}/fixtures/pgn/{name}",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .unwrap()
            })
            .join("\n");
        // Replays the games' moves with shakmaty alone, for the positions.
        let mut reader = text.as_bytes();
        let mut position = Chess::default();
        for line in std::io::BufRead::lines(&mut reader) {
            let line = line.unwrap();
            if line.starts_with('[') {
                position = Chess::default();
                continue;
            }
            for word in line.split_whitespace() {
                let word = word.rsplit('.').next().unwrap_or(word);
                let word = word.trim_end_matches(['+', '#', '!', '?']);
                let Ok(san) = word.parse::<shakmaty::san::San>() else {
                    continue;
                };
                let Ok(mv) = san.to_move(&position) else {
                    continue;
                };
                position.play_unchecked(mv);
                fens.push(
                    shakmaty::fen::Fen::from_position(&position, shakmaty::EnPassantMode::Always)
                        .to_string(),
                );
            }
        }
        assert!(fens.len() > 10_000, "only {} positions", fens.len());
        let roles = [
            (PieceType::Pawn, shakmaty::Role::Pawn),
            (PieceType::Knight, shakmaty::Role::Knight),
            (PieceType::Bishop, shakmaty::Role::Bishop),
            (PieceType::Rook, shakmaty::Role::Rook),
            (PieceType::Queen, shakmaty::Role::Queen),
            (PieceType::King, shakmaty::Role::King),
        ];
        let mut compared = 0;
        for fen in &fens {
            let position = chess(fen);
            let board = Board::new(crate::import::pgn::from_shakmaty(&position).unwrap());
            assert_eq!(
                legal_en_passant(&board),
                position.ep_square(shakmaty::EnPassantMode::Legal).is_some(),
                "{fen}"
            );
            for (ours, theirs) in roles {
                for index in 0..64u8 {
                    let to = Square::new(index).unwrap();
                    let mut want: Vec<String> = position
                        .san_candidates(theirs, shakmaty::Square::new(u32::from(index)))
                        .iter()
                        .map(|m| m.to_uci(CastlingMode::Chess960).to_string())
                        .collect();
                    let mut got: Vec<String> = candidates(&board, ours, to)
                        .as_slice()
                        .iter()
                        .map(|&m| uci(m))
                        .collect();
                    want.sort();
                    got.sort();
                    assert_eq!(got, want, "{fen}: {ours:?} to {to}");
                    compared += want.len();
                }
            }
        }
        assert!(
            compared > 10_000,
            "only {compared} candidate moves compared"
        );
    }
}
