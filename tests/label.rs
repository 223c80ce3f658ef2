//! `pawnstorm label` end to end: own-search labels are the search's scores from White's
//! view and do not depend on the thread count; the other labels travel unchanged;
//! `--keep-existing`; a UCI engine's scores (bounds and other PVs ignored, mates in the DB's
//! convention) and its failures (crash, hang, garbage, no score: restarted, the position
//! left without a score); SIGINT leaves a valid prefix that `--resume` completes into the
//! same DB as an uninterrupted run; merge renumbers game ids.

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::prelude::*;
use pawnstorm::Position;
use pawnstorm::db::{Columns, Database};
use pawnstorm::engine::search::{Control, Engine, Limits};
use pawnstorm::eval::{Prepared, Weights};
use pawnstorm::movegen::Board;
use pawnstorm::position::labels::Record;

use common::{fixture, ok, pawnstorm};

fn records(path: &Path) -> Vec<Record> {
    let db = Database::open(path).unwrap();
    db.records(0..db.len()).map(Result::unwrap).collect()
}

/// User and system CPU seconds a process has used so far (Linux's /proc).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's name (which is in parentheses and may hold spaces): utime
    // and stime are the 14th and 15th of the line, the 12th and 13th after the name.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: f64 = fields.get(11..13).map_or(0.0, |f| {
        f.iter().filter_map(|t| t.parse::<f64>().ok()).sum()
    });
    // SAFETY: sysconf has no memory effects.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    ticks / per_second
}

fn path_text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A fresh search of `position` to `depth`, side to move's view.
fn search(position: &Position, depth: i32) -> i32 {
    search_with(position, depth, Prepared::default())
}

fn search_with(position: &Position, depth: i32, weights: Prepared) -> i32 {
    let mut engine = Engine::new(16);
    engine.set_weights(weights);
    let board = Board::new(position.clone());
    engine
        .search(
            &board,
            &[],
            &[],
            &Limits::depth(depth),
            &Control::default(),
            &mut |_| {},
        )
        .score
}

fn white_view(score: i32, position: &Position) -> i32 {
    match position.side_to_move() {
        pawnstorm::Color::White => score,
        pawnstorm::Color::Black => -score,
    }
}

#[test]
fn own_search_labels_use_the_weights_given() {
    let dir = tempfile::tempdir().unwrap();
    let games = dir.path().join("games.psdb");
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        "-o",
        path_text(&games),
    ]);
    let hand_set_file = format!("{}/weights/hand-set.txt", env!("CARGO_MANIFEST_DIR"));
    let with_defaults = dir.path().join("defaults.psdb");
    let with_hand_set = dir.path().join("hand-set.psdb");
    let label = |out: &Path, extra: &[&str]| {
        let mut args = vec!["label", path_text(&games), "-o", path_text(out)];
        args.extend_from_slice(&["--depth", "2", "--threads", "1"]);
        args.extend_from_slice(extra);
        ok(&args);
        records(out)
    };
    let defaults = label(&with_defaults, &[]);
    let hand_set = label(&with_hand_set, &["--weights", &hand_set_file]);
    let first = &hand_set[0].position;
    assert_eq!(
        hand_set[0].labels.score,
        Some(white_view(
            search_with(first, 2, Prepared::new(Weights::hand_set())),
            first
        ))
    );
    let differing = defaults
        .iter()
        .zip(&hand_set)
        .filter(|(a, b)| a.labels.score != b.labels.score)
        .count();
    assert!(
        differing > defaults.len() / 2,
        "only {differing} of {} scores changed with the weights",
        defaults.len()
    );

    let missing = pawnstorm(&[
        "label",
        path_text(&games),
        "-o",
        path_text(&dir.path().join("x.psdb")),
        "--weights",
        "/no/such/weights.txt",
    ]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/no/such/weights.txt"));
}

