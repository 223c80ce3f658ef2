//! Several inputs as one stream of positions, filtered, at the rates their weights ask:
//! what the loader and `export --mix` read.
//!
//! Without weights (a list of paths), the inputs are read one after the other, each once:
//! shards of one dataset. With weights, they are interleaved: the next position comes from
//! the input furthest below its share of the positions given so far (weight / sum of
//! weights), so that after any number of positions each input has given its share to within
//! one position. An input that ends starts again (a small dataset is oversampled, with fresh
//! random draws and, shuffling, a fresh block order); the pass ends when every input has
//! given every position of its first read (so the largest input relative to its weight is
//! read once and the others as many times as their shares ask). The rates are of positions kept by the filters: an
//! input that the filters thin out is read further to give its share.
//!
//! `--unique` in a mixed stream drops a position given before in the same round (the first
//! read of each input is round 0, its repeats rounds 1, 2, ...): an oversampled input's
//! repeats are what its weight asks for, not duplicates.
//!
//! A DB is read here, block by block; any other input (binpack, EPD, PGN, JSONL) is parsed
//! by a thread of its own that hands over records in chunks, so that several such inputs
//! can be read at once.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::mpsc::{Receiver, sync_channel};
use std::thread::JoinHandle;

use crate::db::{Block, Database, DbError};
use crate::eval::Evaluator;
use crate::export::filters::{Dropped, Filter, Row};
use crate::export::random::draw_key;
use crate::export::skips::{Ordered, Traits};
use crate::import::{self, AfterRejection, Handlers, ImportOptions, Source};
use crate::movegen::Board;
use crate::position::labels::Record;

/// One input and its weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Input {
    pub path: PathBuf,
    /// Share of the stream, relative to the other inputs' weights (positive).
    pub weight: f64,
}

/// Parses `PATH=WEIGHT` (`export --mix`): the last `=` splits, so a path may hold one; a
/// path alone has weight 1.
pub fn parse_input(text: &str) -> Result<Input, String> {
    if let Some((path, weight)) = text.rsplit_once('=')
        && let Ok(weight) = weight.trim().parse::<f64>()
    {
        if !(weight.is_finite() && weight > 0.0) {
            return Err(format!("`{text}`: the weight must be a positive number"));
        }
        if path.is_empty() {
            return Err(format!("`{text}` names no file before `=`"));
        }
        return Ok(Input {
            path: PathBuf::from(path),
            weight,
        });
    }
    Ok(Input {
        path: PathBuf::from(text),
        weight: 1.0,
    })
}

/// What a stream is made of: the loader's 32-byte positions, or whole records.
pub trait Item: Sized + Send + 'static {
    fn of_block_row(block: &Block<'_>, row: usize) -> Result<Self, String>;
    fn of_record(record: &Record) -> Self;
}

impl Item for Record {
    fn of_block_row(block: &Block<'_>, row: usize) -> Result<Record, String> {
        block.record(row).map_err(|e| e.to_string())
    }
    fn of_record(record: &Record) -> Record {
        record.clone()
    }
}

/// What one input did in a pass.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InputCounts {
    /// Positions read (a position read again on a second round counts again).
    pub read: u64,
    /// Positions given to the stream.
    pub given: u64,
    pub dropped: u64,
    /// Bad records skipped in a text or binpack input.
    pub rejected: u64,
    /// Times the input was read to its end.
    pub rounds: u32,
    /// Positions on the other side of the held-out split ([`Split`]): neither read nor
    /// dropped, they belong to the other stream.
    pub split_off: u64,
}

/// Which side of the held-out split a stream gives: every position, or one side of
/// `tune`'s split at a fraction ([`crate::training::tune::data::held_out`]: by game where
/// the input has game ids, else by runs of consecutive positions), so that a trainer's
/// held-out positions are whole games it never trained on, and the same games `tune` holds
/// out from the same inputs in the same order.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Split {
    #[default]
    All,
    Training(f64),
    HeldOut(f64),
}

impl Split {
    /// Whether the position at `index` of input `source` (of game `game`) is on this side.
    #[inline]
    pub fn keeps(self, source: u32, game: Option<u32>, index: u64) -> bool {
        use crate::training::tune::data::held_out;
        match self {
            Split::All => true,
            Split::Training(fraction) => !held_out(source, game, index, fraction),
            Split::HeldOut(fraction) => held_out(source, game, index, fraction),
        }
    }
}

