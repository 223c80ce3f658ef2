//! FEN: strict parsing with errors that name the field and the character, and writing.
//!
//! Both the six-field form and the four-field form (no clocks, as EPD writes positions) are
//! read; the clocks then default to `0 1`. Castling rights are read as standard `KQkq`,
//! X-FEN (`K` = the outermost rook on that side) or Shredder-FEN file letters (`HAha`).
//!
//! Writing, and the `Position` methods that go through FEN text (`startpos`, `to_fen`,
//! `Debug`, the `Display` diagram), are in `write`; they live under `fen` rather than in
//! `board`, so that `board` depends on no text format. The tests are in `tests`.

use std::fmt;

use pawnstorm_kernels::{Bitboard, Color, File, Rank, Square};
use thiserror::Error;

use crate::position::board::{
    CastlingRights, CastlingSide, Piece, PieceType, Position, PositionError, PositionParts,
    back_rank,
};

pub const STARTPOS: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

/// The FEN field an error is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FenField {
    Board,
    SideToMove,
    Castling,
    EnPassant,
    HalfmoveClock,
    FullmoveNumber,
    /// Text after the last field.
    Trailing,
}

impl fmt::Display for FenField {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FenField::Board => "board",
            FenField::SideToMove => "side to move",
            FenField::Castling => "castling",
            FenField::EnPassant => "en passant",
            FenField::HalfmoveClock => "halfmove clock",
            FenField::FullmoveNumber => "fullmove number",
            FenField::Trailing => "trailing text",
        })
    }
}

/// What is wrong with a FEN.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FenErrorKind {
    #[error("field is missing")]
    Missing,
    #[error("unexpected character {0:?}")]
    UnexpectedChar(char),
    #[error("rank {rank} has more than 8 squares")]
    RankTooLong { rank: u8 },
    #[error("rank {rank} has {squares} squares, not 8")]
    RankTooShort { rank: u8, squares: u8 },
    #[error("the board has more than 8 ranks")]
    TooManyRanks,
    #[error("the board has {0} ranks, not 8")]
    TooFewRanks(u8),
    #[error("two digits in a row (write the sum)")]
    ConsecutiveDigits,
    #[error("castling right {0:?} given twice")]
    DuplicateCastling(char),
    #[error("not a number, or out of range (at most {max})")]
    BadNumber { max: u32 },
    #[error("the fullmove number starts at 1")]
    ZeroFullmove,
    #[error("{0}")]
    Invalid(PositionError),
}

/// A FEN error: the field, the 1-based character position in the text, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{field} field, character {column}: {kind}")]
pub struct FenError {
    pub field: FenField,
    pub column: usize,
    pub kind: FenErrorKind,
}

/// Splits text into whitespace-separated tokens, remembering byte offsets.
pub(crate) struct Tokens<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Tokens<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        Tokens { text, pos: 0 }
    }

    pub(crate) fn skip_space(&mut self) {
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    /// The next token and its byte offset, or the offset where it would start.
    pub(crate) fn next_token(&mut self) -> Result<(&'a str, usize), usize> {
        self.skip_space();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        while self.pos < bytes.len() && !bytes[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
        if start == self.pos {
            Err(start)
        } else {
            Ok((&self.text[start..self.pos], start))
        }
    }

    pub(crate) fn peek(&mut self) -> Option<&'a str> {
        let saved = self.pos;
        let token = self.next_token().ok().map(|(t, _)| t);
        self.pos = saved;
        token
    }

    /// Everything after the current position, leading space removed, and its offset.
    pub(crate) fn rest(&mut self) -> (&'a str, usize) {
        self.skip_space();
        (&self.text[self.pos..], self.pos)
    }
}

/// The 1-based character column of a byte offset.
pub(crate) fn column(text: &str, byte_offset: usize) -> usize {
    let offset = byte_offset.min(text.len());
    text.get(..offset)
        .map_or(offset, |prefix| prefix.chars().count())
        + 1
}