#[test]
fn own_search_labels_are_white_view_scores_and_thread_independent() {
    let dir = tempfile::tempdir().unwrap();
    let one = dir.path().join("one.psdb");
    let two = dir.path().join("two.psdb");
    let input = fixture("pgn/famous-games.pgn");
    // 600 positions: three runs of 256, so two threads share them.
    let games = dir.path().join("games.psdb");
    ok(&["import", &input, "-o", path_text(&games)]);
    let all = records(&games);
    let sample = dir.path().join("sample.epd");
    let mut text = String::new();
    for record in all.iter().take(600) {
        pawnstorm::position::labels::write_line(record, &mut text);
        text.push('\n');
    }
    std::fs::write(&sample, text).unwrap();
    let summary = ok(&[
        "label",
        path_text(&sample),
        "-o",
        path_text(&one),
        "--depth",
        "3",
        "--threads",
        "1",
    ]);
    assert!(
        summary.contains("600 searched by pawnstorm's search at depth 3"),
        "{summary}"
    );
    ok(&[
        "label",
        path_text(&sample),
        "-o",
        path_text(&two),
        "--depth",
        "3",
        "--threads",
        "2",
    ]);
    let (one, two) = (records(&one), records(&two));
    assert_eq!(one, two, "the labels depend on the thread count");
    assert_eq!(one.len(), 600);
    for (i, (labelled, original)) in one.iter().zip(&all).enumerate() {
        assert_eq!(labelled.position, original.position);
        // Everything but the score travels unchanged.
        let mut expected = original.labels;
        expected.score = labelled.labels.score;
        assert_eq!(labelled.labels, expected, "position {i}");
        // The first position of each run is searched with empty tables: a fresh search.
        if i % 256 == 0 {
            let score = search(&labelled.position, 3);
            assert_eq!(
                labelled.labels.score,
                Some(white_view(score, &labelled.position)),
                "{i}"
            );
        }
    }
}

#[test]
fn mates_are_stored_in_the_db_convention_and_existing_scores_kept() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mates.epd");
    // White mates in one (Ra8#), Black mates in one (Ra1#), and a position with a score.
    std::fs::write(
        &input,
        "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1\n\
         r5k1/8/8/8/8/8/5PPP/6K1 b - - 0 1\n\
         r5k1/8/8/8/8/8/5PPP/6K1 w - - 0 1 ce 123;\n",
    )
    .unwrap();
    let out = dir.path().join("out.psdb");
    let summary = ok(&[
        "label",
        path_text(&input),
        "-o",
        path_text(&out),
        "--depth",
        "4",
        "--keep-existing",
    ]);
    assert!(
        summary.contains("2 searched") && summary.contains("1 kept their score"),
        "{summary}"
    );
    let scores: Vec<Option<i32>> = records(&out).iter().map(|r| r.labels.score).collect();
    // Mate in 1 ply: 32000 - 1, White's view (negated when Black mates).
    assert_eq!(scores, [Some(31_999), Some(-31_999), Some(123)]);
}

fn fake_engine() -> String {
    format!("{}/tests/engines/fake_uci.py", env!("CARGO_MANIFEST_DIR"))
}

