//! Writing a position DB: rows are gathered a block at a time and written column by column
//! into a temporary file beside the target, which is renamed over the target only when
//! complete. An interrupted write leaves the old file (or none) in place.

use std::fs::File;
use std::io::{self, BufWriter, IoSlice, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bytemuck::Pod;
use pawnstorm_kernels::Bitboard;
use tempfile::NamedTempFile;

use super::layout::{
    Columns, HEADER_SIZE, Header, Layout, NO_GAME, NO_PLY, NO_RESULT, NO_SCORE, NO_SQUARE, NO_U16,
    U16_LABEL_COUNT, block_crc,
};
use super::{BlockStream, DbError};
use crate::position::labels::{GameResult, Record};

/// One block's rows, column by column, before they are written.
struct BlockBuffer {
    bitboards: [Vec<Bitboard>; 8],
    side_to_move: Vec<u8>,
    castling: Vec<u16>,
    en_passant: Vec<u8>,
    halfmove_clock: Vec<u16>,
    fullmove_number: Vec<u16>,
    result: Vec<i8>,
    score: Vec<i32>,
    game_id: Vec<u32>,
    ply: Vec<u16>,
    u16_labels: [Vec<u16>; U16_LABEL_COUNT],
    len: usize,
}

impl BlockBuffer {
    fn new(n: usize) -> BlockBuffer {
        let mut buffer = BlockBuffer {
            bitboards: [(); 8].map(|_| vec![Bitboard::EMPTY; n]),
            side_to_move: vec![0; n],
            castling: vec![0; n],
            en_passant: vec![0; n],
            halfmove_clock: vec![0; n],
            fullmove_number: vec![0; n],
            result: vec![0; n],
            score: vec![0; n],
            game_id: vec![0; n],
            ply: vec![0; n],
            u16_labels: [(); U16_LABEL_COUNT].map(|_| vec![0; n]),
            len: 0,
        };
        buffer.pad();
        buffer
    }

    /// Resets the rows from `len` on to padding: empty boards, no en passant, unknown
    /// labels. `push` writes every column of its row, labels included, so only the last
    /// block needs this.
    fn pad(&mut self) {
        let from = self.len;
        self.bitboards
            .iter_mut()
            .for_each(|c| c[from..].fill(Bitboard::EMPTY));
        self.side_to_move[from..].fill(0);
        self.castling[from..].fill(0);
        self.en_passant[from..].fill(NO_SQUARE);
        self.halfmove_clock[from..].fill(0);
        self.fullmove_number[from..].fill(0);
        self.result[from..].fill(NO_RESULT);
        self.score[from..].fill(NO_SCORE);
        self.game_id[from..].fill(NO_GAME);
        self.ply[from..].fill(NO_PLY);
        for column in &mut self.u16_labels {
            column[from..].fill(NO_U16);
        }
    }

    /// Appends `records`, which fit in the block, column by column: each column's loop
    /// stores into one slice, with the records (a game's) in L1.
    fn push_all(&mut self, records: &[Record]) {
        let rows = self.len..self.len + records.len();
        fn fill<T>(column: &mut [T], records: &[Record], value: impl Fn(&Record) -> T) {
            for (slot, record) in column.iter_mut().zip(records) {
                *slot = value(record);
            }
        }
        for (i, column) in self.bitboards.iter_mut().enumerate() {
            let column = &mut column[rows.clone()];
            if i < 6 {
                fill(column, records, |r| r.position.piece_boards()[i]);
            } else {
                fill(column, records, |r| r.position.color_boards()[i - 6]);
            }
        }
        fill(&mut self.side_to_move[rows.clone()], records, |r| {
            r.position.side_to_move().index() as u8
        });
        fill(&mut self.castling[rows.clone()], records, |r| {
            r.position.castling().bits()
        });
        fill(&mut self.en_passant[rows.clone()], records, |r| {
            r.position.en_passant().map_or(NO_SQUARE, |sq| sq.index())
        });
        fill(&mut self.halfmove_clock[rows.clone()], records, |r| {
            r.position.halfmove_clock()
        });
        fill(&mut self.fullmove_number[rows.clone()], records, |r| {
            r.position.fullmove_number()
        });
        fill(&mut self.result[rows.clone()], records, |r| {
            r.labels.result.map_or(NO_RESULT, GameResult::to_i8)
        });
        fill(&mut self.score[rows.clone()], records, |r| {
            r.labels.score.unwrap_or(NO_SCORE)
        });
        fill(&mut self.game_id[rows.clone()], records, |r| {
            r.labels.game_id.unwrap_or(NO_GAME)
        });
        fill(&mut self.ply[rows.clone()], records, |r| {
            r.labels.ply.unwrap_or(NO_PLY)
        });
        for (k, column) in self.u16_labels.iter_mut().enumerate() {
            fill(&mut column[rows.clone()], records, |r| {
                r.labels.u16_labels()[k].unwrap_or(NO_U16)
            });
        }
        self.len += records.len();
    }

    fn push(&mut self, record: &Record) {
        let row = self.len;
        let position = &record.position;
        for (i, &bb) in position.piece_boards().iter().enumerate() {
            self.bitboards[i][row] = bb;
        }
        for (i, &bb) in position.color_boards().iter().enumerate() {
            self.bitboards[6 + i][row] = bb;
        }
        self.side_to_move[row] = position.side_to_move().index() as u8;
        self.castling[row] = position.castling().bits();
        self.en_passant[row] = position.en_passant().map_or(NO_SQUARE, |sq| sq.index());
        self.halfmove_clock[row] = position.halfmove_clock();
        self.fullmove_number[row] = position.fullmove_number();
        let labels = &record.labels;
        self.result[row] = labels.result.map_or(NO_RESULT, GameResult::to_i8);
        self.score[row] = labels.score.unwrap_or(NO_SCORE);
        self.game_id[row] = labels.game_id.unwrap_or(NO_GAME);
        self.ply[row] = labels.ply.unwrap_or(NO_PLY);
        for (column, value) in self.u16_labels.iter_mut().zip(labels.u16_labels()) {
            column[row] = value.unwrap_or(NO_U16);
        }
        self.len += 1;
    }
}

/// Blocks of this many bytes or more are written straight from their columns: the copy
/// into the file buffer costs more than the system call it saves (a 4096-row block is
/// about 380 KB).
const DIRECT_WRITE_BYTES: u64 = 64 << 10;

/// Writes a position DB. Call [`DbWriter::finish`]; dropping the writer discards the file.
///
/// The label columns grow with the records: the first record with a score adds the score
/// column (the blocks already written are copied once into the wider layout).
pub struct DbWriter {
    path: PathBuf,
    temp: Staged,
    out: BufWriter<File>,
    block_size: u32,
    columns: Columns,
    used: Columns,
    drop_unused: bool,
    layout: Layout,
    buffer: BlockBuffer,
    count: u64,
    /// Blocks written so far (the next block's index, which its CRC includes).
    blocks: u64,
    /// Of the block CRCs so far: the header's payload CRC.
    crc: crc32fast::Hasher,
    /// The lock on the DB this writer replaces, held until the new one is in place.
    _lock: Option<File>,
    /// The new file's id (see [`Header::file_id`]), which its block CRCs cover.
    file_id: u64,
}

impl DbWriter {
    /// Starts a new DB at `path` with at least the label columns `columns`. With
    /// `drop_unused`, those of them that no record filled are left out of the finished file.
    ///
    /// A DB already at `path` is locked (see [`crate::io::durable::lock_existing`]) until the
    /// writer is finished or dropped: a writer that is replacing it waits.
    pub fn create(
        path: impl AsRef<Path>,
        block_size: u32,
        columns: Columns,
        drop_unused: bool,
    ) -> Result<DbWriter, DbError> {
        let lock = lock_existing(path.as_ref())?;
        DbWriter::create_locked(path, block_size, columns, drop_unused, lock)
    }

    fn create_locked(
        path: impl AsRef<Path>,
        block_size: u32,
        columns: Columns,
        drop_unused: bool,
        lock: Option<File>,
    ) -> Result<DbWriter, DbError> {
        let path = path.as_ref().to_path_buf();
        if !block_size.is_power_of_two()
            || !(super::MIN_BLOCK_SIZE..=super::MAX_BLOCK_SIZE).contains(&block_size)
        {
            return Err(DbError::Invalid {
                path,
                what: format!(
                    "block size {block_size} is not a power of two from {} to {}",
                    super::MIN_BLOCK_SIZE,
                    super::MAX_BLOCK_SIZE
                ),
            });
        }
        let (temp, out) = start_file(&path)?;
        Ok(DbWriter {
            layout: Layout::new(block_size, columns),
            buffer: BlockBuffer::new(block_size as usize),
            path,
            temp,
            out,
            block_size,
            columns,
            used: Columns::NONE,
            drop_unused,
            count: 0,
            blocks: 0,
            crc: crc32fast::Hasher::new(),
            _lock: lock,
            file_id: super::layout::new_file_id(),
        })
    }

    /// Starts a writer whose output begins with every record of the DB at `path` (which
    /// it will replace), with the old DB's columns and block size. The DB is locked first
    /// (as by [`DbWriter::create`]): what is read is what another writer left.
    pub fn append_to(path: impl AsRef<Path>) -> Result<DbWriter, DbError> {
        let lock = lock_existing(path.as_ref())?;
        let old = BlockStream::open(path.as_ref())?;
        let columns = old.header().columns;
        let mut writer =
            DbWriter::create_locked(path.as_ref(), old.header().block_size, columns, false, lock)?;
        old.for_each_record(|record| writer.push(&record))?;
        Ok(writer)
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The label columns the DB has so far.
    pub fn columns(&self) -> Columns {
        self.columns
    }

    /// [`DbWriter::push`] for each of `records`, in order; one check of the label columns
    /// for them all, and each block's share stored column by column.
    pub fn push_all(&mut self, records: &[Record]) -> Result<(), DbError> {
        let labels = records.iter().fold(Columns::NONE, |all, record| {
            all.union(Columns::of(&record.labels))
        });
        if !self.columns.contains(labels) {
            self.widen(self.columns.union(labels))?;
        }
        self.used = self.used.union(labels);
        let mut rest = records;
        while !rest.is_empty() {
            let room = self.block_size as usize - self.buffer.len;
            let (now, later) = rest.split_at(room.min(rest.len()));
            self.buffer.push_all(now);
            self.count += now.len() as u64;
            if self.buffer.len == self.block_size as usize {
                self.flush_block()?;
            }
            rest = later;
        }
        Ok(())
    }

    pub fn push(&mut self, record: &Record) -> Result<(), DbError> {
        let labels = Columns::of(&record.labels);
        if !self.columns.contains(labels) {
            self.widen(self.columns.union(labels))?;
        }
        self.buffer.push(record);
        self.used = self.used.union(labels);
        self.count += 1;
        if self.buffer.len == self.block_size as usize {
            self.flush_block()?;
        }
        Ok(())
    }

    /// Moves to a layout with more label columns: the blocks written so far are copied
    /// into a new temporary file in the wider layout, their new columns "unknown".
    fn widen(&mut self, columns: Columns) -> Result<(), DbError> {
        let written = self.count - self.buffer.len as u64;
        if written > 0 {
            self.write_header(written)?;
            let mut staged = BlockStream::open(self.temp.path())?;
            let (temp, mut out) = start_file(&self.path)?;
            self.crc = copy_blocks(&mut staged, &mut out, columns, self.file_id)?;
            self.temp = temp;
            self.out = out;
        }
        self.columns = columns;
        self.layout = Layout::new(self.block_size, columns);
        Ok(())
    }

    /// Writes the buffered block: a large one with its columns handed to the file together
    /// (one `writev`, not copied into the file buffer first), a small one through the file
    /// buffer. Rows past `len` (only in the last block) are reset to padding first.
    fn flush_block(&mut self) -> Result<(), DbError> {
        if self.buffer.len < self.block_size as usize {
            self.buffer.pad();
        }
        let b = &self.buffer;
        let layout = &self.layout;
        let mut columns: Vec<(usize, &[u8])> = Vec::with_capacity(23);
        for (i, column) in b.bitboards.iter().enumerate() {
            columns.push((layout.bitboards[i], as_bytes(column)));
        }
        columns.extend([
            (layout.side_to_move, b.side_to_move.as_slice()),
            (layout.castling, as_bytes(&b.castling)),
            (layout.en_passant, b.en_passant.as_slice()),
            (layout.halfmove_clock, as_bytes(&b.halfmove_clock)),
            (layout.fullmove_number, as_bytes(&b.fullmove_number)),
        ]);
        for (offset, bytes) in [
            (layout.result, as_bytes(&b.result)),
            (layout.score, as_bytes(&b.score)),
            (layout.game_id, as_bytes(&b.game_id)),
            (layout.ply, as_bytes(&b.ply)),
        ] {
            if let Some(offset) = offset {
                columns.push((offset, bytes));
            }
        }
        for (offset, column) in layout.u16_labels.iter().zip(&b.u16_labels) {
            if let Some(offset) = *offset {
                columns.push((offset, as_bytes(column)));
            }
        }
        let crc_at = layout.crc.expect("pawnstorm writes blocks with a CRC");
        // The trailer's zero bytes come as a gap before the CRC.
        columns.push((crc_at, &[]));
        // As `layout::block_crc` computes it, without gathering the block in one place.
        let mut crc = crc32fast::Hasher::new();
        crc.update(&self.file_id.to_le_bytes());
        crc.update(&self.blocks.to_le_bytes());
        // Alignment padding between columns (none while blocks hold 64 rows or more).
        let padding = [0u8; 64];
        let mut slices = Vec::with_capacity(2 * columns.len() + 1);
        let mut at = 0;
        for (offset, bytes) in columns {
            let gap = &padding[..offset - at];
            crc.update(gap);
            crc.update(bytes);
            slices.extend([IoSlice::new(gap), IoSlice::new(bytes)]);
            at = offset + bytes.len();
        }
        let crc = crc.finalize().to_le_bytes();
        slices.push(IoSlice::new(&crc));
        let io = |e| DbError::io(&self.path, e);
        if self.layout.block_bytes >= DIRECT_WRITE_BYTES {
            self.out.flush().map_err(io)?;
            write_all_vectored(self.out.get_mut(), &mut slices).map_err(io)?;
        } else {
            for slice in &slices {
                self.out.write_all(slice).map_err(io)?;
            }
        }
        self.crc.update(&crc);
        self.blocks += 1;
        self.buffer.len = 0;
        Ok(())
    }

    /// Writes the header for the first `count` rows and leaves the file position at its end.
    fn write_header(&mut self, count: u64) -> Result<(), DbError> {
        let header = Header::new(
            count,
            self.block_size,
            self.columns,
            self.crc.clone().finalize(),
            self.file_id,
        );
        let io = |e| DbError::io(&self.path, e);
        self.out.seek(SeekFrom::Start(0)).map_err(io)?;
        self.out.write_all(&header.encode()).map_err(io)?;
        self.out.seek(SeekFrom::End(0)).map_err(io)?;
        self.out.flush().map_err(io)
    }

    /// Writes the last block and the header, syncs, and renames the file into place.
    /// Returns the number of positions written.
    pub fn finish(mut self) -> Result<u64, DbError> {
        if self.buffer.len > 0 {
            self.flush_block()?;
        }
        self.write_header(self.count)?;
        if self.drop_unused && self.used != self.columns {
            // Copy the rows into a DB without the label columns that nothing filled; the
            // staged file is deleted when `self.temp` drops.
            let mut staged = BlockStream::open(self.temp.path())?;
            let (temp, out) = start_file(&self.path)?;
            let mut lean = DbWriter {
                columns: self.used,
                layout: Layout::new(self.block_size, self.used),
                crc: crc32fast::Hasher::new(),
                temp,
                out,
                ..self
            };
            lean.crc = copy_blocks(&mut staged, &mut lean.out, lean.columns, lean.file_id)?;
            lean.buffer.len = 0;
            lean.drop_unused = false;
            return lean.finish();
        }
        let io = |e| DbError::io(&self.path, e);
        self.out.get_ref().sync_all().map_err(io)?;
        let path = self.path.clone();
        let Staged { file, pending } = self.temp;
        pending
            .commit(|| file.persist(&path))
            .map_err(|e| DbError::io(&path, e.error))?;
        crate::io::durable::sync_parent_dir(&path).map_err(|e| DbError::io(&path, e))?;
        Ok(self.count)
    }
}

/// A DB written block by block in any order, by several threads at once: every block but
/// the last full, each placed at its offset, so that workers fill the output in place (no
/// serial writer). Written whole or not at all, as [`DbWriter`] writes.
pub(crate) struct BlockFile {
    path: PathBuf,
    temp: Staged,
    file: File,
    header: Header,
    crc_at: usize,
    _lock: Option<File>,
}

impl BlockFile {
    /// Starts a DB of `count` rows at `path` (format [`super::FORMAT_VERSION`]), locking a
    /// DB already there as [`DbWriter::create`] does.
    pub(crate) fn create(
        path: &Path,
        block_size: u32,
        columns: Columns,
        count: u64,
    ) -> Result<BlockFile, DbError> {
        let lock = lock_existing(path)?;
        let io = |e| DbError::io(path, e);
        let (temp, pending) =
            crate::io::durable::temp_file_for(path, ".psdb-", ".tmp").map_err(io)?;
        let file = temp.reopen().map_err(io)?;
        let header = Header::new(count, block_size, columns, 0, super::layout::new_file_id());
        file.set_len(header.file_size()).map_err(io)?;
        Ok(BlockFile {
            path: path.to_path_buf(),
            temp: Staged {
                file: temp,
                pending,
            },
            file,
            crc_at: header
                .layout()
                .crc
                .expect("pawnstorm writes blocks with a CRC"),
            header,
            _lock: lock,
        })
    }

    pub(crate) fn layout(&self) -> Layout {
        self.header.layout()
    }

    /// Puts block `index` (`block`: its bytes in [`BlockFile::layout`], trailer zero)
    /// in place with its CRC, and returns the CRC.
    pub(crate) fn write_block(&self, index: u64, block: &mut [u8]) -> Result<u32, DbError> {
        let at = self.crc_at;
        let crc = block_crc(Some(self.header.file_id), index, &block[..at]);
        block[at..at + 4].copy_from_slice(&crc.to_le_bytes());
        let offset = HEADER_SIZE as u64 + index * self.header.block_bytes;
        crate::io::table::write_all_at(&self.file, block, offset)
            .map_err(|e| DbError::io(&self.path, e))?;
        Ok(crc)
    }

    /// Writes the header (`payload_crc`: of the blocks' CRCs in order), syncs, and renames
    /// the file into place.
    pub(crate) fn finish(self, payload_crc: u32) -> Result<u64, DbError> {
        let io = |e| DbError::io(&self.path, e);
        let header = Header {
            payload_crc,
            ..self.header
        };
        crate::io::table::write_all_at(&self.file, &header.encode(), 0).map_err(io)?;
        self.file.sync_all().map_err(io)?;
        let path = self.path.clone();
        let Staged { file, pending } = self.temp;
        pending
            .commit(|| file.persist(&path))
            .map_err(|e| DbError::io(&path, e.error))?;
        crate::io::durable::sync_parent_dir(&path).map_err(|e| DbError::io(&path, e))?;
        Ok(header.count)
    }
}

/// Every writer starts here (create and append). `-` is standard output elsewhere in the
/// CLI, but a DB is written in place, its header last, so it cannot go to a pipe; a file
/// named `-` is what nobody asking for that means.
fn lock_existing(path: &Path) -> Result<Option<File>, DbError> {
    if path.as_os_str() == "-" {
        return Err(DbError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "a DB cannot be written to standard output: give a file name \
                 (`export` writes positions to standard output)",
            ),
        ));
    }
    crate::io::durable::lock_existing(path).map_err(|e| DbError::io(path, e))
}

