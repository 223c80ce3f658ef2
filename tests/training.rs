//! Training features: the term coefficients rebuild the evaluation exactly (in Rust, and by
//! `examples/recompute_eval.py` from the `.npz` with numpy alone); planes hold the boards;
//! labels travel with them; each filter drops what it names.

use crate::common;

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::process::Command;

use common::{Rng, fixture, fixture_positions, read_fixture};
use pawnstorm::eval::coefficients::{coefficients, score};
use pawnstorm::eval::{Prepared, Weight, Weights, evaluate_with};
use pawnstorm::movegen::Board;

fn pawnstorm(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        .output()
        .expect("runs");
    assert!(
        output.status.success(),
        "pawnstorm {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Defaults moved by up to `spread` each way, within what the loader accepts.
fn random_weights(rng: &mut Rng, spread: i32) -> Weights {
    let values: Vec<Weight> = Weights::default()
        .values()
        .iter()
        .map(|w| Weight {
            mg: w.mg + rng.below(2 * spread as usize + 1) as i32 - spread,
            eg: w.eg + rng.below(2 * spread as usize + 1) as i32 - spread,
        })
        .collect();
    let weights = Weights::from_values(&values).expect("count");
    assert!(weights.sum_bounds().fit_i32());
    weights
}

#[test]
fn coefficients_rebuild_every_fixture_score_under_any_weights() {
    let positions = fixture_positions();
    assert!(positions.len() > 5_000, "{}", positions.len());
    let mut rng = Rng(0xc0ef);
    let mut weight_sets = vec![Weights::default()];
    for spread in [20, 200] {
        weight_sets.push(random_weights(&mut rng, spread));
    }
    // A set where eg signs flip, so Black's scale factor is the one picked.
    let mut negated = Weights::default().values();
    for w in &mut negated {
        w.eg = -w.eg / 2;
    }
    weight_sets.push(Weights::from_values(&negated).expect("count"));
    let mut row = vec![0i16; Weights::COUNT];
    for weights in weight_sets {
        let prepared = Prepared::new(weights);
        let values = prepared.weights.values();
        for position in &positions {
            row.fill(0);
            let extras = coefficients(&prepared, &position.boards(), &mut row);
            assert_eq!(
                score(&values, &row, &extras),
                evaluate_with(&prepared, position),
                "{}",
                pawnstorm::position::fen::write_fen(position)
            );
        }
    }
}

/// An array of an `.npz`: its dtype text, shape and raw bytes.
struct Array {
    descr: String,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl Array {
    fn u64s(&self) -> Vec<u64> {
        assert_eq!(self.descr, "<u8");
        self.bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
    fn i32s(&self) -> Vec<i32> {
        assert_eq!(self.descr, "<i4");
        self.bytes
            .chunks_exact(4)
            .map(|c| i32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()
    }
    fn f32s(&self) -> Vec<f32> {
        assert_eq!(self.descr, "<f4");
        self.bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().expect("4 bytes")))
            .collect()
    }
    fn i64s(&self) -> Vec<i64> {
        assert_eq!(self.descr, "<i8");
        self.bytes
            .chunks_exact(8)
            .map(|c| i64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect()
    }
}

/// Reads every array of an `.npz` (a reader of its own: zip entries, `.npy` headers).
fn read_npz(path: &Path) -> HashMap<String, Array> {
    let file = std::fs::File::open(path).expect("open npz");
    let mut archive = zip::ZipArchive::new(file).expect("a zip archive");
    let mut arrays = HashMap::new();
    for i in 0..archive.len() {
        let mut entry = archive.by_index(i).expect("entry");
        let name = entry.name().expect("name").to_string();
        let mut data = Vec::new();
        entry.read_to_end(&mut data).expect("read");
        assert_eq!(&data[..8], b"\x93NUMPY\x01\x00", "{name}");
        let header_len = u16::from_le_bytes([data[8], data[9]]) as usize;
        let header = std::str::from_utf8(&data[10..10 + header_len]).expect("ascii");
        let field = |key: &str| {
            let start = header.find(key).expect("key") + key.len();
            header[start..].trim_start().to_string()
        };
        let descr = field("'descr':");
        let descr = descr[1..].split('\'').next().expect("descr").to_string();
        let shape = field("'shape':");
        let shape: Vec<usize> = shape[1..shape.find(')').expect("tuple")]
            .split(',')
            .filter(|s| !s.trim().is_empty())
            .map(|s| s.trim().parse().expect("dimension"))
            .collect();
        let bytes = data[10 + header_len..].to_vec();
        arrays.insert(
            name.trim_end_matches(".npy").to_string(),
            Array {
                descr,
                shape,
                bytes,
            },
        );
    }
    arrays
}

/// A DB with every label: an EPD of positions with results, scores, games and plies.
fn labelled_db(dir: &Path) -> (String, Vec<String>) {
    let mut lines = Vec::new();
    let text = read_fixture("texel/labeled-from-fixture-pgns.epd");
    // The texel positions are quiet and never in check: a few that are go first.
    let in_check = [
        "4k3/8/8/8/8/8/8/4K2r w - - c9 \"0-1\";",
        "4k3/8/8/8/1b6/8/8/4K3 w - - c9 \"1/2-1/2\";",
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - c9 \"0-1\";",
        "4k3/5P2/8/8/8/8/8/6K1 b - - c9 \"1-0\";",
        "r1bqkbnr/pppp1Qpp/2n5/4p3/2B1P3/8/PPPP1PPP/RNB1K1NR b KQkq - c9 \"1-0\";",
    ];
    let texel = in_check.into_iter().chain(text.lines()).take(3000);
    for (i, line) in texel.enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let mut epd = fields[..4].join(" ");
        // Every 11th position goes without a result and every 7th without a score.
        if i % 11 != 0 {
            let result = line.split(" c9 ").nth(1).expect("c9").trim_end_matches(';');
            epd.push_str(&format!(" c9 {result};"));
        }
        if i % 7 != 0 {
            epd.push_str(&format!(" ce {};", (i as i32 * 37) % 900 - 450));
        }
        epd.push_str(&format!(" game {}; ply {};", i / 40, i % 40));
        lines.push(epd);
    }
    let epd = dir.join("labelled.epd");
    std::fs::write(&epd, lines.join("\n") + "\n").expect("write");
    let db = dir.join("labelled.psdb");
    pawnstorm(&[
        "import",
        epd.to_str().expect("utf-8"),
        "-o",
        db.to_str().expect("utf-8"),
    ]);
    (db.to_str().expect("utf-8").to_string(), lines)
}

/// The position of an EPD line of [`labelled_db`].
fn board_of(line: &str) -> Board {
    let fen: Vec<&str> = line.split_whitespace().take(4).collect();
    Board::from_fen(&format!("{} 0 1", fen.join(" "))).expect("fen")
}

/// `kept` equals `expected`, reported by count and first difference (not 3,000 numbers).
fn assert_rows(kept: &[u64], expected: &[u64], what: &str) {
    let first = kept.iter().zip(expected).position(|(a, b)| a != b);
    assert!(
        kept.len() == expected.len() && first.is_none(),
        "{what}: {} rows kept, {} expected, first difference at {first:?}",
        kept.len(),
        expected.len()
    );
}

#[test]
fn recompute_script_gives_eval_output_dense_and_sparse() {
    let Some(python) = common::python_with_numpy() else {
        return;
    };
    let dir = tempfile::tempdir().expect("dir");
    let input = fixture("epd/sts.epd");
    let scores = dir.path().join("scores.csv");
    pawnstorm(&["eval", &input, "-o", scores.to_str().expect("utf-8")]);
    let expected = std::fs::read_to_string(&scores).expect("scores");
    assert!(expected.lines().count() > 1000);
    for sparse in [false, true] {
        let npz = dir.path().join(format!("terms-{sparse}.npz"));
        let mut args = vec![
            "features",
            &input,
            "--kind",
            "terms",
            "-o",
            npz.to_str().expect("utf-8"),
        ];
        if sparse {
            args.push("--sparse");
        }
        pawnstorm(&args);
        let output = Command::new(&python)
            .arg(format!(
                "{}/examples/recompute_eval.py",
                env!("CARGO_MANIFEST_DIR")
            ))
            .arg(&npz)
            .output()
            .expect("python3 runs");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            expected,
            "sparse {sparse}"
        );
    }
}

#[test]
fn planes_hold_the_boards_and_labels_travel_along() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, lines) = labelled_db(dir.path());
    let packed = dir.path().join("planes.npz");
    let unpacked = dir.path().join("unpacked.npz");
    pawnstorm(&[
        "features",
        &db,
        "--kind",
        "planes",
        "-o",
        packed.to_str().expect("utf-8"),
    ]);
    pawnstorm(&[
        "features",
        &db,
        "--kind",
        "planes",
        "--unpacked",
        "-o",
        unpacked.to_str().expect("utf-8"),
    ]);
    let a = read_npz(&packed);
    let b = read_npz(&unpacked);
    let n = lines.len();
    assert_eq!(a["planes"].shape, [n, 12]);
    assert_eq!(b["planes"].shape, [n, 12, 8, 8]);
    assert_eq!(a["masks"].shape[0], n);
    let planes = a["planes"].u64s();
    for (i, line) in lines.iter().enumerate() {
        let board = board_of(line);
        let position = board.position();
        for (plane, &bits) in planes[i * 12..i * 12 + 12].iter().enumerate() {
            let color = pawnstorm::Color::ALL[plane / 6];
            let kind = pawnstorm::PieceType::ALL[plane % 6];
            assert_eq!(
                bits,
                (position.piece_type(kind) & position.color(color)).0,
                "row {i} plane {plane}"
            );
            for square in 0..64 {
                let byte = b["planes"].bytes[((i * 12 + plane) * 64) + square];
                assert_eq!(byte as u64, bits >> square & 1);
            }
        }
        assert_eq!(
            a["stm"].bytes[i],
            (position.side_to_move() == pawnstorm::Color::Black) as u8
        );
    }
    // Masks, packed and unpacked, agree bit for bit.
    let masks = a["masks"].u64s();
    for (k, &mask) in masks.iter().enumerate() {
        for square in 0..64 {
            assert_eq!(b["masks"].bytes[k * 64 + square] as u64, mask >> square & 1);
        }
    }
    // Labels: as written into the EPD.
    let result = a["result"].f32s();
    let score = a["score"].i32s();
    let game = a["game"].i64s();
    let ply = a["ply"].i32s();
    for (i, line) in lines.iter().enumerate() {
        let expected_result = if line.contains("\"1-0\"") {
            1.0
        } else if line.contains("\"0-1\"") {
            0.0
        } else if line.contains("\"1/2-1/2\"") {
            0.5
        } else {
            f32::NAN
        };
        assert!(
            result[i] == expected_result || (result[i].is_nan() && expected_result.is_nan()),
            "row {i}: {} {line}",
            result[i]
        );
        // `ce` is the side to move's; the file's score is White's.
        let black = line.split_whitespace().nth(1) == Some("b");
        let expected_score = match line.split(" ce ").nth(1) {
            Some(rest) => {
                let ce: i32 = rest
                    .split(';')
                    .next()
                    .expect("ce")
                    .trim()
                    .parse()
                    .expect("ce");
                if black { -ce } else { ce }
            }
            None => i32::MIN,
        };
        assert_eq!(score[i], expected_score, "row {i}: {line}");
        assert_eq!(game[i], (i / 40) as i64);
        assert_eq!(ply[i], (i % 40) as i32);
    }
    assert_rows(
        &a["index"].u64s(),
        &(0..n as u64).collect::<Vec<_>>(),
        "index",
    );
}

