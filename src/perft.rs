//! Perft (counting the leaf nodes of the legal move tree) and perft suites: EPD lines
//! `FEN ;D1 20 ;D2 400 ...` and the `id` / `epd` / `perft DEPTH COUNT` blocks of
//! shakmaty's `.perft` files.

use crate::movegen::{Board, Move, MoveList, count_legal_moves, legal_moves};

/// The number of leaf nodes `depth` plies below `board`. The last ply is counted, not
/// played.
pub fn perft(board: &Board, depth: u32) -> u64 {
    match depth {
        0 => 1,
        1 => count_legal_moves(board),
        _ => {
            let mut moves = MoveList::new();
            legal_moves(board, &mut moves);
            moves
                .iter()
                .map(|&mv| perft(&board.play(mv), depth - 1))
                .sum()
        }
    }
}

/// Perft below each legal move of `board` (`depth` counts the root move), in generation
/// order. Empty for depth 0.
pub fn divide(board: &Board, depth: u32) -> Vec<(Move, u64)> {
    if depth == 0 {
        return Vec::new();
    }
    let mut moves = MoveList::new();
    legal_moves(board, &mut moves);
    moves
        .iter()
        .map(|&mv| (mv, perft(&board.play(mv), depth - 1)))
        .collect()
}
