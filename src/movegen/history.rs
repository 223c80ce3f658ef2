//! Draws by the history of a game: repetition over the Zobrist keys and the fifty-move
//! rule, and `Game`, a board with its past.

use super::{Board, Move, count_legal_moves};

/// The Zobrist keys of the positions before the current one, oldest first.
///
/// Only positions since the last irreversible move (pawn move, capture, lost castling
/// right — exactly what resets the halfmove clock or changes the key's castling part) can
/// repeat; the halfmove clock says how far back that is, and only every other entry has
/// the same side to move.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct History {
    keys: Vec<u64>,
}

impl History {
    /// An empty history.
    pub fn new() -> History {
        History::default()
    }

    /// Records the key of a position about to be left by a move.
    pub fn push(&mut self, key: u64) {
        self.keys.push(key);
    }

    /// Forgets the most recent key (when a move is taken back).
    pub fn pop(&mut self) -> Option<u64> {
        self.keys.pop()
    }

    /// How many keys are recorded.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether no key is recorded.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// How many earlier positions, within the reversible stretch, equal `board`'s
    /// (same key, so same side to move).
    pub fn repetitions(&self, board: &Board) -> usize {
        let reversible = usize::from(board.position().halfmove_clock()).min(self.keys.len());
        let key = board.key();
        self.keys[self.keys.len() - reversible..]
            .iter()
            .rev()
            .skip(1)
            .step_by(2)
            .filter(|&&earlier| earlier == key)
            .count()
    }

    /// Whether `board`'s position has occurred before (the search's draw test).
    pub fn is_repetition(&self, board: &Board) -> bool {
        self.repetitions(board) > 0
    }
}

/// Whether the fifty-move rule draws the game: a hundred plies without a pawn move or
/// capture, unless the last of them mated.
pub fn is_fifty_move_draw(board: &Board) -> bool {
    board.position().halfmove_clock() >= 100 && !(board.in_check() && count_legal_moves(board) == 0)
}

/// How a game stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The side to move is mated.
    Checkmate,
    /// The side to move has no move and is not in check.
    Stalemate,
    /// The same position for the third time.
    ThreefoldRepetition,
    /// A hundred plies without a pawn move or capture.
    FiftyMoves,
}

/// A board with the keys of the positions that led to it, so moves can be played, taken
/// back and the game's draws detected.
#[derive(Clone, Debug)]
pub struct Game {
    boards: Vec<Board>,
    history: History,
}

impl Game {
    /// A game starting from `board`.
    pub fn new(board: Board) -> Game {
        Game {
            boards: vec![board],
            history: History::new(),
        }
    }

    /// The current position.
    pub fn board(&self) -> &Board {
        self.boards.last().expect("a game always has a position")
    }

    /// The keys of the earlier positions.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// Plays `mv`, which must be legal in the current position.
    pub fn play(&mut self, mv: Move) {
        let next = self.board().play(mv);
        self.history.push(self.board().key());
        self.boards.push(next);
    }

    /// Takes the last move back; false if there is none.
    pub fn undo(&mut self) -> bool {
        if self.boards.len() < 2 {
            return false;
        }
        self.boards.pop();
        self.history.pop();
        true
    }

    /// Whether the game is over, and how. Mate is tested first, so a mate on the
    /// hundredth reversible ply is a mate.
    pub fn outcome(&self) -> Option<Outcome> {
        let board = self.board();
        if count_legal_moves(board) == 0 {
            return Some(if board.in_check() {
                Outcome::Checkmate
            } else {
                Outcome::Stalemate
            });
        }
        if self.history.repetitions(board) >= 2 {
            return Some(Outcome::ThreefoldRepetition);
        }
        if board.position().halfmove_clock() >= 100 {
            return Some(Outcome::FiftyMoves);
        }
        None
    }
}
