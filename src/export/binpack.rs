//! Stockfish's `.binpack`, written by the `sfbinpack` crate's writer: the worker threads
//! turn records into entries ([`crate::db::binpack::entry_of_record`]); one writer takes them
//! in DB order, so a game's positions, one after another with their moves, become one chain
//! (a first position, then about 2.5 bytes a position) and anything else starts a new one.
//!
//! A position without a score, a result or a move is skipped and counted: the format holds
//! all three for every position.

use std::io::{self, Write};

use sfbinpack::{CompressedTrainingDataEntryWriter, TrainingDataEntry};

use crate::db::binpack::{Unwritable, entry_of_record};
use crate::db::{Database, DbError};
use crate::eval::Evaluator;
use crate::export::filters::Filter;

use super::{Chunk, Tally, for_each_kept};

/// A chunk's entries, in DB order.
pub fn chunk(
    db: &Database,
    chunk: &Chunk,
    filter: &Filter,
    evaluator: &mut Option<Evaluator>,
) -> Result<(Vec<TrainingDataEntry>, Tally), DbError> {
    let mut tally = Tally::default();
    let mut out = Vec::with_capacity((chunk.rows.end - chunk.rows.start) as usize);
    for_each_kept(
        db,
        chunk,
        filter,
        evaluator,
        &mut tally,
        |_, record, skipped| {
            match entry_of_record(&record) {
                Ok(entry) => out.push(entry),
                Err(Unwritable::NoScore) => skipped.no_score += 1,
                Err(Unwritable::NoResult) => skipped.no_result += 1,
                Err(Unwritable::NoMove) => skipped.no_move += 1,
            }
            Ok(())
        },
    )?;
    Ok((out, tally))
}

/// The binpack writer over a stream. The crate's writer drops a write error at its final
/// flush; [`BinpackSink::finish`] reports it.
pub struct BinpackSink<W: Write> {
    writer: CompressedTrainingDataEntryWriter<Keeping<W>>,
}

impl<W: Write> BinpackSink<W> {
    pub fn new(out: W) -> io::Result<BinpackSink<W>> {
        let writer = CompressedTrainingDataEntryWriter::new(Keeping {
            inner: out,
            error: None,
        })
        .map_err(io::Error::other)?;
        Ok(BinpackSink { writer })
    }

    pub fn write(&mut self, entries: &[TrainingDataEntry]) -> io::Result<()> {
        for entry in entries {
            self.writer.write_entry(entry).map_err(io::Error::other)?;
        }
        Ok(())
    }

    /// Writes what is buffered; the bytes written in all.
    pub fn finish(mut self) -> io::Result<u64> {
        self.writer.flush_and_end();
        let bytes = self.writer.written_bytes();
        let mut keeping = self.writer.into_inner()?;
        if let Some(error) = keeping.error.take() {
            return Err(error);
        }
        keeping.inner.flush()?;
        Ok(bytes)
    }
}

/// A stream that remembers its first error.
struct Keeping<W> {
    inner: W,
    error: Option<io::Error>,
}

impl<W: Write> Write for Keeping<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Err(io::Error::other("an earlier write failed"));
        }
        self.inner.write(buf).inspect_err(|e| {
            self.error = Some(io::Error::new(e.kind(), e.to_string()));
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}
