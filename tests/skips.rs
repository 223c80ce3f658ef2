//! The trainers' skip rules and `export --mix`, end to end through the binary, on
//! hand-made positions whose answers are known: a capture, a promotion, a check, a lopsided
//! score, the move found from the game's next row, WDL flattening of a skewed input,
//! seeds, interleaving rates, duplicates.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{ok, pawnstorm, read_fixture, s};

/// Imports EPD `text` into a DB under `dir`.
fn db_of(dir: &Path, name: &str, text: &str) -> PathBuf {
    let epd = dir.join(format!("{name}.epd"));
    std::fs::write(&epd, text).unwrap();
    let db = dir.join(format!("{name}.psdb"));
    ok(&["import", s(&epd), "-o", s(&db)]);
    db
}

/// Exports `db` as EPD with `options`; the output's lines.
fn export(db: &Path, options: &[&str]) -> Vec<String> {
    let out = db.with_extension(format!("out{}.epd", options.join("").len()));
    let mut args = vec!["export", s(db), "-o", s(&out)];
    args.extend_from_slice(options);
    ok(&args);
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The board field of each line.
fn boards(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| l.split(' ').next().unwrap().to_string())
        .collect()
}

/// Distinct positions (the fixture's first `n`), as EPD position fields.
fn distinct(n: usize) -> Vec<String> {
    read_fixture("texel/labeled-from-fixture-pgns.epd")
        .lines()
        .take(n)
        .map(|l| l.split(' ').take(4).collect::<Vec<_>>().join(" "))
        .collect()
}

const QUIET: &str = "4k3/8/8/3p4/4P3/8/8/4K3 w - -";

#[test]
fn each_rule_drops_the_positions_it_names() {
    let dir = tempfile::tempdir().unwrap();
    let text = [
        // 0: the move played captures.
        format!("{QUIET} move e4d5; ce 10; c9 \"1/2-1/2\";"),
        // 1: a quiet move.
        "4k3/8/8/3p4/4P3/8/8/4K3 w - - move e4e5; ce 20; c9 \"1/2-1/2\";".to_string(),
        // 2: a promotion.
        "4k3/P7/8/8/8/8/8/4K3 w - - move a7a8q; ce 900; c9 \"1-0\";".to_string(),
        // 3: en passant.
        "4k3/8/8/3pP3/8/8/8/4K3 w - d6 move e5d6; ce 30; c9 \"1-0\";".to_string(),
        // 4: in check (a rook on the king's file), quiet move.
        "4k3/8/8/8/8/8/8/4K2r w - - move e1d2; ce -400; c9 \"0-1\";".to_string(),
        // 5: a lopsided score, no move known.
        "4k3/8/8/8/8/8/8/QQ2K3 w - - ce 2500; c9 \"1-0\";".to_string(),
    ]
    .join("\n");
    let db = db_of(dir.path(), "hand", &text);
    assert_eq!(export(&db, &[]).len(), 6);
    // Each line is told by its score (White to move everywhere: `ce` as written).
    let scores = [
        "ce 10;", "ce 20;", "ce 900;", "ce 30;", "ce -400;", "ce 2500;",
    ];
    let kept = |options: &[&str]| -> Vec<usize> {
        export(&db, options)
            .iter()
            .map(|line| scores.iter().position(|s| line.contains(s)).unwrap())
            .collect()
    };
    assert_eq!(kept(&["--skip-capture"]), vec![1, 4, 5]);
    assert_eq!(kept(&["--skip-check"]), vec![0, 1, 2, 3, 5]);
    assert_eq!(kept(&["--skip-capture", "--skip-check"]), vec![1, 5]);
    assert_eq!(kept(&["--max-score", "900"]), vec![0, 1, 2, 3, 4]);
    assert_eq!(kept(&["--max-score", "399"]), vec![0, 1, 3]);
    // The summary counts each rule.
    let out = dir.path().join("summary.epd");
    let stderr = ok(&[
        "export",
        s(&db),
        "-o",
        s(&out),
        "--skip-capture",
        "--skip-check",
        "--max-score",
        "1000",
    ]);
    assert!(
        stderr.contains("dropped 5 (--max-score 1, --skip-check 1, --skip-capture 3)"),
        "{stderr}"
    );
}

