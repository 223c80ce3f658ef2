//! Real-world input end to end: compressed files and standard input (zstd, bzip2), the
//! labels of lichess's PGN movetext and tags with the filters on them, and lichess's
//! evaluation JSON lines. shakmaty replays the games as an independent oracle.

use crate::common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use assert_cmd::prelude::*;
use pawnstorm::db::Database;
use pawnstorm::position::labels::{self, GameResult, Record};
use shakmaty::fen::Fen;
use shakmaty::uci::UciMove;
use shakmaty::{CastlingMode, Chess, EnPassantMode, Position as _};

use common::{fixture, psdb_contents};

const MATE: i32 = 32_000;

fn pawnstorm(args: &[&str], stdin: Option<&[u8]>) -> Output {
    let mut child = Command::cargo_bin("pawnstorm")
        .expect("binary built")
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    if let Some(bytes) = stdin {
        let mut pipe = child.stdin.take().expect("stdin");
        pipe.write_all(bytes).expect("write stdin");
    }
    child.wait_with_output().expect("runs")
}

/// Runs the binary, which must succeed; its standard error.
fn ok(args: &[&str], stdin: Option<&[u8]>) -> String {
    let output = pawnstorm(args, stdin);
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?}: {stderr}");
    stderr
}

fn s(path: &Path) -> &str {
    path.to_str().unwrap()
}

fn records(db: &Path) -> Vec<Record> {
    let db = Database::open(db).unwrap();
    db.records(0..db.len()).map(Result::unwrap).collect()
}

fn zstd_bytes(text: &[u8]) -> Vec<u8> {
    zstd::encode_all(text, 3).unwrap()
}

fn bzip2_bytes(text: &[u8]) -> Vec<u8> {
    let mut encoder = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
    encoder.write_all(text).unwrap();
    encoder.finish().unwrap()
}

/// Imports PGN `text` written to `name` in `dir` with `extra` options; the records and
/// the summary line.
fn import_pgn(dir: &Path, name: &str, text: &str, extra: &[&str]) -> (Vec<Record>, String) {
    let pgn = dir.join(name);
    std::fs::write(&pgn, text).unwrap();
    let db = dir.join(format!("{name}.psdb"));
    let mut args = vec!["import", s(&pgn), "-o", s(&db)];
    args.extend_from_slice(extra);
    let stderr = ok(&args, None);
    (records(&db), stderr)
}

#[test]
fn compressed_pgn_files_and_stdin_import_to_exactly_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    // Two fixtures, one lichess-like (comments, clocks) and one of annotated master games.
    let mut text = std::fs::read(fixture("pgn/lichess-2025-05-sample.pgn")).unwrap();
    text.extend(std::fs::read(fixture("pgn/famous-games.pgn")).unwrap());
    let plain = dir.path().join("games.pgn");
    std::fs::write(&plain, &text).unwrap();
    let zst = dir.path().join("games.pgn.zst");
    std::fs::write(&zst, zstd_bytes(&text)).unwrap();
    let bz2 = dir.path().join("games.pgn.bz2");
    std::fs::write(&bz2, bzip2_bytes(&text)).unwrap();

    let expected_db = dir.path().join("plain.psdb");
    ok(&["import", s(&plain), "-o", s(&expected_db)], None);
    let expected = psdb_contents(&expected_db);
    assert!(records(&expected_db).len() > 10_000);

    for input in [&zst, &bz2] {
        let db = dir.path().join("compressed.psdb");
        ok(&["import", s(input), "-o", s(&db)], None);
        assert!(psdb_contents(&db) == expected, "{input:?}");
    }
    for bytes in [zstd_bytes(&text), bzip2_bytes(&text)] {
        let db = dir.path().join("stdin.psdb");
        ok(
            &["import", "-", "--format", "pgn", "-o", s(&db)],
            Some(&bytes),
        );
        assert!(psdb_contents(&db) == expected);
    }
}

#[test]
fn eval_and_features_take_compressed_text_files() {
    let dir = tempfile::tempdir().unwrap();
    let epd = std::fs::read(fixture("epd/wac.epd")).unwrap();
    let zst = dir.path().join("wac.epd.zst");
    std::fs::write(&zst, zstd_bytes(&epd)).unwrap();
    let plain_csv = dir.path().join("plain.csv");
    let zst_csv = dir.path().join("zst.csv");
    ok(
        &["eval", &fixture("epd/wac.epd"), "-o", s(&plain_csv)],
        None,
    );
    ok(&["eval", s(&zst), "-o", s(&zst_csv)], None);
    let plain = std::fs::read_to_string(&plain_csv).unwrap();
    assert!(plain.lines().count() > 100);
    assert_eq!(plain, std::fs::read_to_string(&zst_csv).unwrap());
}

