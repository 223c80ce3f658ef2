//! Importing positions: EPD/FEN line files, PGN games and lichess evaluation JSON lines,
//! plain or compressed (gzip, zstd, bzip2: told by their magic bytes), from files or
//! standard input, streamed record by record into a sink (usually a `DbWriter`).
//!
//! Bad records are reported (file, line, reason, text) and skipped; the caller decides
//! whether a rejection stops the import (`--strict`).

mod binpack;
mod into_db;
pub(crate) mod jsonl;
pub mod lichess;
mod parquet;
mod pgn;

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use bzip2::read::MultiBzDecoder;
use flate2::read::MultiGzDecoder;
use thiserror::Error;

use crate::db::DbError;
use crate::position::labels::{self, Record};

pub use into_db::{Imported, IntoDb, Observers, import_sources};

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

    /// The input's format, from its extension (a compression suffix `.gz`, `.zst`,
    /// `.zstd` or `.bz2` looked through): `.pgn` is PGN, `.jsonl` and `.ndjson` lichess
    /// evaluation lines, `.binpack` Stockfish's training data, `.parquet` and `.pq` Parquet
    /// (as `export` names them), everything else (`.epd`, `.fen`, `.txt`, standard input)
    /// one record a line.
    pub fn format(&self) -> Format {
        let Source::File(path) = self else {
            return Format::Lines;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let name = COMPRESSION_SUFFIXES
            .iter()
            .find_map(|suffix| name.strip_suffix(suffix))
            .unwrap_or(&name);
        if name.ends_with(".pgn") {
            Format::Pgn
        } else if name.ends_with(".binpack") {
            Format::Binpack
        } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
            Format::Jsonl
        } else if name.ends_with(".parquet") || name.ends_with(".pq") {
            Format::Parquet
        } else {
            Format::Lines
        }
    }
}

const COMPRESSION_SUFFIXES: [&str; 4] = [".gz", ".zst", ".zstd", ".bz2"];

impl Source {}

/// How an input's records are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// EPD or FEN, one position a line, labels as `labels::parse_line` reads them.
    Lines,
    /// PGN games: every position of every game, labelled with the game's result, the
    /// movetext's `[%eval]` scores, the players' ratings, the time control and the move
    /// played.
    Pgn,
    /// lichess's evaluation database: one JSON object a line, a FEN and its evaluations.
    Jsonl,
    /// Stockfish's `.binpack` training data: each position with its score, result, ply and
    /// the move played; each chain of positions one game.
    Binpack,
    /// Apache Parquet with a FEN column (what `export --format parquet` writes, or any
    /// such file), labels from the columns named as the export names them.
    Parquet,
}

/// Options that shape which positions an import keeps, and how many threads read them.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// PGN: leave out positions before this ply (0 = the starting position is kept).
    pub skip_plies: u32,
    /// PGN: keep every k-th position from `skip_plies` on (1 = all).
    pub every: u32,
    /// PGN: keep only games with at least one `[%eval]` comment.
    pub require_eval: bool,
    /// PGN: keep only games where both players' ratings (`WhiteElo`, `BlackElo`) are
    /// known and at least this.
    pub min_elo: Option<u16>,
    /// PGN: keep only games where both players' ratings are known and at most this.
    pub max_elo: Option<u16>,
    /// PGN: keep only games whose `TimeControl` base time is known and at least this
    /// many seconds.
    pub min_base_seconds: Option<u32>,
    /// PGN: keep only games of these lichess speed classes (`lichess::Speed::bit`s; 0 =
    /// any), told from the `TimeControl` tag.
    pub speeds: u8,
    /// PGN: keep only games played from the first to the last of these dates
    /// (`20240131`, inclusive), from the `UTCDate` tag (else `Date`).
    pub dates: Option<(u32, u32)>,
    /// PGN: keep only games whose `Termination` tag is one of these (lower case; empty =
    /// any).
    pub terminations: Vec<String>,
    /// PGN: keep only rated games (an `Event` tag starting with `Rated`, as lichess
    /// writes it).
    pub rated_only: bool,
    /// Worker threads for PGN, JSONL, EPD lines and binpack blocks (`None`: one per core).
    pub threads: Option<usize>,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            skip_plies: 0,
            every: 1,
            require_eval: false,
            min_elo: None,
            max_elo: None,
            min_base_seconds: None,
            speeds: 0,
            dates: None,
            terminations: Vec::new(),
            rated_only: false,
            threads: None,
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
    /// An input that cannot be read as its format says (a Parquet file without a FEN
    /// column, say): refused whole.
    #[error("{file}: {reason}")]
    Invalid { file: String, reason: String },
}

