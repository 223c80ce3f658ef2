//! The position DB: round trips, growing label columns, appending, atomic writes, and every
//! way a file can be damaged (each must be a clear error naming the file, never a panic).

use crate::common;

use std::path::Path;

use pawnstorm::db::merge::{MergeColumns, merge};
use pawnstorm::db::{
    Columns, Database, DbError, DbWriter, FORMAT_VERSION, HEADER_SIZE, NO_SCORE, NO_U16, Verify,
};
use pawnstorm::position::labels::{GameResult, Labels, MAX_CLOCK, Record, parse_line};

use common::{fix_crcs, fix_header_crc, fixture, psdb_block_bytes, read_fixture};

fn records(count: usize) -> Vec<Record> {
    let text = read_fixture("epd/sts.epd");
    text.lines()
        .cycle()
        .take(count)
        .enumerate()
        .map(|(i, line)| {
            let mut record = parse_line(line).unwrap().unwrap();
            // A mix: some rows with each label, some with none.
            record.labels = Labels {
                result: (i % 3 == 0).then_some(
                    [GameResult::WhiteWin, GameResult::Draw, GameResult::BlackWin][i % 9 / 3],
                ),
                score: (i % 4 == 1).then_some(i as i32 - 500),
                game_id: (i % 5 == 2).then_some(i as u32 / 7),
                ply: (i % 7 == 3).then_some((i % 300) as u16),
                white_elo: (i % 6 == 4).then_some(1000 + i as u16 % 2000),
                black_elo: (i % 6 == 4).then_some(1100 + i as u16 % 1900),
                base_seconds: (i % 8 == 5).then_some(60 * (i as u16 % 30)),
                increment: (i % 8 == 5).then_some(i as u16 % 5),
                move_played: (i % 11 == 6).then_some(i as u16 % 20000),
                // Up to the largest clock, 65,534 seconds.
                clock: (i % 9 == 4).then_some(if i % 2 == 0 { 65534 } else { i as u16 * 7 }),
            };
            record
        })
        .collect()
}

fn write(path: &Path, block_size: u32, records: &[Record]) -> u64 {
    let mut writer = DbWriter::create(path, block_size, Columns::NONE, false).unwrap();
    for record in records {
        writer.push(record).unwrap();
    }
    writer.finish().unwrap()
}

fn read_all(path: &Path) -> Vec<Record> {
    let db = Database::open(path).unwrap();
    db.verify().unwrap();
    db.records(0..db.len()).map(Result::unwrap).collect()
}

#[test]
fn records_round_trip_at_every_size_around_block_edges() {
    let dir = tempfile::tempdir().unwrap();
    let all = records(3 * 128 + 5);
    for block_size in [64u32, 128, 4096] {
        let b = block_size as usize;
        for count in [0, 1, b - 1, b, b + 1, (2 * b + 3).min(all.len())] {
            let count = count.min(all.len());
            let path = dir.path().join(format!("{block_size}-{count}.psdb"));
            assert_eq!(write(&path, block_size, &all[..count]), count as u64);
            let db = Database::open(&path).unwrap();
            assert_eq!(db.len(), count as u64);
            assert_eq!(db.block_count(), count.div_ceil(b));
            assert_eq!(
                read_all(&path),
                all[..count],
                "block {block_size}, {count} rows"
            );
            // Random access agrees with iteration.
            if count > 0 {
                assert_eq!(db.record(count as u64 - 1).unwrap(), all[count - 1]);
            }
            assert!(db.record(count as u64).is_err());
        }
    }
}

