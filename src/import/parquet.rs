//! Apache Parquet inputs: the files `export --format parquet` writes, and any Parquet file
//! with a FEN column. Read with the `parquet` crate's own column readers (no Arrow: the
//! importer needs a handful of flat columns, and Arrow would add dozens of crates to the
//! build for nothing it uses).
//!
//! The position comes from the FEN column (`fen`, any case); the export's other position
//! columns (bitboards, side to move, castling, en passant, clocks) say the same thing and
//! are not read. Labels come from the columns named as the export names them (any case):
//! `result` (-1, 0, 1 from White's side as an integer, or text `1-0`, `1/2-1/2`, `0-1`,
//! `1.0`, `0.5`, `0.0`), `score` (centipawns, White's side), `game_id`, `ply`,
//! `white_elo`, `black_elo`, `base_seconds`, `increment`, `clock` (integers) and `move` (UCI
//! text).
//! A null is an unknown label; game ids are kept as the file has them, as an EPD's `game`
//! operations are.
//!
//! A row that is not a position (no FEN, a FEN that does not parse) or whose label is out
//! of its column's range is rejected with its row number in the place of a line number
//! (counted from 0, as pyarrow, polars and DuckDB number rows) and the reason; a file without a FEN column, or with a label column of a
//! type that holds no such label, is refused whole.

use parquet::basic::{ConvertedType, LogicalType, Type as PhysicalType};
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::{ByteArray, ByteArrayType, DataType, Int32Type, Int64Type};
use parquet::file::reader::{ChunkReader, FileReader, SerializedFileReader};
use parquet::schema::types::ColumnDescriptor;
use rayon::prelude::*;

use super::{Counts, Handlers, ImportError, Rejection};
use crate::position::fen;
use crate::position::labels::{self, GameResult, Labels, Record};

/// Rows read, parsed and handed on at a time: parsed in parallel, then written in order.
const BATCH_ROWS: usize = 1 << 15;

/// The label columns, by the names the Parquet export gives them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Label {
    Result,
    Score,
    GameId,
    Ply,
    WhiteElo,
    BlackElo,
    BaseSeconds,
    Increment,
    Move,
    Clock,
}

impl Label {
    const ALL: [Label; 10] = [
        Label::Result,
        Label::Score,
        Label::GameId,
        Label::Ply,
        Label::WhiteElo,
        Label::BlackElo,
        Label::BaseSeconds,
        Label::Increment,
        Label::Move,
        Label::Clock,
    ];

    fn name(self) -> &'static str {
        match self {
            Label::Result => "result",
            Label::Score => "score",
            Label::GameId => "game_id",
            Label::Ply => "ply",
            Label::WhiteElo => "white_elo",
            Label::BlackElo => "black_elo",
            Label::BaseSeconds => "base_seconds",
            Label::Increment => "increment",
            Label::Move => "move",
            Label::Clock => "clock",
        }
    }

    /// Whether the column may hold text (`result` as `1-0`, `move` as UCI), integers, or
    /// both.
    fn takes(self, kind: Kind) -> bool {
        match (self, kind) {
            (Label::Result, _) => true,
            (Label::Move, Kind::Text) => true,
            (Label::Move, _) => false,
            (_, Kind::Text) => false,
            _ => true,
        }
    }

    /// Sets the label from an integer value, or says why it cannot be one.
    fn set_int(self, value: i128, labels: &mut Labels) -> Result<(), String> {
        let out_of = |range: &str| format!("{} {value} is out of range ({range})", self.name());
        let u16_value = || {
            u16::try_from(value)
                .ok()
                .filter(|&v| v != u16::MAX)
                .ok_or_else(|| out_of("0 to 65534"))
        };
        match self {
            Label::Result => {
                labels.result = Some(
                    i8::try_from(value)
                        .ok()
                        .and_then(GameResult::from_i8)
                        .ok_or_else(|| {
                            format!("result {value} is not 1 (White won), 0 (draw) or -1")
                        })?,
                )
            }
            Label::Score => {
                labels.score = Some(
                    i32::try_from(value)
                        .ok()
                        .filter(|&s| s != i32::MIN)
                        .ok_or_else(|| out_of("a 32-bit centipawn score"))?,
                )
            }
            Label::GameId => {
                labels.game_id = Some(
                    u32::try_from(value)
                        .ok()
                        .filter(|&g| g != u32::MAX)
                        .ok_or_else(|| out_of("0 to 4294967294"))?,
                )
            }
            Label::Ply => labels.ply = Some(u16_value()?),
            Label::WhiteElo => labels.white_elo = Some(u16_value()?),
            Label::BlackElo => labels.black_elo = Some(u16_value()?),
            Label::BaseSeconds => labels.base_seconds = Some(u16_value()?),
            Label::Increment => labels.increment = Some(u16_value()?),
            Label::Clock => labels.clock = Some(u16_value()?),
            Label::Move => unreachable!("a move column holds text"),
        }
        Ok(())
    }

    fn set_text(self, text: &[u8], labels: &mut Labels) -> Result<(), String> {
        let text =
            std::str::from_utf8(text).map_err(|_| format!("{} is not valid UTF-8", self.name()))?;
        match self {
            Label::Result => {
                labels.result = Some(GameResult::parse(text).ok_or_else(|| {
                    format!("result {text:?} is not 1-0, 1/2-1/2, 0-1, 1.0, 0.5 or 0.0")
                })?)
            }
            Label::Move => {
                labels.move_played = Some(
                    labels::move_from_uci(text)
                        .ok_or_else(|| format!("move {text:?} is not a UCI move"))?,
                )
            }
            _ => unreachable!("only result and move columns hold text"),
        }
        Ok(())
    }
}

