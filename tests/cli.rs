//! The real binary end to end: import, export, info and show, on good and bad input.

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use assert_cmd::prelude::*;
use pawnstorm::position::fen::parse_fen;

use common::{fixture, psdb_contents, read_fixture};

fn pawnstorm(args: &[&str]) -> Output {
    Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .output()
        .expect("runs")
}

fn ok(args: &[&str]) -> (String, String) {
    let output = pawnstorm(args);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?}: {stderr}");
    (String::from_utf8_lossy(&output.stdout).to_string(), stderr)
}

fn fails(args: &[&str]) -> String {
    let output = pawnstorm(args);
    assert!(!output.status.success(), "{args:?} should fail");
    String::from_utf8_lossy(&output.stderr).to_string()
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn temp(dir: &tempfile::TempDir, name: &str) -> PathBuf {
    dir.path().join(name)
}

#[test]
fn export_gives_back_the_imported_positions_and_reimport_the_same_db() {
    let dir = tempfile::tempdir().unwrap();
    for input in [
        "epd/wac.epd",
        "texel/labeled-from-fixture-pgns.epd",
        "pgn/chess-informant-d00.pgn",
    ] {
        let db = temp(&dir, "a.psdb");
        let again = temp(&dir, "b.psdb");
        let epd = temp(&dir, "a.epd");
        ok(&["import", &fixture(input), "-o", s(&db)]);
        ok(&["export", s(&db), "-o", s(&epd)]);
        let exported = std::fs::read_to_string(&epd).unwrap();
        let (info, _) = ok(&["info", s(&db)]);
        let count = exported.lines().count();
        assert!(
            info.contains(&format!("positions:          {count}\n")),
            "{info}"
        );
        if input.ends_with(".epd") {
            // The same positions as the input lines, in order.
            let original = read_fixture(input);
            assert_eq!(original.lines().count(), count);
            for (a, b) in original.lines().zip(exported.lines()) {
                let a4: Vec<&str> = a.split_whitespace().take(4).collect();
                let b4: Vec<&str> = b.split_whitespace().take(4).collect();
                assert_eq!(a4, b4);
            }
        } else {
            assert!(exported.contains("game 0; ply 0;") && exported.contains("c9 \"1-0\""));
        }
        ok(&["import", s(&epd), "-o", s(&again)]);
        assert_eq!(psdb_contents(&db), psdb_contents(&again), "{input}");
    }
}

#[test]
fn bad_lines_are_reported_and_skipped_and_strict_stops() {
    let dir = tempfile::tempdir().unwrap();
    let input = fixture("bad/mixed-lines.epd");
    let db = temp(&dir, "mixed.psdb");
    let (_, stderr) = ok(&["import", &input, "-o", s(&db)]);
    for line in [3, 6, 7, 8, 9, 10, 11, 12] {
        assert!(
            stderr.contains(&format!("mixed-lines.epd:{line}: ")),
            "line {line} not reported: {stderr}"
        );
    }
    for line in [1, 2, 4, 5, 13, 14, 15] {
        assert!(
            !stderr.contains(&format!("mixed-lines.epd:{line}: ")),
            "{stderr}"
        );
    }
    assert!(
        stderr.contains("imported 4 positions, rejected 8 records"),
        "{stderr}"
    );
    let (exported, _) = ok(&["export", s(&db)]);
    let fens: Vec<String> = exported
        .lines()
        .map(|l| l.split_whitespace().take(6).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        fens,
        [
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            "4k3/8/8/8/8/8/8/4K3 b - - 0 1",
            "4k3/8/8/8/8/8/8/R3K3 w Q - 0 1",
            "4k3/8/8/8/8/8/8/4K3 w - - 0 1",
        ]
    );
    assert!(exported.contains("b - - 0 1 ce 25;"), "{exported}");
    assert!(exported.contains("c9 \"1/2-1/2\";"), "{exported}");
    assert!(exported.contains("c9 \"0-1\"; ce -40;"), "{exported}");

    // --strict: the first bad line stops the import, nothing is written, an old DB stays.
    let before = std::fs::read(&db).unwrap();
    let stderr = fails(&["import", &input, "-o", s(&db), "--strict"]);
    assert!(stderr.contains("mixed-lines.epd:3:"), "{stderr}");
    assert_eq!(std::fs::read(&db).unwrap(), before);
    let fresh = temp(&dir, "fresh.psdb");
    fails(&["import", &input, "-o", s(&fresh), "--strict"]);
    assert!(!fresh.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}

#[test]
fn a_position_whose_side_not_to_move_is_in_check_is_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let input = temp(&dir, "check.epd");
    // Line 2: Black's king on e5 stands on White's a1 queen's diagonal, White to move.
    std::fs::write(
        &input,
        "4k3/8/8/8/8/8/8/Q3K3 w - - 0 1\n8/8/8/4k3/8/8/8/Q3K3 w - - 0 1\n8/8/8/4k3/8/8/8/Q3K3 b - - 0 1\n",
    )
    .unwrap();
    let db = temp(&dir, "check.psdb");
    let (_, stderr) = ok(&["import", s(&input), "-o", s(&db)]);
    assert!(
        stderr.contains("check.epd:2: ") && stderr.contains("black is in check with white to move"),
        "{stderr}"
    );
    assert!(
        stderr.contains("imported 2 positions, rejected 1 records"),
        "{stderr}"
    );
}

#[test]
fn a_game_whose_comment_is_never_closed_is_rejected_and_the_others_kept() {
    let dir = tempfile::tempdir().unwrap();
    let game = |event: &str, result: &str, moves: &str| {
        format!("[Event \"{event}\"]\n[Result \"{result}\"]\n\n{moves}\n\n")
    };
    // In the middle: the unclosed comment would swallow game c; at the end: the file ends
    // inside it.
    for (name, text, kept, games) in [
        (
            "middle.pgn",
            game("a", "1-0", "1. e4 e5 2. Nf3 1-0")
                + &game("b", "0-1", "1. d4 d5 { never closed")
                + &game("c", "1/2-1/2", "1. c4 c5 1/2-1/2"),
            7,
            2,
        ),
        (
            "end.pgn",
            game("a", "1-0", "1. e4 e5 2. Nf3 1-0") + &game("b", "0-1", "1. d4 d5 { never closed"),
            4,
            1,
        ),
    ] {
        let input = temp(&dir, name);
        std::fs::write(&input, text).unwrap();
        let db = temp(&dir, &format!("{name}.psdb"));
        let (_, stderr) = ok(&["import", s(&input), "-o", s(&db)]);
        assert!(
            stderr.contains(&format!("{name}:6: at line 9: unterminated comment")),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "imported {kept} positions from {games} games, rejected 1 records"
            )),
            "{stderr}"
        );
    }
}

