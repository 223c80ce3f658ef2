//! Scores of many positions by either evaluator, the hand-crafted terms ([`crate::eval`]) or
//! the network ([`crate::nnue`]): a DB's as a table ([`table::ScoreTable`], `pawnstorm
//! eval`'s and the Python package's), and those of positions held elsewhere, columns or
//! FEN text ([`columns`]). It sits above both evaluators, which know nothing of each other.

pub mod columns;
pub mod table;

pub use table::ScoreTable;