/// A game's positions replayed by shakmaty from its SAN moves: (position, move from it).
fn replay(sans: &[&str]) -> Vec<(Chess, Option<shakmaty::Move>)> {
    let mut position = Chess::default();
    let mut out = Vec::new();
    for san in sans {
        let mv = san
            .parse::<shakmaty::san::San>()
            .unwrap()
            .to_move(&position)
            .unwrap();
        out.push((position.clone(), Some(mv)));
        position.play_unchecked(mv);
    }
    out.push((position, None));
    out
}

fn fen_of(position: &Chess) -> String {
    Fen::from_position(position, EnPassantMode::Legal).to_string()
}

/// The UCI move a `move` label stands for, played on `position` by shakmaty.
fn play_label(position: &Chess, code: u16) -> Chess {
    let uci = labels::move_to_uci(code).expect("a move");
    let mv = UciMove::from_ascii(uci.as_bytes())
        .unwrap()
        .to_move(position)
        .unwrap_or_else(|e| panic!("{uci} in {}: {e}", fen_of(position)));
    let mut next = position.clone();
    next.play_unchecked(mv);
    next
}

const EVAL_GAME: &str = r#"[Event "Rated Blitz game"]
[Site "https://lichess.org/abcdefgh"]
[White "a"]
[Black "b"]
[Result "1-0"]
[WhiteElo "2100"]
[BlackElo "?"]
[TimeControl "300+3"]

