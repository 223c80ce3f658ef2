//! Writing a position DB: rows are gathered a block at a time and written column by column
//! into a temporary file beside the target, which is renamed over the target only when
//! complete. An interrupted write leaves the old file (or none) in place.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use bytemuck::Pod;
use pawnstorm_kernels::Bitboard;
use tempfile::NamedTempFile;

use super::layout::{
    Columns, HEADER_SIZE, Header, Layout, NO_GAME, NO_PLY, NO_RESULT, NO_SCORE, NO_SQUARE,
};
use super::{Database, DbError};
use crate::labels::Record;

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
            len: 0,
        };
        buffer.clear();
        buffer
    }

    /// Resets every row to padding: empty boards, no en passant, unknown labels.
    fn clear(&mut self) {
        self.bitboards
            .iter_mut()
            .for_each(|c| c.fill(Bitboard::EMPTY));
        self.side_to_move.fill(0);
        self.castling.fill(0);
        self.en_passant.fill(NO_SQUARE);
        self.halfmove_clock.fill(0);
        self.fullmove_number.fill(0);
        self.result.fill(NO_RESULT);
        self.score.fill(NO_SCORE);
        self.game_id.fill(NO_GAME);
        self.ply.fill(NO_PLY);
        self.len = 0;
    }

    fn push(&mut self, record: &Record) -> Columns {
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
        let mut used = Columns::NONE;
        if let Some(result) = labels.result {
            self.result[row] = result.to_i8();
            used = used.union(Columns::RESULT);
        }
        if let Some(score) = labels.score {
            self.score[row] = score;
            used = used.union(Columns::SCORE);
        }
        if let Some(game) = labels.game_id {
            self.game_id[row] = game;
            used = used.union(Columns::GAME_ID);
        }
        if let Some(ply) = labels.ply {
            self.ply[row] = ply;
            used = used.union(Columns::PLY);
        }
        self.len += 1;
        used
    }
}

/// Writes a position DB. Call [`DbWriter::finish`]; dropping the writer discards the file.
pub struct DbWriter {
    path: PathBuf,
    temp: NamedTempFile,
    out: BufWriter<File>,
    block_size: u32,
    columns: Columns,
    used: Columns,
    drop_unused: bool,
    layout: Layout,
    buffer: BlockBuffer,
    count: u64,
    crc: crc32fast::Hasher,
}