/// A DB's temporary file, known to the interrupt handler until it is renamed into place.
struct Staged {
    file: NamedTempFile,
    pending: crate::io::durable::Pending,
}

impl Staged {
    fn path(&self) -> &Path {
        self.file.path()
    }
}

/// A temporary file in the target's directory (so that renaming it into place is atomic),
/// with room for the header at its start.
fn start_file(path: &Path) -> Result<(Staged, BufWriter<File>), DbError> {
    let io = |e| DbError::io(path, e);
    let (temp, pending) = crate::io::durable::temp_file_for(path, ".psdb-", ".tmp").map_err(io)?;
    let mut out = BufWriter::with_capacity(1 << 20, temp.reopen().map_err(io)?);
    out.write_all(&[0u8; HEADER_SIZE]).map_err(io)?;
    Ok((
        Staged {
            file: temp,
            pending,
        },
        out,
    ))
}

/// Copies every block of `source` to `out` in the layout of `columns`: column bytes are
/// moved as they are, label columns the source lacks are filled with "unknown", and those
/// `columns` lacks are left out; each block gets its CRC. Returns the hasher of the block
/// CRCs (the header's payload CRC).
fn copy_blocks(
    source: &mut BlockStream,
    out: &mut BufWriter<File>,
    columns: Columns,
    file_id: u64,
) -> Result<crc32fast::Hasher, DbError> {
    let header = source.header().clone();
    let from = header.layout();
    let to = Layout::new(header.block_size, columns);
    let n = header.block_size as usize;
    // (offset in source, offset in target, bytes)
    let mut moves: Vec<(usize, usize, usize)> = (0..8)
        .map(|i| (from.bitboards[i], to.bitboards[i], n * 8))
        .collect();
    moves.extend([
        (from.side_to_move, to.side_to_move, n),
        (from.castling, to.castling, n * 2),
        (from.en_passant, to.en_passant, n),
        (from.halfmove_clock, to.halfmove_clock, n * 2),
        (from.fullmove_number, to.fullmove_number, n * 2),
    ]);
    let mut block = vec![0u8; to.block_bytes as usize];
    let (no_result, no_score) = (NO_RESULT.to_le_bytes(), NO_SCORE.to_le_bytes());
    let (no_game, no_ply, no_u16) = (
        NO_GAME.to_le_bytes(),
        NO_PLY.to_le_bytes(),
        NO_U16.to_le_bytes(),
    );
    let mut unknown: Vec<(Option<usize>, Option<usize>, &[u8])> = vec![
        (from.result, to.result, &no_result),
        (from.score, to.score, &no_score),
        (from.game_id, to.game_id, &no_game),
        (from.ply, to.ply, &no_ply),
    ];
    for (&s, &t) in from.u16_labels.iter().zip(&to.u16_labels) {
        unknown.push((s, t, &no_u16));
    }
    for (source_offset, target_offset, fill) in unknown {
        match (source_offset, target_offset) {
            (Some(s), Some(t)) => moves.push((s, t, n * fill.len())),
            (None, Some(t)) => {
                // Filled once: the copies below never touch these bytes.
                for chunk in block[t..t + n * fill.len()].chunks_exact_mut(fill.len()) {
                    chunk.copy_from_slice(fill);
                }
            }
            _ => {}
        }
    }
    let path = source.path().to_path_buf();
    let crc_at = to.crc.expect("pawnstorm writes blocks with a CRC");
    let mut crc = crc32fast::Hasher::new();
    let mut index = 0u64;
    while let Some((bytes, _)) = source.next_bytes()? {
        for &(s, t, width) in &moves {
            block[t..t + width].copy_from_slice(&bytes[s..s + width]);
        }
        let block_crc = block_crc(Some(file_id), index, &block[..crc_at]).to_le_bytes();
        block[crc_at..crc_at + 4].copy_from_slice(&block_crc);
        crc.update(&block_crc);
        out.write_all(&block).map_err(|e| DbError::io(&path, e))?;
        index += 1;
    }
    Ok(crc)
}

/// `Write::write_all` for several buffers at once (`write_all_vectored` is not stable).
fn write_all_vectored(out: &mut File, mut slices: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match out.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => IoSlice::advance_slices(&mut slices, written),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn as_bytes<T: Pod>(column: &[T]) -> &[u8] {
    bytemuck::cast_slice(column)
}