/// Runs `features --kind planes` with `filter` and returns the DB rows kept.
fn kept_rows(db: &str, dir: &Path, filter: &[&str]) -> (Vec<u64>, String) {
    let out = dir.join("filtered.npz");
    let mut args = vec![
        "features",
        db,
        "--kind",
        "planes",
        "-o",
        out.to_str().expect("utf-8"),
    ];
    args.extend_from_slice(filter);
    let summary = pawnstorm(&args);
    (read_npz(&out)["index"].u64s(), summary)
}

#[test]
fn each_filter_drops_what_it_names() {
    let dir = tempfile::tempdir().expect("dir");
    let (db, lines) = labelled_db(dir.path());
    let boards: Vec<Board> = lines.iter().map(|line| board_of(line)).collect();
    let all: Vec<u64> = (0..lines.len() as u64).collect();
    let expect = |keep: &dyn Fn(usize) -> bool| -> Vec<u64> {
        all.iter().copied().filter(|&i| keep(i as usize)).collect()
    };
    let cases: Vec<(Vec<&str>, Vec<u64>, &str)> = vec![
        (
            vec!["--skip-check"],
            expect(&|i| !boards[i].in_check()),
            "--skip-check",
        ),
        (
            vec!["--require-score"],
            expect(&|i| i % 7 != 0),
            "--require-score",
        ),
        (
            vec!["--require-result"],
            expect(&|i| i % 11 != 0),
            "--require-result",
        ),
        (
            vec!["--skip-plies", "10"],
            expect(&|i| i % 40 >= 10),
            "--skip-plies",
        ),
        (
            vec!["--pieces", "10..20"],
            expect(&|i| {
                let n = boards[i].position().occupied().0.count_ones();
                (10..=20).contains(&n)
            }),
            "--pieces",
        ),
    ];
    for (filter, expected, name) in cases {
        let (kept, summary) = kept_rows(&db, dir.path(), &filter);
        assert!(kept.len() < lines.len() && !kept.is_empty(), "{filter:?}");
        assert_rows(&kept, &expected, &format!("{filter:?}"));
        let dropped = lines.len() - kept.len();
        assert!(
            summary.contains(&format!("{name} {dropped}")),
            "{filter:?}: {summary}"
        );
    }
    // Quiet positions: none in check, and none where a capture wins material outright.
    let (kept, summary) = kept_rows(&db, dir.path(), &["--quiet-only"]);
    assert!(
        kept.len() < lines.len() && kept.len() > lines.len() / 3,
        "{summary}"
    );
    let mut evaluator = pawnstorm::eval::Evaluator::new(Prepared::default(), 1 << 10);
    for &i in &kept {
        let board = &boards[i as usize];
        assert!(!board.in_check());
        assert!(pawnstorm::export::filters::is_quiet(board, &mut evaluator));
    }
    // Filters combine: a row dropped by one is counted once, under the first.
    let (both, summary) = kept_rows(&db, dir.path(), &["--require-score", "--require-result"]);
    assert_rows(
        &both,
        &expect(&|i| i % 7 != 0 && i % 11 != 0),
        "two filters",
    );
    assert!(
        summary.contains(&format!("dropped {}", lines.len() - both.len())),
        "{summary}"
    );
}