/// What one input gave.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub positions: u64,
    pub rejected: u64,
    /// Games imported (dropped games are not counted here).
    pub games: u64,
    /// Games left out by the filters: well-formed, so not rejections.
    pub dropped: Dropped,
}

/// Games left out, by the filter that left them out (the first that failed, checked in
/// this order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dropped {
    /// `--min-elo`: a rating below the minimum, or unknown.
    pub min_elo: u64,
    /// `--max-elo`: a rating above the maximum, or unknown.
    pub max_elo: u64,
    /// `--min-base-seconds`: a base time below the minimum, or unknown.
    pub min_base_seconds: u64,
    /// `--speed`: another speed class, or an unknown time control.
    pub speed: u64,
    /// `--date`: played outside the dates, or on an unknown date.
    pub date: u64,
    /// `--termination`: another termination, or none given.
    pub termination: u64,
    /// `--rated-only`: not a rated game.
    pub rated_only: u64,
    /// `--require-eval`: no `[%eval]` comment.
    pub require_eval: u64,
}

impl Dropped {
    /// Each filter's option and its count, in the order they are checked.
    pub fn by_filter(&self) -> [(&'static str, u64); 8] {
        [
            ("--min-elo", self.min_elo),
            ("--max-elo", self.max_elo),
            ("--min-base-seconds", self.min_base_seconds),
            ("--speed", self.speed),
            ("--date", self.date),
            ("--termination", self.termination),
            ("--rated-only", self.rated_only),
            ("--require-eval", self.require_eval),
        ]
    }

    pub fn total(&self) -> u64 {
        self.by_filter().iter().map(|(_, n)| n).sum()
    }

    pub fn add(&mut self, other: &Dropped) {
        self.min_elo += other.min_elo;
        self.max_elo += other.max_elo;
        self.min_base_seconds += other.min_base_seconds;
        self.speed += other.speed;
        self.date += other.date;
        self.termination += other.termination;
        self.rated_only += other.rated_only;
        self.require_eval += other.require_eval;
    }
}

impl Counts {
    pub fn add(&mut self, other: &Counts) {
        self.positions += other.positions;
        self.rejected += other.rejected;
        self.games += other.games;
        self.dropped.add(&other.dropped);
    }
}

/// The callbacks of an import.
pub struct Handlers<'a> {
    /// Receives the good records, in order: a PGN game's at once, one at a time otherwise.
    pub records: &'a mut dyn FnMut(&[Record]) -> Result<(), DbError>,
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
    // Parquet is read from its end (the footer) first: a file is read in place, not
    // streamed.
    if let (Format::Parquet, Source::File(path)) = (format, source) {
        let file = open_file(path).map_err(|error| ImportError::Io {
            file: name.clone(),
            error,
        })?;
        return parquet::import_parquet(&name, file, handlers);
    }
    let bytes_read = Arc::new(AtomicU64::new(0));
    let reader = open(source, &bytes_read).map_err(|error| ImportError::Io {
        file: name.clone(),
        error,
    })?;
    import_reader(
        name,
        reader,
        bytes_read,
        format,
        options,
        next_game_id,
        handlers,
    )
}

