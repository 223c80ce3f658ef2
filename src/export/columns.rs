//! A DB's rows as the Parquet export's columns, in memory and in Apache Arrow's layout
//! (values, a validity bitmap for nulls, offsets for text), for the Python package's
//! `Database.to_arrow()`: pyarrow wraps these buffers without copying them. Same names,
//! types, nulls and order as [`super::parquet::schema`], so the table equals what pyarrow
//! reads back from an export of the same DB.

use pawnstorm_kernels::Color;
use rayon::prelude::*;

use crate::db::{Columns, Database, DbError, U16_LABELS};
use crate::position::board::PieceType;
use crate::position::labels::{self, Record};

use super::parquet::bitboard_names;

/// A column's values as Arrow lays them out.
pub enum Values {
    U64(Vec<u64>),
    U32(Vec<u32>),
    U16(Vec<u16>),
    U8(Vec<u8>),
    I32(Vec<i32>),
    I8(Vec<i8>),
    /// UTF-8 text: row `i` is `data[offsets[i]..offsets[i + 1]]`.
    Text {
        offsets: Vec<i64>,
        data: Vec<u8>,
    },
}

/// One column: its export name, values, and (for a column that may hold nulls) a bitmap
/// with bit `i` set when row `i` holds a value, least significant bit first.
pub struct Column {
    pub name: String,
    pub values: Values,
    pub validity: Option<Vec<u8>>,
    pub nulls: usize,
    /// Whether the export's schema lets the column hold nulls (Parquet's OPTIONAL).
    pub nullable: bool,
}

/// The columns of one block's rows, being gathered.
struct Part {
    boards: [Vec<u64>; 12],
    side_to_move: Vec<u8>,
    castling: Text,
    en_passant: Vec<Option<u8>>,
    halfmove_clock: Vec<u16>,
    fullmove_number: Vec<u16>,
    fen: Text,
    result: Vec<Option<i8>>,
    score: Vec<Option<i32>>,
    game_id: Vec<Option<u32>>,
    ply: Vec<Option<u16>>,
    u16_labels: [Vec<Option<u16>>; 4],
    move_played: Vec<Option<String>>,
    clock: Vec<Option<u16>>,
}

#[derive(Default)]
struct Text {
    data: Vec<u8>,
    ends: Vec<usize>,
}

impl Text {
    fn push(&mut self, text: &str) {
        self.data.extend_from_slice(text.as_bytes());
        self.ends.push(self.data.len());
    }
}

impl Part {
    fn new() -> Part {
        Part {
            boards: Default::default(),
            side_to_move: Vec::new(),
            castling: Text::default(),
            en_passant: Vec::new(),
            halfmove_clock: Vec::new(),
            fullmove_number: Vec::new(),
            fen: Text::default(),
            result: Vec::new(),
            score: Vec::new(),
            game_id: Vec::new(),
            ply: Vec::new(),
            u16_labels: Default::default(),
            move_played: Vec::new(),
            clock: Vec::new(),
        }
    }

    /// As `parquet::RowGroupColumns::push` puts a row into the export.
    fn push(&mut self, record: &Record) {
        let p = &record.position;
        for (i, color) in Color::ALL.into_iter().enumerate() {
            for kind in PieceType::ALL {
                self.boards[6 * i + kind.index()].push(p.pieces(color, kind).0);
            }
        }
        self.side_to_move
            .push((p.side_to_move() == Color::Black) as u8);
        let fen = p.to_fen();
        self.castling.push(fen.split(' ').nth(2).unwrap_or("-"));
        self.fen.push(&fen);
        self.en_passant.push(p.en_passant().map(|s| s.index()));
        self.halfmove_clock.push(p.halfmove_clock());
        self.fullmove_number.push(p.fullmove_number());
        let labels = &record.labels;
        self.result.push(labels.result.map(|r| r.to_i8()));
        self.score.push(labels.score);
        self.game_id.push(labels.game_id);
        self.ply.push(labels.ply);
        for (column, value) in self.u16_labels.iter_mut().zip(labels.u16_labels()) {
            column.push(value);
        }
        self.move_played
            .push(labels.move_played.and_then(labels::move_to_uci));
        self.clock.push(labels.clock);
    }
}

/// A validity bitmap of `values` (None when every row holds a value) and the null count.
fn validity<T>(values: &[Option<T>]) -> (Option<Vec<u8>>, usize) {
    let nulls = values.iter().filter(|v| v.is_none()).count();
    if nulls == 0 {
        return (None, 0);
    }
    let mut bits = vec![0u8; values.len().div_ceil(8)];
    for (i, value) in values.iter().enumerate() {
        if value.is_some() {
            bits[i / 8] |= 1 << (i % 8);
        }
    }
    (Some(bits), nulls)
}