#[test]
fn without_a_move_the_games_next_row_tells() {
    let dir = tempfile::tempdir().unwrap();
    // One game, no move labels: ply 0 -> 1 captures (d5 disappears), ply 1 -> 2 is a king
    // move, ply 2 is the game's last (its move is unknown: kept). Then a second game whose
    // first position looks like a capture follows, but is another game: not a capture.
    let text = "\
4k3/8/8/3p4/4P3/8/8/4K3 w - - game 1; ply 0;
4k3/8/8/3P4/8/8/8/4K3 b - - game 1; ply 1;
3k4/8/8/3P4/8/8/8/4K3 w - - game 1; ply 2;
3k4/8/8/8/8/8/8/4K3 b - - game 2; ply 0;
";
    let db = db_of(dir.path(), "game", text);
    let out = boards(&export(&db, &["--skip-capture"]));
    assert_eq!(
        out,
        vec![
            "4k3/8/8/3P4/8/8/8/4K3",
            "3k4/8/8/3P4/8/8/8/4K3",
            "3k4/8/8/8/8/8/8/4K3"
        ]
    );
    // The same through the loader's reader (a text input read as a stream), via --mix.
    let epd = dir.path().join("game.epd");
    let mixed = dir.path().join("mixed.epd");
    ok(&[
        "export",
        "--mix",
        s(&epd),
        "-o",
        s(&mixed),
        "--skip-capture",
    ]);
    let lines: Vec<String> = std::fs::read_to_string(&mixed)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(boards(&lines), out);
}

/// `n` positions with results 70% draws, 20% White wins, 10% Black wins.
fn skewed(n: usize) -> String {
    let positions = distinct(500);
    (0..n)
        .map(|i| {
            let result = match i % 10 {
                0 => "0-1",
                1 | 2 => "1-0",
                _ => "1/2-1/2",
            };
            format!(
                "{} c9 \"{result}\";\n",
                positions[(i * 7) % positions.len()]
            )
        })
        .collect()
}

fn result_shares(lines: &[String]) -> [f64; 3] {
    let mut counts = [0usize; 3];
    for line in lines {
        let i = if line.contains("\"1-0\"") {
            0
        } else if line.contains("\"0-1\"") {
            2
        } else {
            1
        };
        counts[i] += 1;
    }
    let total = lines.len() as f64;
    counts.map(|c| c as f64 / total)
}

#[test]
fn wdl_skipping_flattens_a_skewed_input_and_the_seed_decides() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_of(dir.path(), "skewed", &skewed(6000));
    let before = result_shares(&export(&db, &[]));
    assert!((before[1] - 0.7).abs() < 0.01, "{before:?}");
    let flat = export(&db, &["--wdl-skip", "--skip-seed", "1"]);
    let shares = result_shares(&flat);
    for share in shares {
        assert!((share - 1.0 / 3.0).abs() < 0.03, "{shares:?}");
    }
    // The rarest class (Black wins, 600) keeps all: about 1800 stay.
    assert!((1600..2000).contains(&flat.len()), "{}", flat.len());
    // Same seed, any thread count: the same rows; another seed: others.
    let again = export(
        &db,
        &[
            "--wdl-skip",
            "--skip-seed",
            "1",
            "--threads",
            "1",
            "--random-skip",
            "0",
        ],
    );
    assert_eq!(again, flat);
    let other = export(&db, &["--wdl-skip", "--skip-seed", "2"]);
    assert_ne!(other, flat);
    // The streaming reader (--mix) counts the shares as it goes: flat too.
    let epd = dir.path().join("skewed.epd");
    let mixed = dir.path().join("mixed.epd");
    ok(&["export", "--mix", s(&epd), "-o", s(&mixed), "--wdl-skip"]);
    let lines: Vec<String> = std::fs::read_to_string(&mixed)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    let shares = result_shares(&lines);
    for share in shares {
        assert!((share - 1.0 / 3.0).abs() < 0.05, "{shares:?}");
    }
}

#[test]
fn random_skipping_keeps_one_in_n_plus_one_the_same_whatever_the_threads() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_of(dir.path(), "many", &skewed(8000));
    let one = export(
        &db,
        &["--random-skip", "3", "--threads", "1", "--skip-seed", "9"],
    );
    let two = export(
        &db,
        &["--random-skip", "3", "--threads", "2", "--skip-seed", "9"],
    );
    assert_eq!(one, two);
    // Keeps 1/4: 2000 expected, a standard deviation of about 39.
    assert!((1850..2150).contains(&one.len()), "{}", one.len());
    let piece = export(&db, &["--piece-skip", "--threads", "2"]);
    let piece_again = export(&db, &["--piece-skip", "--threads", "1"]);
    assert_eq!(piece, piece_again);
    assert!(piece.len() < 8000);
}