fn err(text: &str, field: FenField, offset: usize, kind: FenErrorKind) -> FenError {
    FenError {
        field,
        column: column(text, offset),
        kind,
    }
}

/// Parses a FEN with six fields, or four (clocks `0 1`). Nothing may follow.
pub fn parse_fen(text: &str) -> Result<Position, FenError> {
    let mut tokens = Tokens::new(text);
    let position = parse_fields(text, &mut tokens, ClockMode::Optional)?;
    if let Ok((_, offset)) = tokens.next_token() {
        return Err(err(
            text,
            FenField::Trailing,
            offset,
            FenErrorKind::UnexpectedChar(text[offset..].chars().next().unwrap_or(' ')),
        ));
    }
    Ok(position)
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ClockMode {
    /// FEN: the clocks may be left out, but nothing else may follow the fourth field.
    Optional,
    /// EPD: the clocks are read only if the fifth token is a number; operations may follow.
    IfNumeric,
}

/// Parses the position fields from `tokens`, leaving it after the last field read.
pub(crate) fn parse_fields(
    text: &str,
    tokens: &mut Tokens<'_>,
    clocks: ClockMode,
) -> Result<Position, FenError> {
    tokens.skip_space();
    if let Some((position, end)) = parse_fields_fast(text.as_bytes(), tokens.pos, clocks) {
        tokens.pos = end;
        return Ok(position);
    }
    parse_fields_careful(text, tokens, clocks)
}

/// The common case in one pass over the bytes: single spaces, castling `-` or standard
/// `KQkq` letters, clocks of plain digits. Anything else, and any error, is left to
/// [`parse_fields_careful`], which accepts a superset and explains every refusal. Both
/// give the same position for what this accepts.
fn parse_fields_fast(bytes: &[u8], start: usize, clocks: ClockMode) -> Option<(Position, usize)> {
    let rest = bytes.get(start..)?;
    let board_len = rest.iter().position(|&b| b == b' ')?;
    let (pieces, colors) = parse_board(&rest[..board_len])?;
    let mut at = start + board_len + 1;
    let side_to_move = match bytes.get(at..at + 2)? {
        b"w " => Color::White,
        b"b " => Color::Black,
        _ => return None,
    };
    at += 2;
    let mut castling = CastlingRights::NONE;
    if bytes.get(at)? == &b'-' {
        at += 1;
    } else {
        // Standard rights only: king on e1/e8, rook in the corner, letters in KQkq order.
        let kings = pieces[PieceType::King.index()];
        let rooks = pieces[PieceType::Rook.index()];
        let mut order = 0;
        while let Some(&letter) = bytes.get(at).filter(|&&b| b != b' ') {
            let (rank, color, side, rook_file, rank_order) = match letter {
                b'K' => (0, Color::White, CastlingSide::King, 7, 1),
                b'Q' => (0, Color::White, CastlingSide::Queen, 0, 2),
                b'k' => (7, Color::Black, CastlingSide::King, 7, 3),
                b'q' => (7, Color::Black, CastlingSide::Queen, 0, 4),
                _ => return None,
            };
            let ours = colors[color.index()];
            let king = 1u64 << (rank * 8 + 4);
            let rook = 1u64 << (rank * 8 + rook_file);
            if rank_order <= order || (kings & ours).0 & king == 0 || (rooks & ours).0 & rook == 0 {
                return None;
            }
            order = rank_order;
            castling.set(color, side, File::new(rook_file as u8));
            at += 1;
        }
        if order == 0 {
            return None;
        }
    }
    if bytes.get(at)? != &b' ' {
        return None;
    }
    at += 1;
    let en_passant = match bytes.get(at)? {
        b'-' => {
            at += 1;
            None
        }
        &file @ b'a'..=b'h' => {
            let rank = *bytes.get(at + 1)?;
            if rank != b'3' && rank != b'6' {
                return None;
            }
            at += 2;
            Square::new((rank - b'1') * 8 + (file - b'a'))
        }
        _ => return None,
    };
    let mut halfmove_clock = 0;
    let mut fullmove_number = 1;
    match bytes.get(at) {
        None => {}
        Some(b' ') => {
            let has_clock = bytes.get(at + 1).is_some_and(u8::is_ascii_digit);
            if has_clock {
                let (halfmove, after) = fast_number(bytes, at + 1)?;
                if bytes.get(after) != Some(&b' ') {
                    return None;
                }
                let (fullmove, after) = fast_number(bytes, after + 1)?;
                if fullmove == 0 || bytes.get(after).is_some_and(|&b| b != b' ') {
                    return None;
                }
                halfmove_clock = halfmove;
                fullmove_number = fullmove;
                at = after;
            } else if clocks == ClockMode::Optional
                || bytes.get(at + 1).is_none_or(u8::is_ascii_whitespace)
            {
                return None;
            }
        }
        Some(_) => return None,
    }
    let position = Position::from_parts(PositionParts {
        pieces,
        colors,
        side_to_move,
        castling,
        en_passant,
        halfmove_clock,
        fullmove_number,
    })
    .ok()?;
    Some((position, at))
}

/// A run of 1 to 5 digits that fits in a u16, and the offset after it.
fn fast_number(bytes: &[u8], start: usize) -> Option<(u16, usize)> {
    let mut value: u32 = 0;
    let mut at = start;
    while let Some(&digit) = bytes.get(at).filter(|b| b.is_ascii_digit()) {
        value = value * 10 + (digit - b'0') as u32;
        at += 1;
        if at - start > 5 {
            return None;
        }
    }
    if at == start || value > u16::MAX as u32 {
        return None;
    }
    Some((value as u16, at))
}

fn parse_fields_careful(
    text: &str,
    tokens: &mut Tokens<'_>,
    clocks: ClockMode,
) -> Result<Position, FenError> {
    let missing = |field, offset| err(text, field, offset, FenErrorKind::Missing);
    let (board, board_at) = tokens
        .next_token()
        .map_err(|at| missing(FenField::Board, at))?;
    let (pieces, colors) =
        parse_board(board.as_bytes()).ok_or_else(|| board_error(text, board, board_at))?;

    let (side, side_at) = tokens
        .next_token()
        .map_err(|at| missing(FenField::SideToMove, at))?;
    let side_to_move = match side {
        "w" => Color::White,
        "b" => Color::Black,
        _ => {
            let bad = if side.starts_with(['w', 'b']) {
                side.chars().nth(1)
            } else {
                side.chars().next()
            };
            let offset = if side.starts_with(['w', 'b']) {
                side_at + 1
            } else {
                side_at
            };
            return Err(err(
                text,
                FenField::SideToMove,
                offset,
                FenErrorKind::UnexpectedChar(bad.unwrap_or(' ')),
            ));
        }
    };

    let (castling_text, castling_at) = tokens
        .next_token()
        .map_err(|at| missing(FenField::Castling, at))?;
    let castling = parse_castling(text, castling_text, castling_at, &pieces, &colors)?;

    let (ep_text, ep_at) = tokens
        .next_token()
        .map_err(|at| missing(FenField::EnPassant, at))?;
    let en_passant = if ep_text == "-" {
        None
    } else {
        Some(Square::from_name(ep_text).ok_or_else(|| {
            let bad = ep_text
                .char_indices()
                .find(|&(i, c)| match i {
                    0 => File::from_char(c).is_none(),
                    1 => Rank::from_char(c).is_none(),
                    _ => true,
                })
                .unwrap_or((0, ' '));
            err(
                text,
                FenField::EnPassant,
                ep_at + bad.0,
                FenErrorKind::UnexpectedChar(bad.1),
            )
        })?)
    };

    let read_clocks = match clocks {
        ClockMode::Optional => tokens.peek().is_some(),
        ClockMode::IfNumeric => tokens
            .peek()
            .is_some_and(|t| t.as_bytes()[0].is_ascii_digit()),
    };
    let (halfmove_clock, fullmove_number) = if read_clocks {
        let (half, half_at) = tokens
            .next_token()
            .map_err(|at| missing(FenField::HalfmoveClock, at))?;
        let halfmove = parse_number(text, FenField::HalfmoveClock, half, half_at)?;
        let (full, full_at) = tokens
            .next_token()
            .map_err(|at| missing(FenField::FullmoveNumber, at))?;
        let fullmove = parse_number(text, FenField::FullmoveNumber, full, full_at)?;
        if fullmove == 0 {
            return Err(err(
                text,
                FenField::FullmoveNumber,
                full_at,
                FenErrorKind::ZeroFullmove,
            ));
        }
        (halfmove, fullmove)
    } else {
        (0, 1)
    };

    Position::from_parts(PositionParts {
        pieces,
        colors,
        side_to_move,
        castling,
        en_passant,
        halfmove_clock,
        fullmove_number,
    })
    .map_err(|e| {
        let (field, offset) = match e {
            PositionError::CastlingWithoutKing { .. }
            | PositionError::CastlingWithoutRook { .. } => (FenField::Castling, castling_at),
            PositionError::EnPassant { .. } => (FenField::EnPassant, ep_at),
            _ => (FenField::Board, board_at),
        };
        err(text, field, offset, FenErrorKind::Invalid(e))
    })
}

fn parse_number(text: &str, field: FenField, token: &str, at: usize) -> Result<u16, FenError> {
    if let Some((i, c)) = token.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        return Err(err(text, field, at + i, FenErrorKind::UnexpectedChar(c)));
    }
    token.parse::<u16>().map_err(|_| {
        err(
            text,
            field,
            at,
            FenErrorKind::BadNumber {
                max: u16::MAX as u32,
            },
        )
    })
}

