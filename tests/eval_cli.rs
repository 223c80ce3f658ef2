//! `pawnstorm eval` and `pawnstorm weights` end to end: scores equal the library's
//! `evaluate`, every output form (CSV, plain and structured .npy, histogram, --fen table)
//! and option (--pov, --terms, --weights, --scalar, --threads), and bad input.

use crate::common;

use std::path::Path;

use pawnstorm::eval::evaluate;
use pawnstorm::position::labels::parse_line;

use common::{fails, fixture, npy_scores, pawnstorm};

fn run(args: &[&str]) -> (String, String) {
    let output = pawnstorm(args);
    let stdout = String::from_utf8_lossy(&output.stdout).to_string();
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    (stdout, stderr)
}

/// (score of each CSV row) after checking the header and the index column.
fn csv_scores(path: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(path).expect("csv written");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("index,score"));
    lines
        .enumerate()
        .map(|(i, line)| {
            let (index, score) = line.split_once(',').expect("two columns");
            assert_eq!(index.parse::<usize>().unwrap(), i);
            score.parse().unwrap()
        })
        .collect()
}

#[test]
fn scores_equal_the_library_in_every_form() {
    let input = fixture("epd/wac.epd");
    let positions: Vec<_> = std::fs::read_to_string(&input)
        .unwrap()
        .lines()
        .filter_map(|l| parse_line(l).unwrap().map(|r| r.position))
        .collect();
    let expected: Vec<i32> = positions.iter().map(evaluate).collect();
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("s.csv");
    let (_, summary) = run(&["eval", &input, "-o", csv.to_str().unwrap()]);
    assert!(
        summary.contains("300 positions") && summary.contains("positions/s"),
        "{summary}"
    );
    assert_eq!(csv_scores(&csv), expected);

    let npy = dir.path().join("s.npy");
    run(&[
        "eval",
        &input,
        "-o",
        npy.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    assert_eq!(npy_scores(&npy), expected);

    // The scalar path writes the same file; so does a DB input.
    let scalar = dir.path().join("scalar.npy");
    run(&["--scalar", "eval", &input, "-o", scalar.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(&scalar).unwrap(),
        std::fs::read(&npy).unwrap()
    );
    let db = dir.path().join("wac.psdb");
    run(&["import", &input, "-o", db.to_str().unwrap()]);
    let from_db = dir.path().join("db.npy");
    run(&[
        "eval",
        db.to_str().unwrap(),
        "-o",
        from_db.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&from_db).unwrap(),
        std::fs::read(&npy).unwrap()
    );

    // The side to move's view turns Black-to-move scores round.
    let stm = dir.path().join("stm.csv");
    run(&["eval", &input, "-o", stm.to_str().unwrap(), "--pov", "stm"]);
    let turned: Vec<i32> = positions
        .iter()
        .zip(&expected)
        .map(|(p, &s)| {
            if p.side_to_move() == pawnstorm::Color::Black {
                -s
            } else {
                s
            }
        })
        .collect();
    assert!(
        positions
            .iter()
            .any(|p| p.side_to_move() == pawnstorm::Color::Black)
    );
    assert_eq!(csv_scores(&stm), turned);

    // Without -o: the summary and a histogram that counts every position.
    let (histogram, _) = run(&["eval", db.to_str().unwrap()]);
    // Each bucket line: label, count, percentage, bar.
    let counted: u64 = histogram
        .lines()
        .skip(1)
        .filter_map(|l| {
            let fields: Vec<&str> = l.split_whitespace().collect();
            let percent = fields.iter().position(|f| f.ends_with('%'))?;
            fields[percent - 1].parse::<u64>().ok()
        })
        .sum();
    assert_eq!(counted, 300, "{histogram}");
}

/// CSV rows of `index,score,win,draw,loss` after checking the header.
fn csv_wdl_rows(path: &Path) -> Vec<[i32; 4]> {
    let text = std::fs::read_to_string(path).expect("csv written");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("index,score,win,draw,loss"));
    lines
        .map(|line| {
            let values: Vec<i32> = line
                .split(',')
                .skip(1)
                .map(|v| v.parse().unwrap())
                .collect();
            values.try_into().expect("four values")
        })
        .collect()
}

#[test]
fn wdl_columns_follow_the_model_from_the_scores_point_of_view() {
    let input = fixture("epd/wac.epd");
    let positions: Vec<_> = std::fs::read_to_string(&input)
        .unwrap()
        .lines()
        .filter_map(|l| parse_line(l).unwrap().map(|r| r.position))
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let white = dir.path().join("white.csv");
    let stm = dir.path().join("stm.csv");
    run(&["eval", &input, "-o", white.to_str().unwrap(), "--wdl"]);
    run(&[
        "eval",
        &input,
        "-o",
        stm.to_str().unwrap(),
        "--wdl",
        "--pov",
        "stm",
    ]);
    let (white, stm) = (csv_wdl_rows(&white), csv_wdl_rows(&stm));
    assert_eq!(white.len(), positions.len());
    for ((position, w), s) in positions.iter().zip(&white).zip(&stm) {
        let black = position.side_to_move() == pawnstorm::Color::Black;
        let material = pawnstorm::eval::wdl::material_of(position);
        let expected = pawnstorm::eval::wdl::wdl(s[0], material);
        assert_eq!(
            &s[1..],
            &[expected.win, expected.draw, expected.loss].map(|v| v as i32)
        );
        // White's view: the same outcome, seen from the other side when Black is to move.
        let seen = if black { expected.flipped() } else { expected };
        assert_eq!(&w[1..], &[seen.win, seen.draw, seen.loss].map(|v| v as i32));
        assert_eq!(w[0], if black { -s[0] } else { s[0] });
    }
    // The columns carry information: both winning and losing rows occur.
    assert!(white.iter().any(|r| r[1] > 600) && white.iter().any(|r| r[3] > 600));
    // --wdl needs a table to go into.
    fails(&["eval", &input, "--wdl"]);
}

#[test]
fn terms_columns_add_up_and_name_every_term() {
    let input = fixture("epd/sts.epd");
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("terms.csv");
    run(&["eval", &input, "--terms", "-o", csv.to_str().unwrap()]);
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(&header[..5], ["index", "score", "phase", "scale", "rule"]);
    for term in pawnstorm::eval::terms::Term::ALL {
        for part in ["mg", "eg", "final"] {
            assert!(header.contains(&format!("{}_{part}", term.name()).as_str()));
        }
    }
    let plain = dir.path().join("plain.csv");
    run(&["eval", &input, "-o", plain.to_str().unwrap()]);
    let scores = csv_scores(&plain);
    let mut rows = 0;
    for (line, &score) in lines.zip(&scores) {
        let values: Vec<i32> = line.split(',').map(|v| v.parse().unwrap()).collect();
        assert_eq!(values[1], score);
        let (phase, scale, rule) = (values[2], values[3], values[4]);
        assert!((0..=24).contains(&phase) && (0..=64).contains(&scale) && rule == 0);
        // The score is the taper of the summed terms when no endgame rule applies.
        let mg: i32 = values[5..].iter().step_by(3).sum();
        let eg: i32 = values[6..].iter().step_by(3).sum();
        assert_eq!(
            pawnstorm::eval::endgame::taper(mg, eg, phase, scale),
            score,
            "{line}"
        );
        rows += 1;
    }
    assert_eq!(rows, 1500);
}

#[test]
fn fen_prints_every_term_and_the_final_score() {
    let fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3";
    let (table, _) = run(&["eval", "--fen", fen]);
    for term in pawnstorm::eval::terms::Term::ALL {
        assert!(
            table.contains(term.name()),
            "{} missing:\n{table}",
            term.name()
        );
    }
    let score = evaluate(&pawnstorm::position::fen::parse_fen(fen).unwrap());
    assert!(
        table.contains(&format!("[{score} cp]")),
        "final score {score} missing:\n{table}"
    );
    assert!(table.contains("Phase 24/24"));

    let error = fails(&["eval", "--fen", "8/8/8/8/8/8/8/8 w - - 0 1"]);
    assert!(error.contains("king"), "{error}");
    let error = fails(&[
        "eval",
        "--fen",
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w - - 0 1",
    ]);
    assert!(
        error.contains('^'),
        "a caret under the bad character: {error}"
    );
}

#[test]
fn weights_files_round_trip_change_scores_and_report_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let defaults = dir.path().join("defaults.txt");
    run(&["weights", "-o", defaults.to_str().unwrap()]);
    let text = std::fs::read_to_string(&defaults).unwrap();
    let tempo = pawnstorm::eval::Weights::default().tempo;
    assert!(
        text.contains(&format!("\ntempo {} {}\n", tempo.mg, tempo.eg))
            && text.contains("psqt.knight.e4 "),
        "the defaults, one line per weight:\n{text}"
    );
    let (printed, _) = run(&["weights", "--weights", defaults.to_str().unwrap()]);
    assert_eq!(printed, text, "reading and writing give the same file");

    let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    let no_tempo = dir.path().join("no-tempo.txt");
    std::fs::write(&no_tempo, "# no tempo bonus\ntempo 0 0\n").unwrap();
    let (with, _) = run(&["eval", "--fen", start]);
    let (without, _) = run(&[
        "eval",
        "--fen",
        start,
        "--weights",
        no_tempo.to_str().unwrap(),
    ]);
    // The start position is symmetric and at full phase: its score is the middlegame tempo.
    assert!(with.contains(&format!("[{} cp]", tempo.mg)), "{with}");
    assert!(without.contains("[0 cp]"), "{without}");

    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "tempo 1 2\nmobility.dragon 3 4\n").unwrap();
    let error = fails(&["eval", "--fen", start, "--weights", bad.to_str().unwrap()]);
    assert!(
        error.contains("bad.txt:2") && error.contains("mobility.dragon"),
        "{error}"
    );
    let error = fails(&["weights", "--weights", "/no/such/weights.txt"]);
    assert!(error.contains("/no/such/weights.txt"), "{error}");
}

#[test]
fn bad_inputs_are_errors_and_nothing_is_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out.npy");
    let error = fails(&["eval", "/no/such/file.epd", "-o", out.to_str().unwrap()]);
    assert!(error.contains("/no/such/file.epd"), "{error}");
    assert!(!out.exists());
    let error = fails(&[
        "eval",
        &fixture("epd/wac.epd"),
        "-o",
        dir.path().join("x.txt").to_str().unwrap(),
    ]);
    assert!(error.contains("x.txt") && error.contains(".npy"), "{error}");
    // A file with a bad line: the good records are scored, the bad one reported.
    let mixed = fixture("bad/mixed-lines.epd");
    let csv = dir.path().join("mixed.csv");
    let (_, stderr) = run(&["eval", &mixed, "-o", csv.to_str().unwrap()]);
    assert!(stderr.contains("mixed-lines.epd:"), "{stderr}");
    assert!(!csv_scores(&csv).is_empty());
}
