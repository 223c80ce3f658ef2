//! Stockfish's `.binpack` training data, read and written through the `sfbinpack` crate
//! (Disservin/binpack-rust, GPL-3.0, a port of Stockfish's own reader and writer): this
//! module only converts between its entries and the DB's records.
//!
//! A binpack entry is a position with the move played from it, a score and a result (both
//! the side to move's) and the game ply. Conventions on the DB's side:
//! - scores are White's; mates are `±(32000 - plies)` in both (Stockfish's `VALUE_MATE` is
//!   32000 too), but Stockfish reads everything from `VALUE_MATE_IN_MAX_PLY` (31754) up as a
//!   mate while the DB's mates start at 31872: on export a non-mate score is clamped to
//!   ±31753, on import a mate further than the DB's 128 plies becomes ±31871, the largest
//!   non-mate score. `VALUE_NONE` (32002) is no score.
//! - castling is the king's two-square move (`e1g1`), as UCI writes it; binpack stores it
//!   as the king taking its rook (`e1h1`).

use pawnstorm_kernels::{Bitboard, Color, Square};
use sfbinpack::TrainingDataEntry;
use sfbinpack::chess::castling_rights::CastlingRights as SfCastling;
use sfbinpack::chess::color::Color as SfColor;
use sfbinpack::chess::coords::Square as SfSquare;
use sfbinpack::chess::r#move::{Move as SfMove, MoveType};
use sfbinpack::chess::piece::Piece as SfPiece;
use sfbinpack::chess::piecetype::PieceType as SfPieceType;
use sfbinpack::chess::position::Position as SfPosition;

use crate::movegen::{Board, MoveKind, MoveList, captures};
use crate::position::board::{CastlingRights, CastlingSide, PieceType, Position, PositionParts};
use crate::position::labels::{GameResult, Labels, Record, encode_move, white_pov};
use crate::position::score::{MATE, MATE_BOUND};

/// Stockfish's `VALUE_NONE`: the entry has no score.
const VALUE_NONE: i16 = 32002;
/// Stockfish's `VALUE_MATE_IN_MAX_PLY`: scores from here up are mates to Stockfish.
const SF_MATE_BOUND: i32 = 32000 - 246;
/// The largest score the DB keeps that is not a mate.
const MAX_CENTIPAWNS: i32 = MATE_BOUND - 1;

const SF_TYPES: [SfPieceType; 6] = [
    SfPieceType::Pawn,
    SfPieceType::Knight,
    SfPieceType::Bishop,
    SfPieceType::Rook,
    SfPieceType::Queen,
    SfPieceType::King,
];

/// The four castling rights on both sides: binpack knows only the standard ones, with the
/// rook on the h-file (king side) or the a-file (queen side).
const CASTLING: [(Color, CastlingSide, SfCastling, u8); 4] = [
    (
        Color::White,
        CastlingSide::King,
        SfCastling::WHITE_KING_SIDE,
        7,
    ),
    (
        Color::White,
        CastlingSide::Queen,
        SfCastling::WHITE_QUEEN_SIDE,
        0,
    ),
    (
        Color::Black,
        CastlingSide::King,
        SfCastling::BLACK_KING_SIDE,
        7,
    ),
    (
        Color::Black,
        CastlingSide::Queen,
        SfCastling::BLACK_QUEEN_SIDE,
        0,
    ),
];

fn sf_color(color: Color) -> SfColor {
    match color {
        Color::White => SfColor::White,
        Color::Black => SfColor::Black,
    }
}