/// Per byte of a board field: 1..=8 a run of empty squares, `SLASH`, `PIECE | color << 3 |
/// kind` for a piece letter, 0 for anything else.
const BOARD_CODES: [u8; 256] = {
    let mut codes = [0u8; 256];
    let mut digit = 1;
    while digit <= 8 {
        codes[(b'0' + digit) as usize] = digit;
        digit += 1;
    }
    codes[b'/' as usize] = SLASH;
    let letters = *b"pnbrqk";
    let mut kind = 0;
    while kind < 6 {
        codes[letters[kind] as usize] = PIECE | 8 | kind as u8;
        codes[letters[kind].to_ascii_uppercase() as usize] = PIECE | kind as u8;
        kind += 1;
    }
    codes
};
const SLASH: u8 = 9;

/// Per byte of a board field, what the board loop needs in one load: bits 0-7 the board
/// code, bits 8-11 the squares it fills, bit 12 a digit, bit 13 a slash, bit 14 not allowed.
const BOARD_BYTES: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let code = BOARD_CODES[byte];
        table[byte] = code as u16 | (BOARD_INFO[code as usize & 31] as u16 & 0x3f) << 8;
        table[byte] |= ((BOARD_INFO[code as usize & 31] as u16 >> 6) & 1) << 14;
        byte += 1;
    }
    table
};

