//! The position database (`.psdb`): a header, then blocks of structure-of-arrays columns,
//! read zero-copy through a memory map. The byte layout is specified in `docs/FORMAT.md`.

pub mod binpack;
mod check;
pub mod dedup;
mod layout;
pub mod merge;
pub mod split;
mod writer;

use std::fs::File;
use std::io::{self, Read};
use std::ops::Range;
use std::path::{Path, PathBuf};

use bytemuck::Pod;
use memmap2::Mmap;
use pawnstorm_kernels::{Bitboard, Color, Square};
use thiserror::Error;

use crate::position::board::{
    CastlingRights, Position, PositionBoards, PositionError, PositionParts,
};
use crate::position::labels::{GameResult, Labels, Record};

use check::Problem;
pub use layout::Layout;
pub use layout::{
    Columns, DEFAULT_BLOCK_SIZE, FORMAT_VERSION, HEADER_SIZE, Header, MAGIC, MAX_BLOCK_SIZE,
    MIN_BLOCK_SIZE, NO_GAME, NO_PLY, NO_RESULT, NO_SCORE, NO_SQUARE, NO_U16, OLDEST_VERSION,
    TRAILER_SIZE, U16_LABEL_COUNT, U16_LABELS, set_header_crc,
};
pub use writer::DbWriter;

/// Errors of reading or writing a position DB. Each names the file.
#[derive(Debug, Error)]
pub enum DbError {
    // `error`, not `source`: the message already includes it, and a chain would repeat it.
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path}: not a pawnstorm position database (wrong magic bytes)")]
    NotADatabase { path: PathBuf },
    #[error(
        "{path}: format version {found} is not supported (this pawnstorm reads versions {OLDEST_VERSION} to {FORMAT_VERSION}); a newer pawnstorm wrote it"
    )]
    UnsupportedVersion { path: PathBuf, found: u32 },
    #[error("{path}: file is {actual} bytes but its header says {expected}: truncated or extended")]
    WrongSize {
        path: PathBuf,
        expected: u64,
        actual: u64,
    },
    #[error("{path}: corrupt header: {what}")]
    CorruptHeader { path: PathBuf, what: String },
    #[error("{path}: checksum mismatch in the {what}: the file is corrupt")]
    Checksum { path: PathBuf, what: &'static str },
    #[error("{path}: block {block}: checksum mismatch")]
    BlockChecksum { path: PathBuf, block: u64 },
    /// A row whose boards are no position (found by the check every block read gets).
    #[error("{path}: position {index} is impossible: {reason}")]
    Impossible {
        path: PathBuf,
        index: u64,
        reason: String,
    },
    #[error("{path}: position {index} is invalid: {reason}")]
    BadRecord {
        path: PathBuf,
        index: u64,
        reason: String,
    },
    #[error("{path}: {what}")]
    Invalid { path: PathBuf, what: String },
}

impl DbError {
    pub(crate) fn io(path: &Path, error: std::io::Error) -> DbError {
        DbError::Io {
            path: path.to_path_buf(),
            error,
        }
    }
}

/// Which checksums a [`Database`] checks. The check that every row read is a position
/// is made either way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Verify {
    /// Version 2: each block's CRC-32 whenever the block is read. Version 1: the payload's
    /// CRC-32, once, when the file is opened.
    #[default]
    Checksums,
    /// No checksum (for reading a damaged file, or for those who know theirs is whole).
    Off,
}

/// An open, validated position database.
pub struct Database {
    path: PathBuf,
    header: Header,
    map: Option<Mmap>,
    verify: Verify,
}