/// The DB record of a binpack entry, with `game_id`; or why it cannot be one.
pub fn record_of_entry(entry: &TrainingDataEntry, game_id: u32) -> Result<Record, String> {
    let pos = &entry.pos;
    let side = match pos.side_to_move() {
        SfColor::White => Color::White,
        SfColor::Black => Color::Black,
    };
    let mut pieces = [Bitboard::EMPTY; 6];
    for (kind, sf) in pieces.iter_mut().zip(SF_TYPES) {
        *kind = Bitboard(pos.pieces_bb_type(sf).bits());
    }
    // Each colour from its pieces by type: `pieces_bb(colour)` debug-asserts that the side
    // has a piece, and a damaged entry may have none (it is refused below, with the reason).
    let colors = [SfColor::White, SfColor::Black].map(|color| {
        SF_TYPES.iter().fold(Bitboard::EMPTY, |set, &sf| {
            set | Bitboard(pos.pieces_bb_color(color, sf).bits())
        })
    });
    let rights = pos.castling_rights();
    let mut castling = CastlingRights::NONE;
    for (color, side_, right, rook_file) in CASTLING {
        if rights.contains(right) {
            castling.set(color, side_, pawnstorm_kernels::File::new(rook_file));
        }
    }
    let ep = pos.ep_square();
    let en_passant = if ep == SfSquare::NONE {
        None
    } else {
        Square::new(ep.index() as u8)
    };
    let position = Position::from_parts(PositionParts {
        pieces,
        colors,
        side_to_move: side,
        castling,
        en_passant,
        halfmove_clock: pos.rule50_counter(),
        fullmove_number: (entry.ply / 2 + 1).max(1),
    })
    .map_err(|e| format!("not a position: {e}"))?;
    let result = match entry.result {
        1 => GameResult::WhiteWin,
        0 => GameResult::Draw,
        -1 => GameResult::BlackWin,
        other => return Err(format!("result {other} is not 1, 0 or -1")),
    };
    let result = match side {
        Color::White => result,
        Color::Black => match result {
            GameResult::WhiteWin => GameResult::BlackWin,
            GameResult::Draw => GameResult::Draw,
            GameResult::BlackWin => GameResult::WhiteWin,
        },
    };
    let score = match entry.score {
        VALUE_NONE => None,
        s if (s as i32).abs() > MATE => {
            return Err(format!("score {s} is beyond a mate (32000)"));
        }
        s => Some(white_pov(score_from_stockfish(s as i32), side)),
    };
    Ok(Record {
        position,
        labels: Labels {
            result: Some(result),
            score,
            game_id: Some(game_id),
            ply: Some(entry.ply),
            move_played: move_code(&entry.mv),
            ..Labels::default()
        },
    })
}

/// A score of the side to move as the DB keeps it (see the module's notes).
fn score_from_stockfish(score: i32) -> i32 {
    if score.abs() >= SF_MATE_BOUND && MATE - score.abs() > (MATE - MATE_BOUND) {
        // A mate further away than the DB's mates reach.
        score.signum() * MAX_CENTIPAWNS
    } else {
        score
    }
}

/// A DB score (side to move's view) as Stockfish keeps it.
fn score_to_stockfish(score: i32) -> i16 {
    if score.abs() >= MATE_BOUND {
        score.clamp(-MATE, MATE) as i16
    } else {
        score.clamp(-(SF_MATE_BOUND - 1), SF_MATE_BOUND - 1) as i16
    }
}

/// The DB's move code of a binpack move (castling as the king's move), or `None` for a
/// move that is no move (from == to).
fn move_code(mv: &SfMove) -> Option<u16> {
    let from = mv.from().index();
    let to = mv.to().index();
    if from >= 64 || to >= 64 || from == to {
        return None;
    }
    let to = if mv.mtype() == MoveType::Castle {
        // King takes rook: the king goes to the g- or c-file of its rank.
        let rank = from & !7;
        if to & 7 > from & 7 {
            rank + 6
        } else {
            rank + 2
        }
    } else {
        to
    };
    let promotion = if mv.mtype() == MoveType::Promotion {
        match mv.promoted_piece().piece_type() {
            SfPieceType::Knight => 1,
            SfPieceType::Bishop => 2,
            SfPieceType::Rook => 3,
            SfPieceType::Queen => 4,
            _ => return None,
        }
    } else {
        0
    };
    Some(encode_move(from as u8, to as u8, promotion))
}

