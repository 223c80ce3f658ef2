//! Writing tables of integer columns as numpy `.npy` (one structured array, so the column
//! names travel with the data) or `.csv` (a header row, then decimal integers). Files are
//! written to a temporary file and renamed into place when complete.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

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
    fn numpy(self) -> &'static str {
        match self {
            ColumnType::U64 => "<u8",
            ColumnType::U16 => "<u2",
            ColumnType::I32 => "<i4",
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
    #[error("{path}: {written} rows written but {expected} announced")]
    RowCount {
        path: PathBuf,
        written: u64,
        expected: u64,
    },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    Npy,
    Csv,
}

/// A table being written row by row.
pub struct TableWriter {
    path: PathBuf,
    format: Format,
    types: Vec<ColumnType>,
    temp: NamedTempFile,
    out: BufWriter<File>,
    rows: u64,
    expected: u64,
    line: Vec<u8>,
}

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
        let io = |error| TableError::Io {
            path: path.to_path_buf(),
            error,
        };
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".table-").suffix(".tmp");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let temp = builder.tempfile_in(&dir).map_err(io)?;
        let mut out = BufWriter::with_capacity(1 << 20, temp.reopen().map_err(io)?);
        match format {
            Format::Npy => out.write_all(&npy_header(columns, rows)).map_err(io)?,
            Format::Csv => {
                let names: Vec<&str> = columns.iter().map(|(n, _)| n.as_str()).collect();
                writeln!(out, "{}", names.join(",")).map_err(io)?;
            }
        }
        Ok(TableWriter {
            path: path.to_path_buf(),
            format,
            types: columns.iter().map(|&(_, t)| t).collect(),
            temp,
            out,
            rows: 0,
            expected: rows,
            line: Vec::with_capacity(1024),
        })
    }

    /// Appends one row; `values[i]` is column `i`, converted to its type (`I32` columns
    /// take the value's low 32 bits as a two's-complement number).
    pub fn write_row(&mut self, values: &[u64]) -> Result<(), TableError> {
        debug_assert_eq!(values.len(), self.types.len());
        self.line.clear();
        match self.format {
            Format::Npy => {
                for (&value, &kind) in values.iter().zip(&self.types) {
                    match kind {
                        ColumnType::U64 => self.line.extend_from_slice(&value.to_le_bytes()),
                        ColumnType::U16 => {
                            self.line.extend_from_slice(&(value as u16).to_le_bytes())
                        }
                        ColumnType::I32 => {
                            self.line.extend_from_slice(&(value as u32).to_le_bytes())
                        }
                    }
                }
            }
            Format::Csv => {
                let mut buffer = itoa::Buffer::new();
                for (i, (&value, &kind)) in values.iter().zip(&self.types).enumerate() {
                    if i > 0 {
                        self.line.push(b',');
                    }
                    let text = match kind {
                        ColumnType::I32 => buffer.format(value as u32 as i32),
                        _ => buffer.format(value),
                    };
                    self.line.extend_from_slice(text.as_bytes());
                }
                self.line.push(b'\n');
            }
        }
        self.rows += 1;
        self.out
            .write_all(&self.line)
            .map_err(|error| TableError::Io {
                path: self.path.clone(),
                error,
            })
    }

    /// Checks the row count, syncs, and renames the table into place.
    pub fn finish(self) -> Result<u64, TableError> {
        if self.rows != self.expected {
            return Err(TableError::RowCount {
                path: self.path,
                written: self.rows,
                expected: self.expected,
            });
        }
        let io = |error| TableError::Io {
            path: self.path.clone(),
            error,
        };
        let file = self.out.into_inner().map_err(|e| io(e.into_error()))?;
        file.sync_all().map_err(io)?;
        drop(file);
        self.temp.persist(&self.path).map_err(|e| io(e.error))?;
        Ok(self.rows)
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
    let mut dict = format!("{{'descr': {descr}, 'fortran_order': False, 'shape': ({rows},), }}");
    // Magic (6) + version (2) + length (2) + dict + newline: a multiple of 64 bytes.
    let unpadded = 10 + dict.len() + 1;
    dict.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    dict.push('\n');
    let mut header = b"\x93NUMPY\x01\x00".to_vec();
    header.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    header.extend_from_slice(dict.as_bytes());
    header
}