/// Positions whose halfmove clock and fullmove number steer the fake engine.
fn fake_input(dir: &Path, clocks: &[(u32, u32)]) -> std::path::PathBuf {
    let lines: Vec<String> = clocks
        .iter()
        .enumerate()
        .map(|(i, &(clock, fullmove))| {
            let side = if i % 2 == 0 { "w" } else { "b" };
            format!(
                "4k3/8/8/8/8/8/4P3/4K3 {side} - - {clock} {fullmove} game {}; ply {i};",
                i / 3
            )
        })
        .collect();
    let path = dir.join("fake.epd");
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_uci_engines_scores_and_failures() {
    if Command::new("python3").arg("--version").output().is_err() {
        panic!("python3 is needed for the fake UCI engine");
    }
    let dir = tempfile::tempdir().unwrap();
    // ok, crash, ok, hang, ok, garbage, ok, no score, mate, ok
    let clocks = [
        (0, 1),
        (7, 2),
        (0, 3),
        (8, 4),
        (0, 5),
        (9, 6),
        (0, 7),
        (6, 8),
        (0, 99),
        (0, 10),
    ];
    let input = fake_input(dir.path(), &clocks);
    let out = dir.path().join("out.psdb");
    let engine = format!("python3 {}", fake_engine());
    let started = Instant::now();
    let summary = ok(&[
        "label",
        path_text(&input),
        "-o",
        path_text(&out),
        "--engine",
        &engine,
        "--option",
        "Hash=4",
        "--depth",
        "2",
        // Generous enough for python3 to start on a loaded CI machine; the one hang costs it.
        "--timeout",
        "5",
        "--threads",
        "1",
    ]);
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the hang was not cut short"
    );
    assert!(summary.contains("FakeUCI 1.0 at depth 2"), "{summary}");
    assert!(summary.contains("4 failed"), "{summary}");
    for index in [1, 3, 5, 7] {
        assert!(
            summary.contains(&format!("position {index}: left without a score")),
            "{summary}"
        );
    }
    assert!(summary.contains("did not answer within 5.0 s"), "{summary}");
    assert!(summary.contains("unreadable score"), "{summary}");
    assert!(summary.contains("without a score before it"), "{summary}");
    let labelled = records(&out);
    let scores: Vec<Option<i32>> = labelled.iter().map(|r| r.labels.score).collect();
    // 10 x fullmove from the side to move, White's view (Black moves on odd lines); the
    // mate in 2 moves on line 8 (White to move) is 3 plies: 32000 - 3.
    assert_eq!(
        scores,
        [
            Some(10),
            None,
            Some(30),
            None,
            Some(50),
            None,
            Some(70),
            None,
            Some(31_997),
            Some(-100),
        ]
    );
    // The other labels travel.
    assert!(
        labelled
            .iter()
            .enumerate()
            .all(|(i, r)| r.labels.ply == Some(i as u16))
    );
    assert_eq!(labelled[9].labels.game_id, Some(3));
}

