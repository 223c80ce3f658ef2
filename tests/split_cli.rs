//! `pawnstorm split`: shards of contiguous rows that add up to the DB, and the refusals.

use crate::common;

use std::path::{Path, PathBuf};

use pawnstorm::db::Database;
use pawnstorm::position::labels::Record;

use common::{fails, fixture, ok, s};

fn records(path: &Path) -> Vec<Record> {
    let db = Database::open(path).expect("opens");
    db.records(0..db.len()).map(|r| r.expect("valid")).collect()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A labelled DB (result, game id, ply from PGN) of several 64-row blocks.
fn labelled_db(dir: &Path) -> PathBuf {
    let db = dir.join("games.psdb");
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        "--block-size",
        "64",
        "-o",
        s(&db),
    ]);
    db
}

#[test]
fn shards_hold_every_row_once_in_order_with_labels_and_block_size() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = labelled_db(dir.path());
    let source = Database::open(&db).expect("opens");
    let all = records(&db);
    assert!(all.len() > 3 * 64, "several blocks a shard: {}", all.len());
    assert!(
        all.iter()
            .any(|r| r.labels.game_id.is_some() && r.labels.result.is_some())
    );
    let out = dir.path().join("shards");
    let summary = ok(&["split", s(&db), "--shards", "3", "-o", s(&out)]);
    assert!(
        summary.contains(&format!("split: {} positions into 3 shards", all.len())),
        "{summary}"
    );
    let shard_names = names(&out);
    assert_eq!(
        shard_names,
        ["shard-00000.psdb", "shard-00001.psdb", "shard-00002.psdb"]
    );
    let mut joined = Vec::new();
    let mut sizes = Vec::new();
    for name in &shard_names {
        let path = out.join(name);
        let shard = Database::open(&path).expect("opens");
        assert_eq!(shard.block_size(), source.block_size());
        assert_eq!(shard.columns(), source.columns());
        shard.verify().expect("checksums whole");
        sizes.push(shard.len());
        joined.extend(records(&path));
    }
    assert_eq!(joined, all, "the shards in name order are the DB");
    let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
    assert!(max - min <= 1, "balanced: {sizes:?}");
}

#[test]
fn more_shards_than_positions_leaves_empty_shards() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("few.psdb");
    let epd = dir.path().join("few.epd");
    let text = std::fs::read_to_string(fixture("epd/wac.epd")).expect("fixture");
    let lines: Vec<&str> = text.lines().take(5).collect();
    std::fs::write(&epd, lines.join("\n")).expect("write");
    ok(&["import", s(&epd), "-o", s(&db)]);
    let out = dir.path().join("shards");
    ok(&["split", s(&db), "--shards", "8", "-o", s(&out)]);
    let sizes: Vec<u64> = names(&out)
        .iter()
        .map(|n| Database::open(out.join(n)).expect("opens").len())
        .collect();
    assert_eq!(sizes.len(), 8);
    assert_eq!(sizes.iter().sum::<u64>(), 5);
    assert!(sizes.iter().all(|&n| n <= 1), "{sizes:?}");
    let joined: Vec<Record> = names(&out)
        .iter()
        .flat_map(|n| records(&out.join(n)))
        .collect();
    assert_eq!(joined, records(&db));
}

#[test]
fn a_non_empty_directory_is_refused_unless_forced_and_force_replaces_only_shards() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = labelled_db(dir.path());
    let out = dir.path().join("shards");
    ok(&["split", s(&db), "--shards", "5", "-o", s(&out)]);
    let before: Vec<Vec<u8>> = names(&out)
        .iter()
        .map(|n| std::fs::read(out.join(n)).expect("read"))
        .collect();
    let error = fails(&["split", s(&db), "--shards", "2", "-o", s(&out)]);
    assert!(
        error.contains("not empty") && error.contains("--force"),
        "{error}"
    );
    let after: Vec<Vec<u8>> = names(&out)
        .iter()
        .map(|n| std::fs::read(out.join(n)).expect("read"))
        .collect();
    assert_eq!(before, after, "a refusal leaves the directory as it was");

    std::fs::write(out.join("notes.txt"), "kept").expect("write");
    ok(&["split", s(&db), "--shards", "2", "-o", s(&out), "--force"]);
    assert_eq!(
        names(&out),
        ["notes.txt", "shard-00000.psdb", "shard-00001.psdb"],
        "the 5-shard split's extra shards are gone, other files stay"
    );
    let joined: Vec<Record> = ["shard-00000.psdb", "shard-00001.psdb"]
        .iter()
        .flat_map(|n| records(&out.join(n)))
        .collect();
    assert_eq!(joined, records(&db));
}

#[test]
fn bad_inputs_and_targets_fail_with_a_message() {
    let dir = tempfile::tempdir().expect("temp dir");
    let db = labelled_db(dir.path());
    let file = dir.path().join("a-file");
    std::fs::write(&file, "x").expect("write");
    let error = fails(&["split", s(&db), "--shards", "2", "-o", s(&file)]);
    assert!(error.contains("not a directory"), "{error}");
    let error = fails(&[
        "split",
        s(&db),
        "--shards",
        "0",
        "-o",
        s(&dir.path().join("z")),
    ]);
    assert!(error.contains("--shards"), "{error}");
    let error = fails(&[
        "split",
        &fixture("epd/wac.epd"),
        "--shards",
        "2",
        "-o",
        s(&dir.path().join("y")),
    ]);
    assert!(
        error.contains("not a pawnstorm position database"),
        "{error}"
    );
    let mut damaged = std::fs::read(&db).expect("read");
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x10;
    let broken = dir.path().join("broken.psdb");
    std::fs::write(&broken, damaged).expect("write");
    let out = dir.path().join("from-broken");
    let error = fails(&["split", s(&broken), "--shards", "3", "-o", s(&out)]);
    assert!(error.contains("checksum mismatch"), "{error}");
    assert!(
        names(&out).is_empty(),
        "no partial set of shards: {:?}",
        names(&out)
    );
}
