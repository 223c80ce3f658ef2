//! Stockfish's `.plain` training text, as the tools branch's `convert_plain` writes it and
//! `convert_bin` reads it (official-stockfish/Stockfish, `src/tools/convert.cpp`): one
//! block of six lines per position,
//!
//! ```text
//! fen <six-field FEN>
//! move <the move played, UCI>
//! score <centipawns, side to move's point of view>
//! ply <half-moves played in the game>
//! result <1 side to move won, 0 draw, -1 side to move lost>
//! e
//! ```
//!
//! Score and result are the side to move's, as `PackedSfenValue` stores them ("1 if the
//! player on this side ultimately wins the game"). Every field is required: a position
//! without a score, a result, or (unless null moves are asked for) a move is skipped and
//! counted.

use crate::db::{Database, DbError};
use crate::eval::Evaluator;
use crate::export::filters::Filter;
use crate::position::labels::{self, GameResult, Record, white_pov};
use pawnstorm_kernels::Color;

use super::{Chunk, Skipped, Tally, for_each_kept};

/// What to do with a position whose move is unknown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingMove {
    /// Leave it out (and count it): `convert_bin` with `check_illegal_move` drops such a
    /// record, and without it stores `MOVE_NONE`, which the trainers' move-based filters
    /// and binpack's move chains then read as a move.
    #[default]
    Skip,
    /// Write `move 0000`, UCI's null move, for trainers that ignore the move.
    Null,
}

/// The result from the side to move's point of view: 1 won, 0 draw, -1 lost.
pub fn stm_result(result: GameResult, side: Color) -> i8 {
    match side {
        Color::White => result.to_i8(),
        Color::Black => -result.to_i8(),
    }
}

/// Appends `record`'s block to `out`, or says why it cannot be written.
pub fn write_record(
    record: &Record,
    missing_move: MissingMove,
    out: &mut String,
    skipped: &mut Skipped,
) {
    let labels = &record.labels;
    let Some(score) = labels.score else {
        skipped.no_score += 1;
        return;
    };
    let Some(result) = labels.result else {
        skipped.no_result += 1;
        return;
    };
    let uci = labels.move_played.and_then(labels::move_to_uci);
    if uci.is_none() && missing_move == MissingMove::Skip {
        skipped.no_move += 1;
        return;
    }
    let side = record.position.side_to_move();
    let mut number = itoa::Buffer::new();
    out.push_str("fen ");
    out.push_str(&record.position.to_fen());
    out.push_str("\nmove ");
    out.push_str(uci.as_deref().unwrap_or("0000"));
    out.push_str("\nscore ");
    out.push_str(number.format(white_pov(score, side)));
    out.push_str("\nply ");
    out.push_str(number.format(record.ply()));
    out.push_str("\nresult ");
    out.push_str(number.format(stm_result(result, side)));
    out.push_str("\ne\n");
}

/// A chunk's `.plain` blocks.
pub fn chunk(
    db: &Database,
    chunk: &Chunk,
    filter: &Filter,
    evaluator: &mut Option<Evaluator>,
    missing_move: MissingMove,
) -> Result<(Vec<u8>, Tally), DbError> {
    let mut tally = Tally::default();
    let mut out = String::with_capacity((chunk.rows.end - chunk.rows.start) as usize * 120);
    for_each_kept(
        db,
        chunk,
        filter,
        evaluator,
        &mut tally,
        |_, record, skipped| {
            write_record(&record, missing_move, &mut out, skipped);
            Ok(())
        },
    )?;
    Ok((out.into_bytes(), tally))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::labels::{Labels, encode_move};

    fn record(fen: &str, labels: Labels) -> Record {
        Record {
            position: crate::position::fen::parse_fen(fen).unwrap(),
            labels,
        }
    }

    #[test]
    fn score_and_result_turn_to_the_side_to_move() {
        let labels = Labels {
            score: Some(-35),
            result: Some(GameResult::BlackWin),
            move_played: Some(encode_move(52, 36, 0)),
            ply: Some(9),
            ..Labels::default()
        };
        let mut out = String::new();
        let mut skipped = Skipped::default();
        let black = record("4k3/4p3/8/8/8/8/8/4K3 b - - 0 5", labels);
        write_record(&black, MissingMove::Skip, &mut out, &mut skipped);
        assert_eq!(
            out,
            "fen 4k3/4p3/8/8/8/8/8/4K3 b - - 0 5\nmove e7e5\nscore 35\nply 9\nresult 1\ne\n"
        );
        out.clear();
        let white = record("4k3/4p3/8/8/8/8/8/4K3 w - - 0 5", labels);
        write_record(&white, MissingMove::Skip, &mut out, &mut skipped);
        assert!(out.contains("score -35\nply 9\nresult -1\n"), "{out}");
        assert_eq!(skipped, Skipped::default());
    }

    #[test]
    fn records_missing_a_label_are_skipped_and_counted() {
        let full = Labels {
            score: Some(10),
            result: Some(GameResult::Draw),
            ..Labels::default()
        };
        let fen = "4k3/8/8/8/8/8/8/4K3 w - - 0 1";
        let mut out = String::new();
        let mut skipped = Skipped::default();
        write_record(
            &record(fen, full),
            MissingMove::Skip,
            &mut out,
            &mut skipped,
        );
        let no_score = Labels {
            score: None,
            ..full
        };
        write_record(
            &record(fen, no_score),
            MissingMove::Null,
            &mut out,
            &mut skipped,
        );
        let no_result = Labels {
            result: None,
            ..full
        };
        write_record(
            &record(fen, no_result),
            MissingMove::Null,
            &mut out,
            &mut skipped,
        );
        assert_eq!(out, "");
        assert_eq!(
            skipped,
            Skipped {
                no_score: 1,
                no_result: 1,
                no_move: 1
            }
        );
        write_record(
            &record(fen, full),
            MissingMove::Null,
            &mut out,
            &mut skipped,
        );
        assert!(
            out.contains("move 0000\n") && out.contains("ply 0\n"),
            "{out}"
        );
    }
}