/// Two `import --append` on one DB at once: each takes the DB's lock, so the second reads
/// what the first wrote; without it both read the old DB and the last rename wins.
#[test]
fn two_appends_at_once_keep_both_writers_rows_and_distinct_games() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "shared.psdb");
    let pgn = fixture("pgn/chess-informant-d00.pgn");
    let texel = fixture("texel/labeled-from-fixture-pgns.epd");
    ok(&["import", &texel, "-o", s(&db)]);
    // (positions, games) of an input imported alone.
    let once = |input: &str| -> (u64, u64) {
        let other = temp(&dir, "alone.psdb");
        let (_, stderr) = ok(&["import", input, "-o", s(&other)]);
        std::fs::remove_file(&other).unwrap();
        let number_after = |word: &str| -> u64 {
            stderr
                .split(word)
                .nth(1)
                .and_then(|rest| rest.split(' ').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or(0)
        };
        (number_after("imported "), number_after(" from "))
    };
    let ((texel_rows, _), (pgn_rows, pgn_games)) = (once(&texel), once(&pgn));
    assert!(pgn_games > 0);
    let rows = |db: &Path| -> u64 {
        let (info, _) = ok(&["info", s(db)]);
        info.lines()
            .find_map(|l| l.strip_prefix("positions:"))
            .and_then(|n| n.trim().parse().ok())
            .expect("a positions line")
    };
    for round in 0..3 {
        let start = |input: &str| {
            Command::cargo_bin("pawnstorm")
                .unwrap()
                .args(["import", input, "--append", "-o", s(&db)])
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        };
        let (a, b) = (start(&texel), start(&pgn));
        for child in [a, b] {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        assert_eq!(
            rows(&db),
            texel_rows + (round + 1) * (texel_rows + pgn_rows),
            "round {round}"
        );
    }
    // Each append read the ids the DB had when it held the lock: the PGN's games, imported
    // three times, have ids 0 .. 3 x games (the EPD has none).
    let opened = pawnstorm::db::Database::open(&db).unwrap();
    assert_eq!(
        opened.max_game_id().unwrap(),
        Some(3 * pgn_games as u32 - 1)
    );
    // No temporary file left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
}

#[test]
fn invalid_utf8_is_a_rejection_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let input = temp(&dir, "bytes.epd");
    let mut bytes = b"4k3/8/8/8/8/8/8/4K3 w - - 0 1\n".to_vec();
    bytes.extend_from_slice(b"4k3/8/8/8/8/8/8/4K3 w - - 0 1 c0 \"\xff\xfe\";\n");
    bytes.extend_from_slice(b"4k3/8/8/8/8/8/8/4K3 b - - 0 1\r\n");
    std::fs::write(&input, bytes).unwrap();
    let (_, stderr) = ok(&["import", s(&input), "-o", s(&temp(&dir, "x.psdb"))]);
    assert!(stderr.contains("bytes.epd:2: not valid UTF-8"), "{stderr}");
    assert!(
        stderr.contains("imported 2 positions, rejected 1 records"),
        "{stderr}"
    );
}

