//! Movetext tokens and moves read exactly as python-chess reads them (`chess.pgn`'s
//! `MOVETEXT_REGEX` and `Board.parse_san`, python-chess 1.11), so that every game
//! python-chess reads cleanly is replayed move for move the same: long algebraic
//! (`Ng1-f3`, `e2e4`), promotions without `=` (`e8Q`), glyphs glued to a move (`e4!?`),
//! check marks in any number (`Qh5++`) and other text between tokens (`Nf3ch`) all read
//! the way python-chess reads them.

use shakmaty::{CastlingSide, Chess, File, Move, Position as _, Rank, Role, Square};

/// A move token as `MOVETEXT_REGEX`'s first alternative matches it:
/// `[NBKRQ]?[a-h]?[1-8]?[-x]?[a-h][1-8](=?[nbrqkNBRQK])?`, and how its parts split (the
/// regex's first match in its backtracking order, which `SAN_REGEX` repeats on the token).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SanToken {
    pub piece: Option<Role>,
    pub file: Option<File>,
    pub rank: Option<Rank>,
    pub to: Square,
    pub promotion: Option<Role>,
    /// The token's length in bytes.
    pub len: usize,
}

fn piece_letter(b: u8) -> Option<Role> {
    Some(match b {
        b'N' => Role::Knight,
        b'B' => Role::Bishop,
        b'K' => Role::King,
        b'R' => Role::Rook,
        b'Q' => Role::Queen,
        _ => return None,
    })
}

fn promotion_letter(b: u8) -> Option<Role> {
    Some(match b.to_ascii_lowercase() {
        b'n' => Role::Knight,
        b'b' => Role::Bishop,
        b'r' => Role::Rook,
        b'q' => Role::Queen,
        b'k' => Role::King,
        _ => return None,
    })
}

fn file_of(b: u8) -> Option<File> {
    (b'a'..=b'h')
        .contains(&b)
        .then(|| File::new(u32::from(b - b'a')))
}

fn rank_of(b: u8) -> Option<Rank> {
    (b'1'..=b'8')
        .contains(&b)
        .then(|| Rank::new(u32::from(b - b'1')))
}

