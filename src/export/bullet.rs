//! bullet's `ChessBoard` records (crate `bulletformat`, jw1912/bullet; MIT): 32 bytes a
//! position, laid out as the `#[repr(C)]` struct
//!
//! ```text
//! occ: u64, pcs: [u8; 16], score: i16, result: u8, ksq: u8, opp_ksq: u8, extra: [u8; 3]
//! ```
//!
//! little-endian, no header, everything from the side to move's point of view, as
//! `bulletformat`'s own converters (`FromStr for ChessBoard`, `From<MarlinFormat>`) build it:
//! - when Black is to move the board is mirrored vertically (square `s` becomes `s ^ 56`)
//!   and the colours swapped, so the side to move always plays "up" as White would;
//! - `occ` is the occupancy of that board; `pcs` holds one nibble per occupied square, in
//!   ascending square order, the first piece in the low nibble of `pcs[0]`: bit 3 set for
//!   the opponent's pieces, bits 0-2 the piece type (0 pawn, 1 knight, 2 bishop, 3 rook,
//!   4 queen, 5 king);
//! - `ksq` is the side to move's king square on that board, `opp_ksq` the opponent's king
//!   square mirrored once more (as the opponent sees it);
//! - `score` is centipawns for the side to move, `result` 2 if the side to move won the
//!   game, 1 a draw, 0 a loss; `extra` is zero.
//!
//! A position without a score or a result is skipped and counted. Scores beyond `i16` are
//! clamped (the DB's mate scores, `±(32000 - plies)`, fit).

use pawnstorm_kernels::{Color, Square};

use crate::db::{Database, DbError};
use crate::eval::Evaluator;
use crate::export::filters::Filter;
use crate::position::board::Position;
use crate::position::labels::{GameResult, white_pov};

use super::{Chunk, Tally, for_each_kept};

/// Bytes of one record.
pub const RECORD_BYTES: usize = 32;

/// The record of `position` with `score` (centipawns, White's view) and `result`.
pub fn record(position: &Position, score: i32, result: GameResult) -> [u8; RECORD_BYTES] {
    let us = position.side_to_move();
    // Mirroring: the side to move's first rank becomes rank 1.
    let mirror = match us {
        Color::White => 0u8,
        Color::Black => 56,
    };
    let board_occ = position.occupied();
    let occ = match us {
        Color::White => board_occ,
        Color::Black => board_occ.flip_vertical(),
    };
    let mut pcs = [0u8; 16];
    for (i, square) in occ.squares().enumerate() {
        let original = Square::new(square.index() ^ mirror).expect("a square");
        let piece = position.piece_at(original).expect("occupied");
        let nibble = ((piece.color != us) as u8) << 3 | piece.kind.index() as u8;
        pcs[i / 2] |= nibble << (4 * (i & 1));
    }
    let ksq = position.king(us).index() ^ mirror;
    let opp_ksq = position.king(!us).index() ^ mirror ^ 56;
    let score = white_pov(score, us).clamp(i16::MIN as i32, i16::MAX as i32) as i16;
    let result = match (result, us) {
        (GameResult::Draw, _) => 1u8,
        (GameResult::WhiteWin, Color::White) | (GameResult::BlackWin, Color::Black) => 2,
        _ => 0,
    };
    let mut out = [0u8; RECORD_BYTES];
    out[0..8].copy_from_slice(&occ.0.to_le_bytes());
    out[8..24].copy_from_slice(&pcs);
    out[24..26].copy_from_slice(&score.to_le_bytes());
    out[26] = result;
    out[27] = ksq;
    out[28] = opp_ksq;
    out
}

/// A chunk's records.
pub fn chunk(
    db: &Database,
    chunk: &Chunk,
    filter: &Filter,
    evaluator: &mut Option<Evaluator>,
) -> Result<(Vec<u8>, Tally), DbError> {
    let mut tally = Tally::default();
    let mut out = Vec::with_capacity((chunk.rows.end - chunk.rows.start) as usize * RECORD_BYTES);
    for_each_kept(
        db,
        chunk,
        filter,
        evaluator,
        &mut tally,
        |_, record, skipped| {
            match (record.labels.score, record.labels.result) {
                (None, _) => skipped.no_score += 1,
                (_, None) => skipped.no_result += 1,
                (Some(score), Some(result)) => {
                    out.extend_from_slice(&self::record(&record.position, score, result))
                }
            }
            Ok(())
        },
    )?;
    Ok((out, tally))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::fen::parse_fen;

    fn decode(bytes: &[u8; 32]) -> (u64, Vec<(u8, u8)>, i16, u8, u8, u8) {
        let occ = u64::from_le_bytes(bytes[0..8].try_into().unwrap());
        let mut pieces = Vec::new();
        let mut rest = occ;
        let mut i = 0;
        while rest != 0 {
            let square = rest.trailing_zeros() as u8;
            pieces.push((square, (bytes[8 + i / 2] >> (4 * (i & 1))) & 15));
            rest &= rest - 1;
            i += 1;
        }
        let score = i16::from_le_bytes([bytes[24], bytes[25]]);
        (occ, pieces, score, bytes[26], bytes[27], bytes[28])
    }

    #[test]
    fn white_to_move_is_the_board_as_it_stands() {
        // White: Ke1, Pe2; Black: Ke8, Nb8.
        let p = parse_fen("1n2k3/8/8/8/8/8/4P3/4K3 w - - 0 1").unwrap();
        let (occ, pieces, score, result, ksq, opp_ksq) =
            decode(&record(&p, 40, GameResult::WhiteWin));
        assert_eq!(occ, 1 << 4 | 1 << 12 | 1 << 57 | 1 << 60);
        assert_eq!(pieces, vec![(4, 5), (12, 0), (57, 8 | 1), (60, 8 | 5)]);
        assert_eq!((score, result, ksq, opp_ksq), (40, 2, 4, 60 ^ 56));
    }

    #[test]
    fn black_to_move_is_mirrored_with_colours_swapped() {
        let p = parse_fen("1n2k3/8/8/8/8/8/4P3/4K3 b - - 0 1").unwrap();
        let (occ, pieces, score, result, ksq, opp_ksq) =
            decode(&record(&p, 40, GameResult::WhiteWin));
        // b8 -> b1 (57 ^ 56 = 1), e8 -> e1 (4), e2 -> e7 (52), e1 -> e8 (60).
        assert_eq!(occ, 1 << 1 | 1 << 4 | 1 << 52 | 1 << 60);
        assert_eq!(pieces, vec![(1, 1), (4, 5), (52, 8), (60, 8 | 5)]);
        // White's +40 and White's win are Black's -40 and Black's loss.
        assert_eq!((score, result), (-40, 0));
        // Our king on e1 of the mirrored board; theirs on e8 there, e1 as they see it.
        assert_eq!((ksq, opp_ksq), (4, 4));
    }

    #[test]
    fn draws_are_one_and_scores_clamp_to_i16() {
        let p = parse_fen("4k3/8/8/8/8/8/8/4K3 b - - 0 1").unwrap();
        let (_, _, score, result, _, _) = decode(&record(&p, -100_000, GameResult::Draw));
        assert_eq!((score, result), (i16::MAX, 1));
    }
}