/// How a column's values are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Int32 { unsigned: bool },
    Int64 { unsigned: bool },
    Text,
}

impl Kind {
    fn of(column: &ColumnDescriptor) -> Option<Kind> {
        let unsigned = match column.logical_type_ref() {
            Some(LogicalType::Integer(int)) => !int.is_signed,
            _ => matches!(
                column.converted_type(),
                ConvertedType::UINT_8
                    | ConvertedType::UINT_16
                    | ConvertedType::UINT_32
                    | ConvertedType::UINT_64
            ),
        };
        match column.physical_type() {
            PhysicalType::INT32 => Some(Kind::Int32 { unsigned }),
            PhysicalType::INT64 => Some(Kind::Int64 { unsigned }),
            PhysicalType::BYTE_ARRAY => Some(Kind::Text),
            _ => None,
        }
    }
}

/// A column the import reads: where it is in the file's schema, and what it gives.
struct Wanted {
    index: usize,
    kind: Kind,
    /// `None` for the FEN column.
    label: Option<Label>,
}

/// One batch of a column's values, a row each, `None` for a null.
enum Values {
    Int(Vec<Option<i128>>),
    Text(Vec<Option<ByteArray>>),
}

/// An open column chunk, typed.
enum Reader {
    Int32(ColumnReaderImpl<Int32Type>, bool),
    Int64(ColumnReaderImpl<Int64Type>, bool),
    Text(ColumnReaderImpl<ByteArrayType>),
}

/// Reads `rows` records of a flat column into `out`, a value or a null each.
fn read_rows<T: DataType, V>(
    reader: &mut ColumnReaderImpl<T>,
    rows: usize,
    max_def: i16,
    convert: impl Fn(T::T) -> V,
    out: &mut Vec<Option<V>>,
) -> parquet::errors::Result<()> {
    let mut values = Vec::with_capacity(rows);
    let mut defs = Vec::with_capacity(rows);
    let mut read = 0;
    while read < rows {
        let (records, _, _) =
            reader.read_records(rows - read, Some(&mut defs), None, &mut values)?;
        if records == 0 {
            return Err(parquet::errors::ParquetError::General(format!(
                "the column chunk ends after {read} of its {rows} rows"
            )));
        }
        read += records;
    }
    let mut values = values.into_iter();
    out.clear();
    if max_def == 0 {
        out.extend(values.map(|v| Some(convert(v))));
    } else {
        for def in defs {
            out.push(if def == max_def {
                values.next().map(&convert)
            } else {
                None
            });
        }
    }
    if out.len() != rows {
        return Err(parquet::errors::ParquetError::General(format!(
            "{} values for {rows} rows",
            out.len()
        )));
    }
    Ok(())
}

impl Reader {
    fn open(column: ColumnReader, kind: Kind) -> Option<Reader> {
        Some(match (column, kind) {
            (ColumnReader::Int32ColumnReader(r), Kind::Int32 { unsigned }) => {
                Reader::Int32(r, unsigned)
            }
            (ColumnReader::Int64ColumnReader(r), Kind::Int64 { unsigned }) => {
                Reader::Int64(r, unsigned)
            }
            (ColumnReader::ByteArrayColumnReader(r), Kind::Text) => Reader::Text(r),
            _ => return None,
        })
    }

