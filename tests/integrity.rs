//! Checked reads, end to end through the binary: a bit flipped anywhere in a DB's payload
//! stops every command that reads the DB, naming the block, with no output file left;
//! `--no-verify` reads past the checksums but reports an impossible position instead of
//! evaluating it; version 1 files still read, and are refused when damaged.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::{PSDB_HEADER, Rng, fix_crcs, fixture, psdb_block_bytes};

fn pawnstorm(args: &[impl AsRef<std::ffi::OsStr>]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        .output()
        .expect("runs")
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn ok(args: &[&str]) -> Output {
    let output = pawnstorm(args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs `args`, which must fail with exit status 1 (an error, not a panic) and an error
/// containing `words`, and leave nothing at `output`; returns the standard output.
fn fails_with(
    args: &[impl AsRef<std::ffi::OsStr> + std::fmt::Debug],
    words: &str,
    output: Option<&Path>,
) -> String {
    let result = pawnstorm(args);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(1), "{args:?}: {stderr}");
    assert!(
        stderr.contains(words),
        "{args:?}: expected {words:?}: {stderr}"
    );
    if let Some(path) = output {
        assert!(!path.exists(), "{args:?} left {}", path.display());
    }
    String::from_utf8_lossy(&result.stdout).to_string()
}

/// The 300 WAC positions in blocks of 64 (the last holds 44 rows and 20 of padding).
const BLOCK_SIZE: usize = 64;
const COUNT: usize = 300;

/// Where the columns of a block of 64 rows without label columns are (docs/FORMAT.md).
const BOARDS_END: usize = 8 * 8 * BLOCK_SIZE;
const SIDE_TO_MOVE: usize = BOARDS_END;
const CASTLING: usize = SIDE_TO_MOVE + BLOCK_SIZE;
const FULLMOVE_END: usize = CASTLING + 2 * BLOCK_SIZE + BLOCK_SIZE + 2 * 2 * BLOCK_SIZE;
const BLOCK_BYTES: usize = FULLMOVE_END + 64;

fn import_wac(dir: &Path) -> PathBuf {
    let db = dir.join("wac.psdb");
    ok(&[
        "import",
        &fixture("epd/wac.epd"),
        "--block-size",
        "64",
        "-o",
        s(&db),
    ]);
    db
}

/// What a flipped byte at `offset` of a block's bytes is part of.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Region {
    /// A board of a position's row.
    Board { row: usize },
    /// A board of a padding row.
    PaddingBoard,
    /// The side-to-move byte of a position's row.
    SideToMove { row: usize },
    /// Anything the evaluation does not read: side to move of padding, castling, en
    /// passant, clocks, the trailer (its zero bytes and the CRC).
    Unread,
}

fn region(block: usize, offset: usize) -> Region {
    let len = (COUNT - block * BLOCK_SIZE).min(BLOCK_SIZE);
    if offset < BOARDS_END {
        let row = offset % (8 * BLOCK_SIZE) / 8;
        if row < len {
            Region::Board { row }
        } else {
            Region::PaddingBoard
        }
    } else if offset < CASTLING && offset - SIDE_TO_MOVE < len {
        Region::SideToMove {
            row: offset - SIDE_TO_MOVE,
        }
    } else {
        Region::Unread
    }
}

#[test]
fn a_flipped_bit_anywhere_stops_every_reader_and_no_verify_never_evaluates_garbage() {
    let dir = tempfile::tempdir().unwrap();
    let db = import_wac(dir.path());
    let good = std::fs::read(&db).unwrap();
    assert_eq!(psdb_block_bytes(&good), BLOCK_BYTES);
    let blocks = COUNT.div_ceil(BLOCK_SIZE);
    assert_eq!(good.len(), PSDB_HEADER + blocks * BLOCK_BYTES);
    let clean_scores = dir.path().join("clean.npy");
    ok(&["eval", s(&db), "-o", s(&clean_scores)]);
    let clean_features = dir.path().join("clean-features.npy");
    ok(&["features", s(&db), "-o", s(&clean_features)]);

    let flipped = dir.path().join("flipped.psdb");
    let scores = dir.path().join("x.npy");
    let features = dir.path().join("f.npy");
    let exported = dir.path().join("e.epd");
    let mut rng = Rng(0x005e_ed0f_b175);
    // The first tries aim at each kind of byte (a position's boards, padding boards, side
    // to move, castling, en passant, the clocks, the trailer's zeros, its CRC); the rest
    // land anywhere in the payload.
    let aimed: [(usize, std::ops::Range<usize>); 9] = [
        (rng.below(blocks), 0..BOARDS_END),
        (blocks - 1, 44 * 8..BLOCK_SIZE * 8),
        (rng.below(blocks), SIDE_TO_MOVE..CASTLING),
        (rng.below(blocks), CASTLING..CASTLING + 2 * BLOCK_SIZE),
        (
            rng.below(blocks),
            CASTLING + 2 * BLOCK_SIZE..CASTLING + 3 * BLOCK_SIZE,
        ),
        (rng.below(blocks), CASTLING + 3 * BLOCK_SIZE..FULLMOVE_END),
        (rng.below(blocks), FULLMOVE_END..BLOCK_BYTES - 4),
        (rng.below(blocks), BLOCK_BYTES - 4..BLOCK_BYTES),
        (blocks - 1, SIDE_TO_MOVE + 44..CASTLING),
    ];
    let mut seen = Vec::new();
    for trial in 0..30 {
        let (block, offset) = match aimed.get(trial) {
            Some((block, range)) => (*block, range.start + rng.below(range.len())),
            None => {
                let at = rng.below(blocks * BLOCK_BYTES);
                (at / BLOCK_BYTES, at % BLOCK_BYTES)
            }
        };
        let bit = rng.below(8);
        let mut bytes = good.clone();
        bytes[PSDB_HEADER + block * BLOCK_BYTES + offset] ^= 1 << bit;
        std::fs::write(&flipped, &bytes).unwrap();
        let region = region(block, offset);
        seen.push(region);
        let context = format!("trial {trial}: block {block}, byte {offset}, bit {bit}, {region:?}");

        let mismatch = format!("{}: block {block}: checksum mismatch", s(&flipped));
        let histogram = fails_with(&["eval", s(&flipped)], &mismatch, None);
        assert!(histogram.is_empty(), "{context}: {histogram}");
        fails_with(
            &["eval", s(&flipped), "-o", s(&scores)],
            &mismatch,
            Some(&scores),
        );
        fails_with(
            &["features", s(&flipped), "-o", s(&features)],
            &mismatch,
            Some(&features),
        );
        fails_with(&["export", s(&flipped)], &mismatch, None);
        fails_with(
            &["export", s(&flipped), "-o", s(&exported)],
            &mismatch,
            Some(&exported),
        );
        let first = (block * BLOCK_SIZE).to_string();
        fails_with(&["show", s(&flipped), "--index", &first], &mismatch, None);
        fails_with(&["info", s(&flipped)], &mismatch, None);

        // Without checksums: an impossible position is reported, anything else is read.
        let eval = ["--no-verify", "eval", s(&flipped), "-o", s(&scores)];
        let feat = ["--no-verify", "features", s(&flipped), "-o", s(&features)];
        let index = |row: usize| block * BLOCK_SIZE + row;
        match region {
            Region::Board { row } | Region::SideToMove { row }
                if region_is_impossible(region, bit) =>
            {
                let words = format!("{}: position {} is impossible", s(&flipped), index(row));
                fails_with(&eval, &words, Some(&scores));
                fails_with(&feat, &words, Some(&features));
                fails_with(&["--no-verify", "export", s(&flipped)], &words, None);
            }
            Region::PaddingBoard => {
                let words =
                    format!("block {block}: a padding row after the last position holds pieces");
                fails_with(&eval, &words, Some(&scores));
                fails_with(&feat, &words, Some(&features));
                fails_with(&["--no-verify", "export", s(&flipped)], &words, None);
            }
            _ => {
                ok(&eval);
                ok(&feat);
                assert_eq!(
                    std::fs::read(&features).unwrap(),
                    std::fs::read(&clean_features).unwrap(),
                    "{context}"
                );
                // The side to move (flipped between 0 and 1) is the one read value.
                if region == Region::Unread {
                    assert_eq!(
                        std::fs::read(&scores).unwrap(),
                        std::fs::read(&clean_scores).unwrap(),
                        "{context}"
                    );
                }
                // Export reads every field: castling, en passant or a clock may be
                // invalid now, which it reports by index; never a checksum.
                let export = pawnstorm(&["--no-verify", "export", s(&flipped)]);
                let stderr = String::from_utf8_lossy(&export.stderr);
                assert!(
                    export.status.success()
                        || (export.status.code() == Some(1) && stderr.contains(" is invalid: ")),
                    "{context}: {stderr}"
                );
                std::fs::remove_file(&scores).unwrap();
                std::fs::remove_file(&features).unwrap();
            }
        }
    }
    // The random tries reached the kinds of bytes the aimed ones did.
    assert!(seen.iter().any(|r| matches!(r, Region::Board { .. })));
    assert!(seen.contains(&Region::PaddingBoard));
    assert!(seen.iter().any(|r| matches!(r, Region::SideToMove { .. })));
    assert!(seen.contains(&Region::Unread));
}

/// Whether a flipped bit makes its row impossible: every flip of a board bit breaks a rule
/// (a square gains or loses a piece type or a colour, and no longer matches the other
/// boards); a side-to-move byte stays possible only when bit 0 flips (0 and 1 swap).
fn region_is_impossible(region: Region, bit: usize) -> bool {
    match region {
        Region::Board { .. } => true,
        Region::SideToMove { .. } => bit != 0,
        _ => false,
    }
}

/// `rest`, after `--no-verify` if `no_verify`.
fn flagged(no_verify: bool, rest: &[&str]) -> Vec<String> {
    let flag = no_verify.then_some("--no-verify");
    flag.iter().chain(rest).map(|a| a.to_string()).collect()
}

#[test]
fn an_impossible_position_with_right_checksums_is_reported_by_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let db = import_wac(dir.path());
    let mut bytes = std::fs::read(&db).unwrap();
    // Position 137 (block 2, row 9) gets a second white king, on an empty square.
    let (block, row) = (2, 9);
    let board = |bytes: &[u8], i: usize| {
        let at = PSDB_HEADER + block * BLOCK_BYTES + i * 8 * BLOCK_SIZE + row * 8;
        (
            at,
            u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap()),
        )
    };
    let (_, white) = board(&bytes, 6);
    let (_, black) = board(&bytes, 7);
    let empty = !(white | black);
    let square = 1u64 << empty.trailing_zeros();
    for i in [5, 6] {
        let (at, value) = board(&bytes, i);
        bytes[at..at + 8].copy_from_slice(&(value | square).to_le_bytes());
    }
    fix_crcs(&mut bytes);
    let bad = dir.path().join("two-kings.psdb");
    std::fs::write(&bad, &bytes).unwrap();
    let words = format!(
        "{}: position 137 is impossible: white has 2 kings (exactly one is required)",
        s(&bad)
    );
    let scores = dir.path().join("x.npy");
    let features = dir.path().join("f.npy");
    let exported = dir.path().join("e.epd");
    for no_verify in [false, true] {
        let with = |rest: &[&str]| flagged(no_verify, rest);
        fails_with(&with(&["eval", s(&bad)]), &words, None);
        fails_with(
            &with(&["eval", s(&bad), "-o", s(&scores), "--terms"]),
            &words,
            Some(&scores),
        );
        fails_with(
            &with(&["features", s(&bad), "-o", s(&features)]),
            &words,
            Some(&features),
        );
        fails_with(
            &with(&["export", s(&bad), "-o", s(&exported)]),
            &words,
            Some(&exported),
        );
        fails_with(&with(&["show", s(&bad), "--index", "137"]), &words, None);
    }
    // The rows of other blocks still read.
    ok(&["show", s(&bad), "--index", "12"]);
    fails_with(&["info", s(&bad)], &words, None);
}

