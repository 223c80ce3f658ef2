//! What the benchmarks share: a DB of real positions.

use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::position::labels::{Record, parse_line};

/// A DB of ~1M real positions (the labelled set, 16 times) in a temporary directory, and
/// the labelled set's records.
pub fn database() -> (tempfile::TempDir, Database, Vec<Record>) {
    let text = std::fs::read_to_string(format!(
        "{}/fixtures/texel/labeled-from-fixture-pgns.epd",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("fixture");
    let records: Vec<Record> = text
        .lines()
        .map(|l| parse_line(l).expect("valid").expect("a record"))
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("bench.psdb");
    let mut writer = DbWriter::create(&path, 4096, Columns::NONE, false).expect("create");
    for _ in 0..16 {
        for record in &records {
            writer.push(record).expect("push");
        }
    }
    writer.finish().expect("finish");
    let db = Database::open(&path).expect("open");
    (dir, db, records)
}