#[test]
fn unique_removes_exactly_the_repeats_keeping_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let positions = distinct(50);
    // Position i appears 1 + i % 4 times, spread over the file, with different labels (a
    // duplicate is the position, whatever its labels).
    let mut lines = Vec::new();
    for round in 0..4 {
        for (i, p) in positions.iter().enumerate() {
            if round <= i % 4 {
                lines.push(format!("{p} ce {};", round * 100 + i));
            }
        }
    }
    let db = db_of(dir.path(), "repeats", &(lines.join("\n") + "\n"));
    let out = export(&db, &["--unique"]);
    assert_eq!(out.len(), 50);
    // The first occurrences: round 0, in order, so the scores are 0..50.
    for (i, line) in out.iter().enumerate() {
        assert!(line.contains(&format!("ce {i};")), "{line}");
    }
    // A position differing only in castling rights or side to move is another position.
    let text = "\
r3k3/8/8/8/8/8/8/4K3 w q - ce 1;
r3k3/8/8/8/8/8/8/4K3 w - - ce 2;
r3k3/8/8/8/8/8/8/4K3 b - - ce 3;
r3k3/8/8/8/8/8/8/4K3 w q - ce 4;
";
    let db = db_of(dir.path(), "castling", text);
    assert_eq!(export(&db, &["--unique"]).len(), 3);
    // Through --mix too (the streaming reader): the same positions as a DB and as text,
    // equal weights and sizes, so one round each; a position is given once across both.
    let repeats_db = dir.path().join("repeats.psdb");
    let repeats_epd = dir.path().join("repeats.epd");
    let mixed = dir.path().join("mixed.epd");
    ok(&[
        "export",
        "--mix",
        s(&repeats_epd),
        "--mix",
        s(&repeats_db),
        "-o",
        s(&mixed),
        "--unique",
    ]);
    let text = std::fs::read_to_string(&mixed).unwrap();
    let mut seen = HashMap::new();
    for line in text.lines() {
        let key: String = line.split(' ').take(4).collect::<Vec<_>>().join(" ");
        *seen.entry(key).or_insert(0) += 1;
    }
    assert_eq!(seen.len(), 50);
    assert!(seen.values().all(|&n| n == 1), "a position given twice");
}

#[test]
fn mixing_gives_each_input_its_weights_share() {
    let dir = tempfile::tempdir().unwrap();
    let positions = distinct(2500);
    // Input a (500 positions) tagged game 1, input b (2000) game 2.
    let a: String = positions[..500]
        .iter()
        .map(|p| format!("{p} game 1;\n"))
        .collect();
    let b: String = positions[500..]
        .iter()
        .map(|p| format!("{p} game 2;\n"))
        .collect();
    let a = db_of(dir.path(), "a", &a);
    let b_epd = dir.path().join("b.epd");
    std::fs::write(&b_epd, b).unwrap();
    let out = dir.path().join("mixed.epd");
    let arg_a = format!("{}=3", s(&a));
    let arg_b = format!("{}=1", s(&b_epd));
    let stderr = ok(&["export", "--mix", &arg_a, "--mix", &arg_b, "-o", s(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    let games: Vec<bool> = text.lines().map(|l| l.contains("game 1;")).collect();
    // b (the larger for its weight) read once gives all 2000; a about 6000 (12 rounds of
    // 500, the last one cut where b ends).
    let from_b = games.iter().filter(|g| !**g).count();
    assert_eq!(from_b, 2000, "{stderr}");
    assert!((5997..=6000).contains(&(games.len() - from_b)), "{stderr}");
    assert!(stderr.contains("rounds"), "{stderr}");
    // At every point of the stream a's share is 3/4, to within a position.
    let mut from_a = 0usize;
    for (i, &g) in games.iter().enumerate() {
        from_a += g as usize;
        let expected = 0.75 * (i + 1) as f64;
        assert!((from_a as f64 - expected).abs() <= 1.0, "{i}: {from_a}");
    }
    // Deterministic.
    let again = dir.path().join("again.epd");
    ok(&["export", "--mix", &arg_a, "--mix", &arg_b, "-o", s(&again)]);
    assert_eq!(std::fs::read(&again).unwrap(), text.as_bytes());
    // --unique does not undo the oversampling: a's repeats are later rounds, not
    // duplicates (a position given twice within one round would be).
    let unique = dir.path().join("unique.epd");
    let stderr = ok(&[
        "export",
        "--mix",
        &arg_a,
        "--mix",
        &arg_b,
        "-o",
        s(&unique),
        "--unique",
    ]);
    assert_eq!(std::fs::read(&unique).unwrap(), text.as_bytes(), "{stderr}");
    // A bad weight is refused with the text.
    let output = pawnstorm(&["export", "--mix", &format!("{}=0", s(&a)), "-o", s(&again)]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("=0"));
}
