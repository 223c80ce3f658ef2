//! Tables of integer columns written as numpy `.npy` (one structured array, so the column
//! names travel with the data) or `.csv` (a header row, then decimal integers), filled in
//! parallel by the worker threads that compute them.
//!
//! A table's size is known before the first row is computed, so a `.npy` file is sized up
//! front and every worker encodes its pieces of rows and writes them straight to their place
//! (positioned writes): no serial writer, no order to keep. (A memory-mapped output was
//! measured slower: the page faults of a 2 GB table cost more system time than the copies
//! of positioned writes, and a full disk becomes a SIGBUS instead of an error.) A `.csv` row has no fixed size: workers format
//! pieces into text in parallel, a window of pieces at a time, and the text is written in
//! order. Either way the table goes to a temporary file beside the target, renamed into
//! place when complete: a failed or interrupted run leaves no partial table.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use tempfile::NamedTempFile;
use thiserror::Error;

/// The storage type of a column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnType {
    U64,
    U16,
    I32,
}

impl ColumnType {
    /// The numpy type string (`<u8`, `<u2`, `<i4`).
    pub fn numpy(self) -> &'static str {
        match self {
            ColumnType::U64 => "<u8",
            ColumnType::U16 => "<u2",
            ColumnType::I32 => "<i4",
        }
    }

    /// Bytes a value.
    pub fn bytes(self) -> usize {
        match self {
            ColumnType::U64 => 8,
            ColumnType::U16 => 2,
            ColumnType::I32 => 4,
        }
    }
}

#[derive(Debug, Error)]
pub enum TableError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{0}: unknown output format (use .npy or .csv)")]
    UnknownFormat(PathBuf),
    #[error("{path}: piece {piece} has {got} rows, expected {expected}")]
    RowCount {
        path: PathBuf,
        piece: usize,
        got: usize,
        expected: usize,
    },
}

/// What fills a table: pieces of consecutive rows (piece `p` holds rows
/// `p * piece_rows ..`, the last one fewer), each computed into a worker's scratch space and
/// then read value by value.
pub trait TableSource: Sync {
    /// Per-worker space a piece is computed into (allocated once per worker, reused).
    type Scratch: Send;
    /// The error of computing a piece (a corrupt input block, say).
    type Error: From<TableError> + Send;

    fn scratch(&self) -> Self::Scratch;
    /// Work over the whole input before any piece is computed, on the same pool (a pass
    /// that takes the rows in an order of its own, whose results the pieces then copy).
    /// Returns whether it reported the rows' progress through `done` (`done(rows)` as the
    /// pieces would), in which case the pieces report none.
    fn prepare(&self, done: &(dyn Fn(usize) + Sync)) -> Result<bool, Self::Error> {
        let _ = done;
        Ok(false)
    }
    /// Computes piece `piece` into `scratch` and returns how many rows it holds.
    fn compute(&self, scratch: &mut Self::Scratch, piece: usize) -> Result<usize, Self::Error>;
    /// The value of `column` in row `row` of the piece last computed into `scratch`
    /// (`I32` columns take the low 32 bits as a two's-complement number).
    fn value(&self, scratch: &Self::Scratch, row: usize, column: usize) -> u64;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Npy,
    Csv,
}

/// A table of a known number of rows, about to be filled.
pub struct TableWriter {
    path: PathBuf,
    format: Format,
    columns: Vec<(String, ColumnType)>,
    rows: u64,
    temp: NamedTempFile,
    pending: crate::io::durable::Pending,
}

/// Pieces of a `.csv` formatted per window before they are written in order: enough for
/// every worker to have several, few enough that the text waiting stays small.
const CSV_PIECES_PER_THREAD: usize = 8;

