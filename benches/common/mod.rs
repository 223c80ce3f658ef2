//! What the benchmarks share: a DB of real positions.

use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::import::{self, AfterRejection, Format, Handlers, ImportOptions, Source};
use pawnstorm::position::labels::{Record, parse_line};

/// A DB of ~1M real positions (the labelled set, 16 times) in a temporary directory, and
/// the labelled set's records.
pub fn database() -> (tempfile::TempDir, Database, Vec<Record>) {
    let records = records();
    let copies: Vec<&Record> = (0..16).flat_map(|_| &records).collect();
    let (dir, db) = database_of(&copies);
    (dir, db, records)
}

/// Positions of whole games in order, each a move from the one before (every game of the
/// PGN fixtures, four times over, ~1M rows), and the same rows in a fixed random order: for
/// passes that carry work from row to row, as the network's accumulators. Every row keeps
/// its game and ply (each copy its own games), as a DB imported from PGN does, so a pass
/// that orders shuffled rows by game finds four distinct copies, not four rows alike.
#[allow(dead_code)] // Not every benchmark that shares this module uses it.
pub fn games_databases() -> (tempfile::TempDir, Database, Database) {
    let mut games = Vec::new();
    let dir = format!("{}/fixtures/pgn", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/pgn")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "pgn"))
        .collect();
    files.sort();
    let mut game_id = 0;
    for path in files {
        import::import(
            &Source::File(path),
            Format::Pgn,
            &ImportOptions::default(),
            &mut game_id,
            &mut Handlers {
                records: &mut |records| {
                    games.extend_from_slice(records);
                    Ok(())
                },
                reject: &mut |_| AfterRejection::Continue,
                progress: &mut |_| {},
            },
        )
        .expect("a fixture PGN");
    }
    let copy_games = games
        .iter()
        .filter_map(|r| r.labels.game_id)
        .max()
        .unwrap_or(0)
        + 1;
    let copies: Vec<Record> = (0..4)
        .flat_map(|copy| {
            games.iter().map(move |record| {
                let mut record = record.clone();
                record.labels.game_id = record.labels.game_id.map(|g| g + copy * copy_games);
                record
            })
        })
        .collect();
    let in_order: Vec<&Record> = copies.iter().collect();
    let mut shuffled = in_order.clone();
    // Fisher-Yates with a fixed xorshift: the same order on every run and machine.
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    for i in (1..shuffled.len()).rev() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        shuffled.swap(i, (state % (i as u64 + 1)) as usize);
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let labels = Columns::GAME_ID.union(Columns::PLY);
    let games = database_with(&dir.path().join("games.psdb"), &in_order, labels);
    let shuffled = database_with(&dir.path().join("shuffled.psdb"), &shuffled, labels);
    (dir, games, shuffled)
}

/// The labelled set's records, in its order (games in order).
fn records() -> Vec<Record> {
    let text = std::fs::read_to_string(format!(
        "{}/fixtures/texel/labeled-from-fixture-pgns.epd",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture");
    text.lines()
        .map(|l| parse_line(l).expect("valid").expect("a record"))
        .collect()
}

/// A DB of `records` in that order, in a temporary directory.
fn database_of(records: &[&Record]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = database_at(&dir.path().join("bench.psdb"), records);
    (dir, db)
}

/// A DB of `records` in that order at `path`.
fn database_at(path: &std::path::Path, records: &[&Record]) -> Database {
    database_with(path, records, Columns::NONE)
}

/// A DB of `records` in that order at `path`, with the label `columns`.
fn database_with(path: &std::path::Path, records: &[&Record], columns: Columns) -> Database {
    let mut writer = DbWriter::create(path, 4096, columns, false).expect("create");
    for record in records {
        writer.push(record).expect("push");
    }
    writer.finish().expect("finish");
    Database::open(path).expect("open")
}