/// How a stream is read.
#[derive(Clone, Debug)]
pub struct MixConfig {
    pub inputs: Vec<Input>,
    /// Interleave at the weights' rates, each input cycling; otherwise one input after the
    /// other, each once.
    pub mixing: bool,
    pub filter: Filter,
    /// Read each DB's blocks in a random order (new each round), from `seed`.
    pub shuffle_blocks: bool,
    pub seed: u64,
    /// The side of the held-out split given, decided before the filters.
    pub split: Split,
}

/// Records a parsing thread hands over at once.
const RECORD_CHUNK: usize = 4096;

/// Inputs read one after the other: how many of them are parsed at once (the one read and
/// those after it). Every input's parser started at once held its chunks of records
/// in memory together: 14.7 GB at the first pass over 654 binpacks, which the kernel's
/// OOM killer ended with 11 GB of tmpfs in use.
const PARSED_AHEAD: usize = 4;

enum Message {
    Records(Vec<Record>),
    /// The input was read to its end, with this many bad records in that round.
    End(u64),
    Failed(String),
}

/// A parsing thread to start: its input, whether it reads it over and over, and where it
/// hands over.
struct Parser {
    path: PathBuf,
    cycle: bool,
    tx: std::sync::mpsc::SyncSender<Message>,
}

/// An input being read.
enum Reading {
    Db {
        db: Database,
        order: Vec<usize>,
        next: usize,
        rng: u64,
        shuffle: bool,
    },
    Parsed {
        rx: Receiver<Message>,
        /// The record read last, decided when the one after it arrives (it may tell the
        /// move played).
        pending: Option<Record>,
        ordinal: u64,
    },
}

struct Reader<T> {
    source: Reading,
    out: Output<T>,
    weight: f64,
    /// Read to its end at least once in this pass.
    done: bool,
    /// Positions its first round kept: once it has given as many (the queue is in order),
    /// the first round is all out.
    first_round: u64,
    /// A round gave no position: it is not asked again.
    barren: bool,
}

/// What an input has read and kept.
struct Output<T> {
    queue: VecDeque<T>,
    counts: InputCounts,
    /// Kept in the current round, to find an input that gives nothing.
    kept_this_round: u64,
}

/// Filtering state shared by the inputs of a stream.
struct Context<'a> {
    filter: &'a Filter,
    split: Split,
    evaluator: Option<Evaluator>,
    ordered: Ordered,
    dropped: Dropped,
}