/// One block's columns, each `block_size` long; rows `len..` are padding.
pub struct Block<'a> {
    pub len: usize,
    pub pieces: [&'a [Bitboard]; 6],
    pub colors: [&'a [Bitboard]; 2],
    pub side_to_move: &'a [u8],
    pub castling: &'a [u16],
    pub en_passant: &'a [u8],
    pub halfmove_clock: &'a [u16],
    pub fullmove_number: &'a [u16],
    pub result: Option<&'a [i8]>,
    pub score: Option<&'a [i32]>,
    pub game_id: Option<&'a [u32]>,
    pub ply: Option<&'a [u16]>,
    /// The [`U16_LABELS`] columns (Elo, time control, move), in that order.
    pub u16_labels: [Option<&'a [u16]>; U16_LABEL_COUNT],
}

impl Database {
    /// Opens and validates `path`: magic, version, header checksum, every size and offset;
    /// checksums as [`Verify::Checksums`] says.
    pub fn open(path: impl AsRef<Path>) -> Result<Database, DbError> {
        Database::open_with(path, Verify::Checksums)
    }

    /// [`Database::open`], with the checksum checks `verify` asks for.
    pub fn open_with(path: impl AsRef<Path>, verify: Verify) -> Result<Database, DbError> {
        let path = path.as_ref();
        let (file, header) = open_and_check(path)?;
        // An empty DB has no payload, and a zero-length map is an error on some systems.
        let map = if header.count == 0 {
            None
        } else {
            // SAFETY: the map is read-only; pawnstorm replaces DBs by renaming a new file
            // into place, never by writing into one, so the mapped bytes do not change
            // under us unless another program truncates the file while we read it.
            Some(unsafe { Mmap::map(&file) }.map_err(|e| DbError::io(path, e))?)
        };
        let db = Database {
            path: path.to_path_buf(),
            header,
            map,
            verify,
        };
        // Version 1 has one checksum for the whole payload: checked once here, before any
        // block is used.
        if verify == Verify::Checksums && !db.header.has_block_crcs() {
            db.check_payload_crc()?;
        }
        Ok(db)
    }

    /// Checks every checksum of the file, whatever it was opened with (reads it all once):
    /// version 1, the payload's; version 2, each block's and the header's CRC of them.
    /// Each block is also checked as every read checks it (its rows are positions).
    pub fn verify(&self) -> Result<(), DbError> {
        if !self.header.has_block_crcs() {
            self.check_payload_crc()?;
        }
        let mut crcs = crc32fast::Hasher::new();
        for index in 0..self.block_count() {
            let bytes = self.block_bytes(index);
            if let Some(stored) = self.check_block_crc(index, bytes)? {
                crcs.update(&stored.to_le_bytes());
            }
            self.parse_and_check(index, bytes)?;
        }
        if self.header.has_block_crcs() && crcs.finalize() != self.header.payload_crc {
            return Err(DbError::Checksum {
                path: self.path.clone(),
                what: "list of block checksums",
            });
        }
        Ok(())
    }

    /// Which checksums this DB checks as it reads.
    pub fn verifies(&self) -> Verify {
        self.verify
    }

    fn check_payload_crc(&self) -> Result<(), DbError> {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(self.payload());
        if hasher.finalize() != self.header.payload_crc {
            return Err(DbError::Checksum {
                path: self.path.clone(),
                what: "position data",
            });
        }
        Ok(())
    }

    /// Checks the CRC of block `index` (version 2) and returns it; `None` in version 1.
    fn check_block_crc(&self, index: usize, bytes: &[u8]) -> Result<Option<u32>, DbError> {
        let Some(at) = self.header.layout().crc else {
            return Ok(None);
        };
        let stored = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        if self.header.block_crc(index as u64, &bytes[..at]) != stored {
            return Err(DbError::BlockChecksum {
                path: self.path.clone(),
                block: index as u64,
            });
        }
        Ok(Some(stored))
    }

    /// The bytes of block `index`, which must exist.
    fn block_bytes(&self, index: usize) -> &[u8] {
        let block_bytes = self.header.block_bytes as usize;
        let start = index * block_bytes;
        &self.payload()[start..start + block_bytes]
    }

    /// The columns of block `index`, whose bytes are `bytes`, once every row is found to be
    /// a position and the padding empty.
    fn parse_and_check<'a>(&self, index: usize, bytes: &'a [u8]) -> Result<Block<'a>, DbError> {
        let n = self.block_size();
        let len = (self.header.count - (index * n) as u64).min(n as u64) as usize;
        let block =
            Block::parse(bytes, &self.header.layout(), n, len).ok_or_else(|| DbError::Invalid {
                path: self.path.clone(),
                what: format!("block {index}: a column is out of bounds or misaligned"),
            })?;
        match check::check_block(&block) {
            Ok(()) => Ok(block),
            Err(Problem::Row(row, reason)) => Err(DbError::Impossible {
                path: self.path.clone(),
                index: (index * n + row) as u64,
                reason,
            }),
            Err(Problem::Padding) => Err(DbError::Invalid {
                path: self.path.clone(),
                what: format!("block {index}: a padding row after the last position holds pieces"),
            }),
        }
    }

    /// The whole file as mapped (header and blocks), unchecked: for zero-copy views of
    /// its columns (the Python package's numpy arrays) at the offsets of
    /// [`Header::layout`]. Empty for an empty DB. [`Database::block`] is the checked way in.
    pub fn mapped_bytes(&self) -> &[u8] {
        self.map.as_deref().unwrap_or(&[])
    }

    pub(crate) fn payload(&self) -> &[u8] {
        self.map.as_deref().map_or(&[], |m| &m[HEADER_SIZE..])
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
    pub fn header(&self) -> &Header {
        &self.header
    }
    pub fn len(&self) -> u64 {
        self.header.count
    }
    pub fn is_empty(&self) -> bool {
        self.header.count == 0
    }
    pub fn block_size(&self) -> usize {
        self.header.block_size as usize
    }
    pub fn block_count(&self) -> usize {
        self.header.block_count() as usize
    }
    pub fn columns(&self) -> Columns {
        self.header.columns
    }

    /// The columns of block `index` as slices into the map, no copy, checked: its CRC
    /// (version 2, unless opened with [`Verify::Off`]), then that every row is a position
    /// and the padding rows empty. Every reader gets its blocks here, in the worker that
    /// reads them, so each block is checked once per read, just before use.
    pub fn block(&self, index: usize) -> Result<Block<'_>, DbError> {
        if index >= self.block_count() {
            return Err(DbError::Invalid {
                path: self.path.clone(),
                what: format!("block {index} is past the last block"),
            });
        }
        let bytes = self.block_bytes(index);
        if self.verify == Verify::Checksums {
            self.check_block_crc(index, bytes)?;
        }
        self.parse_and_check(index, bytes)
    }

    /// The columns of block `index` without its checks, for a pass that has checked every
    /// block already (through [`Database::block`]) and reads them again: the map does not
    /// change under us (see [`Database::open_with`]).
    pub(crate) fn block_checked_before(&self, index: usize) -> Result<Block<'_>, DbError> {
        let n = self.block_size();
        let len = (self.header.count.saturating_sub((index * n) as u64)).min(n as u64) as usize;
        self.payload()
            .get(index * self.header.block_bytes as usize..)
            .and_then(|bytes| Block::parse(bytes, &self.header.layout(), n, len))
            .ok_or_else(|| DbError::Invalid {
                path: self.path.clone(),
                what: format!("block {index}: a column is out of bounds or misaligned"),
            })
    }

    /// The record at `index`, validated.
    pub fn record(&self, index: u64) -> Result<Record, DbError> {
        let n = self.block_size() as u64;
        let block = self.block((index / n) as usize)?;
        let row = (index % n) as usize;
        if row >= block.len {
            return Err(DbError::Invalid {
                path: self.path.clone(),
                what: format!(
                    "position {index} is past the end ({} positions)",
                    self.len()
                ),
            });
        }
        block.record(row).map_err(|reason| DbError::BadRecord {
            path: self.path.clone(),
            index,
            reason,
        })
    }

    /// The records in `range`, in order, each validated.
    pub fn records(&self, range: Range<u64>) -> impl Iterator<Item = Result<Record, DbError>> + '_ {
        let end = range.end.min(self.len());
        let n = self.block_size() as u64;
        let mut current: Option<(u64, Block<'_>)> = None;
        (range.start..end).map(move |index| {
            let block_index = index / n;
            if current.as_ref().is_none_or(|(b, _)| *b != block_index) {
                current = Some((block_index, self.block(block_index as usize)?));
            }
            let (_, block) = current.as_ref().expect("set above");
            block
                .record((index % n) as usize)
                .map_err(|reason| DbError::BadRecord {
                    path: self.path.clone(),
                    index,
                    reason,
                })
        })
    }

    /// The largest game id in the DB, if it has a game id column with any id in it.
    pub fn max_game_id(&self) -> Result<Option<u32>, DbError> {
        let mut max = None;
        for index in 0..self.block_count() {
            let block = self.block(index)?;
            if let Some(ids) = block.game_id {
                let block_max = ids[..block.len].iter().filter(|&&id| id != u32::MAX).max();
                max = max.max(block_max.copied());
            }
        }
        Ok(max)
    }
}