/// Per board code: bits 0-3 the squares it fills, bit 4 a digit, bit 5 a slash, bit 6 not
/// allowed in a board.
const BOARD_INFO: [u8; 32] = {
    let mut info = [0u8; 32];
    info[0] = 1 << 6;
    let mut digit = 1;
    while digit <= 8 {
        info[digit] = digit as u8 | 1 << 4;
        digit += 1;
    }
    info[SLASH as usize] = 1 << 5;
    let mut code = PIECE as usize;
    while code < 32 {
        info[code] = if code & 7 < 6 { 1 } else { 1 << 6 };
        code += 1;
    }
    info
};
const PIECE: u8 = 16;

/// The board field. Imports parse millions of boards, and piece letters and digits come in
/// no predictable order, so each character costs a table look-up and a store into a
/// mailbox, without branches; then one byte compare over the 64 squares per piece letter
/// (SIMD, 64 lanes) turns the mailbox into bitboards. Any malformed board gives `None`;
/// [`board_error`] then finds out what is wrong.
fn parse_board(board: &[u8]) -> Option<([Bitboard; 6], [Bitboard; 2])> {
    // Indexed by square (a1 = 0); slots 64.. absorb writes past the board of a malformed
    // field, which is rejected anyway.
    let mut mailbox = [0u8; 128];
    // Squares filled so far, counting from a8 in reading order, and in the current rank.
    let mut filled: u32 = 0;
    let mut rank_filled: u32 = 0;
    let mut previous_digit = 0u32;
    let mut bad = 0u32;
    for &byte in board {
        // Bitwise `&`/`|` on integers, not `&&`/`||`, so that this stays free of branches.
        let info = BOARD_BYTES[byte as usize] as u32;
        mailbox[(filled as usize & 127) ^ 56] = info as u8;
        let advance = (info >> 8) & 15;
        let is_digit = (info >> 12) & 1;
        let slash_mask = 0u32.wrapping_sub((info >> 13) & 1);
        rank_filled += advance;
        // A slash must close a rank of exactly 8 squares, and starts the next one.
        bad |= (info >> 14) | (is_digit & previous_digit) | ((rank_filled ^ 8) & slash_mask);
        rank_filled &= !slash_mask;
        filled += advance;
        previous_digit = is_digit;
    }
    // Every rank was closed with exactly 8 squares, so 64 squares means 8 ranks.
    if bad != 0 || filled != 64 || rank_filled != 8 {
        return None;
    }
    let squares = wide::u8x64::new(mailbox[..64].try_into().expect("64 bytes"));
    let mut pieces = [Bitboard::EMPTY; 6];
    let mut colors = [Bitboard::EMPTY; 2];
    for (kind, board) in pieces.iter_mut().enumerate() {
        for (color, color_board) in colors.iter_mut().enumerate() {
            let code = PIECE | (color as u8) << 3 | kind as u8;
            let found = Bitboard(squares.simd_eq(wide::u8x64::splat(code)).to_bitmask());
            *board |= found;
            *color_board |= found;
        }
    }
    Some((pieces, colors))
}