impl TableWriter {
    /// Starts a table at `path` (its extension picks the format) with `rows` rows of the
    /// named columns.
    pub fn create(
        path: &Path,
        columns: &[(String, ColumnType)],
        rows: u64,
    ) -> Result<TableWriter, TableError> {
        let extension = path
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase());
        let format = match extension.as_deref() {
            Some("npy") => Format::Npy,
            Some("csv") => Format::Csv,
            _ => return Err(TableError::UnknownFormat(path.to_path_buf())),
        };
        let (temp, pending) =
            crate::io::durable::temp_file_for(path, ".table-", ".tmp").map_err(|error| {
                TableError::Io {
                    path: path.to_path_buf(),
                    error,
                }
            })?;
        Ok(TableWriter {
            path: path.to_path_buf(),
            format,
            columns: columns.to_vec(),
            rows,
            pending,
            temp,
        })
    }

    fn io(&self, error: std::io::Error) -> TableError {
        TableError::Io {
            path: self.path.clone(),
            error,
        }
    }

    /// Bytes of one `.npy` record (numpy packs structured fields without padding).
    fn record_bytes(&self) -> usize {
        self.columns.iter().map(|(_, t)| t.bytes()).sum()
    }

    /// Computes every piece of `source` on the current rayon pool, writes the table, syncs
    /// it and renames it into place. `done(rows)` is called as pieces complete (for
    /// progress). Returns the number of rows.
    pub fn fill<S: TableSource>(
        self,
        source: &S,
        piece_rows: usize,
        done: impl Fn(usize) + Sync,
    ) -> Result<u64, S::Error> {
        assert!(piece_rows > 0, "pieces hold rows");
        let reported = source.prepare(&done)?;
        let done = |rows: usize| {
            if !reported {
                done(rows)
            }
        };
        let pieces = self.rows.div_ceil(piece_rows as u64) as usize;
        // Every piece but the last is whole; a source that disagrees would leave holes.
        let expected = |piece: usize| {
            let start = (piece * piece_rows) as u64;
            (self.rows - start).min(piece_rows as u64) as usize
        };
        let check = |piece: usize, got: usize| -> Result<(), TableError> {
            if got == expected(piece) {
                Ok(())
            } else {
                Err(TableError::RowCount {
                    path: self.path.clone(),
                    piece,
                    got,
                    expected: expected(piece),
                })
            }
        };
        match self.format {
            Format::Npy => {
                let header = npy_header(&self.columns, self.rows);
                let record = self.record_bytes();
                let file = self.temp.as_file();
                file.set_len(header.len() as u64 + self.rows * record as u64)
                    .and_then(|()| write_all_at(file, &header, 0))
                    .map_err(|e| self.io(e))?;
                let types: Vec<ColumnType> = self.columns.iter().map(|&(_, t)| t).collect();
                let piece_bytes = piece_rows * record;
                (0..pieces).into_par_iter().try_for_each_init(
                    || (source.scratch(), Vec::with_capacity(piece_bytes)),
                    |(scratch, bytes), piece| {
                        let rows = source.compute(scratch, piece)?;
                        check(piece, rows)?;
                        bytes.resize(rows * record, 0);
                        encode_npy(source, scratch, &types, bytes);
                        let offset = (header.len() + piece * piece_bytes) as u64;
                        write_all_at(file, bytes, offset).map_err(|e| self.io(e))?;
                        start_writeback(file, offset, bytes.len() as u64);
                        done(rows);
                        Ok::<(), S::Error>(())
                    },
                )?;
            }
            Format::Csv => {
                let mut out = BufWriter::with_capacity(1 << 20, self.temp.as_file());
                let names: Vec<&str> = self.columns.iter().map(|(n, _)| n.as_str()).collect();
                writeln!(out, "{}", names.join(",")).map_err(|e| self.io(e))?;
                let types: Vec<ColumnType> = self.columns.iter().map(|&(_, t)| t).collect();
                let window = CSV_PIECES_PER_THREAD * rayon::current_num_threads().max(1);
                let mut texts: Vec<Vec<u8>> = Vec::new();
                for first in (0..pieces).step_by(window) {
                    let last = (first + window).min(pieces);
                    texts.resize_with(last - first, Vec::new);
                    texts.par_iter_mut().enumerate().try_for_each_init(
                        || source.scratch(),
                        |scratch, (i, text)| {
                            let rows = source.compute(scratch, first + i)?;
                            check(first + i, rows)?;
                            text.clear();
                            encode_csv(source, scratch, &types, rows, text);
                            Ok::<(), S::Error>(())
                        },
                    )?;
                    for (i, text) in texts.iter().enumerate() {
                        out.write_all(text).map_err(|e| self.io(e))?;
                        done(expected(first + i));
                    }
                }
                out.flush().map_err(|e| self.io(e))?;
            }
        }
        self.temp.as_file().sync_all().map_err(|e| self.io(e))?;
        let TableWriter {
            path,
            temp,
            rows,
            pending,
            ..
        } = self;
        pending
            .commit(|| temp.persist(&path))
            .map_err(|e| TableError::Io {
                path: path.clone(),
                error: e.error,
            })?;
        crate::io::durable::sync_parent_dir(&path)
            .map_err(|error| TableError::Io { path, error })?;
        Ok(rows)
    }
}