1. e4 { [%eval 0.17] [%clk 0:03:00] } 1... e5 { [%clk 0:03:00] [%eval -0.4] }
2. Nf3 { a comment, no eval } 2... Nc6 { [%eval #3] [%clk 0:02:58] } 3. Bb5 { [%eval #-2] }
3... a6 { [%eval 1.155] [%clk 0:02:50] } 4. O-O { [%eval -0.005] } 4... Nf6 { [%eval 0.3] } 1-0
"#;

const EVAL_GAME_SANS: [&str; 8] = ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O", "Nf6"];

#[test]
fn eval_comments_score_the_position_after_their_move() {
    let dir = tempfile::tempdir().unwrap();
    let (records, _) = import_pgn(dir.path(), "evals.pgn", EVAL_GAME, &[]);
    let game = replay(&EVAL_GAME_SANS);
    assert_eq!(records.len(), game.len());
    let scores: Vec<Option<i32>> = records.iter().map(|r| r.labels.score).collect();
    assert_eq!(
        scores,
        [
            None,
            Some(17),
            Some(-40),
            None,
            // #3 with White to move: 5 plies; #-2 with Black to move: 3 plies.
            Some(MATE - 5),
            Some(-(MATE - 3)),
            Some(116),
            Some(-1),
            Some(30),
        ]
    );
    for (record, (position, mv)) in records.iter().zip(&game) {
        assert_eq!(record.position.to_fen(), fen_of(position));
        let labels = &record.labels;
        assert_eq!(labels.result, Some(GameResult::WhiteWin));
        assert_eq!(labels.white_elo, Some(2100));
        assert_eq!(labels.black_elo, None);
        assert_eq!(
            (labels.base_seconds, labels.increment),
            (Some(300), Some(3))
        );
        match mv {
            Some(mv) => {
                let mut next = position.clone();
                next.play_unchecked(*mv);
                let code = labels.move_played.expect("a move label");
                assert_eq!(fen_of(&play_label(position, code)), fen_of(&next));
            }
            None => assert_eq!(labels.move_played, None),
        }
    }
    // Castling is the king's move.
    assert_eq!(
        labels::move_to_uci(records[6].labels.move_played.unwrap()).as_deref(),
        Some("e1g1")
    );
}

#[test]
fn skipped_positions_keep_the_move_and_eval_of_their_own_ply() {
    let dir = tempfile::tempdir().unwrap();
    let (all, _) = import_pgn(dir.path(), "all.pgn", EVAL_GAME, &[]);
    let (some, _) = import_pgn(
        dir.path(),
        "some.pgn",
        EVAL_GAME,
        &["--skip-plies", "1", "--every", "3"],
    );
    let plies: Vec<u16> = some.iter().map(|r| r.labels.ply.unwrap()).collect();
    assert_eq!(plies, [1, 4, 7]);
    for record in &some {
        let ply = usize::from(record.labels.ply.unwrap());
        assert_eq!(record, &all[ply]);
    }
}

#[test]
fn move_labels_replay_every_fixture_game() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    let inputs: Vec<String> = [
        "pgn/lichess-2025-05-sample.pgn",
        "pgn/famous-games.pgn",
        "pgn/chess-informant-d00.pgn",
    ]
    .iter()
    .map(|f| fixture(f))
    .collect();
    let mut args = vec!["import", "-o", s(&db)];
    args.extend(inputs.iter().map(String::as_str));
    ok(&args, None);
    let records = records(&db);
    let mut checked = 0;
    for pair in records.windows(2) {
        let (this, next) = (&pair[0], &pair[1]);
        let same_game = this.labels.game_id == next.labels.game_id;
        match this.labels.move_played {
            Some(code) => {
                assert!(same_game, "a move label on a game's last position");
                let position: Chess = this
                    .position
                    .to_fen()
                    .parse::<Fen>()
                    .unwrap()
                    .into_position(CastlingMode::Standard)
                    .unwrap();
                assert_eq!(
                    fen_of(&play_label(&position, code)),
                    next.position.to_fen(),
                    "game {:?} ply {:?}",
                    this.labels.game_id,
                    this.labels.ply
                );
                checked += 1;
            }
            None => assert!(!same_game, "no move label inside a game"),
        }
    }
    assert!(checked > 50_000, "{checked}");
}

/// A game with the given tags and movetext comments (`with_evals`).
fn game(white_elo: &str, black_elo: &str, time_control: &str, with_evals: bool) -> String {
    let (a, b) = if with_evals {
        (
            "{ [%eval 0.2] [%clk 0:10:00] }",
            "{ [%eval 0.1] [%clk 0:10:00] }",
        )
    } else {
        ("{ [%clk 0:10:00] }", "{ [%clk 0:10:00] }")
    };
    format!(
        "[Event \"x\"]\n[Result \"1/2-1/2\"]\n[WhiteElo \"{white_elo}\"]\n[BlackElo \"{black_elo}\"]\n\
         [TimeControl \"{time_control}\"]\n\n1. d4 {a} 1... d5 {b} 2. c4 {a} 1/2-1/2\n\n"
    )
}

#[test]
fn filters_drop_games_and_count_them_by_filter() {
    let dir = tempfile::tempdir().unwrap();
    let games = [
        game("2000", "2100", "600+0", true),  // kept
        game("1500", "2100", "600+0", true),  // --min-elo
        game("?", "2300", "600+0", true),     // --min-elo: unknown rating
        game("2200", "2200", "-", true),      // --min-base-seconds: unknown
        game("2200", "2200", "180+2", true),  // --min-base-seconds
        game("2200", "2200", "600+5", false), // --require-eval
        game("2400", "2050", "900+10", true), // kept
    ]
    .concat();
    let filters = [
        "--min-elo",
        "2000",
        "--min-base-seconds",
        "300",
        "--require-eval",
    ];
    let (kept, summary) = import_pgn(dir.path(), "filtered.pgn", &games, &filters);
    assert!(
        summary.contains(
            "from 2 games, dropped 5 games (2 --min-elo, 2 --min-base-seconds, 1 --require-eval)"
        ),
        "{summary}"
    );
    assert!(summary.contains("rejected 0 records"), "{summary}");
    assert_eq!(kept.len(), 2 * 4);
    let tags: Vec<_> = kept
        .iter()
        .map(|r| {
            let l = &r.labels;
            (l.white_elo, l.black_elo, l.base_seconds, l.increment)
        })
        .collect();
    assert_eq!(tags[..4], [(Some(2000), Some(2100), Some(600), Some(0)); 4]);
    assert_eq!(
        tags[4..],
        [(Some(2400), Some(2050), Some(900), Some(10)); 4]
    );
    // Kept games are numbered one after another: dropped ones take no game id.
    assert_eq!(kept[0].labels.game_id, Some(0));
    assert_eq!(kept[4].labels.game_id, Some(1));

    // Without filters every game is kept, unknown tags unlabelled.
    let (all, summary) = import_pgn(dir.path(), "all.pgn", &games, &[]);
    assert_eq!(all.len(), 7 * 4);
    assert!(!summary.contains("dropped"), "{summary}");
    assert_eq!(all[8].labels.white_elo, None);
    assert_eq!(
        (all[12].labels.base_seconds, all[12].labels.increment),
        (None, None)
    );
    assert_eq!(all[20].labels.score, None);
}

/// `--date` reads a game's `UTCDate` tag, and its `Date` tag where it has no `UTCDate`; a
/// game with neither has an unknown date and is dropped. Each game's `WhiteElo` marks it.
#[test]
fn date_filter_falls_back_to_the_date_tag() {
    let dir = tempfile::tempdir().unwrap();
    let dated = |marker: u16, utc: Option<&str>, date: Option<&str>| {
        let mut tags = format!("[Event \"x\"]\n[Result \"1/2-1/2\"]\n[WhiteElo \"{marker}\"]\n");
        if let Some(utc) = utc {
            tags.push_str(&format!("[UTCDate \"{utc}\"]\n"));
        }
        if let Some(date) = date {
            tags.push_str(&format!("[Date \"{date}\"]\n"));
        }
        format!("{tags}\n1. d4 d5 2. c4 1/2-1/2\n\n")
    };
    let games = [
        dated(1, Some("2024.01.15"), None), // kept: UTCDate inside
        dated(2, None, Some("2024.01.20")), // kept: Date, no UTCDate
        dated(3, None, Some("2023.06.01")), // dropped: Date outside
        dated(4, Some("2023.12.31"), Some("2024.01.10")), // dropped: UTCDate first
        dated(5, Some("2024.01.05"), Some("2023.01.01")), // kept: UTCDate first
        dated(6, None, None),               // dropped: no date
    ]
    .concat();
    let (kept, summary) = import_pgn(
        dir.path(),
        "dated.pgn",
        &games,
        &["--date", "2024.01.01..2024.01.31"],
    );
    assert!(
        summary.contains("from 3 games, dropped 3 games (3 --date)"),
        "{summary}"
    );
    let mut markers: Vec<u16> = kept.iter().filter_map(|r| r.labels.white_elo).collect();
    markers.dedup();
    assert_eq!(markers, [1, 2, 5]);
}

#[test]
fn a_bad_eval_comment_rejects_its_game_with_the_line() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}[Event \"bad\"]\n[Result \"*\"]\n\n1. e4 {{ [%eval abc] }} *\n\n{}",
        game("2000", "2000", "60+0", true),
        game("2000", "2000", "60+0", true)
    );
    let (records, summary) = import_pgn(dir.path(), "bad.pgn", &text, &[]);
    assert_eq!(records.len(), 8);
    assert!(summary.contains("rejected 1 records"), "{summary}");
    assert!(summary.contains("bad.pgn:9:"), "{summary}");
    assert!(summary.contains("[%eval abc]"), "{summary}");
}