#[test]
fn records_pushed_in_slices_read_back_as_pushed_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    // Labels first seen part way (a clock at row 200), so a slice widens the columns.
    let mut all = records(3 * 64 + 37);
    for (i, r) in all.iter_mut().enumerate() {
        r.labels.clock = (i >= 200).then_some(i as u16);
    }
    let one_by_one = dir.path().join("one.psdb");
    write(&one_by_one, 64, &all);
    // Slices of every length from 0 to 70: some inside a block, some across one or two.
    let sliced = dir.path().join("sliced.psdb");
    let mut writer = DbWriter::create(&sliced, 64, Columns::NONE, false).unwrap();
    let (mut at, mut len) = (0, 0);
    while at < all.len() {
        let end = (at + len).min(all.len());
        writer.push_all(&all[at..end]).unwrap();
        (at, len) = (end, (len + 7) % 71);
    }
    assert_eq!(writer.finish().unwrap(), all.len() as u64);
    let db = Database::open(&sliced).unwrap();
    assert_eq!(db.columns(), Database::open(&one_by_one).unwrap().columns());
    assert_eq!(read_all(&sliced), all);
    assert_eq!(read_all(&sliced), read_all(&one_by_one));
}

#[test]
fn label_columns_appear_only_when_some_record_has_them() {
    let dir = tempfile::tempdir().unwrap();
    let mut plain = records(300);
    for r in &mut plain {
        r.labels = Labels::default();
    }
    let path = dir.path().join("plain.psdb");
    write(&path, 64, &plain);
    assert_eq!(Database::open(&path).unwrap().columns(), Columns::NONE);
    // A score first seen after several full blocks: the earlier rows read as unknown.
    plain[250].labels.score = Some(-17);
    write(&path, 64, &plain);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.columns(), Columns::SCORE);
    assert_eq!(read_all(&path), plain);
    let mixed = records(500);
    assert!(mixed.iter().any(|r| r.labels.clock == Some(MAX_CLOCK)));
    write(&path, 64, &mixed);
    assert_eq!(Database::open(&path).unwrap().columns(), Columns::ALL);
    assert_eq!(read_all(&path), mixed);
    // A clock first seen late, after other u16 labels: the last column, added by widening.
    let mut late = records(300);
    for (i, r) in late.iter_mut().enumerate() {
        r.labels.clock = (i == 200).then_some(0);
    }
    write(&path, 64, &late);
    let db = Database::open(&path).unwrap();
    assert!(db.columns().contains(Columns::CLOCK), "{:?}", db.columns());
    assert_eq!(read_all(&path), late);
    assert_eq!(db.header().version, FORMAT_VERSION);
}

#[test]
fn append_keeps_the_old_rows_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.psdb");
    let all = records(700);
    let mut first = all[..300].to_vec();
    for r in &mut first {
        r.labels.score = None;
    }
    write(&path, 128, &first);
    let mut writer = DbWriter::append_to(&path).unwrap();
    for record in &all[300..] {
        writer.push(record).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), 700);
    let mut expected = first;
    expected.extend_from_slice(&all[300..]);
    assert_eq!(read_all(&path), expected);
    assert_eq!(Database::open(&path).unwrap().block_size(), 128);
}

#[test]
fn an_unfinished_write_leaves_no_file_and_the_old_one_intact() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.psdb");
    let all = records(200);
    {
        let mut writer = DbWriter::create(&path, 64, Columns::NONE, false).unwrap();
        for record in &all {
            writer.push(record).unwrap();
        }
    }
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    write(&path, 64, &all[..10]);
    let before = std::fs::read(&path).unwrap();
    {
        let mut writer = DbWriter::create(&path, 64, Columns::NONE, false).unwrap();
        writer.push(&all[50]).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

/// Writes `bytes` to a file and opens it as a DB (and verifies it, if it opens).
fn open_damaged(dir: &Path, name: &str, bytes: &[u8]) -> Result<(), String> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let result = Database::open(&path).and_then(|db| {
        db.verify()?;
        for r in db.records(0..db.len()) {
            r?;
        }
        Ok(())
    });
    match result {
        Ok(()) => Ok(()),
        Err(e) => {
            let message = e.to_string();
            assert!(
                message.contains(name),
                "error does not name the file: {message}"
            );
            Err(message)
        }
    }
}