#[test]
fn pgn_bad_game_is_skipped_and_plies_are_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "games.psdb");
    let (_, stderr) = ok(&["import", &fixture("bad/bad-game.pgn"), "-o", s(&db)]);
    assert!(
        stderr.contains("bad-game.pgn:6: "),
        "the bad game starts on line 6: {stderr}"
    );
    assert!(
        stderr.contains("Ke3"),
        "the illegal move is named: {stderr}"
    );
    // 7 plies + start, and 16 plies + start.
    assert!(
        stderr.contains("imported 25 positions from 2 games, rejected 1 records"),
        "{stderr}"
    );
    let (exported, _) = ok(&["export", s(&db)]);
    assert!(
        exported
            .lines()
            .next()
            .unwrap()
            .ends_with("c9 \"1-0\"; game 0; ply 0; move e2e4;")
    );
    assert!(
        exported
            .lines()
            .last()
            .unwrap()
            .ends_with("c9 \"1/2-1/2\"; game 1; ply 16;")
    );

    let filtered = temp(&dir, "filtered.psdb");
    ok(&[
        "import",
        &fixture("bad/bad-game.pgn"),
        "-o",
        s(&filtered),
        "--skip-plies",
        "3",
        "--every",
        "5",
    ]);
    let (exported, _) = ok(&["export", s(&filtered)]);
    let plies: Vec<&str> = exported
        .lines()
        .map(|l| {
            let after = l.rsplit("ply ").next().unwrap();
            &after[..after.find(';').unwrap()]
        })
        .collect();
    assert_eq!(plies, ["3", "3", "8", "13"]);
}

#[test]
fn gzip_and_stdin_give_the_same_db_as_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("epd/bk.epd");
    let text = std::fs::read(&plain).unwrap();
    let gz = temp(&dir, "bk.epd.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    encoder.write_all(&text).unwrap();
    encoder.finish().unwrap();
    let (a, b, c) = (
        temp(&dir, "a.psdb"),
        temp(&dir, "b.psdb"),
        temp(&dir, "c.psdb"),
    );
    ok(&["import", &plain, "-o", s(&a)]);
    ok(&["import", s(&gz), "-o", s(&b)]);
    let mut child = Command::cargo_bin("pawnstorm")
        .unwrap()
        .args(["import", "-", "-o", s(&c)])
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&text).unwrap();
    assert!(child.wait().unwrap().success());
    let a_bytes = psdb_contents(&a);
    assert_eq!(a_bytes, psdb_contents(&b));
    assert_eq!(a_bytes, psdb_contents(&c));
}

