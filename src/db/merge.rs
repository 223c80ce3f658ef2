//! Merging DBs into one, the counterpart of [`super::split`]: rows in input order, game ids
//! renumbered so that games of different inputs never share an id.

use std::path::Path;

use super::{Columns, Database, DbError, DbWriter};
use crate::position::labels::Labels;

/// Which label columns a merge writes when its inputs' columns differ.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MergeColumns {
    /// Every column some input has; the rows of the inputs without it hold its "unknown"
    /// value (`NO_RESULT`, `NO_SCORE`, `NO_GAME`, `NO_PLY`, `NO_U16`), as a writer fills a
    /// label a record lacks.
    #[default]
    Union,
    /// Only the columns every input has; the others are dropped.
    Common,
}

/// What a merge wrote.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Merged {
    pub positions: u64,
    pub columns: Columns,
    /// Label columns some input had and the output does not ([`MergeColumns::Common`]).
    pub dropped: Columns,
    /// Label columns of the output that some input did not have: unknown in its rows
    /// ([`MergeColumns::Union`]).
    pub filled: Columns,
    /// Per input, what was added to its game ids.
    pub game_offsets: Vec<u32>,
}

/// The label columns every input has, and those only some have.
pub fn common_columns(inputs: &[Database]) -> (Columns, Columns) {
    let all = inputs
        .iter()
        .fold(Columns::NONE, |all, db| all.union(db.columns()));
    let common = inputs
        .iter()
        .fold(all, |common, db| common.intersection(db.columns()));
    (common, all.without(common))
}

/// Writes every row of `inputs`, in order, to `output` (whole or not at all), with the
/// first input's block size. Game ids of input i are shifted by one more than the largest
/// id of the inputs before it. `columns` says what happens to label columns that only some
/// inputs have. `progress` hears of rows written.
pub fn merge(
    inputs: &[Database],
    output: &Path,
    columns: MergeColumns,
    progress: &mut dyn FnMut(u64),
) -> Result<Merged, DbError> {
    let Some(first) = inputs.first() else {
        return Err(DbError::Invalid {
            path: output.to_path_buf(),
            what: "nothing to merge".to_string(),
        });
    };
    let (common, partial) = common_columns(inputs);
    let (kept, dropped, filled) = match columns {
        MergeColumns::Union => (common.union(partial), Columns::NONE, partial),
        MergeColumns::Common => (common, partial, Columns::NONE),
    };
    let mut game_offsets = Vec::with_capacity(inputs.len());
    let mut next_game: u64 = 0;
    for db in inputs {
        let offset = u32::try_from(next_game)
            .ok()
            .filter(|&o| o < u32::MAX)
            .ok_or_else(|| DbError::Invalid {
                path: db.path().to_path_buf(),
                what: "the inputs' game ids together run past 2^32 - 1".to_string(),
            })?;
        game_offsets.push(offset);
        if kept.contains(Columns::GAME_ID)
            && let Some(max) = db.max_game_id()?
        {
            next_game += u64::from(max) + 1;
        }
    }
    let mut writer = DbWriter::create(output, first.header().block_size, kept, false)?;
    for (db, &offset) in inputs.iter().zip(&game_offsets) {
        let mut pending = 0;
        for record in db.records(0..db.len()) {
            let mut record = record?;
            keep_only(&mut record.labels, kept);
            if let Some(game) = record.labels.game_id.as_mut() {
                *game = game
                    .checked_add(offset)
                    .filter(|&g| g != u32::MAX)
                    .ok_or_else(|| DbError::Invalid {
                        path: db.path().to_path_buf(),
                        what: "the inputs' game ids together run past 2^32 - 1".to_string(),
                    })?;
            }
            writer.push(&record)?;
            pending += 1;
            if pending == 4096 {
                progress(pending);
                pending = 0;
            }
        }
        progress(pending);
    }
    let positions = writer.finish()?;
    Ok(Merged {
        positions,
        columns: kept,
        dropped,
        filled,
        game_offsets,
    })
}

/// Clears the labels whose columns are not in `columns`.
fn keep_only(labels: &mut Labels, columns: Columns) {
    if !columns.contains(Columns::RESULT) {
        labels.result = None;
    }
    if !columns.contains(Columns::SCORE) {
        labels.score = None;
    }
    if !columns.contains(Columns::GAME_ID) {
        labels.game_id = None;
    }
    if !columns.contains(Columns::PLY) {
        labels.ply = None;
    }
    let mut values = labels.u16_labels();
    for (value, (column, _)) in values.iter_mut().zip(super::U16_LABELS) {
        if !columns.contains(column) {
            *value = None;
        }
    }
    labels.set_u16_labels(values);
}