#[test]
fn every_kind_of_damage_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.psdb");
    write(&path, 64, &records(150));
    let good = std::fs::read(&path).unwrap();
    assert!(open_damaged(dir.path(), "copy.psdb", &good).is_ok());

    let expect = |name: &str, bytes: &[u8], words: &str| {
        let message = open_damaged(dir.path(), name, bytes).expect_err(name);
        assert!(message.contains(words), "{name}: {message}");
    };
    expect("empty.psdb", &[], "not a pawnstorm position database");
    expect("short.psdb", &good[..100], "bytes");
    let mut foreign = good.clone();
    foreign[0] = b'X';
    expect(
        "foreign.psdb",
        &foreign,
        "not a pawnstorm position database",
    );
    expect(
        "text.psdb",
        b"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1\n",
        "not a pawnstorm",
    );

    let mut future = good.clone();
    future[8..12].copy_from_slice(&6u32.to_le_bytes());
    expect("future-raw.psdb", &future, "version 6");
    fix_header_crc(&mut future);
    expect("future.psdb", &future, "version 6");

    // Each header field changed, first as is (the header checksum catches it), then with
    // the checksum recomputed (the field's own check must catch it).
    let fields: [(&str, usize, Vec<u8>, &str); 11] = [
        (
            "header-size",
            12,
            64u32.to_le_bytes().to_vec(),
            "header size",
        ),
        // Still three blocks: row 150 is padding, which is no position.
        (
            "count-plus",
            16,
            151u64.to_le_bytes().to_vec(),
            "position 150 is impossible: white has 0 kings",
        ),
        ("count-blocks", 16, 193u64.to_le_bytes().to_vec(), "bytes"),
        ("count-minus", 16, 20u64.to_le_bytes().to_vec(), "bytes"),
        ("count-huge", 16, u64::MAX.to_le_bytes().to_vec(), "count"),
        (
            "block-size-odd",
            24,
            100u32.to_le_bytes().to_vec(),
            "block size",
        ),
        (
            "block-size-small",
            24,
            32u32.to_le_bytes().to_vec(),
            "block size",
        ),
        ("columns", 28, 0x200u32.to_le_bytes().to_vec(), "columns"),
        (
            "block-bytes",
            32,
            1u64.to_le_bytes().to_vec(),
            "block bytes",
        ),
        ("reserved", 100, vec![1], "reserved"),
        // Another file id: the header is whole, but no block's checksum holds.
        ("file-id", 48, vec![0x5a; 8], "block 0: checksum mismatch"),
    ];
    for (name, offset, value, words) in fields {
        let mut bytes = good.clone();
        bytes[offset..offset + value.len()].copy_from_slice(&value);
        expect(
            &format!("{name}-raw.psdb"),
            &bytes,
            "checksum mismatch in the header",
        );
        fix_header_crc(&mut bytes);
        expect(&format!("{name}.psdb"), &bytes, words);
    }
    let mut crc = good.clone();
    crc[44] ^= 1;
    expect("header-crc.psdb", &crc, "checksum mismatch in the header");

    // The payload: a flipped bit opens (the header is fine), but its block does not read
    // and the file does not verify.
    let block_bytes = psdb_block_bytes(&good);
    let mut flipped = good.clone();
    flipped[HEADER_SIZE + block_bytes + 1000] ^= 0x10;
    let flipped_path = dir.path().join("flipped.psdb");
    std::fs::write(&flipped_path, &flipped).unwrap();
    let db = Database::open(&flipped_path).unwrap();
    assert!(db.block(0).is_ok());
    assert!(matches!(
        db.block(1),
        Err(DbError::BlockChecksum { block: 1, .. })
    ));
    let message = db.verify().unwrap_err().to_string();
    assert!(
        message.ends_with("flipped.psdb: block 1: checksum mismatch"),
        "{message}"
    );
    expect("truncated.psdb", &good[..good.len() - 1], "truncated");
    let mut extended = good.clone();
    extended.push(0);
    expect("extended.psdb", &extended, "truncated or extended");

    // A row that is not a position, with both checksums right: named by its index.
    let db = Database::open(&path).unwrap();
    let side_to_move_column = HEADER_SIZE + 8 * 64 * 8;
    assert_eq!(db.header().block_size, 64);
    let mut bad_row = good.clone();
    bad_row[side_to_move_column + 5] = 7;
    fix_crcs(&mut bad_row);
    expect(
        "bad-row.psdb",
        &bad_row,
        "position 5 is impossible: side to move byte is 7",
    );
    let mut two_kings = good.clone();
    let kings_column = HEADER_SIZE + 5 * 64 * 8;
    two_kings[kings_column + 9 * 8..kings_column + 10 * 8].copy_from_slice(&(!0u64).to_le_bytes());
    fix_crcs(&mut two_kings);
    expect("two-kings.psdb", &two_kings, "position 9 is impossible");
    // A castling right without its rook passes the block check (the evaluation does not
    // read castling rights) but not the reading of the record.
    let mut castling = good.clone();
    let castling_column = side_to_move_column + 64;
    castling[castling_column + 2 * 3..castling_column + 2 * 4]
        .copy_from_slice(&0x8080u16.to_le_bytes());
    fix_crcs(&mut castling);
    expect("castling.psdb", &castling, "position 3 is invalid");
}