#[test]
fn append_adds_and_game_ids_continue() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "db.psdb");
    ok(&["import", &fixture("bad/bad-game.pgn"), "-o", s(&db)]);
    let (_, stderr) = ok(&[
        "import",
        &fixture("bad/bad-game.pgn"),
        "-o",
        s(&db),
        "--append",
    ]);
    assert!(
        stderr.contains("(50 positions, appended to 25 already there)"),
        "{stderr}"
    );
    let (exported, _) = ok(&["export", s(&db), "--range", "25..26"]);
    assert!(exported.contains("game 2; ply 0;"), "{exported}");
    let (range, _) = ok(&["export", s(&db), "--range", "2..5"]);
    assert_eq!(range.lines().count(), 3);
}

/// `-o -` is standard output to a user; a DB cannot be written there, and no file named
/// `-` appears (it did).
#[test]
fn a_db_is_never_written_to_standard_output_or_a_file_named_dash() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "db.psdb");
    ok(&["import", &fixture("epd/bk.epd"), "-o", s(&db)]);
    for args in [
        vec!["import", &fixture("epd/bk.epd"), "-o", "-"],
        vec!["dedup", s(&db), "-o", "-"],
    ] {
        let output = Command::cargo_bin("pawnstorm")
            .unwrap()
            .args(&args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains("standard output"), "{args:?}: {stderr}");
        assert!(
            !dir.path().join("-").exists(),
            "{args:?} wrote a file named -"
        );
    }
}

/// A DB given to `import` is refused at once with its name and what to use instead, and
/// no output is written (read as text it was millions of rejected lines).
#[test]
fn a_db_given_to_import_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "db.psdb");
    ok(&["import", &fixture("epd/bk.epd"), "-o", s(&db)]);
    let out = temp(&dir, "out.psdb");
    let stderr = fails(&["import", &fixture("epd/bk.epd"), s(&db), "-o", s(&out)]);
    assert!(stderr.contains("db.psdb: a position DB"), "{stderr}");
    assert!(stderr.contains("merge"), "{stderr}");
    assert!(!out.exists(), "an output was written");
}

/// A compressed PGN cut short fails with the file's name and writes nothing, on one thread
/// and on the import's pipeline of several, where the error comes after batches already
/// stored (the input is several batches long).
#[test]
fn a_truncated_compressed_pgn_fails_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let games = std::fs::read(fixture("pgn/lichess-2025-05-sample.pgn")).unwrap();
    let gz = temp(&dir, "cut.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for _ in 0..4 {
        encoder.write_all(&games).unwrap();
        encoder.write_all(b"\n\n").unwrap();
    }
    let whole = encoder.finish().unwrap();
    std::fs::write(&gz, &whole[..whole.len() * 3 / 4]).unwrap();
    for threads in ["1", "2"] {
        let out = temp(&dir, &format!("t{threads}.psdb"));
        let stderr = fails(&["import", s(&gz), "-o", s(&out), "--threads", threads]);
        assert!(
            stderr.contains("cut.pgn.gz") && stderr.contains("deflate"),
            "{threads} threads: {stderr}"
        );
        assert!(!out.exists(), "{threads} threads: a DB was written");
    }
}