/// The move token starting at `text[0]`, if the move pattern matches there. Each optional
/// part is tried taken before left out, in order, as a backtracking regex does; the first
/// way that reaches a target square wins, then the promotion suffix is taken if present.
pub(super) fn move_token(text: &[u8]) -> Option<SanToken> {
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
                    let mut len = i3 + 2;
                    let mut promotion = None;
                    if at(len) == b'=' && promotion_letter(at(len + 1)).is_some() {
                        promotion = promotion_letter(at(len + 1));
                        len += 2;
                    } else if let Some(role) = promotion_letter(at(len)) {
                        promotion = Some(role);
                        len += 1;
                    }
                    return Some(SanToken {
                        piece: piece.filter(|_| take_piece),
                        file: file.filter(|_| take_file),
                        rank: rank.filter(|_| take_rank),
                        to: Square::from_coords(to_file, to_rank),
                        promotion,
                        len,
                    });
                }
            }
        }
    }
    None
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
pub(super) fn to_move(
    position: &Chess,
    token: &SanToken,
    chess960: bool,
) -> Result<Move, SanError> {
    let us = position.us();
    let to = token.to;
    if let Some(role) = token.piece {
        let mut found = None;
        // Castling is never a king move here: python-chess aims it at the king's own rook.
        let candidates = position.san_candidates(role, to);
        for mv in candidates {
            let from = mv.from().expect("a board move");
            if token.file.is_some_and(|f| f != from.file())
                || token.rank.is_some_and(|r| r != from.rank())
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
        return coordinate_move(position, Square::from_coords(file, rank), token, chess960);
    }
    if us.contains(to) {
        return Err(SanError::Illegal);
    }
    // A pawn move; without a file, the pawn's own file only (no captures).
    let file = token.file.unwrap_or(to.file());
    let mut found = None;
    for mv in position.san_candidates(Role::Pawn, to) {
        let from = mv.from().expect("a board move");
        if from.file() != file || mv.promotion() != token.promotion {
            continue;
        }
        if found.is_some() {
            return Err(SanError::Ambiguous);
        }
        found = Some(mv);
    }
    found.ok_or(SanError::Illegal)
}

/// `e2e4`, `g1f3`, `e1g1`: python-chess's `find_move`, which also takes castling as the
/// king taking its own rook, and in standard chess as the king's two-square move.
fn coordinate_move(
    position: &Chess,
    from: Square,
    token: &SanToken,
    chess960: bool,
) -> Result<Move, SanError> {
    let board = position.board();
    let us = position.us();
    let to = token.to;
    let mut promotion = token.promotion;
    let is_pawn = (board.pawns() & us).contains(from);
    if promotion.is_none() && is_pawn && matches!(to.rank(), Rank::First | Rank::Eighth) {
        promotion = Some(Role::Queen);
    }
    let legal = position.legal_moves();
    let found = legal.into_iter().find(|mv| match *mv {
        Move::Castle { king, rook } => {
            king == from
                && promotion.is_none()
                && (rook == to
                    || (!chess960
                        && (king == Square::E1 || king == Square::E8)
                        && castle_king_target(mv) == to
                        && !board.rooks().contains(to)))
        }
        _ => mv.from() == Some(from) && mv.to() == to && mv.promotion() == promotion,
    });
    match found {
        None => Err(SanError::Illegal),
        Some(mv) if mv.promotion() != token.promotion => Err(SanError::MissingPromotion),
        Some(mv) => Ok(mv),
    }
}

/// `O-O` or `O-O-O`: the castling move of that side, if legal.
pub(super) fn castle(position: &Chess, side: CastlingSide) -> Result<Move, SanError> {
    position
        .legal_moves()
        .into_iter()
        .find(|m| m.castling_side() == Some(side))
        .ok_or(SanError::Illegal)
}

/// The square the king ends on when castling.
pub(super) fn castle_king_target(mv: &Move) -> Square {
    match *mv {
        Move::Castle { king, rook } => {
            let file = if rook.file() > king.file() {
                File::G
            } else {
                File::C
            };
            Square::from_coords(file, king.rank())
        }
        _ => mv.to(),
    }
}

/// Whether castling rights say Chess960 (a king or rook off its standard square), as
/// python-chess switches its board to Chess960 for them.
pub(super) fn is_chess960(position: &Chess) -> bool {
    let castles = position.castles();
    let rights = castles.castling_rights();
    if rights.is_empty() {
        return false;
    }
    let corners = shakmaty::Bitboard::CORNERS;
    let kings = position.board().kings();
    (rights & !corners).any()
        || ((rights & shakmaty::Bitboard::from_rank(shakmaty::Rank::First)).any()
            && !kings.contains(Square::E1))
        || ((rights & shakmaty::Bitboard::from_rank(shakmaty::Rank::Eighth)).any()
            && !kings.contains(Square::E8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::fen::Fen;

    fn token(text: &str) -> Option<(String, usize)> {
        move_token(text.as_bytes()).map(|t| {
            let parts = format!(
                "{:?} {:?} {:?} {} {:?}",
                t.piece,
                t.file.map(|f| f.char()),
                t.rank.map(|r| r.char()),
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

    fn play(fen: &str, text: &str) -> Result<String, SanError> {
        let position: Chess = Fen::from_ascii(fen.as_bytes())
            .unwrap()
            .into_position(shakmaty::CastlingMode::Chess960)
            .unwrap();
        let t = move_token(text.as_bytes()).unwrap();
        to_move(&position, &t, is_chess960(&position))
            .map(|m| m.to_uci(shakmaty::CastlingMode::Chess960).to_string())
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
}