/// A line of lichess's evaluation database: `evals` as (depth, [(cp or mate)]).
fn eval_line(fen: &str, evals: &[(u32, &[&str])]) -> String {
    let evals: Vec<String> = evals
        .iter()
        .enumerate()
        .map(|(i, (depth, pvs))| {
            let pvs: Vec<String> = pvs
                .iter()
                .map(|score| {
                    format!(r#"{{{score}, "line": "e2e4 e7e5 g1f3 b8c6 f1b5 a7a6 b5a4 g8f6 e1g1 f8e7"}}"#)
                })
                .collect();
            format!(
                r#"{{"pvs": [{}], "knodes": {}, "depth": {depth}}}"#,
                pvs.join(", "),
                1000 * (i + 1)
            )
        })
        .collect();
    format!(r#"{{"fen": "{fen}", "evals": [{}]}}"#, evals.join(", "))
}

#[test]
fn lichess_eval_lines_give_the_deepest_first_pv() {
    let dir = tempfile::tempdir().unwrap();
    let lines = [
        eval_line(
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq -",
            &[
                (30, &[r#""cp": 20"#]),
                (36, &[r#""cp": 31"#, r#""cp": 12"#]),
                (36, &[r#""cp": 99"#]),
                (25, &[r#""cp": 5"#, r#""cp": 1"#, r#""cp": -3"#]),
            ],
        ),
        // Black to move, Black mates in 2: 3 plies.
        eval_line(
            "6k1/8/8/8/8/8/r4PPP/6K1 b - -",
            &[(40, &[r#""mate": -2"#, r#""cp": -900"#])],
        ),
        String::new(),
        r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": [{"pvs": [{"cp": 1}]"#.to_string(),
        eval_line("8/8/8/8/8/8/8/8 w - -", &[(20, &[r#""cp": 0"#])]),
        r#"{"fen": "4k3/8/8/8/8/8/8/4K3 w - -", "evals": [{"pvs": [{"cp": -7, "line": ""}], "depth": 12, "knodes": 3}]}"#.to_string(),
    ];
    let text = lines.join("\n") + "\n";
    let plain = dir.path().join("evals.jsonl");
    std::fs::write(&plain, &text).unwrap();
    let zst = dir.path().join("evals.jsonl.zst");
    std::fs::write(&zst, zstd_bytes(text.as_bytes())).unwrap();

    let db = dir.path().join("evals.psdb");
    let summary = ok(&["import", s(&plain), "-o", s(&db)], None);
    assert!(summary.contains("evals.jsonl:4:"), "{summary}");
    assert!(summary.contains("evals.jsonl:5:"), "{summary}");
    assert!(summary.contains("rejected 2 records"), "{summary}");
    let records = records(&db);
    let got: Vec<(String, Option<i32>)> = records
        .iter()
        .map(|r| (r.position.to_fen(), r.labels.score))
        .collect();
    assert_eq!(
        got,
        [
            (
                "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1".to_string(),
                Some(31)
            ),
            (
                "6k1/8/8/8/8/8/r4PPP/6K1 b - - 0 1".to_string(),
                Some(-(MATE - 3))
            ),
            ("4k3/8/8/8/8/8/8/4K3 w - - 0 1".to_string(), Some(-7)),
        ]
    );
    assert!(records.iter().all(|r| r.labels.result.is_none()));

    let expected = psdb_contents(&db);
    let from_zst = dir.path().join("zst.psdb");
    ok(&["import", s(&zst), "-o", s(&from_zst)], None);
    assert!(psdb_contents(&from_zst) == expected);
    let from_stdin = dir.path().join("stdin.psdb");
    ok(
        &["import", "-", "--format", "jsonl", "-o", s(&from_stdin)],
        Some(&zstd_bytes(text.as_bytes())),
    );
    assert!(psdb_contents(&from_stdin) == expected);

    let strict = pawnstorm(
        &[
            "import",
            s(&zst),
            "--strict",
            "-o",
            s(&dir.path().join("x.psdb")),
        ],
        None,
    );
    assert!(!strict.status.success());
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(stderr.contains("evals.jsonl.zst:4:"), "{stderr}");
}

#[test]
fn long_jsonl_inputs_keep_their_order_and_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    // Enough lines (11 MB) for several of the importer's parallel batches (4 MB), bad ones
    // here and there, the last line among them.
    let bad_lines = [1, 4096, 8192, 8193, 16_385, 20_000, 40_001, 60_000];
    let mut text = String::new();
    for line in 1..=60_000i32 {
        if bad_lines.contains(&line) {
            text.push_str("{\"fen\": \"not a fen\", \"evals\": []}\n");
        } else {
            // Every score in range: lines are told apart by their scores.
            let cp = format!("\"cp\": {}", line - 30_000);
            text.push_str(&eval_line("4k3/8/8/8/8/8/8/4K3 w - -", &[(30, &[&cp])]));
            text.push('\n');
        }
    }
    let path = dir.path().join("long.jsonl");
    std::fs::write(&path, &text).unwrap();
    let db = dir.path().join("long.psdb");
    let summary = ok(&["import", s(&path), "-o", s(&db)], None);
    for line in bad_lines {
        assert!(summary.contains(&format!("long.jsonl:{line}: ")), "{line}");
    }
    assert!(summary.contains("rejected 8 records"), "{summary}");
    let scores: Vec<i32> = records(&db)
        .iter()
        .map(|r| r.labels.score.unwrap())
        .collect();
    let expected: Vec<i32> = (1..=60_000)
        .filter(|line| !bad_lines.contains(line))
        .map(|line| line - 30_000)
        .collect();
    assert_eq!(scores, expected);
}