/// [`import`] from an open (decompressed) stream named `name`; `bytes_read` is what the
/// progress reports.
pub fn import_reader(
    name: String,
    reader: Box<dyn Read + Send>,
    bytes_read: Arc<AtomicU64>,
    format: Format,
    options: &ImportOptions,
    next_game_id: &mut u32,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    if format == Format::Parquet {
        // A stream (standard input, a compressed file) is held whole: Parquet starts at
        // its footer.
        let mut bytes = Vec::new();
        let mut reader = reader;
        reader
            .read_to_end(&mut bytes)
            .map_err(|error| ImportError::Io {
                file: name.clone(),
                error,
            })?;
        return parquet::import_parquet(&name, bytes::Bytes::from(bytes), handlers);
    }
    if format == Format::Binpack {
        let counter = Arc::clone(&bytes_read);
        return binpack::import_binpack(
            &name,
            reader,
            &|| counter.load(Ordering::Relaxed),
            options.threads,
            next_game_id,
            handlers,
        );
    }
    let mut input = Input {
        name,
        lines: LineReader::new(reader),
        bytes_read,
        line: 0,
    };
    match format {
        Format::Lines => {
            jsonl::import_lines_in_parallel(&mut input, handlers, options.threads, parse_epd_line)
        }
        Format::Pgn => pgn::import_games(&mut input, options, next_game_id, handlers),
        Format::Jsonl => jsonl::import_evals(&mut input, handlers, options.threads),
        Format::Binpack | Format::Parquet => unreachable!("read above"),
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
    inner: Box<dyn Read + Send>,
    buffer: Vec<u8>,
    start: usize,
    end: usize,
    eof: bool,
}

impl LineReader {
    fn new(inner: Box<dyn Read + Send>) -> LineReader {
        LineReader {
            inner,
            buffer: vec![0; 1 << 20],
            start: 0,
            end: 0,
            eof: false,
        }
    }

    /// Reads up to `want` more bytes of the input into `buf` after its first `*len`
    /// (fewer only at its end), as they come, line endings and all, and moves `*len` past
    /// them; says whether the input has ended. `buf` is the bytes' room and only grows, so
    /// that each byte of it is zeroed once: read through `Read::read_buf`, as
    /// `read_to_end` reads, a reader of this crate (which cannot implement it on stable
    /// Rust) had its whole room zeroed before every read.
    fn read_more(&mut self, buf: &mut Vec<u8>, len: &mut usize, want: usize) -> io::Result<bool> {
        let pending = self.end - self.start;
        let end = *len + pending + want;
        if buf.len() < end {
            buf.resize(end, 0);
        }
        buf[*len..*len + pending].copy_from_slice(&self.buffer[self.start..self.end]);
        *len += pending;
        self.start = 0;
        self.end = 0;
        while !self.eof && *len < end {
            match self.inner.read(&mut buf[*len..end]) {
                Ok(0) => self.eof = true,
                Ok(n) => *len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(self.eof)
    }

    /// Puts the next whole lines (line endings kept) at the start of `buf`, read straight
    /// into it, and says how many bytes they take: at least `want` unless the input ends
    /// first, and never part of a line; 0 at the end of the input. For readers that take
    /// lines in bulk: only a line cut by the end of a read is copied (back here, to start
    /// the next call's lines). `buf` only grows, so that its bytes are zeroed only once.
    fn read_lines(&mut self, buf: &mut Vec<u8>, want: usize) -> io::Result<usize> {
        const MIN_READ: usize = 64 << 10;
        let mut len = self.end - self.start;
        if buf.len() < len {
            buf.resize(len, 0);
        }
        buf[..len].copy_from_slice(&self.buffer[self.start..self.end]);
        self.start = 0;
        self.end = 0;
        // Bytes at the start of `buf` known to hold no newline.
        let mut searched = 0;
        loop {
            if self.eof {
                return Ok(len);
            }
            if len >= want {
                if let Some(last) = memchr::memrchr(b'\n', &buf[searched..len]) {
                    let cut = searched + last + 1;
                    let rest = len - cut;
                    if self.buffer.len() < rest {
                        self.buffer.resize(rest, 0);
                    }
                    self.buffer[..rest].copy_from_slice(&buf[cut..len]);
                    self.end = rest;
                    return Ok(cut);
                }
                // One line longer than `want`: read on to its end.
                searched = len;
            }
            let end = len + want.saturating_sub(len).max(MIN_READ);
            if buf.len() < end {
                buf.resize(end, 0);
            }
            match self.inner.read(&mut buf[len..end]) {
                Ok(0) => self.eof = true,
                Ok(n) => len += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl Input {
    /// Whole lines in bulk (see [`LineReader::read_lines`]); the caller counts them in
    /// `line`.
    fn read_lines(&mut self, buf: &mut Vec<u8>, want: usize) -> Result<usize, ImportError> {
        self.lines
            .read_lines(buf, want)
            .map_err(|error| ImportError::Io {
                file: self.name.clone(),
                error,
            })
    }

    fn bytes_read(&self) -> u64 {
        self.bytes_read.load(Ordering::Relaxed)
    }
}

/// Reports a bad record of input `file` to the handlers, and counts it.
fn reject(
    file: &str,
    handlers: &mut Handlers<'_>,
    line: u64,
    reason: String,
    text: &str,
    counts: &mut Counts,
) -> Result<(), ImportError> {
    counts.rejected += 1;
    let rejection = Rejection {
        file: file.to_string(),
        line,
        reason,
        text: text.to_string(),
    };
    match (handlers.reject)(&rejection) {
        AfterRejection::Continue => Ok(()),
        AfterRejection::Stop => Err(ImportError::Stopped(rejection)),
    }
}

/// One EPD/FEN line (`labels::parse_line`): `Ok(None)` for a blank or comment line.
fn parse_epd_line(bytes: &[u8]) -> Result<Option<Record>, String> {
    let text = std::str::from_utf8(bytes).map_err(|_| "not valid UTF-8".to_string())?;
    labels::parse_line(text).map_err(|e| e.to_string())
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
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const BZIP2_MAGIC: [u8; 3] = *b"BZh";

/// How an input is compressed, from its first bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    None,
    Gzip,
    Zstd,
    Bzip2,
}

impl Compression {
    /// Tells the compression by the magic bytes `start` begins with.
    pub fn detect(start: &[u8]) -> Compression {
        if start.starts_with(&GZIP_MAGIC) {
            Compression::Gzip
        } else if start.starts_with(&ZSTD_MAGIC) || is_zstd_skippable_frame(start) {
            Compression::Zstd
        } else if start.starts_with(&BZIP2_MAGIC)
            && start.get(3).is_some_and(|b| (b'1'..=b'9').contains(b))
        {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }
}

/// pzstd (the parallel zstd) starts its files with a skippable frame, magic
/// 0x184D2A50..=0x184D2A5F little-endian.
fn is_zstd_skippable_frame(start: &[u8]) -> bool {
    start.len() >= 4 && start[0] & 0xf0 == 0x50 && start[1..4] == [0x2a, 0x4d, 0x18]
}

/// Opens an input, decompressing it when it starts with the gzip, zstd or bzip2 magic
/// bytes (whatever its name), so compressed files and compressed standard input both
/// work. Decompression streams: only the decoders' windows and buffers are held.
fn open(source: &Source, count: &Arc<AtomicU64>) -> io::Result<Box<dyn Read + Send>> {
    let raw: Box<dyn Read + Send> = match source {
        Source::Stdin => Box::new(io::stdin()),
        Source::File(path) => Box::new(open_file(path)?),
    };
    let mut counting = CountingReader {
        inner: raw,
        count: Arc::clone(count),
    };
    let head = read_head(&mut counting, 4)?;
    let compression = Compression::detect(&head);
    // The bytes read to tell the format go first, then the rest of the stream. Each
    // decoder buffers its own input; a plain input is read straight by the line reader.
    let stream = io::Cursor::new(head).chain(counting);
    Ok(match compression {
        Compression::None => Box::new(stream),
        Compression::Gzip => Box::new(MultiGzDecoder::new(stream)),
        // Reads every frame to the end of the input (concatenated and skippable frames
        // included), as the zstd tool does.
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(stream)?),
        Compression::Bzip2 => Box::new(MultiBzDecoder::new(stream)),
    })
}

/// The first `n` bytes (fewer only if the input is shorter): a pipe may hand over its
/// first bytes a few at a time.
fn read_head(reader: &mut impl Read, n: usize) -> io::Result<Vec<u8>> {
    let mut head = vec![0; n];
    let mut got = 0;
    while got < n {
        match reader.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    head.truncate(got);
    Ok(head)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its text a few bytes at a time, as a decoder or a pipe may.
    struct Dribble(io::Cursor<Vec<u8>>, usize);

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.1 = self.1 * 7 % 13 + 1;
            let n = buf.len().min(self.1);
            self.0.read(&mut buf[..n])
        }
    }

    #[test]
    fn read_more_appends_what_was_asked_for_and_says_when_the_input_ends() {
        let text: Vec<u8> = (0..5000u32).map(|i| (i * 31 % 251) as u8).collect();
        for want in [1, 7, 64, 4096, 1 << 20] {
            let mut lines = LineReader::new(Box::new(Dribble(io::Cursor::new(text.clone()), 1)));
            // Room left from a longer earlier batch, past `len`, is overwritten.
            let mut got = b"kept and then some stale bytes".to_vec();
            let mut len = 4;
            loop {
                let before = len;
                let ended = lines.read_more(&mut got, &mut len, want).unwrap();
                if !ended {
                    assert_eq!(len - before, want, "a short read before the end");
                }
                if ended {
                    break;
                }
            }
            assert_eq!(&got[..4], b"kept");
            assert_eq!(&got[4..len], &text[..], "read in steps of {want}");
        }
    }
}
