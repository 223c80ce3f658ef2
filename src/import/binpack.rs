//! Stockfish `.binpack` files: blocks of `BINP`, a little-endian `u32` size and that many
//! bytes of chains (a first position, then moves and scores). The blocks are read here,
//! from any stream (so a zstd-wrapped binpack or standard input works as a file does);
//! their chains are decoded by the `sfbinpack` crate and become records through
//! [`crate::db::binpack::record_of_entry`]. Each chain is one game: it gets the next game id.
//! A chain never crosses a block, so blocks are decoded on the workers, several at once,
//! while the group before is stored in file order (the crate's decoding, serial within a
//! block, was the import's ceiling).
//!
//! A damaged block cannot be decoded past its damage (chains are runs of variable-length
//! moves): its remaining positions are lost, it is reported as one rejection, and the import
//! goes on with the next block.

use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};

use rayon::prelude::*;
use sfbinpack::CompressedTrainingDataEntryReader;

use super::{Counts, Handlers, ImportError, Rejection};
use crate::db::binpack::record_of_entry;
use crate::position::labels::Record;

const MAGIC: &[u8; 4] = b"BINP";
/// Stockfish writes blocks of about 1 MB; anything far larger is not a binpack block.
const MAX_BLOCK_BYTES: u32 = 100 << 20;

/// A block as read: its bytes (header included) and its 1-based number in the file.
#[derive(Default)]
struct Block {
    number: u64,
    bytes: Vec<u8>,
    /// Its entries made records (or why not), each with whether it starts a chain.
    records: Vec<(Result<Record, String>, bool)>,
    /// Why decoding stopped before the block's end, if it did.
    damage: Option<String>,
}

impl Block {
    /// Decodes the block and makes its entries records. Blocks are independent (a chain
    /// never crosses one), so workers do this for several at once; the game ids are given
    /// when the records are stored, in file order.
    fn decode(&mut self) {
        self.records.clear();
        let records = &mut self.records;
        self.damage = decode_block(&self.bytes, |entry, starts_chain| {
            records.push((record_of_entry(entry, 0), starts_chain))
        });
    }
}

/// Why reading stopped: the file's end, or a block header or body that is not a block's.
enum End {
    Clean,
    Bad { block: u64, reason: String },
}

pub(super) fn import_binpack(
    name: &str,
    mut reader: Box<dyn Read>,
    bytes_read: &dyn Fn() -> u64,
    threads: Option<usize>,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let io_error = |error: io::Error| ImportError::Io {
        file: name.to_string(),
        error,
    };
    let threads = threads.unwrap_or_else(rayon::current_num_threads).max(1);
    let pool =
        crate::io::workers::pool(Some(threads)).map_err(|e| io_error(io::Error::other(e)))?;
    let mut store = Store {
        name,
        counts: Counts::default(),
        entry_number: 0,
        next_game_id,
        handlers,
    };
    // A pipeline of groups of `threads` blocks: one group stored (in file order, on this
    // thread) while the next is decoded by the workers, a block each. Blocks and their
    // buffers go round and are reused: a block holds hundreds of thousands of entries, and
    // fresh memory each time would cost its page faults again.
    let mut reading: Vec<Block> = (0..threads).map(|_| Block::default()).collect();
    let mut decoding: Vec<Block> = Vec::new();
    let mut storing: Vec<Block> = Vec::new();
    let mut block_number = 0u64;
    let mut end = None;
    loop {
        let mut filled = 0;
        while end.is_none() && filled < reading.len() {
            block_number += 1;
            match read_block(&mut reader, block_number, &mut reading[filled].bytes)
                .map_err(io_error)?
            {
                Ok(()) => {
                    reading[filled].number = block_number;
                    filled += 1;
                }
                Err(stop) => end = Some(stop),
            }
        }
        // Blocks [filled..] of the group were not read this round.
        let unread = reading.split_off(filled);
        std::mem::swap(&mut decoding, &mut reading);
        let mut stored = Ok(());
        pool.in_place_scope(|scope| {
            let group = &mut decoding;
            scope.spawn(move |_| group.par_iter_mut().for_each(Block::decode));
            stored = storing.iter_mut().try_for_each(|block| store.block(block));
        });
        stored?;
        (store.handlers.progress)(bytes_read());
        // The group just stored is read into next; the one decoded is stored next.
        reading = std::mem::take(&mut storing);
        reading.extend(unread);
        reading.truncate(threads);
        while reading.len() < threads {
            reading.push(Block::default());
        }
        storing = std::mem::take(&mut decoding);
        if storing.is_empty() {
            break;
        }
    }
    if let Some(End::Bad { block, reason }) = end {
        store.reject(block, reason)?;
    }
    Ok(store.counts)
}