/// Runs one pass: `emit` gets each position given, in the stream's order; `progress` hears
/// the counts after each block or chunk read. Deterministic given the config.
pub fn run<T: Item>(
    config: &MixConfig,
    mut emit: impl FnMut(T) -> Result<(), String>,
    mut progress: impl FnMut(&[InputCounts], &Dropped),
) -> Result<(Vec<InputCounts>, Dropped), String> {
    if config.inputs.is_empty() {
        return Err("no inputs".to_string());
    }
    let mut threads: Vec<JoinHandle<()>> = Vec::new();
    let mut readers: Vec<Reader<T>> = Vec::with_capacity(config.inputs.len());
    // The parsers not started yet, by input: mixed, all start at once (every input gives
    // from the first); read one after the other, a few ahead of the one read
    // ([`PARSED_AHEAD`]).
    let mut unstarted: Vec<Option<Parser>> = Vec::with_capacity(config.inputs.len());
    for (i, input) in config.inputs.iter().enumerate() {
        if !(input.weight.is_finite() && input.weight > 0.0) {
            return Err(format!(
                "{}: the weight must be a positive number, not {}",
                input.path.display(),
                input.weight
            ));
        }
        let source = match Database::open(&input.path) {
            Ok(db) => {
                unstarted.push(None);
                let order: Vec<usize> = (0..db.block_count()).collect();
                Reading::Db {
                    db,
                    order,
                    next: 0,
                    rng: config.seed ^ draw_key(i as u32, u32::MAX, 0x0b10c),
                    shuffle: config.shuffle_blocks,
                }
            }
            Err(DbError::NotADatabase { .. }) => {
                let (tx, rx) = sync_channel(2);
                unstarted.push(Some(Parser {
                    path: input.path.clone(),
                    cycle: config.mixing,
                    tx,
                }));
                Reading::Parsed {
                    rx,
                    pending: None,
                    ordinal: 0,
                }
            }
            Err(e) => return Err(e.to_string()),
        };
        let mut reader = Reader {
            source,
            out: Output {
                queue: VecDeque::new(),
                counts: InputCounts::default(),
                kept_this_round: 0,
            },
            weight: input.weight,
            done: false,
            first_round: 0,
            barren: false,
        };
        reader.start_round(0);
        readers.push(reader);
    }
    let mut context = Context {
        filter: &config.filter,
        split: config.split,
        evaluator: config.filter.evaluator(),
        ordered: Ordered::new(&config.filter),
        dropped: Dropped::default(),
    };
    if config.mixing {
        start_parsers(&mut unstarted, &mut threads);
    }
    let outcome = (|| -> Result<(), String> {
        loop {
            let Some(i) = next_input(&readers, config.mixing) else {
                return Ok(());
            };
            let reader = &mut readers[i];
            if let Some(item) = reader.out.queue.pop_front() {
                reader.out.counts.given += 1;
                emit(item)?;
                continue;
            }
            if !config.mixing {
                let ahead = (i + PARSED_AHEAD).min(unstarted.len());
                start_parsers(&mut unstarted[i..ahead], &mut threads);
            }
            let ended = reader.fill(i as u32, &mut context)?;
            if ended {
                if !reader.done {
                    reader.first_round = reader.out.kept_this_round;
                }
                reader.done = true;
                reader.barren |= reader.out.kept_this_round == 0;
                reader.out.counts.rounds += 1;
                reader.out.kept_this_round = 0;
                let round = reader.out.counts.rounds;
                reader.start_round(round);
            }
            let counts: Vec<InputCounts> = readers.iter().map(|r| r.out.counts.clone()).collect();
            progress(&counts, &context.dropped);
        }
    })();
    let counts: Vec<InputCounts> = readers.iter().map(|r| r.out.counts.clone()).collect();
    // The parsing threads stop at their next hand-over, which now fails.
    drop(readers);
    drop(unstarted);
    for thread in threads {
        let _ = thread.join();
    }
    outcome.map(|()| (counts, context.dropped))
}

/// Starts the parsing threads of `parsers` not started yet.
fn start_parsers(parsers: &mut [Option<Parser>], threads: &mut Vec<JoinHandle<()>>) {
    for parser in parsers {
        if let Some(Parser { path, cycle, tx }) = parser.take() {
            threads.push(std::thread::spawn(move || parse(path, cycle, tx)));
        }
    }
}

/// The input to take the next position from, `None` when the pass is over.
fn next_input<T>(readers: &[Reader<T>], mixing: bool) -> Option<usize> {
    if !mixing {
        return readers
            .iter()
            .position(|r| !r.done || !r.out.queue.is_empty());
    }
    // Over when every input has given all of its first round.
    if readers
        .iter()
        .all(|r| r.done && r.out.counts.given >= r.first_round)
    {
        return None;
    }
    // The input furthest below its share: the least given per unit of weight (the first
    // such, on a tie).
    readers
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.barren)
        .min_by(|(_, a), (_, b)| {
            (a.out.counts.given as f64 / a.weight)
                .total_cmp(&(b.out.counts.given as f64 / b.weight))
        })
        .map(|(i, _)| i)
}

/// What `--unique` mixes into the keys of round `round` of an input: the first read of
/// every input is round 0, and a position is a duplicate of one given before in the same
/// round, so that an oversampled input's repeats are not duplicates of its first read.
fn round_salt(round: u32) -> u64 {
    if round == 0 {
        0
    } else {
        draw_key(u32::MAX, round, 0x0007_a1e5)
    }
}