/// Opens the DB at `path` with `verify` and reads every block, then every record.
fn read_blocks(path: &Path, verify: Verify) -> Result<Vec<Record>, DbError> {
    let db = Database::open_with(path, verify)?;
    for index in 0..db.block_count() {
        db.block(index)?;
    }
    db.records(0..db.len()).collect()
}

#[test]
fn blocks_moved_or_copied_elsewhere_fail_their_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("good.psdb");
    let all = records(64 * 3);
    write(&path, 64, &all);
    let good = std::fs::read(&path).unwrap();
    let block_bytes = psdb_block_bytes(&good);
    let block = |i: usize| HEADER_SIZE + i * block_bytes..HEADER_SIZE + (i + 1) * block_bytes;
    // Two whole blocks, trailers included, swapped: each is whole but in the wrong place.
    let mut swapped = good.clone();
    swapped[block(0)].copy_from_slice(&good[block(1)]);
    swapped[block(1)].copy_from_slice(&good[block(0)]);
    let moved = dir.path().join("swapped.psdb");
    std::fs::write(&moved, &swapped).unwrap();
    let error = read_blocks(&moved, Verify::Checksums).unwrap_err();
    assert!(
        matches!(error, DbError::BlockChecksum { block: 0, .. }),
        "{error}"
    );
    // Without checksums the swapped rows read (they are positions), in the swapped order.
    let read = read_blocks(&moved, Verify::Off).unwrap();
    assert_eq!(read[..64], all[64..128]);
    assert_eq!(read[64..128], all[..64]);
    // A block copied over the next one.
    let mut copied = good.clone();
    copied[block(2)].copy_from_slice(&good[block(1)]);
    std::fs::write(&moved, &copied).unwrap();
    let error = read_blocks(&moved, Verify::Checksums).unwrap_err();
    assert!(
        matches!(error, DbError::BlockChecksum { block: 2, .. }),
        "{error}"
    );
    // A block of another file with the same rows, at the same index: its checksum covers
    // that file's id (format 4), so the block's own check catches it.
    let other_path = dir.path().join("other.psdb");
    write(&other_path, 64, &all);
    let other_file = std::fs::read(&other_path).unwrap();
    assert_ne!(
        other_file[48..56],
        good[48..56],
        "each file draws its own id"
    );
    assert_eq!(
        other_file[block(1)][..block_bytes - 4],
        good[block(1)][..block_bytes - 4]
    );
    let mut foreign = good.clone();
    foreign[block(1)].copy_from_slice(&other_file[block(1)]);
    std::fs::write(&moved, &foreign).unwrap();
    let error = read_blocks(&moved, Verify::Checksums).unwrap_err();
    assert!(
        matches!(error, DbError::BlockChecksum { block: 1, .. }),
        "{error}"
    );
    // Every block checksum right but the header's checksum of them (a block changed and
    // its checksum recomputed, with this file's id): only `verify` reads the list, and
    // catches it.
    let mut other = good.clone();
    let halfmove_clock = HEADER_SIZE + 8 * 64 * 8 + 64 + 128 + 64;
    other[halfmove_clock] ^= 1;
    let crc_of_crcs = other[40..44].to_vec();
    fix_crcs(&mut other);
    other[40..44].copy_from_slice(&crc_of_crcs);
    fix_header_crc(&mut other);
    std::fs::write(&moved, &other).unwrap();
    assert!(read_blocks(&moved, Verify::Checksums).is_ok());
    let message = Database::open(&moved)
        .unwrap()
        .verify()
        .unwrap_err()
        .to_string();
    assert!(message.contains("list of block checksums"), "{message}");
}