/// Why a record cannot be a binpack entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unwritable {
    NoScore,
    NoResult,
    NoMove,
}

/// The binpack entry of a DB record: needs a score, a result and the move played (the
/// format chains positions by their moves); the move must be legal in the position.
pub fn entry_of_record(record: &Record) -> Result<TrainingDataEntry, Unwritable> {
    let labels = &record.labels;
    let score = labels.score.ok_or(Unwritable::NoScore)?;
    let result = labels.result.ok_or(Unwritable::NoResult)?;
    let code = labels.move_played.ok_or(Unwritable::NoMove)?;
    let position = &record.position;
    let side = position.side_to_move();
    let mut pos = SfPosition::empty();
    for color in [Color::White, Color::Black] {
        let colour = sf_color(color);
        for (kind, sf) in PieceType::ALL.into_iter().zip(SF_TYPES) {
            for square in position.pieces(color, kind).squares() {
                pos.place(
                    SfPiece::new(sf, colour),
                    SfSquare::new(square.index() as u32),
                );
            }
        }
    }
    pos.set_side_to_move(sf_color(side));
    let mut rights = SfCastling::NONE;
    let castling = position.castling();
    for (color, castle_side, right, _) in CASTLING {
        if castling.rook_file(color, castle_side).is_some() {
            rights |= right;
        }
    }
    pos.set_castling_rights(rights);
    if let Some(ep) = legal_en_passant(position) {
        pos.set_ep_square_unchecked(SfSquare::new(ep.index() as u32));
    }
    let ply = record.ply();
    let ply = ply.min(0x3fff) as u16;
    pos.set_ply(ply);
    pos.set_rule50_counter(position.halfmove_clock());
    let mv = binpack_move(position, code).ok_or(Unwritable::NoMove)?;
    let result = match (result, side) {
        (GameResult::Draw, _) => 0,
        (GameResult::WhiteWin, Color::White) | (GameResult::BlackWin, Color::Black) => 1,
        _ => -1,
    };
    Ok(TrainingDataEntry {
        pos,
        mv,
        score: score_to_stockfish(white_pov(score, side)),
        ply,
        result,
    })
}

/// The en-passant square when a legal capture there exists: Stockfish's rule, which the
/// crate's chains compare positions by (a pinned capturer leaves no square).
fn legal_en_passant(position: &Position) -> Option<Square> {
    let square = position.en_passant_capturable()?;
    let mut list = MoveList::new();
    captures(&Board::new(position.clone()), &mut list);
    list.iter()
        .any(|mv| mv.kind() == MoveKind::EnPassant)
        .then_some(square)
}