/// Parses `path` into `tx`, over and over when `cycle`, until the receiver is gone.
fn parse(path: PathBuf, cycle: bool, tx: std::sync::mpsc::SyncSender<Message>) {
    loop {
        let source = Source::File(path.clone());
        let mut chunk = Vec::with_capacity(RECORD_CHUNK);
        let mut rejected = 0u64;
        let mut gone = false;
        let result = import::import(
            &source,
            source.format(),
            &ImportOptions::default(),
            &mut 0,
            &mut Handlers {
                records: &mut |records| {
                    for record in records {
                        chunk.push(record.clone());
                        if chunk.len() == RECORD_CHUNK {
                            let full =
                                std::mem::replace(&mut chunk, Vec::with_capacity(RECORD_CHUNK));
                            if tx.send(Message::Records(full)).is_err() {
                                gone = true;
                                return Err(DbError::Io {
                                    path: path.clone(),
                                    error: std::io::Error::other("the reader is gone"),
                                });
                            }
                        }
                    }
                    Ok(())
                },
                reject: &mut |_| {
                    rejected += 1;
                    AfterRejection::Continue
                },
                progress: &mut |_| {},
            },
        );
        if gone {
            return;
        }
        if let Err(e) = result {
            let _ = tx.send(Message::Failed(e.to_string()));
            return;
        }
        if !chunk.is_empty() && tx.send(Message::Records(chunk)).is_err() {
            return;
        }
        if tx.send(Message::End(rejected)).is_err() || !cycle {
            return;
        }
    }
}

impl<T: Item> Reader<T> {
    /// Prepares round `round` (0 the first): a DB's block order.
    fn start_round(&mut self, round: u32) {
        if let Reading::Db {
            order,
            next,
            rng,
            shuffle,
            ..
        } = &mut self.source
        {
            *next = 0;
            order.sort_unstable();
            if *shuffle {
                let mut state = *rng ^ draw_key(0, round, 0x5eed);
                for i in (1..order.len()).rev() {
                    state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
                    let r = draw_key(0, 0, state);
                    let j = ((r as u128 * (i as u128 + 1)) >> 64) as usize;
                    order.swap(i, j);
                }
            }
        }
    }

    /// Reads one block or chunk into the queue; `true` when the input ended instead.
    fn fill(&mut self, input: u32, context: &mut Context<'_>) -> Result<bool, String> {
        let round = self.out.counts.rounds;
        let out = &mut self.out;
        match &mut self.source {
            Reading::Db {
                db, order, next, ..
            } => {
                let Some(&b) = order.get(*next) else {
                    return Ok(true);
                };
                *next += 1;
                let block = db.block(b).map_err(|e| e.to_string())?;
                let base = (b * db.block_size()) as u64;
                let filter = context.filter;
                let split = context.split;
                for row in 0..block.len {
                    if split != Split::All {
                        let game = block
                            .game_id
                            .map(|c| c[row])
                            .filter(|&g| g != crate::db::NO_GAME);
                        if !split.keeps(input, game, base + row as u64) {
                            out.counts.split_off += 1;
                            continue;
                        }
                    }
                    out.counts.read += 1;
                    let draw = draw_key(input, round, base + row as u64);
                    let mut kept = true;
                    if filter.has_row_rules() {
                        let mut view = if filter.needs_move() {
                            Row::of_block_in_game(&block, row, || db.block(b + 1).ok())
                        } else {
                            Row::of_block(&block, row)
                        };
                        view.draw = draw;
                        let board = || block.record(row).ok().map(|r| Board::new(r.position));
                        if let Some(reason) = filter.check(&view, board, context.evaluator.as_mut())
                        {
                            context.dropped.add(reason);
                            kept = false;
                        }
                    }
                    if kept && !context.ordered.is_empty() {
                        let mut traits =
                            crate::training::arrays::traits_of_row(filter, &block, row, base);
                        traits.draw = draw;
                        traits.key ^= round_salt(round);
                        if let Some(reason) = context.ordered.check(&traits) {
                            context.dropped.add(reason);
                            kept = false;
                        }
                    }
                    if kept {
                        out.kept_this_round += 1;
                        out.queue.push_back(T::of_block_row(&block, row)?);
                    } else {
                        out.counts.dropped += 1;
                    }
                }
                Ok(false)
            }
            Reading::Parsed {
                rx,
                pending,
                ordinal,
            } => {
                let message = rx
                    .recv()
                    .map_err(|_| "a parsing thread stopped".to_string())?;
                let (records, ended) = match message {
                    Message::Records(records) => (records, None),
                    Message::End(rejected) => (Vec::new(), Some(rejected)),
                    Message::Failed(message) => return Err(message),
                };
                for record in records {
                    if let Some(before) = pending.replace(record) {
                        let draw = draw_key(input, round, *ordinal);
                        let place = (input, *ordinal);
                        *ordinal += 1;
                        decide(out, before, pending.as_ref(), place, (draw, round), context);
                    }
                }
                if let Some(rejected) = ended {
                    if let Some(last) = pending.take() {
                        let draw = draw_key(input, round, *ordinal);
                        let place = (input, *ordinal);
                        decide(out, last, None, place, (draw, round), context);
                    }
                    *ordinal = 0;
                    out.counts.rejected += rejected;
                    return Ok(true);
                }
                Ok(false)
            }
        }
    }
}

