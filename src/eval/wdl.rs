//! Win, draw and loss probabilities from a score: Stockfish's win-rate model, fitted to
//! pawnstorm's own self-play games (scripts/fit-wdl.sh, docs/WDL.md).
//!
//! For a score x (centipawns, side to move's view) and the material m on the board (pawns 1,
//! knights and bishops 3, rooks 5, queens 9, both sides; clamped to 17..=78, over 58):
//! `win = 1 / (1 + exp((a(m) - x) / b(m)))`, `loss` the same for -x, `draw` the rest, with
//! a and b cubics in m. a(m) is the score at which the side to move wins half its games.

use crate::position::board::{PieceType, Position};
use crate::position::score::TB_WIN_BOUND;

/// Coefficients of a(m) and b(m), highest power first (scripts/fit-wdl.py prints them).
const A: [f64; 4] = [119.492, 24.614, -410.378, 354.154];
const B: [f64; 4] = [108.187, -83.711, -52.355, 131.569];
const MATERIAL_MIN: u32 = 17;
const MATERIAL_MAX: u32 = 78;
const MATERIAL_SCALE: f64 = 58.0;

/// Probabilities in per mille, summing to 1000.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Wdl {
    pub win: u32,
    pub draw: u32,
    pub loss: u32,
}

impl Wdl {
    /// The same outcome seen from the other side.
    pub fn flipped(self) -> Wdl {
        Wdl {
            win: self.loss,
            draw: self.draw,
            loss: self.win,
        }
    }
}

/// The model's material count from piece counts (both sides together).
pub fn material(pawns: u32, knights: u32, bishops: u32, rooks: u32, queens: u32) -> u32 {
    pawns + 3 * (knights + bishops) + 5 * rooks + 9 * queens
}

/// The model's material count of a position.
pub fn material_of(position: &Position) -> u32 {
    let count = |kind| position.piece_type(kind).count();
    material(
        count(PieceType::Pawn),
        count(PieceType::Knight),
        count(PieceType::Bishop),
        count(PieceType::Rook),
        count(PieceType::Queen),
    )
}

fn cubic(c: &[f64; 4], m: f64) -> f64 {
    ((c[0] * m + c[1]) * m + c[2]) * m + c[3]
}

/// The chance (0..1) that the side to move wins with `score` and `material` on the board.
fn win_rate(score: f64, material: u32) -> f64 {
    let m = f64::from(material.clamp(MATERIAL_MIN, MATERIAL_MAX)) / MATERIAL_SCALE;
    let a = cubic(&A, m);
    let b = cubic(&B, m).max(1.0);
    1.0 / (1.0 + ((a - score) / b).exp())
}

/// Win, draw and loss per mille for the side to move, from a search or evaluation score
/// (side to move's view). Mates and tablebase results are certain.
pub fn wdl(score: i32, material: u32) -> Wdl {
    if score >= TB_WIN_BOUND {
        return Wdl {
            win: 1000,
            draw: 0,
            loss: 0,
        };
    }
    if score <= -TB_WIN_BOUND {
        return Wdl {
            win: 0,
            draw: 0,
            loss: 1000,
        };
    }
    let win = (1000.0 * win_rate(f64::from(score), material)).round() as u32;
    let loss = (1000.0 * win_rate(-f64::from(score), material)).round() as u32;
    // The fitted a(m) is positive over 17..=78, so win + loss stays below 1000.
    let loss = loss.min(1000 - win);
    Wdl {
        win,
        draw: 1000 - win - loss,
        loss,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::position::score::{mate_in, mated_in};

    #[test]
    fn probabilities_sum_to_a_thousand_and_are_symmetric() {
        for material in [0, 17, 30, 58, 78, 120] {
            for score in (-3000..=3000).step_by(7) {
                let w = wdl(score, material);
                assert_eq!(w.win + w.draw + w.loss, 1000, "{score} {material}");
                assert_eq!(wdl(-score, material), w.flipped(), "{score} {material}");
            }
        }
    }

    #[test]
    fn winning_grows_with_the_score() {
        for material in [17, 40, 78] {
            let mut last = wdl(-3000, material);
            for score in (-3000..=3000).step_by(10) {
                let w = wdl(score, material);
                assert!(
                    w.win >= last.win && w.loss <= last.loss,
                    "{score} {material}"
                );
                last = w;
            }
            assert!(
                wdl(0, material).draw > 300,
                "{material}: {:?}",
                wdl(0, material)
            );
            assert!(wdl(1500, material).win > 950, "{material}");
        }
    }

    #[test]
    fn mates_and_tablebase_results_are_certain() {
        assert_eq!(wdl(mate_in(3), 40).win, 1000);
        assert_eq!(wdl(mated_in(2), 40).loss, 1000);
        assert_eq!(wdl(TB_WIN_BOUND + 5, 5).win, 1000);
        assert_eq!(wdl(-TB_WIN_BOUND - 5, 5).loss, 1000);
    }

    #[test]
    fn material_counts_both_sides() {
        let start = crate::position::fen::parse_fen(crate::position::fen::STARTPOS)
            .expect("start position");
        assert_eq!(material_of(&start), 78);
    }
}
