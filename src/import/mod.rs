//! Importing positions: EPD/FEN line files and PGN games, plain or gzip-compressed, from
//! files or standard input, streamed record by record into a sink (usually a `DbWriter`).
//!
//! Bad records are reported (file, line, reason, text) and skipped; the caller decides
//! whether a rejection stops the import (`--strict`).

mod pgn;

use std::fmt;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use flate2::read::MultiGzDecoder;
use thiserror::Error;

use crate::db::DbError;
use crate::labels::{self, Record};

/// Where records come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    /// `-` is standard input, anything else a path.
    pub fn from_arg(arg: &str) -> Source {
        if arg == "-" {
            Source::Stdin
        } else {
            Source::File(PathBuf::from(arg))
        }
    }

    pub fn name(&self) -> String {
        match self {
            Source::Stdin => "<stdin>".to_string(),
            Source::File(path) => path.display().to_string(),
        }
    }

    /// The input's format, from its extension (a `.gz` suffix looked through): `.pgn` is
    /// PGN, everything else (`.epd`, `.fen`, `.txt`, standard input) is one record a line.
    pub fn format(&self) -> Format {
        let Source::File(path) = self else {
            return Format::Lines;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if name.ends_with(".pgn") {
            Format::Pgn
        } else {
            Format::Lines
        }
    }
}

/// How an input's records are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// EPD or FEN, one position a line, labels as `labels::parse_line` reads them.
    Lines,
    /// PGN games: every position of every game, labelled with the game's result.
    Pgn,
}

/// Options that shape which positions an import keeps.
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions {
    /// PGN: leave out positions before this ply (0 = the starting position is kept).
    pub skip_plies: u32,
    /// PGN: keep every k-th position from `skip_plies` on (1 = all).
    pub every: u32,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            skip_plies: 0,
            every: 1,
        }
    }
}

/// A record that was not imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub file: String,
    pub line: u64,
    pub reason: String,
    pub text: String,
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {:?}",
            self.file, self.line, self.reason, self.text
        )
    }
}

/// Whether an import goes on after a rejection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AfterRejection {
    Continue,
    Stop,
}

#[derive(Debug, Error)]
pub enum ImportError {
    // `error`, not `source`: the message already includes it, and a chain would repeat it.
    #[error("{file}: {error}")]
    Io { file: String, error: io::Error },
    #[error(transparent)]
    Db(#[from] DbError),
    #[error("stopped at the first bad record (--strict): {0}")]
    Stopped(Rejection),
}

/// What one input gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub positions: u64,
    pub rejected: u64,
    pub games: u64,
}

/// The callbacks of an import.
pub struct Handlers<'a> {
    /// Receives each good record.
    pub record: &'a mut dyn FnMut(&Record) -> Result<(), DbError>,
    /// Hears of each bad one.
    pub reject: &'a mut dyn FnMut(&Rejection) -> AfterRejection,
    /// Hears, now and then, how many bytes of the input (compressed) have been read.
    pub progress: &'a mut dyn FnMut(u64),
}

/// The size of an input in bytes, if known in advance (for a progress bar).
pub fn input_size(source: &Source) -> Option<u64> {
    match source {
        Source::Stdin => None,
        Source::File(path) => std::fs::metadata(path).ok().map(|m| m.len()),
    }
}

/// Imports one input. `next_game_id` numbers PGN games and is advanced past them.
pub fn import(
    source: &Source,
    format: Format,
    options: &ImportOptions,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let name = source.name();
    let bytes_read = Arc::new(AtomicU64::new(0));
    let reader = open(source, &bytes_read).map_err(|error| ImportError::Io {
        file: name.clone(),
        error,
    })?;
    let mut input = Input {
        name,
        lines: LineReader::new(reader),
        bytes_read,
        line: 0,
    };
    match format {
        Format::Lines => import_lines(&mut input, handlers),
        Format::Pgn => pgn::import_games(&mut input, options, next_game_id, handlers),
    }
}

/// An open input read line by line, counting lines and (compressed) bytes.
pub(crate) struct Input {
    name: String,
    lines: LineReader,
    bytes_read: Arc<AtomicU64>,
    line: u64,
}

/// Splits a stream into lines inside one large buffer, so that a line is a slice of it
/// and only a line that straddles two reads is moved.
struct LineReader {
    inner: Box<dyn Read>,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
}