    fn read(&mut self, rows: usize, max_def: i16) -> parquet::errors::Result<Values> {
        Ok(match self {
            // Unsigned columns keep their values' bits in the signed physical type.
            Reader::Int32(r, unsigned) => {
                let mut out = Vec::new();
                let unsigned = *unsigned;
                read_rows(
                    r,
                    rows,
                    max_def,
                    |v: i32| {
                        if unsigned {
                            v as u32 as i128
                        } else {
                            v as i128
                        }
                    },
                    &mut out,
                )?;
                Values::Int(out)
            }
            Reader::Int64(r, unsigned) => {
                let mut out = Vec::new();
                let unsigned = *unsigned;
                read_rows(
                    r,
                    rows,
                    max_def,
                    |v: i64| {
                        if unsigned {
                            v as u64 as i128
                        } else {
                            v as i128
                        }
                    },
                    &mut out,
                )?;
                Values::Int(out)
            }
            Reader::Text(r) => {
                let mut out = Vec::new();
                read_rows(r, rows, max_def, |v| v, &mut out)?;
                Values::Text(out)
            }
        })
    }
}

/// The columns to read: the FEN column first, then each label column the file has.
fn wanted_columns(
    file: &str,
    schema: &parquet::schema::types::SchemaDescriptor,
) -> Result<Vec<Wanted>, ImportError> {
    let refuse = |reason: String| ImportError::Invalid {
        file: file.to_string(),
        reason,
    };
    let find = |name: &str| -> Result<Option<(usize, &ColumnDescriptor)>, ImportError> {
        let mut found = None;
        for (index, column) in schema.columns().iter().enumerate() {
            let path = column.path().parts();
            if !path[0].eq_ignore_ascii_case(name) {
                continue;
            }
            if path.len() != 1 || column.max_rep_level() != 0 {
                return Err(refuse(format!(
                    "column {:?} is nested or repeated; pawnstorm reads flat columns",
                    column.path().string()
                )));
            }
            if let Some((_, other)) = found {
                let other: &ColumnDescriptor = other;
                return Err(refuse(format!(
                    "two columns named {name} ({:?} and {:?})",
                    other.name(),
                    column.name()
                )));
            }
            found = Some((index, column.as_ref()));
        }
        Ok(found)
    };
    let names: Vec<&str> = schema.columns().iter().map(|c| c.name()).collect();
    let (index, column) = find("fen")?.ok_or_else(|| {
        refuse(format!(
            "no column fen (case-insensitive) to read positions from; the file's columns are {}",
            names.join(", ")
        ))
    })?;
    let mut wanted = match Kind::of(column) {
        Some(Kind::Text) => vec![Wanted {
            index,
            kind: Kind::Text,
            label: None,
        }],
        _ => {
            return Err(refuse(format!(
                "column {:?} holds {}, not text: no FENs in it",
                column.name(),
                column.physical_type()
            )));
        }
    };
    for label in Label::ALL {
        let Some((index, column)) = find(label.name())? else {
            continue;
        };
        match Kind::of(column).filter(|&kind| label.takes(kind)) {
            Some(kind) => wanted.push(Wanted {
                index,
                kind,
                label: Some(label),
            }),
            None => {
                let expected = match label {
                    Label::Move => "UCI text",
                    Label::Result => "integers (-1, 0, 1) or text (1-0, 1/2-1/2, 0-1)",
                    _ => "integers",
                };
                return Err(refuse(format!(
                    "column {:?} holds {}; the {} label is read from {expected}",
                    column.name(),
                    column.physical_type(),
                    label.name()
                )));
            }
        }
    }
    Ok(wanted)
}