/// The binpack move of a DB move code in `position`: castling as the king taking its rook,
/// en passant and promotions typed; `None` when the code is no move of a piece there.
fn binpack_move(position: &Position, code: u16) -> Option<SfMove> {
    let (from, to, promotion) = (code & 63, (code >> 6) & 63, code >> 12);
    if from == to || promotion > 4 {
        return None;
    }
    let from_square = Square::new(from as u8)?;
    let piece = position.piece_at(from_square)?;
    if piece.color != position.side_to_move() {
        return None;
    }
    let (sf_from, sf_to) = (SfSquare::new(from as u32), SfSquare::new(to as u32));
    if promotion > 0 {
        let kind = SF_TYPES[promotion as usize];
        return Some(SfMove::promotion(
            sf_from,
            sf_to,
            SfPiece::new(kind, sf_color(piece.color)),
        ));
    }
    let own_rook = Square::new(to as u8)
        .and_then(|t| position.piece_at(t))
        .is_some_and(|p| p.color == piece.color && p.kind == PieceType::Rook);
    match piece.kind {
        // Chess960 castling with the king already on its square: the king takes its rook.
        PieceType::King if own_rook => Some(SfMove::castle(sf_from, SfSquare::new(to as u32))),
        PieceType::King if (from as i32 - to as i32).abs() == 2 => {
            let rook = if to > from {
                (from & !7) + 7
            } else {
                from & !7
            };
            Some(SfMove::castle(sf_from, SfSquare::new(rook as u32)))
        }
        PieceType::Pawn
            if from % 8 != to % 8
                && Square::new(to as u8).is_some_and(|t| position.piece_at(t).is_none()) =>
        {
            Some(SfMove::en_passant(sf_from, sf_to))
        }
        _ => Some(SfMove::normal(sf_from, sf_to)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::fen::parse_fen;
    use crate::position::labels::move_from_uci;

    fn labelled(fen: &str, score: i32, result: GameResult, mv: &str) -> Record {
        Record {
            position: parse_fen(fen).unwrap(),
            labels: Labels {
                score: Some(score),
                result: Some(result),
                move_played: move_from_uci(mv),
                ply: Some(20),
                game_id: Some(3),
                ..Labels::default()
            },
        }
    }

    fn round_trip(record: &Record) -> Record {
        let entry = entry_of_record(record).unwrap();
        record_of_entry(&entry, 3).unwrap()
    }

    #[test]
    fn scores_and_results_turn_to_the_side_to_move_and_back() {
        let r = labelled(
            "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 11",
            120,
            GameResult::WhiteWin,
            "e8c8",
        );
        let entry = entry_of_record(&r).unwrap();
        assert_eq!((entry.score, entry.result), (-120, -1));
        // Castling is the king taking its rook in binpack.
        assert_eq!(entry.mv.mtype(), MoveType::Castle);
        assert_eq!(entry.mv.to().index(), 56);
        assert_eq!(entry.pos.rule50_counter(), 3);
        assert_eq!(round_trip(&r), r);
    }

    #[test]
    fn en_passant_and_promotions_keep_their_kind() {
        let ep = labelled(
            "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 11",
            -40,
            GameResult::Draw,
            "e5d6",
        );
        assert_eq!(
            entry_of_record(&ep).unwrap().mv.mtype(),
            MoveType::EnPassant
        );
        assert_eq!(round_trip(&ep), ep);
        let promo = labelled(
            "4k3/1P6/8/8/8/8/8/4K3 w - - 0 11",
            900,
            GameResult::WhiteWin,
            "b7b8n",
        );
        assert_eq!(round_trip(&promo), promo);
    }

    #[test]
    fn mates_keep_their_distance_and_huge_scores_stay_below_stockfish_mates() {
        assert_eq!(score_to_stockfish(MATE - 7), (MATE - 7) as i16);
        assert_eq!(score_to_stockfish(-(MATE - 7)), -(MATE - 7) as i16);
        assert_eq!(
            score_to_stockfish(MAX_CENTIPAWNS),
            (SF_MATE_BOUND - 1) as i16
        );
        assert_eq!(score_from_stockfish(MATE - 7), MATE - 7);
        // Mate in 200 plies: beyond the DB's mates.
        assert_eq!(score_from_stockfish(-(MATE - 200)), -MAX_CENTIPAWNS);
        assert_eq!(score_from_stockfish(SF_MATE_BOUND - 1), SF_MATE_BOUND - 1);
    }

    #[test]
    fn a_record_without_a_move_score_or_result_is_not_an_entry() {
        let mut r = labelled("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0, GameResult::Draw, "e1e2");
        r.labels.move_played = None;
        assert_eq!(entry_of_record(&r).err(), Some(Unwritable::NoMove));
        r.labels.score = None;
        assert_eq!(entry_of_record(&r).err(), Some(Unwritable::NoScore));
        // A move of no piece of the side to move.
        let r = labelled("4k3/8/8/8/8/8/8/4K3 w - - 0 1", 0, GameResult::Draw, "d1d2");
        assert_eq!(entry_of_record(&r).err(), Some(Unwritable::NoMove));
    }
}