/// The PGN import's pipeline (a batch of games replayed by the workers while the one before
/// is stored and the next read) gives the same DB and the same refusals, in the same order
/// and with the same line numbers, on any number of threads: every fixture PGN with the
/// refused games after each, many batches long, plain and compressed.
#[test]
fn pgn_import_is_the_same_on_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let refused = std::fs::read(fixture("pgn/adversarial/refused.pgn")).unwrap();
    let mut text = Vec::new();
    let mut files = 0;
    for entry in std::fs::read_dir(fixture("pgn")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pgn") {
            text.extend(std::fs::read(&path).unwrap());
            text.extend(b"\n\n");
            text.extend(&refused);
            text.extend(b"\n\n");
            files += 1;
        }
    }
    // Several of the import's batches (256 KiB a worker, 512 KiB for one or two), or the
    // test would not reach the hand-over between them.
    assert!(text.len() > 4 << 20, "{} bytes", text.len());
    let plain = temp(&dir, "all.pgn");
    std::fs::write(&plain, &text).unwrap();
    let gz = temp(&dir, "all.pgn.gz");
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(&text).unwrap();
    std::fs::write(&gz, encoder.finish().unwrap()).unwrap();
    let mut first: Option<(Vec<u8>, Vec<String>)> = None;
    for input in [&plain, &gz] {
        for threads in ["1", "2", "3"] {
            let out = temp(&dir, &format!("t{threads}.psdb"));
            let _ = std::fs::remove_file(&out);
            let (_, stderr) = ok(&["import", s(input), "-o", s(&out), "--threads", threads]);
            let refusals: Vec<String> = stderr
                .lines()
                .filter(|line| line.starts_with("warning: skipped"))
                .map(|line| line.replace(s(input), "INPUT"))
                .collect();
            let contents = psdb_contents(&out);
            let what = format!("{} on {threads} threads", input.display());
            match &first {
                None => {
                    // refused.pgn's nine, after every file.
                    assert!(refusals.len() >= 9 * files, "{what}: {stderr}");
                    first = Some((contents, refusals));
                }
                Some((db, refused)) => {
                    assert_eq!(&refusals, refused, "{what}: other refusals");
                    assert!(contents == *db, "{what}: another DB");
                }
            }
        }
    }
}

#[test]
fn damaged_and_foreign_files_fail_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "db.psdb");
    ok(&["import", &fixture("epd/bk.epd"), "-o", s(&db)]);
    let bytes = std::fs::read(&db).unwrap();
    let cut = temp(&dir, "cut.psdb");
    std::fs::write(&cut, &bytes[..bytes.len() - 10]).unwrap();
    let stderr = fails(&["info", s(&cut)]);
    assert!(
        stderr.contains("cut.psdb") && stderr.contains("truncated"),
        "{stderr}"
    );
    let stderr = fails(&["info", &fixture("epd/bk.epd")]);
    assert!(
        stderr.contains("not a pawnstorm position database"),
        "{stderr}"
    );
    let stderr = fails(&["export", s(&temp(&dir, "missing.psdb"))]);
    assert!(stderr.contains("missing.psdb"), "{stderr}");
    let stderr = fails(&["show", s(&db), "--index", "24"]);
    assert!(stderr.contains("holds 24 positions"), "{stderr}");
}

#[test]
fn show_draws_a_fen_or_a_db_row_and_explains_a_bad_fen() {
    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let (stdout, _) = ok(&["show", start]);
    assert!(
        stdout.contains("8 | r | n | b | q | k | b | n | r |"),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("FEN: {start}")));
    let stderr = fails(&[
        "show",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1",
    ]);
    assert!(
        stderr.contains("side to move field, character 45"),
        "{stderr}"
    );
    let dir = tempfile::tempdir().unwrap();
    let db = temp(&dir, "db.psdb");
    ok(&["import", &fixture("epd/bk.epd"), "-o", s(&db)]);
    let (stdout, _) = ok(&["show", s(&db), "--index", "1"]);
    let second = read_fixture("epd/bk.epd");
    let fen4: Vec<&str> = second
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .take(4)
        .collect();
    let shown = stdout
        .lines()
        .find_map(|l| l.strip_prefix("FEN: "))
        .unwrap();
    assert_eq!(
        parse_fen(shown).unwrap(),
        parse_fen(&fen4.join(" ")).unwrap()
    );
}

/// No subcommand is how GUIs start a UCI engine: the binary alone speaks UCI.
#[test]
fn no_subcommand_runs_the_uci_loop() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"uci\nisready\nquit\n")
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("uciok") && stdout.contains("readyok"),
        "{stdout}"
    );
}
