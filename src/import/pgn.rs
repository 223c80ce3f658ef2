//! PGN import: every position of every game (after the skip/every filter), labelled with
//! the game's result, its game id, its ply, the move played from it, the mover's clock
//! after that move (`[%clk]`), the score of a lichess `[%eval]` comment after the move
//! that led to it, and the game's ratings and time control.
//!
//! python-chess is the reference: games are cut where its `read_game` cuts them (`cut`),
//! and their movetext tokenised and their moves read as it reads them (`san`, `game`),
//! moves checked and played with `shakmaty`. A game python-chess reads cleanly comes out
//! with the same positions, or is refused with its line and the reason; never skipped,
//! merged or replayed differently.
//!
//! The input is read in batches of whole games: while the workers replay the games of one
//! batch, the calling thread stores the batch before (in input order: game ids as in the
//! file, rejections in order) and reads and decompresses the next, so memory stays at
//! three batches whatever the input's size.

use rayon::prelude::*;
use shakmaty::{Chess, EnPassantMode, Position as _, Role};

mod cut;
mod game;
mod san;

use super::{Counts, Handlers, ImportError, ImportOptions, Input};
use crate::position::board::{CastlingRights, CastlingSide, Position, PositionParts};
use cut::GameSpan;
use game::{Filter, Outcome};
use pawnstorm_kernels::{Bitboard, Color, Square};

/// Bytes of games read at once: a few thousand lichess games, enough that a batch
/// outweighs handing it to the workers.
const BATCH_BYTES: usize = 4 << 20;

pub(super) fn import_games(
    input: &mut Input,
    options: &ImportOptions,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let mut counts = Counts::default();
    let mut reader = BatchReader {
        carry: Vec::new(),
        carry_line: 1,
        eof: false,
    };
    let threads = options
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    if threads == 1 {
        let mut batch = Batch::default();
        let mut outcomes = Vec::new();
        loop {
            reader.fill(&mut batch, input)?;
            if batch.games.is_empty() {
                break;
            }
            outcomes.clear();
            outcomes.extend(
                batch
                    .games
                    .iter()
                    .map(|span| game::read_game(&batch.text, span, options)),
            );
            store(
                &batch,
                &mut outcomes,
                input,
                next_game_id,
                handlers,
                &mut counts,
            )?;
        }
        return Ok(counts);
    }
    let pool = crate::io::workers::pool(Some(threads)).map_err(|e| ImportError::Io {
        file: input.name.clone(),
        error: std::io::Error::other(e),
    })?;
    // Three batches in a pipeline: one stored, one replayed, one read.
    let mut done = (Batch::default(), Vec::new());
    let mut parsing = (Batch::default(), Vec::new());
    let mut reading = Batch::default();
    reader.fill(&mut parsing.0, input)?;
    while !parsing.0.games.is_empty() || !done.0.games.is_empty() {
        let mut stored = Ok(());
        let mut read = Ok(());
        pool.in_place_scope(|scope| {
            let (batch, outcomes) = &mut parsing;
            scope.spawn(|_| {
                batch
                    .games
                    .par_iter()
                    .with_min_len(8)
                    .map(|span| game::read_game(&batch.text, span, options))
                    .collect_into_vec(outcomes);
            });
            let (batch, outcomes) = &mut done;
            stored = store(batch, outcomes, input, next_game_id, handlers, &mut counts);
            read = reader.fill(&mut reading, input);
        });
        stored?;
        read?;
        std::mem::swap(&mut done, &mut parsing);
        std::mem::swap(&mut parsing.0, &mut reading);
    }
    Ok(counts)
}

/// Whole games of the input and where they are.
#[derive(Default)]
struct Batch {
    text: Vec<u8>,
    games: Vec<GameSpan>,
}

/// Reads the input in batches of whole games.
struct BatchReader {
    /// The start of a game not yet ended, for the next batch.
    carry: Vec<u8>,
    carry_line: u64,
    eof: bool,
}