/// Fills `out`, the memory of a packed array of records (the `.npy` table's records, as a
/// numpy structured array of the same columns holds them), with every piece of `source`
/// on the current rayon pool: what [`TableWriter::fill`] writes to a file, written in
/// place into a caller's buffer (the Python package's arrays) with no file and no copy.
/// `out` must hold `rows` records exactly.
pub fn fill_records<S: TableSource>(
    source: &S,
    columns: &[(String, ColumnType)],
    rows: u64,
    piece_rows: usize,
    out: &mut [u8],
    done: impl Fn(usize) + Sync,
) -> Result<u64, S::Error> {
    assert!(piece_rows > 0, "pieces hold rows");
    let types: Vec<ColumnType> = columns.iter().map(|&(_, t)| t).collect();
    let record: usize = types.iter().map(|t| t.bytes()).sum();
    assert_eq!(out.len() as u64, rows * record as u64, "one record a row");
    if out.is_empty() {
        return Ok(rows);
    }
    let reported = source.prepare(&done)?;
    let done = |rows: usize| {
        if !reported {
            done(rows)
        }
    };
    out.par_chunks_mut(piece_rows * record)
        .enumerate()
        .try_for_each_init(
            || source.scratch(),
            |scratch, (piece, bytes)| {
                let got = source.compute(scratch, piece)?;
                let expected = bytes.len() / record;
                if got != expected {
                    return Err(TableError::RowCount {
                        path: PathBuf::from("(array)"),
                        piece,
                        got,
                        expected,
                    }
                    .into());
                }
                encode_npy(source, scratch, &types, bytes);
                done(got);
                Ok::<(), S::Error>(())
            },
        )?;
    Ok(rows)
}

/// Writes `bytes` at `offset` (a positioned write: workers write their pieces at once,
/// each to its own place, with no shared file position).
pub(crate) fn write_all_at(file: &File, bytes: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, bytes, offset)
    }
    #[cfg(windows)]
    {
        let mut done = 0;
        while done < bytes.len() {
            let n = std::os::windows::fs::FileExt::seek_write(
                file,
                &bytes[done..],
                offset + done as u64,
            )?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            done += n;
        }
        Ok(())
    }
}

/// Starts writing a finished piece to disk now, so that the sync at the end (without which
/// a crash soon after the rename could leave a table of the right name but not its data)
/// waits for the last pieces only, not for the whole table. A hint: errors are
/// left to the final sync to report.
fn start_writeback(file: &File, offset: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        if let (Ok(offset), Ok(len)) = (
            libc::off64_t::try_from(offset),
            libc::off64_t::try_from(len),
        ) {
            // SAFETY: a plain system call on a file descriptor we own.
            unsafe {
                libc::sync_file_range(file.as_raw_fd(), offset, len, libc::SYNC_FILE_RANGE_WRITE)
            };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, offset, len);
}

/// Encodes the rows of the piece in `scratch` as packed little-endian records into `bytes`
/// (exactly the piece's rows times the record size).
fn encode_npy<S: TableSource>(
    source: &S,
    scratch: &S::Scratch,
    types: &[ColumnType],
    bytes: &mut [u8],
) {
    let record: usize = types.iter().map(|t| t.bytes()).sum();
    // Column by column: the type's match leaves the inner loop, and a column-major scratch
    // (the masks) is read in order.
    let mut at = 0;
    for (column, &kind) in types.iter().enumerate() {
        let fields = bytes.chunks_exact_mut(record).enumerate();
        match kind {
            ColumnType::U64 => fields.for_each(|(row, out)| {
                let value = source.value(scratch, row, column);
                out[at..at + 8].copy_from_slice(&value.to_le_bytes());
            }),
            ColumnType::U16 => fields.for_each(|(row, out)| {
                let value = source.value(scratch, row, column) as u16;
                out[at..at + 2].copy_from_slice(&value.to_le_bytes());
            }),
            ColumnType::I32 => fields.for_each(|(row, out)| {
                let value = source.value(scratch, row, column) as u32;
                out[at..at + 4].copy_from_slice(&value.to_le_bytes());
            }),
        }
        at += kind.bytes();
    }
}

fn encode_csv<S: TableSource>(
    source: &S,
    scratch: &S::Scratch,
    types: &[ColumnType],
    rows: usize,
    text: &mut Vec<u8>,
) {
    let mut buffer = itoa::Buffer::new();
    for row in 0..rows {
        for (column, &kind) in types.iter().enumerate() {
            if column > 0 {
                text.push(b',');
            }
            let value = source.value(scratch, row, column);
            let digits = match kind {
                ColumnType::I32 => buffer.format(value as u32 as i32),
                ColumnType::U16 => buffer.format(value as u16),
                ColumnType::U64 => buffer.format(value),
            };
            text.extend_from_slice(digits.as_bytes());
        }
        text.push(b'\n');
    }
}