/// Imports the rows of the Parquet file `reader` (named `name`), in order.
pub(super) fn import_parquet<R: ChunkReader + 'static>(
    name: &str,
    reader: R,
    handlers: &mut Handlers<'_>,
) -> Result<Counts, ImportError> {
    let bad_file = |error: parquet::errors::ParquetError| ImportError::Invalid {
        file: name.to_string(),
        reason: format!("not a readable Parquet file: {error}"),
    };
    // The parquet crate panics on some damage (an index past a page's end): such a file
    // is refused as one that fails to decode, without the panic's report.
    super::binpack::install_quiet_panic_hook();
    let damaged = |panic: String| ImportError::Invalid {
        file: name.to_string(),
        reason: format!("not a readable Parquet file: damaged ({panic})"),
    };
    let file = super::binpack::quietly(|| SerializedFileReader::new(reader))
        .map_err(damaged)?
        .map_err(bad_file)?;
    let metadata = file.metadata();
    let schema = metadata.file_metadata().schema_descr();
    let wanted = wanted_columns(name, schema)?;
    let mut counts = Counts::default();
    // Rows before this row group, for the row numbers.
    let mut first_row = 0u64;
    let mut bytes_done = 0u64;
    for group in 0..file.num_row_groups() {
        let group_meta = metadata.row_group(group);
        let rows = usize::try_from(group_meta.num_rows()).map_err(|_| ImportError::Invalid {
            file: name.to_string(),
            reason: format!(
                "row group {group} says it has {} rows",
                group_meta.num_rows()
            ),
        })?;
        let opened = super::binpack::quietly(|| {
            let row_group = file.get_row_group(group)?;
            wanted
                .iter()
                .map(|column| row_group.get_column_reader(column.index))
                .collect::<parquet::errors::Result<Vec<_>>>()
        });
        let opened = opened.map_err(damaged)?.map_err(bad_file)?;
        let mut readers = Vec::with_capacity(wanted.len());
        for (reader, column) in opened.into_iter().zip(&wanted) {
            readers.push(
                Reader::open(reader, column.kind).expect("column kinds come from the schema"),
            );
        }
        let mut done = 0;
        while done < rows {
            let batch = BATCH_ROWS.min(rows - done);
            let mut columns = Vec::with_capacity(wanted.len());
            for (reader, column) in readers.iter_mut().zip(&wanted) {
                let max_def = schema.column(column.index).max_def_level();
                let place = || {
                    format!(
                        "row group {group}, column {}",
                        schema.column(column.index).name()
                    )
                };
                let values = super::binpack::quietly(|| reader.read(batch, max_def))
                    .map_err(|panic| damaged(format!("{}: {panic}", place())))?
                    .map_err(|error| {
                        bad_file(parquet::errors::ParquetError::General(format!(
                            "{}: {error}",
                            place()
                        )))
                    })?;
                columns.push(values);
            }
            let start = first_row + done as u64;
            import_batch(name, start, &wanted, &columns, batch, &mut counts, handlers)?;
            done += batch;
        }
        first_row += rows as u64;
        bytes_done += group_meta.compressed_size().max(0) as u64;
        (handlers.progress)(bytes_done);
    }
    Ok(counts)
}

/// Parses a batch's rows in parallel, then hands them on in order.
fn import_batch(
    name: &str,
    start: u64,
    wanted: &[Wanted],
    columns: &[Values],
    rows: usize,
    counts: &mut Counts,
    handlers: &mut Handlers<'_>,
) -> Result<(), ImportError> {
    let Values::Text(fens) = &columns[0] else {
        unreachable!("the FEN column is read as text")
    };
    let parsed: Vec<Result<Record, (String, String)>> = (0..rows)
        .into_par_iter()
        .map(|row| {
            let Some(fen_bytes) = &fens[row] else {
                return Err(("no FEN (null)".to_string(), String::new()));
            };
            let text = String::from_utf8_lossy(fen_bytes.data());
            let position = std::str::from_utf8(fen_bytes.data())
                .map_err(|_| "FEN is not valid UTF-8".to_string())
                .and_then(|fen| fen::parse_fen(fen.trim()).map_err(|e| e.to_string()))
                .map_err(|reason| (reason, text.to_string()))?;
            let mut labels = Labels::default();
            for (column, values) in wanted.iter().zip(columns).skip(1) {
                let label = column.label.expect("label columns follow the FEN");
                let set = match values {
                    Values::Int(v) => v[row].map(|value| label.set_int(value, &mut labels)),
                    Values::Text(v) => v[row]
                        .as_ref()
                        .map(|value| label.set_text(value.data(), &mut labels)),
                };
                if let Some(Err(reason)) = set {
                    return Err((reason, text.to_string()));
                }
            }
            Ok(Record { position, labels })
        })
        .collect();
    for (row, outcome) in parsed.into_iter().enumerate() {
        match outcome {
            Ok(record) => {
                (handlers.records)(std::slice::from_ref(&record))?;
                counts.positions += 1;
            }
            Err((reason, text)) => {
                counts.rejected += 1;
                let rejection = Rejection {
                    file: name.to_string(),
                    line: start + row as u64,
                    reason: format!("row {}: {reason}", start + row as u64),
                    text,
                };
                if (handlers.reject)(&rejection) == super::AfterRejection::Stop {
                    return Err(ImportError::Stopped(rejection));
                }
            }
        }
    }
    Ok(())
}
