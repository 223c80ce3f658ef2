//! PGN import: every position of every game (after the skip/every filter), labelled with
//! the game's result, its game id, its ply, the move played from it, the mover's clock
//! after that move (`[%clk]`), the score of a lichess `[%eval]` comment after the move
//! that led to it, and the game's ratings and time control.
//!
//! python-chess is the reference: games are cut where its `read_game` cuts them (`cut`),
//! and their movetext tokenised and their moves read as it reads them (`san`, `game`),
//! the starting position read and checked by `shakmaty` (python-chess's FEN rules), the
//! moves found and played on pawnstorm's own board. A game python-chess reads cleanly comes out
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

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Counts, Handlers, ImportError, ImportOptions, Input, LineReader};
use crate::position::board::{CastlingRights, CastlingSide, Position, PositionParts};
use crate::position::labels::Record;
use cut::GameSpan;
use game::{Filter, Outcome};
use pawnstorm_kernels::{Bitboard, Color, Square};

/// Bytes of games read at once for each worker (and for two when there are fewer): about
/// 75 lichess games a worker, enough that a batch outweighs handing it to the workers and
/// waiting for the last of them, few enough that its records (about three times the
/// text's bytes) stay small. Two threads on 512 KiB in 4 runs each took 0.90–0.97 of the
/// time of 1 MiB in 16 (docs/THROUGHPUT.md); a batch grows with the workers so that each
/// keeps that share (a fixed 1 MiB gave 16 workers 64 KiB each).
const BATCH_BYTES_PER_THREAD: usize = 256 << 10;

pub(super) fn import_games(
    input: &mut Input,
    options: &ImportOptions,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let mut counts = Counts::default();
    let threads = options
        .threads
        .unwrap_or_else(rayon::current_num_threads)
        .max(1);
    let mut reader = BatchReader {
        carry: Vec::new(),
        carry_line: 1,
        eof: false,
        batch_bytes: BATCH_BYTES_PER_THREAD * threads.max(2),
    };
    // The reading side (its lines) and the side the stored records name (the file, the
    // bytes read so far) are borrowed apart, so that the next batch is read on a worker
    // while this thread stores.
    let Input {
        name,
        lines,
        bytes_read,
        ..
    } = input;
    let source = Named { name, bytes_read };
    if threads == 1 {
        let mut batch = Batch::default();
        loop {
            reader.fill(&mut batch, lines, name)?;
            if batch.games.is_empty() {
                break;
            }
            batch.replay(options, 1);
            store(&mut batch, &source, next_game_id, handlers, &mut counts)?;
        }
        return Ok(counts);
    }
    let pool = crate::io::workers::pool(Some(threads)).map_err(|e| ImportError::Io {
        file: name.clone(),
        error: std::io::Error::other(e),
    })?;
    // Three batches in a pipeline: one stored (on this thread), one replayed and one read
    // (on the workers, which the store does not hold up). Their buffers go round and are
    // reused, so that memory is allocated once.
    let mut done = Batch::default();
    let mut parsing = Batch::default();
    let mut reading = Batch::default();
    reader.fill(&mut parsing, lines, name)?;
    while !parsing.games.is_empty() || !done.games.is_empty() {
        let mut stored = Ok(());
        let mut read = Ok(());
        pool.in_place_scope(|scope| {
            // The read first: workers take what this thread hands them in order, but steal
            // each other's replay before they look at what is handed, so a read handed
            // second would wait for the replay's end (decompression, for a compressed
            // input, left to run alone at the end of every batch).
            let (next, reader, lines, read) = (&mut reading, &mut reader, &mut *lines, &mut read);
            let name = &*name;
            scope.spawn(move |_| *read = reader.fill(next, lines, name));
            let batch = &mut parsing;
            scope.spawn(move |_| batch.replay(options, threads));
            stored = store(&mut done, &source, next_game_id, handlers, &mut counts);
        });
        stored?;
        read?;
        std::mem::swap(&mut done, &mut parsing);
        std::mem::swap(&mut parsing, &mut reading);
    }
    Ok(counts)
}

/// Whole games of the input, where they are, and (once replayed) what became of them.
#[derive(Default)]
struct Batch {
    /// The games' bytes are `text[..len]`; the rest is room kept from earlier batches.
    text: Vec<u8>,
    len: usize,
    games: Vec<GameSpan>,
    /// The games' outcomes and records, a run of consecutive games each.
    runs: Vec<Run>,
}

#[derive(Default)]
struct Run {
    outcomes: Vec<Outcome>,
    records: Vec<Record>,
}

/// Games replayed together: enough runs that the workers share them out evenly (a run is
/// about 20 games), few enough that each is one task and one record buffer to store from.
const RUNS_PER_THREAD: usize = 4;