#[test]
fn an_engine_that_cannot_start_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let input = fake_input(dir.path(), &[(0, 1)]);
    let out = dir.path().join("out.psdb");
    let output = pawnstorm(&[
        "label",
        path_text(&input),
        "-o",
        path_text(&out),
        "--engine",
        "/nonexistent/engine",
    ]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("cannot start engine `/nonexistent/engine`"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// The names of the files in `dir`.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

#[test]
fn interrupted_runs_keep_a_prefix_and_resume_to_the_same_db() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("games.psdb");
    ok(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "-o",
        path_text(&input),
    ]);
    let total = Database::open(&input).unwrap().len();
    let work = dir.path().join("work");
    std::fs::create_dir(&work).unwrap();
    let out = work.join("labelled.psdb");
    let args = [
        "label",
        path_text(&input),
        "-o",
        path_text(&out),
        "--depth",
        "4",
        "--threads",
        "2",
    ];

    let child = Command::cargo_bin("pawnstorm")
        .unwrap()
        .args(args)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Interrupted once it has worked a while by its own CPU time (about a sixth of the whole
    // run's), not by the wall clock: on a loaded machine a fixed sleep could come before any
    // position was labelled, and the prefix would go unchecked.
    let deadline = Instant::now() + Duration::from_secs(120);
    while cpu_seconds(child.id()) < 1.0 {
        assert!(
            Instant::now() < deadline,
            "the labeller did not get to work"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    // SIGINT, as Ctrl-C sends it.
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    // Nothing but the DB (or nothing at all) is left.
    let left = files(&work);
    assert!(left.is_empty() || left == ["labelled.psdb"], "{left:?}");
    let done = if out.exists() {
        Database::open(&out).unwrap().len()
    } else {
        0
    };
    assert!(
        done < total,
        "the run was not interrupted ({done} of {total}): slow it down"
    );
    assert!(done > 0, "a second of CPU labelled nothing: {stderr}");
    assert!(
        stderr.contains(&format!("the first {done} of {total} positions")),
        "{stderr}"
    );

    let resumed = ok(&[&args[..], &["--resume"]].concat());
    assert!(
        resumed.contains(&format!("{} positions", total - done)),
        "{resumed}"
    );
    let whole = dir.path().join("whole.psdb");
    ok(&[
        "label",
        path_text(&input),
        "-o",
        path_text(&whole),
        "--depth",
        "4",
        "--threads",
        "2",
    ]);
    assert_eq!(records(&out), records(&whole));
    // Resuming a finished run does nothing; resuming onto another input's DB is refused.
    assert!(ok(&[&args[..], &["--resume"]].concat()).contains("nothing to do"));
    let other = pawnstorm(&[
        "label",
        &fixture("epd/wac.epd"),
        "-o",
        path_text(&out),
        "--depth",
        "1",
        "--resume",
    ]);
    assert!(!other.status.success());
    assert!(String::from_utf8_lossy(&other.stderr).contains("not a run on this input"));
}

#[test]
fn merge_renumbers_games_and_keeps_every_column() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a.psdb");
    let b = dir.path().join("b.psdb");
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        "-o",
        path_text(&a),
    ]);
    // Other positions with the same columns: the same games from their 20th ply, every 3rd.
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        "-o",
        path_text(&b),
        "--skip-plies",
        "20",
        "--every",
        "3",
    ]);
    let merged = dir.path().join("m.psdb");
    let summary = ok(&[
        "merge",
        path_text(&a),
        path_text(&b),
        path_text(&a),
        "-o",
        path_text(&merged),
    ]);
    let (ra, rb, rm) = (records(&a), records(&b), records(&merged));
    assert!(
        summary.contains(&format!("{} positions from 3 DBs", rm.len())),
        "{summary}"
    );
    assert_eq!(rm.len(), 2 * ra.len() + rb.len());
    let games_a = ra.iter().filter_map(|r| r.labels.game_id).max().unwrap() + 1;
    let games_b = rb.iter().filter_map(|r| r.labels.game_id).max().unwrap() + 1;
    let parts = [(&ra, 0), (&rb, games_a), (&ra, games_a + games_b)];
    let mut at = 0;
    for (part, offset) in parts {
        for record in part.iter() {
            let mut expected = record.clone();
            expected.labels.game_id = record.labels.game_id.map(|g| g + offset);
            assert_eq!(rm[at], expected, "row {at}");
            at += 1;
        }
    }
    // A DB without game ids and results: merged into the union of the columns, each row
    // unknown where its input had no column, or with --drop-missing into the common ones.
    let scores = dir.path().join("scores.psdb");
    ok(&[
        "label",
        &fixture("epd/bk.epd"),
        "-o",
        path_text(&scores),
        "--depth",
        "1",
    ]);
    let (columns_a, columns_scores) = (
        Database::open(&a).unwrap().columns(),
        Database::open(&scores).unwrap().columns(),
    );
    assert!(!columns_scores.contains(Columns::GAME_ID) && columns_scores.contains(Columns::SCORE));
    assert!(!columns_a.contains(Columns::SCORE) && columns_a.contains(Columns::GAME_ID));
    let summary = ok(&[
        "merge",
        path_text(&a),
        path_text(&scores),
        "-o",
        path_text(&merged),
    ]);
    assert!(
        summary.contains("unknown in the rows of the inputs without them"),
        "{summary}"
    );
    assert_eq!(
        Database::open(&merged).unwrap().columns(),
        columns_a.union(columns_scores)
    );
    let rs = records(&scores);
    assert_eq!(records(&merged), [&ra[..], &rs[..]].concat());
    let summary = ok(&[
        "merge",
        path_text(&a),
        path_text(&scores),
        "-o",
        path_text(&merged),
        "--drop-missing",
    ]);
    assert!(summary.contains("dropped columns"), "{summary}");
    let common = columns_a.intersection(columns_scores);
    assert_eq!(Database::open(&merged).unwrap().columns(), common);
    assert_eq!(records(&merged).len(), ra.len() + rs.len());
}