/// The precise error of a board field that [`parse_board`] refused.
fn board_error(text: &str, board: &str, at: usize) -> FenError {
    match board_error_or_board(text, board, at) {
        Err(e) => e,
        Ok(_) => err(text, FenField::Board, at, FenErrorKind::UnexpectedChar(' ')),
    }
}

fn board_error_or_board(
    text: &str,
    board: &str,
    at: usize,
) -> Result<([Bitboard; 6], [Bitboard; 2]), FenError> {
    let mut pieces = [Bitboard::EMPTY; 6];
    let mut colors = [Bitboard::EMPTY; 2];
    let mut rank: i32 = 7;
    let mut file: u8 = 0;
    let mut previous_digit = false;
    let fail = |i: usize, kind| err(text, FenField::Board, at + i, kind);
    for (i, &byte) in board.as_bytes().iter().enumerate() {
        match byte {
            b'/' => {
                if file != 8 {
                    return Err(fail(
                        i,
                        FenErrorKind::RankTooShort {
                            rank: (rank + 1) as u8,
                            squares: file,
                        },
                    ));
                }
                if rank == 0 {
                    return Err(fail(i, FenErrorKind::TooManyRanks));
                }
                rank -= 1;
                file = 0;
                previous_digit = false;
            }
            b'1'..=b'8' => {
                if previous_digit {
                    return Err(fail(i, FenErrorKind::ConsecutiveDigits));
                }
                file += byte - b'0';
                if file > 8 {
                    return Err(fail(
                        i,
                        FenErrorKind::RankTooLong {
                            rank: (rank + 1) as u8,
                        },
                    ));
                }
                previous_digit = true;
            }
            _ => {
                let c = board[i..].chars().next().unwrap_or(' ');
                let Some(piece) = Piece::from_fen_char(c) else {
                    return Err(fail(i, FenErrorKind::UnexpectedChar(c)));
                };
                if file >= 8 {
                    return Err(fail(
                        i,
                        FenErrorKind::RankTooLong {
                            rank: (rank + 1) as u8,
                        },
                    ));
                }
                let bit = Bitboard(1 << (rank as u32 * 8 + file as u32));
                pieces[piece.kind.index()] |= bit;
                colors[piece.color.index()] |= bit;
                file += 1;
                previous_digit = false;
            }
        }
    }
    if file != 8 {
        return Err(fail(
            board.len(),
            FenErrorKind::RankTooShort {
                rank: (rank + 1) as u8,
                squares: file,
            },
        ));
    }
    if rank != 0 {
        return Err(fail(
            board.len(),
            FenErrorKind::TooFewRanks((8 - rank) as u8),
        ));
    }
    Ok((pieces, colors))
}