impl Batch {
    /// Replays the batch's games, in parallel when `threads` > 1 (inside a pool).
    fn replay(&mut self, options: &ImportOptions, threads: usize) {
        let runs = if threads == 1 {
            1
        } else {
            threads * RUNS_PER_THREAD
        };
        self.runs.resize_with(runs, Run::default);
        let per_run = self.games.len().div_ceil(runs).max(1);
        let text = &self.text[..self.len];
        let replay_run = |(run, spans): (&mut Run, &[GameSpan])| {
            run.outcomes.clear();
            run.records.clear();
            for span in spans {
                let outcome = game::read_game(text, span, options, &mut run.records);
                run.outcomes.push(outcome);
            }
        };
        for run in &mut self.runs {
            run.outcomes.clear();
            run.records.clear();
        }
        if threads == 1 {
            self.runs
                .iter_mut()
                .zip(self.games.chunks(per_run))
                .for_each(replay_run);
        } else {
            self.runs
                .par_iter_mut()
                .zip(self.games.par_chunks(per_run))
                .for_each(replay_run);
        }
    }
}

/// Reads the input in batches of whole games.
struct BatchReader {
    /// The start of a game not yet ended, for the next batch.
    carry: Vec<u8>,
    carry_line: u64,
    eof: bool,
    /// Bytes read into a batch (more when one game is longer).
    batch_bytes: usize,
}

impl BatchReader {
    /// Fills `batch` with the next games of input `name`; none at its end.
    fn fill(
        &mut self,
        batch: &mut Batch,
        lines: &mut LineReader,
        name: &str,
    ) -> Result<(), ImportError> {
        batch.games.clear();
        let carried = self.carry.len();
        if batch.text.len() < carried {
            batch.text.resize(carried, 0);
        }
        batch.text[..carried].copy_from_slice(&self.carry);
        batch.len = carried;
        self.carry.clear();
        let mut want = self.batch_bytes;
        loop {
            if !self.eof {
                self.eof = lines
                    .read_more(&mut batch.text, &mut batch.len, want)
                    .map_err(|error| ImportError::Io {
                        file: name.to_string(),
                        error,
                    })?;
            }
            let text = &batch.text[..batch.len];
            let (rest, rest_line) =
                cut::cut_games(text, self.carry_line, self.eof, &mut batch.games);
            if !batch.games.is_empty() || self.eof {
                self.carry.extend_from_slice(&text[rest..]);
                self.carry_line = rest_line;
                return Ok(());
            }
            // One game longer than the batch: read on to its end.
            want = batch.len.max(self.batch_bytes);
        }
    }
}

/// The input the records come from, as stores and refusals name it.
struct Named<'a> {
    name: &'a str,
    bytes_read: &'a AtomicU64,
}

/// Stores a batch's kept games and reports its refused ones, in input order.
fn store(
    batch: &mut Batch,
    input: &Named<'_>,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    let mut spans = batch.games.iter();
    for run in &mut batch.runs {
        // A run's buffer follows what it held lately, not the largest it ever held, so that
        // memory does not creep up with the length of the input.
        let used = run.records.len();
        if run.records.capacity() > 2 * used + 1024 {
            run.records.shrink_to(used + used / 2);
        }
        let mut records = run.records.as_mut_slice();
        for (outcome, span) in run.outcomes.drain(..).zip(&mut spans) {
            store_game(
                outcome,
                span,
                &batch.text[..batch.len],
                &mut records,
                input,
                next_game_id,
                handlers,
                counts,
            )?;
        }
    }
    batch.games.clear();
    (handlers.progress)(input.bytes_read.load(Ordering::Relaxed));
    Ok(())
}

/// Stores one game's records (numbering it) or counts why it was left out.
#[allow(clippy::too_many_arguments)]
fn store_game(
    outcome: Outcome,
    span: &GameSpan,
    text: &[u8],
    records: &mut &mut [Record],
    input: &Named<'_>,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    match outcome {
        Outcome::Kept(count) => {
            counts.games += 1;
            let game_id = *next_game_id;
            *next_game_id = next_game_id.saturating_add(1);
            let (game, rest) = std::mem::take(records).split_at_mut(count);
            *records = rest;
            for record in game.iter_mut() {
                record.labels.game_id = Some(game_id);
            }
            (handlers.records)(game)?;
            counts.positions += count as u64;
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
            let first = cut::next_line(&text[span.start..span.end], 0, true)
                .map_or(&[][..], |(line, _)| line);
            let text = String::from_utf8_lossy(first).trim().to_string();
            super::reject(input.name, handlers, span.first_line, reason, &text, counts)?;
        }
    }
    Ok(())
}

pub(super) fn side_to_move(position: &Chess) -> Color {
    match position.turn() {
        shakmaty::Color::White => Color::White,
        shakmaty::Color::Black => Color::Black,
    }
}

/// Converts a shakmaty position into a pawnstorm one. The en-passant square is kept only
/// when a legal capture exists, as python-chess writes FENs.
pub(crate) fn from_shakmaty(position: &Chess) -> Result<Position, String> {
    Position::from_parts(shakmaty_parts(position)?).map_err(|e| e.to_string())
}

fn shakmaty_parts(position: &Chess) -> Result<PositionParts, String> {
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
    Ok(PositionParts {
        pieces,
        colors,
        side_to_move,
        castling,
        en_passant,
        halfmove_clock,
        fullmove_number,
    })
}