impl DbWriter {
    /// Starts a new DB at `path` with room for the label columns `columns`. With
    /// `drop_unused`, columns that no record filled are left out of the finished file.
    pub fn create(
        path: impl AsRef<Path>,
        block_size: u32,
        columns: Columns,
        drop_unused: bool,
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
        let temp = temp_beside(&path)?;
        let file = temp.reopen().map_err(|e| DbError::io(&path, e))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(&[0u8; HEADER_SIZE])
            .map_err(|e| DbError::io(&path, e))?;
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
            crc: crc32fast::Hasher::new(),
        })
    }

    /// Starts a writer whose output begins with every record of the DB at `path` (which
    /// it will replace): the columns are the old DB's plus `columns`.
    pub fn append_to(
        path: impl AsRef<Path>,
        columns: Columns,
        drop_unused: bool,
    ) -> Result<DbWriter, DbError> {
        let old = Database::open(path.as_ref())?;
        old.verify()?;
        let mut writer = DbWriter::create(
            path.as_ref(),
            old.header().block_size,
            old.columns().union(columns),
            drop_unused,
        )?;
        writer.used = old.columns();
        for record in old.records(0..old.len()) {
            writer.push(&record?)?;
        }
        Ok(writer)
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn push(&mut self, record: &Record) -> Result<(), DbError> {
        let used = self.buffer.push(record);
        self.used = self.used.union(used);
        self.count += 1;
        if self.buffer.len == self.block_size as usize {
            self.flush_block()?;
        }
        Ok(())
    }

    fn flush_block(&mut self) -> Result<(), DbError> {
        let mut block = Vec::with_capacity(self.layout.block_bytes as usize);
        let b = &self.buffer;
        let layout = &self.layout;
        let mut put = |offset: usize, bytes: &[u8]| {
            block.resize(offset, 0);
            block.extend_from_slice(bytes);
        };
        for (i, column) in b.bitboards.iter().enumerate() {
            put(layout.bitboards[i], as_bytes(column));
        }
        put(layout.side_to_move, &b.side_to_move);
        put(layout.castling, as_bytes(&b.castling));
        put(layout.en_passant, &b.en_passant);
        put(layout.halfmove_clock, as_bytes(&b.halfmove_clock));
        put(layout.fullmove_number, as_bytes(&b.fullmove_number));
        if let Some(offset) = layout.result {
            put(offset, as_bytes(&b.result));
        }
        if let Some(offset) = layout.score {
            put(offset, as_bytes(&b.score));
        }
        if let Some(offset) = layout.game_id {
            put(offset, as_bytes(&b.game_id));
        }
        if let Some(offset) = layout.ply {
            put(offset, as_bytes(&b.ply));
        }
        block.resize(layout.block_bytes as usize, 0);
        self.crc.update(&block);
        self.out
            .write_all(&block)
            .map_err(|e| DbError::io(&self.path, e))?;
        self.buffer.clear();
        Ok(())
    }

    /// Writes the last block and the header, syncs, and renames the file into place.
    /// Returns the number of positions written.
    pub fn finish(mut self) -> Result<u64, DbError> {
        if self.buffer.len > 0 {
            self.flush_block()?;
        }
        let header = Header::new(
            self.count,
            self.block_size,
            self.columns,
            self.crc.clone().finalize(),
        );
        let io = |e| DbError::io(&self.path, e);
        self.out.seek(SeekFrom::Start(0)).map_err(io)?;
        self.out.write_all(&header.encode()).map_err(io)?;
        self.out.flush().map_err(io)?;
        if self.drop_unused && self.used != self.columns {
            // Copy the rows into a DB without the label columns that nothing filled; the
            // staged file is deleted when `self.temp` drops.
            let staged = Database::open(self.temp.path())?;
            return copy_columns(&staged, &self.path, self.used);
        }
        self.out.get_ref().sync_all().map_err(io)?;
        let path = self.path.clone();
        self.temp
            .persist(&path)
            .map_err(|e| DbError::io(&path, e.error))?;
        Ok(self.count)
    }
}

/// A temporary file in the target's directory, so that renaming it into place is atomic.
fn temp_beside(path: &Path) -> Result<NamedTempFile, DbError> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    tempfile::Builder::new()
        .prefix(".psdb-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .map_err(|e| DbError::io(path, e))
}

/// Writes `source`'s rows to `path` with only the label columns `columns`, block by
/// block, copying column bytes as they are (both layouts share the block size).
fn copy_columns(source: &Database, path: &Path, columns: Columns) -> Result<u64, DbError> {
    let from = source.header().layout();
    let to = Layout::new(source.header().block_size, columns);
    let n = source.block_size();
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
    for (source_offset, target_offset, width) in [
        (from.result, to.result, 1),
        (from.score, to.score, 4),
        (from.game_id, to.game_id, 4),
        (from.ply, to.ply, 2),
    ] {
        if let (Some(s), Some(t)) = (source_offset, target_offset) {
            moves.push((s, t, n * width));
        }
    }
    let io = |e| DbError::io(path, e);
    let temp = temp_beside(path)?;
    let mut out = BufWriter::with_capacity(1 << 20, temp.reopen().map_err(io)?);
    out.write_all(&[0u8; HEADER_SIZE]).map_err(io)?;
    let mut crc = crc32fast::Hasher::new();
    let mut block = vec![0u8; to.block_bytes as usize];
    let payload = source.payload();
    for index in 0..source.block_count() {
        let start = index * from.block_bytes as usize;
        let bytes = &payload[start..start + from.block_bytes as usize];
        for &(s, t, width) in &moves {
            block[t..t + width].copy_from_slice(&bytes[s..s + width]);
        }
        crc.update(&block);
        out.write_all(&block).map_err(io)?;
    }
    let header = Header::new(
        source.len(),
        source.header().block_size,
        columns,
        crc.finalize(),
    );
    out.seek(SeekFrom::Start(0)).map_err(io)?;
    out.write_all(&header.encode()).map_err(io)?;
    out.flush().map_err(io)?;
    out.get_ref().sync_all().map_err(io)?;
    drop(out);
    temp.persist(path).map_err(|e| io(e.error))?;
    Ok(source.len())
}

fn as_bytes<T: Pod>(column: &[T]) -> &[u8] {
    bytemuck::cast_slice(column)
}
