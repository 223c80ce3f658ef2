//! Legal move generation, make-move with incremental Zobrist keys, and draws by history.
//!
//! - [`Move`] (16 bits) and [`MoveList`] (fixed capacity, on the stack), in `moves`;
//! - [`Board`]: a position with its keys and checkers, played on by copy-make, in `state`;
//! - [`legal_moves`], [`captures`], [`quiets`], [`count_legal_moves`], in `generate`;
//! - [`History`], [`Game`] and the fifty-move rule, in `history`.
//!
//! ```
//! use pawnstorm::movegen::{Board, MoveList, legal_moves};
//! let board = Board::startpos();
//! let mut moves = MoveList::new();
//! legal_moves(&board, &mut moves);
//! assert_eq!(moves.len(), 20);
//! let after = board.play(moves[0]);
//! assert_eq!(after.key(), after.position().zobrist());
//! ```

mod generate;
mod history;
mod moves;
mod state;

pub use generate::{captures, count_legal_moves, has_no_legal_moves, legal_moves, quiets};
pub use history::{Game, History, Outcome, is_fifty_move_draw};
pub use moves::{MAX_MOVES, Move, MoveKind, MoveList, UciMove, UciMoveError};
pub use state::Board;
