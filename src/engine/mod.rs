//! The engine: the search, the UCI loop that drives it, and perft (the move generator's
//! node counts, `go perft`).

pub mod perft;
pub mod search;
pub mod uci;