fn parse_castling(
    text: &str,
    field: &str,
    at: usize,
    pieces: &[Bitboard; 6],
    colors: &[Bitboard; 2],
) -> Result<CastlingRights, FenError> {
    let mut rights = CastlingRights::NONE;
    if field == "-" {
        return Ok(rights);
    }
    for (i, c) in field.char_indices() {
        let fail = |kind| err(text, FenField::Castling, at + i, kind);
        let color = if c.is_ascii_uppercase() {
            Color::White
        } else {
            Color::Black
        };
        let rank = back_rank(color);
        let ours = colors[color.index()] & Bitboard::rank(rank);
        let king = (pieces[PieceType::King.index()] & ours).first();
        let rooks = pieces[PieceType::Rook.index()] & ours;
        let (side, file) = match c.to_ascii_lowercase() {
            'k' | 'q' => {
                let Some(king) = king else {
                    return Err(fail(FenErrorKind::Invalid(
                        PositionError::CastlingWithoutKing { color },
                    )));
                };
                let side = if c.eq_ignore_ascii_case(&'k') {
                    CastlingSide::King
                } else {
                    CastlingSide::Queen
                };
                // X-FEN: the outermost rook on that side of the king.
                let outermost = rooks.squares().map(Square::file).filter(|&f| match side {
                    CastlingSide::King => f > king.file(),
                    CastlingSide::Queen => f < king.file(),
                });
                let file = match side {
                    CastlingSide::King => outermost.max(),
                    CastlingSide::Queen => outermost.min(),
                };
                let Some(file) = file else {
                    let default = if side == CastlingSide::King { 7 } else { 0 };
                    return Err(fail(FenErrorKind::Invalid(
                        PositionError::CastlingWithoutRook {
                            color,
                            side,
                            file: File::new(default).expect("a or h"),
                        },
                    )));
                };
                (side, file)
            }
            'a'..='h' => {
                let file = File::from_char(c.to_ascii_lowercase()).expect("a..h");
                let Some(king) = king else {
                    return Err(fail(FenErrorKind::Invalid(
                        PositionError::CastlingWithoutKing { color },
                    )));
                };
                let side = if file > king.file() {
                    CastlingSide::King
                } else {
                    CastlingSide::Queen
                };
                (side, file)
            }
            _ => return Err(fail(FenErrorKind::UnexpectedChar(c))),
        };
        if rights.rook_file(color, side).is_some() {
            return Err(fail(FenErrorKind::DuplicateCastling(c)));
        }
        rights.set(color, side, Some(file));
    }
    Ok(rights)
}

mod write;
pub use write::{write_fen, write_position_fields};

#[cfg(test)]
mod tests;