impl BatchReader {
    /// Fills `batch` with the next games; none at the end of the input.
    fn fill(&mut self, batch: &mut Batch, input: &mut Input) -> Result<(), ImportError> {
        batch.text.clear();
        batch.games.clear();
        batch.text.append(&mut self.carry);
        let mut want = BATCH_BYTES;
        loop {
            if !self.eof {
                self.eof = input
                    .lines
                    .read_more(&mut batch.text, want)
                    .map_err(|error| ImportError::Io {
                        file: input.name.clone(),
                        error,
                    })?;
            }
            let (rest, rest_line) =
                cut::cut_games(&batch.text, self.carry_line, self.eof, &mut batch.games);
            if !batch.games.is_empty() || self.eof {
                self.carry.extend_from_slice(&batch.text[rest..]);
                self.carry_line = rest_line;
                return Ok(());
            }
            // One game longer than the batch: read on to its end.
            want = batch.text.len().max(BATCH_BYTES);
        }
    }
}

/// Stores a batch's kept games and reports its refused ones, in input order.
fn store(
    batch: &Batch,
    outcomes: &mut Vec<Outcome>,
    input: &Input,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    for (span, outcome) in batch.games.iter().zip(outcomes.drain(..)) {
        match outcome {
            Outcome::Kept(mut records) => {
                counts.games += 1;
                let game_id = *next_game_id;
                *next_game_id = next_game_id.saturating_add(1);
                for record in &mut records {
                    record.labels.game_id = Some(game_id);
                    (handlers.record)(record)?;
                }
                counts.positions += records.len() as u64;
            }
            Outcome::Dropped(filter) => {
                let dropped = &mut counts.dropped;
                *match filter {
                    Filter::MinElo => &mut dropped.min_elo,
                    Filter::MaxElo => &mut dropped.max_elo,
                    Filter::MinBaseSeconds => &mut dropped.min_base_seconds,
                    Filter::Speed => &mut dropped.speed,
                    Filter::Date => &mut dropped.date,
                    Filter::Termination => &mut dropped.termination,
                    Filter::RatedOnly => &mut dropped.rated_only,
                    Filter::RequireEval => &mut dropped.require_eval,
                } += 1;
            }
            Outcome::Rejected(reason) => {
                let first = cut::next_line(&batch.text[span.start..span.end], 0, true)
                    .map_or(&[][..], |(line, _)| line);
                let text = String::from_utf8_lossy(first).trim().to_string();
                input.reject(handlers, span.first_line, reason, &text, counts)?;
            }
        }
    }
    (handlers.progress)(input.bytes_read());
    Ok(())
}

fn side_to_move(position: &Chess) -> Color {
    match position.turn() {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// Converts a shakmaty position into a pawnstorm one. The en-passant square is kept only
/// when a legal capture exists, as python-chess writes FENs.
pub(crate) fn from_shakmaty(position: &Chess) -> Result<Position, String> {
    let board = position.board();
    let role = |r: Role| Bitboard(board.by_role(r).0);
    let pieces = [
        role(Role::Pawn),
        role(Role::Knight),
        role(Role::Bishop),
        role(Role::Rook),
        role(Role::Queen),
        role(Role::King),
    ];
    let colors = [
        Bitboard(board.by_color(shakmaty::Color::White).0),
        Bitboard(board.by_color(shakmaty::Color::Black).0),
    ];
    let side_to_move = side_to_move(position);
    let mut castling = CastlingRights::NONE;
    for rook in Bitboard(position.castles().castling_rights().0).squares() {
        let color = if rook.rank().index() == 0 {
            Color::White
        } else {
            Color::Black
        };
        let king_file = Bitboard(board.kings().0 & colors[color.index()].0)
            .first()
            .map(Square::file)
            .ok_or("castling rights without a king")?;
        let side = if rook.file() > king_file {
            CastlingSide::King
        } else {
            CastlingSide::Queen
        };
        castling.set(color, side, Some(rook.file()));
    }
    let en_passant = position
        .ep_square(EnPassantMode::Legal)
        .and_then(|sq| Square::new(u8::from(sq)));
    let halfmove_clock =
        u16::try_from(position.halfmoves()).map_err(|_| "halfmove clock too large")?;
    let fullmove_number =
        u16::try_from(position.fullmoves().get()).map_err(|_| "fullmove number too large")?;
    Position::from_parts(PositionParts {
        pieces,
        colors,
        side_to_move,
        castling,
        en_passant,
        halfmove_clock,
        fullmove_number,
    })
    .map_err(|e| e.to_string())
}
