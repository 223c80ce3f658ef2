//! Search scores: centipawns from the side to move, with mates and tablebase results at
//! the ends of the range.

/// Deepest ply the search reaches (arrays are sized by it).
pub const MAX_PLY: usize = 128;
/// Mate at the root: a score of `MATE - n` is a mate in n plies.
pub const MATE: i32 = 32_000;
/// Scores at or beyond this are mates.
pub const MATE_BOUND: i32 = MATE - MAX_PLY as i32;
/// A tablebase win (beyond any evaluation, below every mate): `TB_WIN - ply`.
pub const TB_WIN: i32 = MATE_BOUND - 1;
/// Scores at or beyond this are tablebase wins (or mates).
pub const TB_WIN_BOUND: i32 = TB_WIN - MAX_PLY as i32;
/// Outside every score.
pub const INFINITY: i32 = MATE + 1;
pub const DRAW: i32 = 0;

/// The score of mating in `ply` plies from the root.
pub const fn mate_in(ply: usize) -> i32 {
    MATE - ply as i32
}

/// The score of being mated in `ply` plies from the root.
pub const fn mated_in(ply: usize) -> i32 {
    -MATE + ply as i32
}

/// A score as UCI prints it: `cp N`, or `mate N` in moves (negative when mated).
pub fn uci(score: i32) -> String {
    if score >= MATE_BOUND {
        format!("mate {}", (MATE - score + 1) / 2)
    } else if score <= -MATE_BOUND {
        // Already mated prints as Stockfish does: `mate 0`.
        match (MATE + score) / 2 {
            0 => "mate 0".to_string(),
            moves => format!("mate -{moves}"),
        }
    } else {
        format!("cp {score}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mates_print_in_moves() {
        assert_eq!(uci(mate_in(1)), "mate 1");
        assert_eq!(uci(mate_in(3)), "mate 2");
        assert_eq!(uci(mate_in(5)), "mate 3");
        assert_eq!(uci(mated_in(0)), "mate 0");
        assert_eq!(uci(mated_in(2)), "mate -1");
        assert_eq!(uci(mated_in(4)), "mate -2");
        assert_eq!(uci(-35), "cp -35");
        assert_eq!(uci(TB_WIN - 3), format!("cp {}", TB_WIN - 3));
    }
}