impl LineReader {
    fn new(inner: Box<dyn Read>) -> LineReader {
        LineReader {
            inner,
            buffer: vec![0; 1 << 20],
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// The next line without its line ending (`\n` or `\r\n`), or `None` at the end.
    fn next_line(&mut self) -> io::Result<Option<&[u8]>> {
        loop {
            let pending = &self.buffer[self.start..self.end];
            if let Some(i) = memchr::memchr(b'\n', pending) {
                let line = self.start..self.start + i;
                self.start += i + 1;
                return Ok(Some(trim_line_end(&self.buffer[line])));
            }
            if self.eof {
                if self.start == self.end {
                    return Ok(None);
                }
                let line = self.start..self.end;
                self.start = self.end;
                return Ok(Some(trim_line_end(&self.buffer[line])));
            }
            self.buffer.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if self.end == self.buffer.len() {
                // A line longer than the buffer: make room rather than split it.
                self.buffer.resize(self.buffer.len() * 2, 0);
            }
            match self.inner.read(&mut self.buffer[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

impl Input {
    /// The next line, without its line ending; `None` at the end of the input.
    fn next_line(&mut self) -> Result<Option<&[u8]>, ImportError> {
        match self.lines.next_line() {
            Ok(Some(line)) => {
                self.line += 1;
                Ok(Some(line))
            }
            Ok(None) => Ok(None),
            Err(error) => Err(ImportError::Io {
                file: self.name.clone(),
                error,
            }),
        }
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }

    fn reject(
        &self,
        handlers: &mut Handlers<'_>,
        line: u64,
        reason: String,
        text: &str,
        counts: &mut Counts,
    ) -> Result<(), ImportError> {
        counts.rejected += 1;
        let rejection = Rejection {
            file: self.name.clone(),
            line,
            reason,
            text: text.to_string(),
        };
        match (handlers.reject)(&rejection) {
            AfterRejection::Continue => Ok(()),
            AfterRejection::Stop => Err(ImportError::Stopped(rejection)),
        }
    }
}

const PROGRESS_EVERY: u64 = 16 * 1024;

fn import_lines(input: &mut Input, handlers: &mut Handlers<'_>) -> Result<Counts, ImportError> {
    let mut counts = Counts::default();
    let mut rejected = None;
    while let Some(bytes) = input.next_line()? {
        let parsed = match std::str::from_utf8(bytes) {
            Ok(text) => {
                labels::parse_line(text).map_err(|e| (e.to_string(), text.trim().to_string()))
            }
            Err(_) => Err((
                "not valid UTF-8".to_string(),
                String::from_utf8_lossy(bytes).trim().to_string(),
            )),
        };
        match parsed {
            Ok(Some(record)) => {
                (handlers.record)(&record)?;
                counts.positions += 1;
            }
            Ok(None) => {}
            Err(rejection) => rejected = Some(rejection),
        }
        if let Some((reason, text)) = rejected.take() {
            input.reject(handlers, input.line, reason, &text, &mut counts)?;
        }
        if input.line.is_multiple_of(PROGRESS_EVERY) {
            (handlers.progress)(input.bytes_read());
        }
    }
    (handlers.progress)(input.bytes_read());
    Ok(counts)
}

/// Counts the bytes that pass, before any decompression, for the progress bar.
struct CountingReader<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for CountingReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Opens an input, decompressing it when it starts with the gzip magic bytes (whatever its
/// name), so `.gz` files and compressed standard input both work.
fn open(source: &Source, count: &Arc<AtomicU64>) -> io::Result<Box<dyn Read>> {
    let raw: Box<dyn Read> = match source {
        Source::Stdin => Box::new(io::stdin()),
        Source::File(path) => Box::new(open_file(path)?),
    };
    // Small: it only has to hold the magic bytes; the line reader's larger reads then go
    // past it straight to the source.
    let mut buffered = BufReader::with_capacity(
        8 * 1024,
        CountingReader {
            inner: raw,
            count: Arc::clone(count),
        },
    );
    let is_gzip = buffered.fill_buf()?.starts_with(&GZIP_MAGIC);
    Ok(if is_gzip {
        Box::new(MultiGzDecoder::new(buffered))
    } else {
        Box::new(buffered)
    })
}

fn open_file(path: &Path) -> io::Result<File> {
    let file = File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    Ok(file)
}