/// Filters a parsed record (`next`: the one after it in the input; `place`: its input and
/// index there) into the queue.
fn decide<T: Item>(
    out: &mut Output<T>,
    record: Record,
    next: Option<&Record>,
    (source, index): (u32, u64),
    (draw, draw_round): (u64, u32),
    context: &mut Context<'_>,
) {
    if !context.split.keeps(source, record.labels.game_id, index) {
        out.counts.split_off += 1;
        return;
    }
    out.counts.read += 1;
    let filter = context.filter;
    if filter.has_row_rules() {
        let mut row = Row::of_record(&record).with_next_record(&record, next);
        row.draw = draw;
        let board = || Some(Board::new(record.position.clone()));
        if let Some(reason) = filter.check(&row, board, context.evaluator.as_mut()) {
            context.dropped.add(reason);
            out.counts.dropped += 1;
            return;
        }
    }
    if !context.ordered.is_empty() {
        let traits = Traits {
            key: if filter.unique {
                crate::position::zobrist::full_key(&record.position) ^ round_salt(draw_round)
            } else {
                0
            },
            draw,
            result: record.labels.result.map(|r| r.to_i8()),
            pieces: {
                let b = record.position.boards();
                (b.colors[0] | b.colors[1]).count_ones() as u8
            },
        };
        if let Some(reason) = context.ordered.check(&traits) {
            context.dropped.add(reason);
            out.counts.dropped += 1;
            return;
        }
    }
    out.kept_this_round += 1;
    out.queue.push_back(T::of_record(&record));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_parse_with_and_without_a_weight() {
        assert_eq!(
            parse_input("a.psdb=3").unwrap(),
            Input {
                path: "a.psdb".into(),
                weight: 3.0
            }
        );
        assert_eq!(parse_input("b.binpack").unwrap().weight, 1.0);
        // The last `=` splits; a name with `=` and no weight stays whole.
        assert_eq!(
            parse_input("x=y.psdb=0.5").unwrap().path,
            PathBuf::from("x=y.psdb")
        );
        assert_eq!(
            parse_input("x=y.psdb").unwrap().path,
            PathBuf::from("x=y.psdb")
        );
        assert!(parse_input("a.psdb=0").is_err());
        assert!(parse_input("a.psdb=-2").is_err());
        assert!(parse_input("=2").is_err());
    }

    /// Read one after the other, inputs beyond the first [`PARSED_AHEAD`] (whose parsers
    /// start as the reading reaches them) give every position, in order.
    #[test]
    fn inputs_read_in_turn_give_every_position_in_order() {
        let dir = tempfile::tempdir().expect("temporary folder");
        let files = 3 * PARSED_AHEAD;
        let mut inputs = Vec::new();
        for file in 0..files {
            let path = dir.path().join(format!("{file}.epd"));
            // Each position names its file and line by its fullmove number.
            let text: String = (0..5)
                .map(|line| format!("4k3/8/8/8/8/8/8/4K3 w - - 0 {}\n", file * 10 + line + 1))
                .collect();
            std::fs::write(&path, text).expect("an input");
            inputs.push(Input { path, weight: 1.0 });
        }
        let config = MixConfig {
            inputs,
            mixing: false,
            filter: Filter::default(),
            shuffle_blocks: false,
            seed: 1,
            split: Split::All,
        };
        let mut given = Vec::new();
        run::<Record>(
            &config,
            |record| {
                given.push(record.position.fullmove_number());
                Ok(())
            },
            |_, _| {},
        )
        .expect("the pass");
        let expected: Vec<u16> = (0..files)
            .flat_map(|file| (0..5).map(move |line| (file * 10 + line + 1) as u16))
            .collect();
        assert_eq!(given, expected);
    }
}