/// Reads and checks the header of the file at `path`, and the file's length against it.
fn open_and_check(path: &Path) -> Result<(File, Header), DbError> {
    let file = File::open(path).map_err(|e| DbError::io(path, e))?;
    let actual = file.metadata().map_err(|e| DbError::io(path, e))?.len();
    let mut head = [0u8; HEADER_SIZE];
    let mut filled = 0;
    while filled < HEADER_SIZE {
        let n = (&file)
            .read(&mut head[filled..])
            .map_err(|e| DbError::io(path, e))?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    if filled < MAGIC.len() || head[..MAGIC.len()] != MAGIC {
        return Err(DbError::NotADatabase {
            path: path.to_path_buf(),
        });
    }
    if filled < HEADER_SIZE {
        return Err(DbError::WrongSize {
            path: path.to_path_buf(),
            expected: HEADER_SIZE as u64,
            actual,
        });
    }
    let header = Header::decode(&head).map_err(|e| e.at(path))?;
    let expected = header.file_size();
    if actual != expected {
        return Err(DbError::WrongSize {
            path: path.to_path_buf(),
            expected,
            actual,
        });
    }
    Ok((file, header))
}

/// Reads a DB block by block with plain reads into one buffer, checking the payload
/// checksum at the end: for passes over a whole DB that should not keep it resident
/// (appending, rewriting), where a memory map would.
pub struct BlockStream {
    path: PathBuf,
    file: io::BufReader<File>,
    header: Header,
    layout: Layout,
    buffer: Vec<u64>,
    next: usize,
    /// Version 1: of the payload so far; version 2: of the block CRCs so far.
    crc: crc32fast::Hasher,
}

impl BlockStream {
    pub fn open(path: impl AsRef<Path>) -> Result<BlockStream, DbError> {
        let path = path.as_ref();
        let (file, header) = open_and_check(path)?;
        let layout = header.layout();
        Ok(BlockStream {
            path: path.to_path_buf(),
            file: io::BufReader::with_capacity(1 << 20, file),
            buffer: vec![0u64; layout.block_bytes as usize / 8],
            layout,
            header,
            next: 0,
            crc: crc32fast::Hasher::new(),
        })
    }

    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The bytes of the next block and the number of rows in it, its CRC checked (version
    /// 2); `None` after the last, once the header's checksum has been found right too.
    pub fn next_bytes(&mut self) -> Result<Option<(&[u8], usize)>, DbError> {
        let n = self.header.block_size as u64;
        if self.next as u64 == self.header.block_count() {
            if self.crc.clone().finalize() != self.header.payload_crc {
                return Err(DbError::Checksum {
                    path: self.path.clone(),
                    what: if self.layout.crc.is_some() {
                        "list of block checksums"
                    } else {
                        "position data"
                    },
                });
            }
            return Ok(None);
        }
        let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut self.buffer);
        self.file
            .read_exact(bytes)
            .map_err(|e| DbError::io(&self.path, e))?;
        match self.layout.crc {
            None => self.crc.update(bytes),
            Some(at) => {
                let stored = u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
                if self.header.block_crc(self.next as u64, &bytes[..at]) != stored {
                    return Err(DbError::BlockChecksum {
                        path: self.path.clone(),
                        block: self.next as u64,
                    });
                }
                self.crc.update(&stored.to_le_bytes());
            }
        }
        let len = (self.header.count - self.next as u64 * n).min(n) as usize;
        self.next += 1;
        Ok(Some((bytemuck::cast_slice(&self.buffer), len)))
    }

    /// Calls `f` with every record, in order, each validated.
    pub fn for_each_record(
        mut self,
        mut f: impl FnMut(Record) -> Result<(), DbError>,
    ) -> Result<(), DbError> {
        let n = self.header.block_size as usize;
        let layout = self.layout.clone();
        let path = self.path.clone();
        let mut index = 0u64;
        let mut block_index = 0usize;
        while let Some((bytes, len)) = self.next_bytes()? {
            let block = Block::parse(bytes, &layout, n, len).ok_or_else(|| DbError::Invalid {
                path: path.clone(),
                what: "a column is out of bounds or misaligned".to_string(),
            })?;
            // The mapped reader's check ([`Database::block`]), so that a file reads the same
            // whichever way: a stream must not take what the map refuses.
            match check::check_block(&block) {
                Ok(()) => {}
                Err(Problem::Row(row, reason)) => {
                    return Err(DbError::Impossible {
                        path: path.clone(),
                        index: index + row as u64,
                        reason,
                    });
                }
                Err(Problem::Padding) => {
                    return Err(DbError::Invalid {
                        path: path.clone(),
                        what: format!(
                            "block {block_index}: a padding row after the last position holds pieces"
                        ),
                    });
                }
            }
            block_index += 1;
            for row in 0..len {
                let record = block.record(row).map_err(|reason| DbError::BadRecord {
                    path: path.clone(),
                    index,
                    reason,
                })?;
                f(record)?;
                index += 1;
            }
        }
        Ok(())
    }
}

/// Checks that every row of `block` before `block.len` is a position the evaluator can
/// take (the check every block read from a DB gets): the first bad row and why. For
/// columns that come from elsewhere than a DB file (the Python package's arrays).
pub fn check_positions(block: &Block<'_>) -> Result<(), (usize, String)> {
    match check::check_block(block) {
        Ok(()) => Ok(()),
        Err(Problem::Row(row, reason)) => Err((row, reason)),
        Err(Problem::Padding) => Err((block.len, "a row past the last holds pieces".to_string())),
    }
}

impl<'a> Block<'a> {
    /// A block of `len` rows with only boards and sides to move (every other column empty):
    /// positions held outside a DB, for the passes that read nothing else.
    pub fn of_boards(
        len: usize,
        pieces: [&'a [Bitboard]; 6],
        colors: [&'a [Bitboard]; 2],
        side_to_move: &'a [u8],
    ) -> Block<'a> {
        Block {
            len,
            pieces,
            colors,
            side_to_move,
            castling: &[],
            en_passant: &[],
            halfmove_clock: &[],
            fullmove_number: &[],
            result: None,
            score: None,
            game_id: None,
            ply: None,
            u16_labels: [None; U16_LABEL_COUNT],
        }
    }

    /// The boards of row `row`, as the special endgames and the coefficients read them.
    #[inline]
    pub fn boards(&self, row: usize) -> PositionBoards {
        PositionBoards {
            pieces: self.pieces.map(|c| c[row].0),
            colors: self.colors.map(|c| c[row].0),
            black_to_move: self.side_to_move[row] != 0,
        }
    }

    /// The columns of one block's bytes, as `layout` places them.
    pub(crate) fn parse(
        bytes: &'a [u8],
        layout: &Layout,
        n: usize,
        len: usize,
    ) -> Option<Block<'a>> {
        fn column<T: Pod>(bytes: &[u8], offset: usize, n: usize) -> Option<&[T]> {
            let size = n * std::mem::size_of::<T>();
            bytemuck::try_cast_slice(bytes.get(offset..offset + size)?).ok()
        }
        let bitboards = |i: usize| column::<Bitboard>(bytes, layout.bitboards[i], n);
        Some(Block {
            len,
            pieces: [
                bitboards(0)?,
                bitboards(1)?,
                bitboards(2)?,
                bitboards(3)?,
                bitboards(4)?,
                bitboards(5)?,
            ],
            colors: [bitboards(6)?, bitboards(7)?],
            side_to_move: column(bytes, layout.side_to_move, n)?,
            castling: column(bytes, layout.castling, n)?,
            en_passant: column(bytes, layout.en_passant, n)?,
            halfmove_clock: column(bytes, layout.halfmove_clock, n)?,
            fullmove_number: column(bytes, layout.fullmove_number, n)?,
            result: match layout.result {
                Some(o) => Some(column(bytes, o, n)?),
                None => None,
            },
            score: match layout.score {
                Some(o) => Some(column(bytes, o, n)?),
                None => None,
            },
            game_id: match layout.game_id {
                Some(o) => Some(column(bytes, o, n)?),
                None => None,
            },
            ply: match layout.ply {
                Some(o) => Some(column(bytes, o, n)?),
                None => None,
            },
            u16_labels: {
                let mut columns = [None; U16_LABEL_COUNT];
                for (slot, offset) in columns.iter_mut().zip(layout.u16_labels) {
                    if let Some(o) = offset {
                        *slot = Some(column::<u16>(bytes, o, n)?);
                    }
                }
                columns
            },
        })
    }

    /// Decodes and validates row `row`.
    pub fn record(&self, row: usize) -> Result<Record, String> {
        let side_to_move = match self.side_to_move[row] {
            0 => Color::White,
            1 => Color::Black,
            other => return Err(format!("side to move byte is {other}, not 0 or 1")),
        };
        let castling = CastlingRights::from_bits(self.castling[row])
            .ok_or_else(|| format!("castling bits {:#06x} are invalid", self.castling[row]))?;
        let en_passant = match self.en_passant[row] {
            layout::NO_SQUARE => None,
            sq => Some(
                Square::new(sq).ok_or_else(|| format!("en-passant byte {sq} is not a square"))?,
            ),
        };
        let parts = PositionParts {
            pieces: self.pieces.map(|column| column[row]),
            colors: self.colors.map(|column| column[row]),
            side_to_move,
            castling,
            en_passant,
            halfmove_clock: self.halfmove_clock[row],
            fullmove_number: self.fullmove_number[row],
        };
        if parts.fullmove_number == 0 {
            return Err("fullmove number is 0".to_string());
        }
        let position = Position::from_parts(parts).map_err(|e: PositionError| e.to_string())?;
        let mut labels = Labels {
            result: match self.result.map(|c| c[row]) {
                None | Some(layout::NO_RESULT) => None,
                Some(v) => Some(
                    GameResult::from_i8(v).ok_or_else(|| format!("result byte {v} is invalid"))?,
                ),
            },
            score: self
                .score
                .map(|c| c[row])
                .filter(|&s| s != layout::NO_SCORE),
            game_id: self
                .game_id
                .map(|c| c[row])
                .filter(|&g| g != layout::NO_GAME),
            ply: self.ply.map(|c| c[row]).filter(|&p| p != layout::NO_PLY),
            ..Labels::default()
        };
        labels.set_u16_labels(
            self.u16_labels
                .map(|column| column.map(|c| c[row]).filter(|&v| v != layout::NO_U16)),
        );
        Ok(Record { position, labels })
    }
}
