//! Stockfish `.binpack` files: blocks of `BINP`, a little-endian `u32` size and that many
//! bytes of chains (a first position, then moves and scores). The blocks are read here,
//! from any stream (so a zstd-wrapped binpack or standard input works as a file does);
//! their chains are decoded by the `sfbinpack` crate and become records through
//! [`crate::db::binpack::record_of_entry`]. Each chain is one game: it gets the next game id.
//!
//! A damaged block cannot be decoded past its damage (chains are runs of variable-length
//! moves): its remaining positions are lost, it is reported as one rejection, and the import
//! goes on with the next block.

use std::io::{self, Read};
use std::panic::{self, AssertUnwindSafe};

use sfbinpack::CompressedTrainingDataEntryReader;

use super::{Counts, Handlers, ImportError, Rejection};
use crate::db::binpack::record_of_entry;

const MAGIC: &[u8; 4] = b"BINP";
/// Stockfish writes blocks of about 1 MB; anything far larger is not a binpack block.
const MAX_BLOCK_BYTES: u32 = 100 << 20;

pub(super) fn import_binpack(
    name: &str,
    mut reader: Box<dyn Read>,
    bytes_read: &dyn Fn() -> u64,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let io_error = |error: io::Error| ImportError::Io {
        file: name.to_string(),
        error,
    };
    let mut counts = Counts::default();
    // A block with its header: the crate reads blocks from a seekable stream.
    let mut block = Vec::with_capacity(1 << 20);
    let mut entry_number = 0u64;
    let mut block_number = 0u64;
    // Reused: a block holds hundreds of thousands of entries, and fresh memory each time
    // would cost its page faults again.
    let mut entries = Vec::new();
    loop {
        let mut header = [0u8; 8];
        let got = read_full(&mut reader, &mut header).map_err(io_error)?;
        if got == 0 {
            break;
        }
        block_number += 1;
        let reject = |counts: &mut Counts, handlers: &mut Handlers<'_>, line, reason: String| {
            counts.rejected += 1;
            let rejection = Rejection {
                file: name.to_string(),
                line,
                reason,
                text: String::new(),
            };
            match (handlers.reject)(&rejection) {
                super::AfterRejection::Continue => Ok(()),
                super::AfterRejection::Stop => Err(ImportError::Stopped(rejection)),
            }
        };
        if got < header.len() || &header[..4] != MAGIC {
            reject(
                &mut counts,
                handlers,
                block_number,
                format!(
                    "block {block_number}: no binpack block header (BINP and a size) where one should start; the rest of the file is not read"
                ),
            )?;
            break;
        }
        let size = u32::from_le_bytes([header[4], header[5], header[6], header[7]]);
        if size > MAX_BLOCK_BYTES {
            reject(
                &mut counts,
                handlers,
                block_number,
                format!(
                    "block {block_number}: size {size} bytes is not a binpack block's; the rest of the file is not read"
                ),
            )?;
            break;
        }
        block.clear();
        block.extend_from_slice(&header);
        let body = (&mut reader)
            .take(size as u64)
            .read_to_end(&mut block)
            .map_err(io_error)?;
        if body < size as usize {
            reject(
                &mut counts,
                handlers,
                block_number,
                format!(
                    "block {block_number}: the file ends {} bytes into a {size}-byte block",
                    body
                ),
            )?;
            break;
        }
        let damage = decode_block(&block, &mut entries);
        for (entry, starts_chain) in &entries {
            entry_number += 1;
            if *starts_chain {
                *next_game_id = next_game_id.saturating_add(1);
            }
            match record_of_entry(entry, next_game_id.saturating_sub(1)) {
                Ok(record) => {
                    (handlers.record)(&record)?;
                    counts.positions += 1;
                }
                Err(reason) => reject(
                    &mut counts,
                    handlers,
                    entry_number,
                    format!("block {block_number}, position {entry_number}: {reason}"),
                )?,
            }
        }
        if let Some(damage) = damage {
            reject(
                &mut counts,
                handlers,
                block_number,
                format!(
                    "block {block_number}: damaged after {} positions ({damage}); the rest of the block is lost",
                    entries.len()
                ),
            )?;
        }
        (handlers.progress)(bytes_read());
    }
    Ok(counts)
}

/// Every entry of one block (header included) into `entries`, each with whether it starts
/// a chain; why decoding stopped early, if it did. The crate trusts its input (it indexes
/// and unwraps as it decodes), so damage shows as a panic: it is caught here and ends the
/// block.
fn decode_block(
    block: &[u8],
    entries: &mut Vec<(sfbinpack::TrainingDataEntry, bool)>,
) -> Option<String> {
    install_quiet_panic_hook();
    entries.clear();
    if block.len() <= 8 {
        return None;
    }
    let outcome = quietly(|| {
        let mut reader =
            CompressedTrainingDataEntryReader::from_slice(block).map_err(|e| format!("{e}"))?;
        let mut starts_chain = true;
        while reader.has_next() {
            let entry = reader.next();
            entries.push((entry, starts_chain));
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