#[test]
fn version_1_files_read_as_before_and_are_refused_when_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = fixture("db/wac-v1.psdb");
    let info = String::from_utf8(ok(&["info", &v1]).stdout).unwrap();
    assert!(info.contains("format version:     1\n"), "{info}");
    assert!(info.contains("checksums:          ok (one crc32"), "{info}");
    let v5 = import_wac(dir.path());
    let info = String::from_utf8(ok(&["info", s(&v5)]).stdout).unwrap();
    assert!(info.contains("format version:     5\n"), "{info}");
    assert!(
        info.contains("checksums:          ok (5 block crc32s"),
        "{info}"
    );
    // Versions 3 and 5 only added optional columns and version 4 the file id: without them
    // a file is version 2 but for its version field and its checksums, and a version 2
    // file reads the same.
    let mut bytes = std::fs::read(&v5).unwrap();
    bytes[8..12].copy_from_slice(&2u32.to_le_bytes());
    bytes[48..56].fill(0);
    fix_crcs(&mut bytes);
    let v2 = dir.path().join("wac-v2.psdb");
    std::fs::write(&v2, &bytes).unwrap();
    let info = String::from_utf8(ok(&["info", s(&v2)]).stdout).unwrap();
    assert!(info.contains("format version:     2\n"), "{info}");
    assert_eq!(
        ok(&["export", s(&v5)]).stdout,
        ok(&["export", s(&v2)]).stdout
    );
    // A version 2 header may not name a version 3 column, nor a version 4 header a
    // version 5 one (the clock).
    for (version, bit, name) in [(2u32, 16u32, "v2-with-elo"), (4, 512, "v4-with-clock")] {
        let mut future_column = std::fs::read(&v5).unwrap();
        future_column[8..12].copy_from_slice(&version.to_le_bytes());
        let columns = u32::from_le_bytes(future_column[28..32].try_into().unwrap()) | bit;
        future_column[28..32].copy_from_slice(&columns.to_le_bytes());
        fix_crcs(&mut future_column);
        let bad = dir.path().join(format!("{name}.psdb"));
        std::fs::write(&bad, &future_column).unwrap();
        fails_with(&["info", s(&bad)], "unknown optional columns", None);
    }

    // The same scores, features and EPD from the version 1 file as from a new import.
    for (command, name) in [("eval", "scores.npy"), ("features", "features.npy")] {
        let from_v1 = dir.path().join(format!("v1-{name}"));
        let from_v2 = dir.path().join(format!("v2-{name}"));
        ok(&[command, &v1, "-o", s(&from_v1)]);
        ok(&[command, s(&v2), "-o", s(&from_v2)]);
        assert_eq!(
            std::fs::read(&from_v1).unwrap(),
            std::fs::read(&from_v2).unwrap(),
            "{command}"
        );
    }
    assert_eq!(ok(&["export", &v1]).stdout, ok(&["export", s(&v2)]).stdout);

    // A flipped bit (a halfmove clock of block 3): the payload checksum refuses the file
    // before anything is read or written.
    let mut bytes = std::fs::read(&v1).unwrap();
    let v1_block_bytes = psdb_block_bytes(&bytes);
    assert_eq!(v1_block_bytes, BLOCK_BYTES - 64);
    bytes[PSDB_HEADER + 3 * v1_block_bytes + CASTLING + 3 * BLOCK_SIZE + 10] ^= 4;
    let flipped = dir.path().join("flipped-v1.psdb");
    std::fs::write(&flipped, &bytes).unwrap();
    let words = format!("{}: checksum mismatch in the position data", s(&flipped));
    let scores = dir.path().join("x.npy");
    fails_with(
        &["eval", s(&flipped), "-o", s(&scores)],
        &words,
        Some(&scores),
    );
    fails_with(&["export", s(&flipped)], &words, None);
    fails_with(&["info", s(&flipped)], &words, None);
    // Without checksums it reads; the clock is not in the scores.
    ok(&["--no-verify", "eval", s(&flipped), "-o", s(&scores)]);
    assert_eq!(
        std::fs::read(&scores).unwrap(),
        std::fs::read(dir.path().join("v1-scores.npy")).unwrap()
    );
    let info = String::from_utf8(ok(&["--no-verify", "info", s(&flipped)]).stdout).unwrap();
    assert!(info.contains("checksums:          not checked"), "{info}");
    // import --append checks the old file whatever the flag says.
    fails_with(
        &[
            "--no-verify",
            "import",
            &fixture("epd/bk.epd"),
            "-o",
            s(&flipped),
            "--append",
        ],
        &words,
        None,
    );
}