/// The `.npy` version 1.0 header of a one-dimensional structured array of `rows` records.
/// A single column is a plain array (what `torch.from_numpy` takes as it is); more columns
/// make one structured array, so that the names travel with the data.
fn npy_header(columns: &[(String, ColumnType)], rows: u64) -> Vec<u8> {
    let descr = match columns {
        [(_, kind)] => format!("'{}'", kind.numpy()),
        _ => {
            let fields: Vec<String> = columns
                .iter()
                .map(|(name, kind)| format!("('{name}', '{}')", kind.numpy()))
                .collect();
            format!("[{}]", fields.join(", "))
        }
    };
    crate::io::npz::npy_header_dict(&descr, &format!("({rows},)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Row `r` holds `r`, `r * 3` as a u16 and `-r` as an i32; piece 5 fails on request.
    struct Counting {
        rows: u64,
        piece_rows: usize,
        fail_at: Option<usize>,
    }

    #[derive(Debug)]
    enum Error {
        Table,
        Piece(usize),
    }

    impl From<TableError> for Error {
        fn from(_: TableError) -> Error {
            Error::Table
        }
    }

    impl TableSource for Counting {
        type Scratch = u64;
        type Error = Error;
        fn scratch(&self) -> u64 {
            0
        }
        fn compute(&self, first: &mut u64, piece: usize) -> Result<usize, Error> {
            if self.fail_at == Some(piece) {
                return Err(Error::Piece(piece));
            }
            *first = (piece * self.piece_rows) as u64;
            Ok((self.rows - *first).min(self.piece_rows as u64) as usize)
        }
        fn value(&self, first: &u64, row: usize, column: usize) -> u64 {
            let r = first + row as u64;
            match column {
                0 => r,
                1 => r * 3,
                _ => (-(r as i64)) as u64,
            }
        }
    }

    /// [`Counting`] whose `prepare` reports every row's progress itself (as a pass that
    /// computes the rows in an order of its own does), when `reports`.
    struct Preparing {
        inner: Counting,
        reports: bool,
    }

    impl TableSource for Preparing {
        type Scratch = u64;
        type Error = Error;
        fn scratch(&self) -> u64 {
            0
        }
        fn prepare(&self, done: &(dyn Fn(usize) + Sync)) -> Result<bool, Error> {
            if self.reports {
                done(self.inner.rows as usize / 2);
                done(self.inner.rows as usize - self.inner.rows as usize / 2);
            }
            Ok(self.reports)
        }
        fn compute(&self, first: &mut u64, piece: usize) -> Result<usize, Error> {
            self.inner.compute(first, piece)
        }
        fn value(&self, first: &u64, row: usize, column: usize) -> u64 {
            self.inner.value(first, row, column)
        }
    }

    #[test]
    fn progress_counts_every_row_once_whoever_reports_it() {
        let dir = tempfile::tempdir().expect("temp dir");
        for reports in [false, true] {
            for name in ["t.npy", "t.csv", "in memory"] {
                let source = Preparing {
                    inner: Counting {
                        rows: 1000,
                        piece_rows: 64,
                        fail_at: None,
                    },
                    reports,
                };
                let counted = std::sync::atomic::AtomicUsize::new(0);
                let done = |rows: usize| {
                    counted.fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
                };
                if name == "in memory" {
                    let mut out = vec![0u8; 1000 * 14];
                    pool()
                        .install(|| fill_records(&source, &columns(), 1000, 64, &mut out, done))
                        .expect("fill");
                } else {
                    let path = dir.path().join(name);
                    let table = TableWriter::create(&path, &columns(), 1000).expect("create");
                    pool()
                        .install(|| table.fill(&source, 64, done))
                        .expect("fill");
                }
                assert_eq!(
                    counted.into_inner(),
                    1000,
                    "{name}, prepare reports: {reports}"
                );
            }
        }
    }

    fn columns() -> Vec<(String, ColumnType)> {
        vec![
            ("index".into(), ColumnType::U64),
            ("triple".into(), ColumnType::U16),
            ("negated".into(), ColumnType::I32),
        ]
    }

    fn pool() -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a pool")
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn npy_records_land_in_row_order_from_parallel_pieces() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.npy");
        let source = Counting {
            rows: 1000,
            piece_rows: 64,
            fail_at: None,
        };
        let table = TableWriter::create(&path, &columns(), source.rows).expect("create");
        let rows = pool()
            .install(|| table.fill(&source, source.piece_rows, |_| {}))
            .expect("fill");
        assert_eq!(rows, 1000);
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(&bytes[..6], b"\x93NUMPY");
        let header_len = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!(header_len % 64, 0);
        let dict = std::str::from_utf8(&bytes[10..header_len]).expect("ascii");
        assert!(dict.contains("('triple', '<u2')") && dict.contains("'shape': (1000,)"));
        let records = &bytes[header_len..];
        assert_eq!(records.len(), 1000 * 14);
        for (r, record) in records.chunks_exact(14).enumerate() {
            let r = r as u64;
            assert_eq!(u64::from_le_bytes(record[..8].try_into().unwrap()), r);
            assert_eq!(
                u16::from_le_bytes(record[8..10].try_into().unwrap()),
                (r * 3) as u16
            );
            assert_eq!(
                i32::from_le_bytes(record[10..].try_into().unwrap()),
                -(r as i32)
            );
        }
        assert_eq!(leftovers(dir.path()), vec!["t.npy".to_string()]);
    }

    #[test]
    fn records_in_memory_equal_the_npy_file_records() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.npy");
        let source = Counting {
            rows: 1000,
            piece_rows: 64,
            fail_at: None,
        };
        let table = TableWriter::create(&path, &columns(), source.rows).expect("create");
        pool()
            .install(|| table.fill(&source, source.piece_rows, |_| {}))
            .expect("fill");
        let bytes = std::fs::read(&path).expect("read");
        let header_len = 10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        let mut memory = vec![0xAAu8; 1000 * 14];
        let done = std::sync::atomic::AtomicUsize::new(0);
        let rows = pool()
            .install(|| {
                fill_records(&source, &columns(), 1000, 64, &mut memory, |rows| {
                    done.fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
                })
            })
            .expect("fill");
        assert_eq!(rows, 1000);
        assert_eq!(done.into_inner(), 1000);
        assert_eq!(&bytes[header_len..], &memory[..]);
        // A failing piece is an error here too.
        let failing = Counting {
            fail_at: Some(3),
            ..source
        };
        let result = fill_records(&failing, &columns(), 1000, 64, &mut memory, |_| {});
        assert!(matches!(result, Err(Error::Piece(3))), "{result:?}");
    }

    #[test]
    fn csv_rows_keep_their_order_across_windows() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.csv");
        // 200 pieces: several windows of 8 pieces a thread.
        let source = Counting {
            rows: 200 * 8 - 3,
            piece_rows: 8,
            fail_at: None,
        };
        let done = std::sync::atomic::AtomicUsize::new(0);
        let table = TableWriter::create(&path, &columns(), source.rows).expect("create");
        pool()
            .install(|| {
                table.fill(&source, source.piece_rows, |rows| {
                    done.fetch_add(rows, std::sync::atomic::Ordering::Relaxed);
                })
            })
            .expect("fill");
        assert_eq!(done.into_inner() as u64, source.rows);
        let text = std::fs::read_to_string(&path).expect("read");
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("index,triple,negated"));
        let mut count = 0u64;
        for (r, line) in lines.enumerate() {
            let r = r as u64;
            assert_eq!(line, format!("{r},{},{}", r * 3, -(r as i64)));
            count += 1;
        }
        assert_eq!(count, source.rows);
    }

    #[test]
    fn a_failed_piece_leaves_no_file_behind() {
        for name in ["t.npy", "t.csv"] {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join(name);
            let source = Counting {
                rows: 640,
                piece_rows: 64,
                fail_at: Some(5),
            };
            let table = TableWriter::create(&path, &columns(), source.rows).expect("create");
            let result = pool().install(|| table.fill(&source, source.piece_rows, |_| {}));
            assert!(matches!(result, Err(Error::Piece(5))), "{name}: {result:?}");
            assert!(leftovers(dir.path()).is_empty(), "{name}: files left");
        }
    }

    #[test]
    fn a_piece_short_of_rows_is_an_error() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.npy");
        // The source believes in 100 rows; the table was announced with 130.
        let source = Counting {
            rows: 100,
            piece_rows: 64,
            fail_at: None,
        };
        let table = TableWriter::create(&path, &columns(), 130).expect("create");
        let result = table.fill(&source, source.piece_rows, |_| {});
        assert!(matches!(result, Err(Error::Table)), "{result:?}");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn an_empty_table_is_a_header_alone() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("t.npy");
        let source = Counting {
            rows: 0,
            piece_rows: 64,
            fail_at: None,
        };
        let table = TableWriter::create(&path, &columns(), 0).expect("create");
        assert_eq!(table.fill(&source, 64, |_| {}).expect("fill"), 0);
        let bytes = std::fs::read(&path).expect("read");
        assert_eq!(
            bytes.len(),
            10 + u16::from_le_bytes([bytes[8], bytes[9]]) as usize
        );
    }
}