fn nullable<T: Copy + Default>(
    name: &str,
    values: Vec<Option<T>>,
    wrap: fn(Vec<T>) -> Values,
) -> Column {
    let (validity, nulls) = validity(&values);
    Column {
        name: name.to_string(),
        values: wrap(values.iter().map(|v| v.unwrap_or_default()).collect()),
        validity,
        nulls,
        nullable: true,
    }
}

fn required(name: &str, values: Values) -> Column {
    Column {
        name: name.to_string(),
        values,
        validity: None,
        nulls: 0,
        nullable: false,
    }
}

fn text(name: &str, parts: Vec<Text>) -> Column {
    let mut offsets = vec![0i64];
    let mut data = Vec::with_capacity(parts.iter().map(|t| t.data.len()).sum());
    for part in parts {
        let base = data.len() as i64;
        offsets.extend(part.ends.iter().map(|&end| base + end as i64));
        data.extend_from_slice(&part.data);
    }
    required(name, Values::Text { offsets, data })
}

/// Every row of `db` as the Parquet export's columns (no filters), computed block by
/// block on the current rayon pool, each block's rows checked as they are read.
pub fn export_columns(db: &Database) -> Result<Vec<Column>, DbError> {
    let parts: Vec<Part> = (0..db.block_count())
        .into_par_iter()
        .map(|index| {
            let block = db.block(index)?;
            let first = (index * db.block_size()) as u64;
            let mut part = Part::new();
            for row in 0..block.len {
                let record = block.record(row).map_err(|reason| DbError::BadRecord {
                    path: db.path().to_path_buf(),
                    index: first + row as u64,
                    reason,
                })?;
                part.push(&record);
            }
            Ok(part)
        })
        .collect::<Result<_, DbError>>()?;
    let mut parts = parts;
    // Each block's values moved out in turn: one copy into the whole column.
    fn concat<T>(parts: &mut [Part], pick: impl Fn(&mut Part) -> Vec<T>) -> Vec<T> {
        let mut out = Vec::new();
        for part in parts.iter_mut() {
            out.extend(pick(part));
        }
        out
    }
    let n = db.len() as usize;
    let mut columns = vec![required("index", Values::U64((0..n as u64).collect()))];
    for (i, name) in bitboard_names().iter().enumerate() {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.boards[i]));
        columns.push(required(name, Values::U64(values)));
    }
    columns.push(required(
        "side_to_move",
        Values::U8(concat(&mut parts, |p| std::mem::take(&mut p.side_to_move))),
    ));
    let castling = parts
        .iter_mut()
        .map(|p| std::mem::take(&mut p.castling))
        .collect();
    columns.push(text("castling", castling));
    columns.push(nullable(
        "en_passant",
        concat(&mut parts, |p| std::mem::take(&mut p.en_passant)),
        Values::U8,
    ));
    columns.push(required(
        "halfmove_clock",
        Values::U16(concat(&mut parts, |p| {
            std::mem::take(&mut p.halfmove_clock)
        })),
    ));
    columns.push(required(
        "fullmove_number",
        Values::U16(concat(&mut parts, |p| {
            std::mem::take(&mut p.fullmove_number)
        })),
    ));
    let fens = parts
        .iter_mut()
        .map(|p| std::mem::take(&mut p.fen))
        .collect();
    columns.push(text("fen", fens));
    let have = db.columns();
    if have.contains(Columns::RESULT) {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.result));
        columns.push(nullable("result", values, Values::I8));
    }
    if have.contains(Columns::SCORE) {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.score));
        columns.push(nullable("score", values, Values::I32));
    }
    if have.contains(Columns::GAME_ID) {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.game_id));
        columns.push(nullable("game_id", values, Values::U32));
    }
    if have.contains(Columns::PLY) {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.ply));
        columns.push(nullable("ply", values, Values::U16));
    }
    for (i, (column, name)) in U16_LABELS.iter().take(4).enumerate() {
        if have.contains(*column) {
            let values = concat(&mut parts, |p| std::mem::take(&mut p.u16_labels[i]));
            columns.push(nullable(name, values, Values::U16));
        }
    }
    if have.contains(Columns::MOVE) {
        let moves = concat(&mut parts, |p| std::mem::take(&mut p.move_played));
        let (validity, nulls) = validity(&moves);
        let mut offsets = Vec::with_capacity(moves.len() + 1);
        let mut data = Vec::new();
        offsets.push(0);
        for text in &moves {
            if let Some(text) = text {
                data.extend_from_slice(text.as_bytes());
            }
            offsets.push(data.len() as i64);
        }
        columns.push(Column {
            name: "move".to_string(),
            values: Values::Text { offsets, data },
            validity,
            nulls,
            nullable: true,
        });
    }
    // Last, as the Parquet export puts it.
    if have.contains(Columns::CLOCK) {
        let values = concat(&mut parts, |p| std::mem::take(&mut p.clock));
        columns.push(nullable("clock", values, Values::U16));
    }
    Ok(columns)
}