#[test]
fn without_checksums_damage_reads_but_impossible_positions_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db.psdb");
    let all = records(100);
    write(&path, 64, &all);
    let good = std::fs::read(&path).unwrap();
    let block_bytes = psdb_block_bytes(&good);
    let damaged = dir.path().join("damaged.psdb");
    let halfmove_clock = HEADER_SIZE + block_bytes + 8 * 64 * 8 + 64 + 128 + 64;
    // A halfmove clock (row 70): caught by the checksum, read as it is without.
    let mut clock = good.clone();
    clock[halfmove_clock + 2 * 6] ^= 0x40;
    std::fs::write(&damaged, &clock).unwrap();
    assert!(matches!(
        read_blocks(&damaged, Verify::Checksums),
        Err(DbError::BlockChecksum { block: 1, .. })
    ));
    let read = read_blocks(&damaged, Verify::Off).unwrap();
    assert_eq!(
        read[70].position.halfmove_clock(),
        all[70].position.halfmove_clock() ^ 0x40
    );
    assert_eq!(read[71..], all[71..]);
    // A pawn bit of row 64 (in the second block): a pawn where no colour is, whatever
    // the checksums.
    let pawns = HEADER_SIZE + block_bytes;
    let mut board = good.clone();
    board[pawns + 4] ^= 0x08;
    std::fs::write(&damaged, &board).unwrap();
    for verify in [Verify::Checksums, Verify::Off] {
        let message = read_blocks(&damaged, verify).unwrap_err().to_string();
        let expected = match verify {
            Verify::Checksums => "damaged.psdb: block 1: checksum mismatch",
            Verify::Off => "damaged.psdb: position 64 is impossible: boards overlap or disagree",
        };
        assert!(message.contains(expected), "{verify:?}: {message}");
    }
    // A piece in a padding row (rows 100..128).
    let mut padding = good.clone();
    let white = HEADER_SIZE + block_bytes + 6 * 64 * 8;
    padding[white + 8 * 120] = 1;
    fix_crcs(&mut padding);
    std::fs::write(&damaged, &padding).unwrap();
    let message = read_blocks(&damaged, Verify::Checksums)
        .unwrap_err()
        .to_string();
    assert!(message.contains("block 1: a padding row"), "{message}");
}

#[test]
fn version_1_files_still_read_and_are_checked_whole_when_opened() {
    let v1 = fixture("db/wac-v1.psdb");
    let db = Database::open(&v1).unwrap();
    assert_eq!(db.header().version, 1);
    assert_eq!(db.len(), 300);
    db.verify().unwrap();
    let expected: Vec<_> = read_fixture("epd/wac.epd")
        .lines()
        .map(|line| parse_line(line).unwrap().unwrap().position)
        .collect();
    let read: Vec<_> = db
        .records(0..db.len())
        .map(|r| r.unwrap().position)
        .collect();
    assert_eq!(read, expected);

    // A flipped bit of the payload: refused when opened, before any block is read.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = std::fs::read(&v1).unwrap();
    let halfmove_clock = HEADER_SIZE + 8 * 64 * 8 + 64 + 128 + 64;
    bytes[halfmove_clock] ^= 2;
    let flipped = dir.path().join("flipped-v1.psdb");
    std::fs::write(&flipped, &bytes).unwrap();
    let message = Database::open(&flipped).err().unwrap().to_string();
    assert!(
        message.contains("flipped-v1.psdb: checksum mismatch in the position data"),
        "{message}"
    );
    let read = read_blocks(&flipped, Verify::Off).unwrap();
    assert_eq!(read.len(), 300);

    // Appending to it writes version 2, the old rows first.
    let path = dir.path().join("appended.psdb");
    std::fs::copy(&v1, &path).unwrap();
    let more = records(10);
    let mut writer = DbWriter::append_to(&path).unwrap();
    for record in &more {
        writer.push(record).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), 310);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.header().version, pawnstorm::db::FORMAT_VERSION);
    db.verify().unwrap();
    let read = read_all(&path);
    assert_eq!(
        read[..300].iter().map(|r| &r.position).collect::<Vec<_>>(),
        expected.iter().collect::<Vec<_>>()
    );
    assert_eq!(read[300..], more);
}