/// Stores decoded blocks in file order: game ids, entry numbers, counts and rejections.
struct Store<'n, 'h> {
    name: &'n str,
    counts: Counts,
    entry_number: u64,
    next_game_id: &'n mut u32,
    handlers: &'n mut Handlers<'h>,
}

impl Store<'_, '_> {
    fn block(&mut self, block: &mut Block) -> Result<(), ImportError> {
        let block_number = block.number;
        for (record, starts_chain) in &mut block.records {
            self.entry_number += 1;
            if *starts_chain {
                *self.next_game_id = self.next_game_id.saturating_add(1);
            }
            match record {
                Ok(record) => {
                    record.labels.game_id = Some(self.next_game_id.saturating_sub(1));
                    (self.handlers.records)(std::slice::from_ref(record))?;
                    self.counts.positions += 1;
                }
                Err(reason) => {
                    let entry_number = self.entry_number;
                    self.reject(
                        entry_number,
                        format!("block {block_number}, position {entry_number}: {reason}"),
                    )?
                }
            }
        }
        if let Some(damage) = &block.damage {
            self.reject(
                block_number,
                format!(
                    "block {block_number}: damaged after {} positions ({damage}); the rest of the block is lost",
                    block.records.len()
                ),
            )?;
        }
        Ok(())
    }

    fn reject(&mut self, line: u64, reason: String) -> Result<(), ImportError> {
        self.counts.rejected += 1;
        let rejection = Rejection {
            file: self.name.to_string(),
            line,
            reason,
            text: String::new(),
        };
        match (self.handlers.reject)(&rejection) {
            super::AfterRejection::Continue => Ok(()),
            super::AfterRejection::Stop => Err(ImportError::Stopped(rejection)),
        }
    }
}

/// Reads block `number` (header included) into `bytes`; `Ok(Err(end))` when there is none
/// to read: the file ended, or what follows is not a block (the rest is not read).
fn read_block(
    reader: &mut dyn Read,
    number: u64,
    bytes: &mut Vec<u8>,
) -> io::Result<Result<(), End>> {
    let mut header = [0u8; 8];
    let got = read_full(reader, &mut header)?;
    if got == 0 {
        return Ok(Err(End::Clean));
    }
    let bad = |reason: String| {
        Ok(Err(End::Bad {
            block: number,
            reason,
        }))
    };
    if got < header.len() || &header[..4] != MAGIC {
        return bad(format!(
            "block {number}: no binpack block header (BINP and a size) where one should start; the rest of the file is not read"
        ));
    }
    let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
    if size > MAX_BLOCK_BYTES {
        return bad(format!(
            "block {number}: size {size} bytes is not a binpack block's; the rest of the file is not read"
        ));
    }
    bytes.clear();
    bytes.extend_from_slice(&header);
    let body = reader.take(size as u64).read_to_end(bytes)?;
    if body < size as usize {
        return bad(format!(
            "block {number}: the file ends {body} bytes into a {size}-byte block"
        ));
    }
    Ok(Ok(()))
}

/// Hands every entry of one block (header included) to `each`, with whether it starts a
/// chain; why decoding stopped early, if it did. The crate trusts its input (it indexes and
/// unwraps as it decodes), so damage shows as a panic: it is caught here and ends the block.
fn decode_block(
    block: &[u8],
    mut each: impl FnMut(&sfbinpack::TrainingDataEntry, bool),
) -> Option<String> {
    install_quiet_panic_hook();
    if block.len() <= 8 {
        return None;
    }
    let outcome = quietly(|| {
        let mut reader =
            CompressedTrainingDataEntryReader::from_slice(block).map_err(|e| format!("{e}"))?;
        let mut starts_chain = true;
        while reader.has_next() {
            let entry = reader.next();
            each(&entry, starts_chain);
            starts_chain = !reader.is_next_entry_continuation();
        }
        Ok::<(), String>(())
    });
    match outcome {
        Ok(Ok(())) => None,
        Ok(Err(reason)) | Err(reason) => Some(reason),
    }
}

/// Runs `f`, turning a panic into its message, without the panic's report on standard
/// error (a damaged block is reported once, as a rejection).
pub(super) fn quietly<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    QUIET.with(|q| q.set(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(false));
    outcome.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "undecodable".to_string())
    })
}

thread_local! {
    static QUIET: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Installs (once) a panic hook that stays silent for panics [`quietly`] catches and
/// reports every other panic as before.
pub(super) fn install_quiet_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if !QUIET.with(|q| q.get()) {
                previous(info);
            }
        }));
    });
}

/// Reads until `buf` is full or the input ends; the number of bytes read.
fn read_full(reader: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match reader.read(&mut buf[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}