#[test]
fn terms_files_name_their_weights_and_refuse_bad_options() {
    let dir = tempfile::tempdir().expect("dir");
    let input = fixture("epd/wac.epd");
    let npz = dir.path().join("t.npz");
    pawnstorm(&[
        "features",
        &input,
        "--kind",
        "terms",
        "-o",
        npz.to_str().expect("utf-8"),
    ]);
    let arrays = read_npz(&npz);
    assert_eq!(arrays["weights"].shape, [Weights::COUNT, 2]);
    assert_eq!(arrays["weight_names"].shape, [Weights::COUNT]);
    let flat = arrays["weights"].i32s();
    let defaults = Weights::default().values();
    for (i, w) in defaults.iter().enumerate() {
        assert_eq!((flat[2 * i], flat[2 * i + 1]), (w.mg, w.eg));
    }
    let fails = |args: &[&str], message: &str| {
        let output = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
            .args(args)
            .output()
            .expect("runs");
        assert!(!output.status.success(), "{args:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    };
    let out = dir.path().join("x.npz");
    let out = out.to_str().expect("utf-8");
    fails(
        &["features", &input, "--kind", "terms", "-o", "x.npy"],
        "write .npz",
    );
    fails(
        &[
            "features", &input, "--kind", "planes", "--sparse", "-o", out,
        ],
        "--sparse is for --kind terms",
    );
    fails(
        &[
            "features", &input, "--kind", "terms", "--pieces", "9..3", "-o", out,
        ],
        "9 is more than 3",
    );
    fails(
        &["features", &input, "--skip-check", "-o", "m.npy"],
        "filters are for --kind terms, planes and nnue",
    );
    assert!(!Path::new(out).exists());
}