/// Files of formats 1 to 4 with label columns, written by the pawnstorm of their time
/// (fixtures/SOURCES.md says which commit and command), read as today's pawnstorm reads
/// their source EPD: every position and every label, in order, and `verify` passes.
#[test]
fn old_format_files_with_labels_read_as_their_source_reads_today() {
    let expected: Vec<Record> = read_fixture("db/labelled.epd")
        .lines()
        .map(|line| parse_line(line).unwrap().unwrap())
        .collect();
    assert_eq!(expected.len(), 96);
    assert!(expected.iter().any(|r| r.labels.score.is_none()));
    assert!(expected.iter().any(|r| r.labels.game_id.is_none()));
    for (name, version) in [
        ("db/labelled-v1.psdb", 1),
        ("db/labelled-v2.psdb", 2),
        ("db/labelled-v3.psdb", 3),
        ("db/labelled-v4.psdb", 4),
    ] {
        let db = Database::open(fixture(name)).unwrap();
        assert_eq!(db.header().version, version, "{name}");
        assert_eq!(
            db.columns(),
            Columns::RESULT
                .union(Columns::SCORE)
                .union(Columns::GAME_ID)
                .union(Columns::PLY),
            "{name}"
        );
        db.verify().unwrap();
        let read: Vec<Record> = db.records(0..db.len()).map(|r| r.unwrap()).collect();
        assert_eq!(read, expected, "{name}");
    }
}

fn read_epd(name: &str) -> Vec<Record> {
    read_fixture(name)
        .lines()
        .map(|line| parse_line(line).unwrap().unwrap())
        .collect()
}

/// A format 4 file with the `u16` labels (Elo, time control, move) reads as its source EPD
/// does today, has no clock column, and appending rows with clocks to it writes format 5
/// with the clock unknown in the old rows.
#[test]
fn format_4_files_with_u16_labels_read_and_grow_a_clock_column() {
    let expected = read_epd("db/lichess-labels.epd");
    assert_eq!(expected.len(), 120);
    assert!(expected.iter().all(|r| r.labels.white_elo.is_some()));
    assert!(expected.iter().any(|r| r.labels.move_played.is_none()));
    let v4 = fixture("db/lichess-labels-v4.psdb");
    let db = Database::open(&v4).unwrap();
    assert_eq!(db.header().version, 4);
    assert!(!db.columns().contains(Columns::CLOCK));
    assert!(
        db.columns()
            .contains(Columns::WHITE_ELO.union(Columns::MOVE))
    );
    assert_eq!(read_all(Path::new(&v4)), expected);

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("appended.psdb");
    std::fs::copy(&v4, &path).unwrap();
    let mut more = records(70);
    for (i, r) in more.iter_mut().enumerate() {
        r.labels.clock = Some(i as u16 * 3);
    }
    let mut writer = DbWriter::append_to(&path).unwrap();
    for record in &more {
        writer.push(record).unwrap();
    }
    assert_eq!(writer.finish().unwrap(), 190);
    let db = Database::open(&path).unwrap();
    assert_eq!(db.header().version, FORMAT_VERSION);
    assert!(db.columns().contains(Columns::CLOCK));
    let read = read_all(&path);
    assert_eq!(read[..120], expected);
    assert!(read[..120].iter().all(|r| r.labels.clock.is_none()));
    assert_eq!(read[120..], more);
}

/// Inputs whose label columns differ merge into the union of their columns, each row
/// unknown in the columns its input lacked (a label it had is never lost); `Common` keeps
/// only the shared columns, as `--drop-missing` did and does.
#[test]
fn merge_keeps_every_column_of_every_input() {
    let dir = tempfile::tempdir().unwrap();
    // With Elo, time control and move labels, format 4, no clock or score.
    let elo = Database::open(fixture("db/lichess-labels-v4.psdb")).unwrap();
    let elo_rows = read_epd("db/lichess-labels.epd");
    // Scores, results, games and clocks, no Elo.
    let mut clock_rows = read_epd("db/labelled.epd");
    for (i, r) in clock_rows.iter_mut().enumerate() {
        r.labels.clock = (i % 4 != 1).then_some(600 - i as u16);
    }
    let clocks = dir.path().join("clocks.psdb");
    write(&clocks, 64, &clock_rows);
    let clocks = Database::open(&clocks).unwrap();
    assert!(!clocks.columns().contains(Columns::WHITE_ELO));
    assert!(
        clocks
            .columns()
            .contains(Columns::CLOCK.union(Columns::SCORE))
    );

    let out = dir.path().join("union.psdb");
    let inputs = [elo, clocks];
    let merged = merge(&inputs, &out, MergeColumns::Union, &mut |_| {}).unwrap();
    let union = inputs[0].columns().union(inputs[1].columns());
    assert_eq!(merged.columns, union);
    assert_eq!(merged.dropped, Columns::NONE);
    assert_eq!(
        merged.filled,
        union.without(inputs[0].columns().intersection(inputs[1].columns()))
    );
    assert!(
        merged
            .filled
            .contains(Columns::WHITE_ELO.union(Columns::CLOCK))
    );
    let db = Database::open(&out).unwrap();
    assert_eq!(db.columns(), union);
    assert_eq!(db.header().version, FORMAT_VERSION);
    let read = read_all(&out);
    assert_eq!(read.len(), elo_rows.len() + clock_rows.len());
    // Game ids of the second input start past the first's largest.
    let offset = elo_rows
        .iter()
        .filter_map(|r| r.labels.game_id)
        .max()
        .unwrap()
        + 1;
    assert_eq!(merged.game_offsets, vec![0, offset]);
    let shifted = clock_rows.iter().map(|r| {
        let mut r = r.clone();
        r.labels.game_id = r.labels.game_id.map(|g| g + offset);
        r
    });
    let expected: Vec<Record> = elo_rows.iter().cloned().chain(shifted).collect();
    assert_eq!(read, expected);
    assert!(read[..120].iter().all(|r| r.labels.clock.is_none()));
    assert!(read[120..].iter().all(|r| r.labels.white_elo.is_none()));
    assert!(read[120..].iter().any(|r| r.labels.clock.is_some()));
    // The unknowns are the documented sentinels in the file.
    let block = db.block(0).unwrap();
    let at = |column: Columns| {
        let i = pawnstorm::db::U16_LABELS
            .iter()
            .position(|&(c, _)| c == column)
            .unwrap();
        block.u16_labels[i].unwrap()
    };
    assert!(at(Columns::CLOCK)[..64].iter().all(|&c| c == NO_U16));
    assert!(block.score.unwrap()[..64].iter().all(|&s| s == NO_SCORE));

    let out = dir.path().join("common.psdb");
    let merged = merge(&inputs, &out, MergeColumns::Common, &mut |_| {}).unwrap();
    let common = inputs[0].columns().intersection(inputs[1].columns());
    assert_eq!(merged.columns, common);
    assert_eq!(merged.dropped, union.without(common));
    assert_eq!(merged.filled, Columns::NONE);
    assert_eq!(Database::open(&out).unwrap().columns(), common);
    assert!(read_all(&out).iter().all(|r| r.labels.clock.is_none()
        && r.labels.white_elo.is_none()
        && r.labels.score.is_none()));
}
