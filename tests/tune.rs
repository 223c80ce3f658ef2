//! Texel tuning: the sparse rows rebuild the evaluation, the tuner recovers weights from
//! the scores they gave, the loss falls on the fixture games, and `pawnstorm tune` end to
//! end (a file `eval --weights` loads, frozen weights, bad options).

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output};

use assert_cmd::prelude::*;
use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::eval::coefficients::{self, Extras};
use pawnstorm::eval::endgame::Rule;
use pawnstorm::eval::{Prepared, Weight, Weights, evaluate_with};
use pawnstorm::position::labels::{Record, parse_line};
use pawnstorm::training::tune::model::{self, evals_and_results};
use pawnstorm::training::tune::optimise::scheduled_lr;
use pawnstorm::training::tune::{Dataset, LoadOptions, Tuner, fit_k, select_weights};

use common::{fixture, read_fixture};

const TEXEL: &str = "texel/labeled-from-fixture-pgns.epd";

fn records(relative: &str) -> Vec<Record> {
    read_fixture(relative)
        .lines()
        .filter_map(|line| parse_line(line).expect("fixture line"))
        .collect()
}

fn write_db(path: &Path, records: &[Record]) -> Database {
    let mut writer = DbWriter::create(path, 4096, Columns::NONE, false).expect("create");
    for record in records {
        writer.push(record).expect("push");
    }
    writer.finish().expect("finish");
    Database::open(path).expect("open")
}

/// The fixture games' positions, each labelled with the score `weights` give it.
fn scored_by(weights: &Weights, dir: &Path) -> Database {
    let prepared = Prepared::new(weights.clone());
    let scored: Vec<Record> = records(TEXEL)
        .into_iter()
        .map(|mut record| {
            record.labels.score = Some(evaluate_with(&prepared, &record.position));
            record.labels.result = None;
            record
        })
        .collect();
    write_db(&dir.join("scored.psdb"), &scored)
}

fn load(db: &Database, options: &LoadOptions) -> Dataset {
    let mut dataset = Dataset::default();
    dataset
        .add_db(db, 0, &Prepared::default(), options, &|_| {})
        .expect("loads");
    dataset
}

/// The fixture games' positions with their results, a tenth held out.
fn fixture_games(dir: &Path) -> Dataset {
    let db = write_db(&dir.join("games.psdb"), &records(TEXEL));
    let options = LoadOptions {
        needs_result: true,
        needs_score: false,
        holdout: 0.1,
        ..LoadOptions::default()
    };
    load(&db, &options)
}

fn scores_only(holdout: f64) -> LoadOptions {
    LoadOptions {
        needs_result: false,
        needs_score: true,
        holdout,
        ..LoadOptions::default()
    }
}

fn params(weights: &Weights) -> Vec<[f64; 2]> {
    weights
        .values()
        .iter()
        .map(|w| [w.mg as f64, w.eg as f64])
        .collect()
}

/// The tuner's weights and losses are the same bits on one thread as on two: the gradient
/// and the losses are float sums, and rayon's own fold and reduce group them by how the
/// workers split, which gave different weights for different `--threads` (and could from
/// run to run).
#[test]
fn tuning_does_not_depend_on_the_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut dataset = fixture_games(dir.path());
    dataset.set_targets(1.1, 1.0);
    let run = |threads: usize| -> (Vec<[f64; 2]>, Vec<u64>) {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a pool");
        pool.install(|| {
            let mut tuner = Tuner::new(&Weights::default(), vec![true; Weights::COUNT], 1.1, 5);
            let mut losses = Vec::new();
            for epoch in 0..3 {
                losses.push(tuner.epoch(&dataset.train, 4096, scheduled_lr(1.0, epoch, 3)));
                losses.push(tuner.loss(&dataset.held_out));
            }
            (
                tuner.params().to_vec(),
                losses.iter().map(|l| l.to_bits()).collect(),
            )
        })
    };
    let (one, one_losses) = run(1);
    let (two, two_losses) = run(2);
    assert_eq!(one_losses, two_losses, "losses by epoch");
    let differing = one
        .iter()
        .zip(&two)
        .filter(|(a, b)| a[0].to_bits() != b[0].to_bits() || a[1].to_bits() != b[1].to_bits())
        .count();
    assert_eq!(
        differing,
        0,
        "weights differing in some bit, of {}",
        one.len()
    );
}

/// Every kept row, turned back into dense counts, gives the evaluation exactly through
/// `coefficients::score`, and the tuner's unrounded model within the taper's rounding.
#[test]
fn rows_rebuild_the_evaluation() {
    let dir = tempfile::tempdir().unwrap();
    let db = scored_by(&Weights::default(), dir.path());
    let dataset = load(&db, &scores_only(0.3));
    let counts = dataset.counts;
    assert_eq!(counts.read, db.len());
    assert_eq!(counts.train + counts.held_out + counts.rule, counts.read);
    assert!(counts.rule > 0, "the fixture games reach rule endgames");
    let held = counts.held_out as f64 / (counts.train + counts.held_out) as f64;
    assert!((held - 0.3).abs() < 0.02, "{held}");
    let values = Weights::default().values();
    let params = params(&Weights::default());
    let mut checked = 0;
    for part in dataset.train.iter().chain(&dataset.held_out) {
        for i in 0..part.len() {
            let row = part.row(i);
            let mut dense = vec![0i16; Weights::COUNT];
            for entry in row.entries {
                assert_ne!(entry.count, 0);
                dense[entry.weight as usize] = entry.count;
            }
            let extras = Extras {
                phase: row.phase,
                scale: row.scale,
                rule: Rule::Terms,
                rule_score: 0,
            };
            let stored = part.score(i).expect("scored");
            assert_eq!(coefficients::score(&values, &dense, &extras), stored);
            let (eval, _, _) = model::evaluate(&params, &row);
            assert!((eval - stored as f64).abs() < 1.1, "{eval} vs {stored}");
            checked += 1;
        }
    }
    assert_eq!(checked as u64, counts.train + counts.held_out);
    let (entries, _) = dataset.size();
    let per_position = entries as f64 / checked as f64;
    assert!((20.0..120.0).contains(&per_position), "{per_position}");
}

/// Scores given by known weights (the defaults with seven non-table weights moved far),
/// the target their sigmoid alone: tuning those seven from the defaults, the rest frozen,
/// finds them again to within the scores' rounding.
#[test]
fn recovers_weights_from_the_scores_they_gave() {
    let changed: [(&str, Weight); 7] = [
        ("material.knight", Weight { mg: 390, eg: 250 }),
        ("bishop_pair", Weight { mg: 60, eg: 20 }),
        ("mobility.rook", Weight { mg: 7, eg: 1 }),
        ("tempo", Weight { mg: 35, eg: 20 }),
        ("doubled", Weight { mg: -30, eg: -5 }),
        ("rook_file.open", Weight { mg: 15, eg: 45 }),
        ("hanging", Weight { mg: 10, eg: 50 }),
    ];
    let names = Weights::names();
    let place = |name: &str| names.iter().position(|n| n == name).expect("a weight");
    let mut values = Weights::default().values();
    for (name, weight) in changed {
        assert_ne!(values[place(name)], weight);
        values[place(name)] = weight;
    }
    let target = Weights::from_values(&values).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let db = scored_by(&target, dir.path());
    let mut dataset = load(&db, &scores_only(0.1));
    dataset.set_targets(1.0, 0.0);

    let free: Vec<String> = changed.iter().map(|(n, _)| n.to_string()).collect();
    let trainable = select_weights(&free).unwrap();
    assert_eq!(trainable.iter().filter(|&&t| t).count(), 7);
    let mut tuner = Tuner::new(&Weights::default(), trainable, 1.0, 3);
    let before = tuner.loss(&dataset.train);
    for epoch in 0..40 {
        let lr = scheduled_lr(2.0, epoch, 40);
        tuner.epoch(&dataset.train, 4096, lr);
    }
    let after = tuner.loss(&dataset.train);
    assert!(after < before / 1000.0, "{before} -> {after}");
    assert!(tuner.loss(&dataset.held_out) < before / 1000.0);
    let tuned = tuner.weights().unwrap().values();
    for (name, weight) in changed {
        let got = tuned[place(name)];
        assert!(
            (got.mg - weight.mg).abs() <= 1 && (got.eg - weight.eg).abs() <= 1,
            "{name}: tuned {got:?}, generated with {weight:?}"
        );
    }
    // Frozen weights did not move.
    let defaults = Weights::default().values();
    for (i, name) in names.iter().enumerate() {
        if !free.contains(name) {
            assert_eq!(tuned[i], defaults[i], "{name}");
        }
    }

    // Every weight but the tables free (tables and material are collinear: a piece's
    // value is also the offset of its table), all from the defaults: the whole vector the
    // scores came from is found again.
    let frozen = select_weights(&["psqt".to_string()]).unwrap();
    let uses = dataset.training_uses();
    let trainable: Vec<bool> = (0..Weights::COUNT)
        .map(|i| !frozen[i] && uses[i] > 0)
        .collect();
    assert!(trainable.iter().filter(|&&t| t).count() > 70);
    let mut tuner = Tuner::new(&Weights::default(), trainable.clone(), 1.0, 4);
    for epoch in 0..100 {
        tuner.epoch(&dataset.train, 4096, scheduled_lr(2.0, epoch, 100));
    }
    let tuned = tuner.weights().unwrap().values();
    for (i, name) in names.iter().enumerate() {
        let (got, want) = (tuned[i], values[i]);
        if trainable[i] {
            assert!(
                (got.mg - want.mg).abs() <= 3 && (got.eg - want.eg).abs() <= 3,
                "{name}: tuned {got:?}, generated with {want:?}"
            );
        } else {
            assert_eq!(got, defaults[i], "{name}");
        }
    }
}

/// On the fixture games' results, K fits to a sane value and tuning every weight lowers
/// both the training and the held-out error (of the rounded weights written out).
#[test]
fn loss_falls_on_the_fixture_games() {
    let dir = tempfile::tempdir().unwrap();
    let mut dataset = fixture_games(dir.path());
    let start = params(&Weights::default());
    let fit = fit_k(&evals_and_results(&start, &dataset.train)).expect("K fits");
    assert!((0.3..3.0).contains(&fit.k), "{fit:?}");
    assert!(fit.loss < 0.9 * fit.baseline, "{fit:?}");
    dataset.set_targets(fit.k, 1.0);
    let mut tuner = Tuner::new(&Weights::default(), vec![true; Weights::COUNT], fit.k, 5);
    let before = (tuner.loss(&dataset.train), tuner.loss(&dataset.held_out));
    assert!(
        (before.0 - fit.loss).abs() < 1e-9,
        "the fit's loss is the tuner's"
    );
    for epoch in 0..30 {
        tuner.epoch(&dataset.train, 16384, scheduled_lr(1.0, epoch, 30));
    }
    let tuned = params(&tuner.weights().unwrap());
    let after = (
        model::loss(&tuned, fit.k, &dataset.train),
        model::loss(&tuned, fit.k, &dataset.held_out),
    );
    assert!(
        after.0 < before.0 - 0.005,
        "training {before:?} -> {after:?}"
    );
    assert!(after.1 < before.1, "held out {before:?} -> {after:?}");
}

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

/// name -> (mg, eg) of a weights file.
fn weights_file(path: &Path) -> HashMap<String, (i32, i32)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            (
                fields[0].to_string(),
                (fields[1].parse().unwrap(), fields[2].parse().unwrap()),
            )
        })
        .collect()
}

/// `tune` writes every weight, `eval --weights` and `weights --weights` load the file, and
/// its frozen and untouched weights keep their starting values.
#[test]
fn tuned_file_loads_and_keeps_frozen_weights() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("tuned.txt");
    let out = out.to_str().unwrap();
    let (_, summary) = ok(&[
        "tune",
        &fixture(TEXEL),
        "-o",
        out,
        "--epochs",
        "5",
        "--freeze",
        "material,psqt.king",
        "--threads",
        "2",
    ]);
    assert!(
        summary.contains("63693 read")
            && summary.contains("(fitted)")
            && summary.contains("held-out")
            && summary.contains("69 weights frozen")
            && summary.contains("5 epochs"),
        "{summary}"
    );
    let tuned = weights_file(Path::new(out));
    let defaults = {
        let path = dir.path().join("defaults.txt");
        ok(&["weights", "-o", path.to_str().unwrap()]);
        weights_file(&path)
    };
    assert_eq!(tuned.len(), Weights::COUNT);
    for (name, value) in &defaults {
        // Frozen, or never counted: pawns never stand on the first rank.
        if name.starts_with("material.") || name.starts_with("psqt.king.") || name == "psqt.pawn.a1"
        {
            assert_eq!(&tuned[name], value, "{name}");
        }
    }
    let moved = defaults.iter().filter(|(n, v)| tuned[*n] != **v).count();
    assert!(moved > 100, "{moved} weights moved");

    let (printed, _) = ok(&["weights", "--weights", out]);
    assert_eq!(printed, std::fs::read_to_string(out).unwrap());
    let fen = "r1bq1rk1/pp2ppbp/2np1np1/8/3NP3/2N1BP2/PPPQ2PP/R3KB1R w KQ - 3 9";
    let (with_tuned, _) = ok(&["eval", "--fen", fen, "--weights", out]);
    let (with_defaults, _) = ok(&["eval", "--fen", fen]);
    assert!(with_tuned.contains("Final evaluation"));
    assert_ne!(with_tuned, with_defaults);
}

/// Filters drop positions and say so; `--k` skips the fit; a tuned file can be the start.
#[test]
fn filters_and_fixed_k() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("first.txt");
    let first = first.to_str().unwrap();
    let (_, summary) = ok(&[
        "tune",
        &fixture("pgn/famous-games.pgn"),
        "-o",
        first,
        "--epochs",
        "2",
        "--k",
        "1.1",
        "--skip-plies",
        "16",
        "--pieces",
        "8..",
    ]);
    assert!(
        summary.contains("by --skip-plies")
            && summary.contains("by --pieces")
            && summary.contains("K 1.1000 (--k)"),
        "{summary}"
    );
    let second = dir.path().join("second.txt");
    let (_, summary) = ok(&[
        "tune",
        &fixture("pgn/famous-games.pgn"),
        "-o",
        second.to_str().unwrap(),
        "--epochs",
        "0",
        "--k",
        "1.1",
        "--start",
        first,
        "--holdout",
        "0",
    ]);
    assert!(!summary.contains("held-out"), "{summary}");
    // No epochs: the start comes out as it went in.
    assert_eq!(weights_file(&second), weights_file(Path::new(first)));
}

/// A blended target keeps only positions with both labels; each end of the blend needs
/// its own.
#[test]
fn blended_targets_need_both_labels() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("mixed.epd");
    let mut text = String::new();
    for (i, mut record) in records(TEXEL).into_iter().take(2000).enumerate() {
        if i % 2 == 0 {
            record.labels.score = Some(pawnstorm::eval::evaluate(&record.position));
        }
        pawnstorm::position::labels::write_line(&record, &mut text);
        text.push('\n');
    }
    std::fs::write(&input, text).unwrap();
    let out = dir.path().join("w.txt");
    let run = |wdl: &str| {
        let (_, summary) = ok(&[
            "tune",
            input.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--epochs",
            "2",
            "--k",
            "1",
            "--wdl-weight",
            wdl,
        ]);
        summary
    };
    let blended = run("0.5");
    assert!(
        blended.contains("2000 read") && blended.contains("1000 without a score"),
        "{blended}"
    );
    let scores = run("0");
    assert!(scores.contains("1000 without a score"), "{scores}");
    let results = run("1");
    assert!(!results.contains("without"), "{results}");
}

#[test]
fn bad_options_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("w.txt");
    let out = out.to_str().unwrap();
    let texel = fixture(TEXEL);
    let error = fails(&["tune", &texel, "-o", out, "--freeze", "material,psqt.kingg"]);
    assert!(
        error.contains("psqt.kingg") && error.contains("no weight"),
        "{error}"
    );
    let error = fails(&["tune", &texel, "-o", out, "--wdl-weight", "1.5"]);
    assert!(
        error.contains("1.5") && error.contains("from 0 to 1"),
        "{error}"
    );
    let error = fails(&["tune", &texel, "-o", out, "--holdout", "1"]);
    assert!(error.contains("--holdout"), "{error}");
    let error = fails(&["tune", &texel, "-o", out, "--lr", "0"]);
    assert!(error.contains("positive"), "{error}");
    // A negative number reaches the option's own check, not clap's "unexpected argument".
    let error = fails(&["tune", &texel, "-o", out, "--l2", "-1"]);
    assert!(error.contains("of 0 or more"), "{error}");
    // The fixture games have results only: scores alone leave nothing.
    let error = fails(&["tune", &texel, "-o", out, "--wdl-weight", "0"]);
    assert!(
        error.contains("no labelled positions")
            && error.contains("labeled-from-fixture-pgns.epd")
            && error.contains("63693 without a score"),
        "{error}"
    );
    let wac = fixture("epd/wac.epd");
    let error = fails(&["tune", &wac, "-o", out]);
    assert!(
        error.contains("no labelled positions") && error.contains("300 without a result"),
        "{error}"
    );
    let error = fails(&["tune", "no/such.psdb", "-o", out]);
    assert!(error.contains("no/such.psdb"), "{error}");
    let error = fails(&["tune", &texel, "-o", out, "--start", "no/such.txt"]);
    assert!(error.contains("no/such.txt"), "{error}");
    let error = fails(&["tune", &texel, "-o", "no/such/dir/w.txt"]);
    assert!(error.contains("no/such/dir"), "{error}");
    assert!(!Path::new(out).exists(), "nothing written");
}

/// The counts `tune` prints: (training, held out) from "N read: T training, H held out".
fn split_counts(summary: &str) -> (u64, u64) {
    let after = summary
        .split(" read: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no counts in {summary}"));
    let number = |text: &str, unit: &str| -> u64 {
        let end = text
            .find(unit)
            .unwrap_or_else(|| panic!("no `{unit}` in {summary}"));
        text[..end]
            .rsplit(|c: char| !c.is_ascii_digit())
            .find(|w| !w.is_empty())
            .unwrap()
            .parse()
            .unwrap()
    };
    (number(after, " training"), number(after, " held out"))
}

/// Every kept position's score label, by side of the split.
fn scores_by_side(dataset: &Dataset) -> [Vec<i32>; 2] {
    let side = |parts: &[pawnstorm::training::tune::Positions]| -> Vec<i32> {
        parts
            .iter()
            .flat_map(|part| (0..part.len()).map(move |i| part.score(i).expect("tagged")))
            .collect()
    };
    [side(&dataset.train), side(&dataset.held_out)]
}

/// End to end, the training and held-out sets of `tune` share no game: each position's
/// score label is set to its game's id (or, without game ids, to the number of its run of
/// `HOLDOUT_RUN` consecutive positions), `pawnstorm tune` reports its split's sizes, and
/// the library's `Dataset::add_db`, loading with the options the CLI builds from the same
/// arguments, gives the same sizes, with every game's (run's) positions on one side. The
/// CLI prints no more of its split than its sizes (not with --verbose either), so the
/// sides' contents are read through the library call the CLI makes. Small blocks (64)
/// make games straddle blocks, which the loader reads in parallel parts.
#[test]
fn training_and_held_out_positions_share_no_game() {
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("games.psdb");
    ok(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "-o",
        imported.to_str().unwrap(),
    ]);
    let games: Vec<Record> = {
        let db = Database::open(&imported).unwrap();
        db.records(0..db.len()).map(Result::unwrap).collect()
    };
    let by_game: Vec<Record> = games
        .iter()
        .map(|record| {
            let mut record = record.clone();
            record.labels.score = Some(record.labels.game_id.expect("a game id") as i32);
            record
        })
        .collect();
    // The texel positions have no game ids: their split goes by runs of positions.
    let by_run: Vec<Record> = records(TEXEL)
        .into_iter()
        .enumerate()
        .map(|(i, mut record)| {
            assert_eq!(record.labels.game_id, None);
            record.labels.score =
                Some((i as u64 / pawnstorm::training::tune::data::HOLDOUT_RUN) as i32);
            record
        })
        .collect();
    for (name, tagged, what) in [
        ("by-game", by_game, "game"),
        ("by-run", by_run, "run of positions"),
    ] {
        let path = dir.path().join(format!("{name}.psdb"));
        let mut writer = DbWriter::create(&path, 64, Columns::NONE, false).unwrap();
        for record in &tagged {
            writer.push(record).unwrap();
        }
        writer.finish().unwrap();
        let db = Database::open(&path).unwrap();
        let groups: std::collections::BTreeSet<i32> =
            tagged.iter().map(|r| r.labels.score.unwrap()).collect();
        assert!(groups.len() > 100, "{name}: {} groups", groups.len());

        let out = dir.path().join(format!("{name}.txt"));
        let (_, summary) = ok(&[
            "tune",
            path.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--epochs",
            "0",
            "--k",
            "1",
            "--holdout",
            "0.3",
            "--verbose",
        ]);
        let (train, held) = split_counts(&summary);
        // As `tune` loads: results needed (--wdl-weight 1), --holdout, --seed 1 (default).
        let options = LoadOptions {
            needs_result: true,
            needs_score: false,
            holdout: 0.3,
            seed: 1,
            ..LoadOptions::default()
        };
        let dataset = load(&db, &options);
        assert_eq!(
            (dataset.counts.train, dataset.counts.held_out),
            (train, held),
            "{name}: the library's split is the CLI's ({summary})"
        );
        let [train_groups, held_groups] = scores_by_side(&dataset).map(|side| {
            side.into_iter()
                .collect::<std::collections::BTreeSet<i32>>()
        });
        let shared: Vec<&i32> = train_groups.intersection(&held_groups).collect();
        assert!(
            shared.is_empty(),
            "{name}: {} of {} {what}s have positions on both sides: {:?}",
            shared.len(),
            groups.len(),
            &shared[..shared.len().min(10)]
        );
        // Every group kept is on one side, and the sides are about the fraction asked for.
        let fraction = held_groups.len() as f64 / (train_groups.len() + held_groups.len()) as f64;
        assert!(
            (0.2..0.4).contains(&fraction),
            "{name}: {fraction} of the {what}s held out"
        );
        assert!(held > 0 && train > held, "{name}: {summary}");
    }
}

/// The summed squared distance, in pawns, of a weights file from another.
fn squared_distance(a: &HashMap<String, (i32, i32)>, b: &HashMap<String, (i32, i32)>) -> f64 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .map(|(name, &(mg, eg))| {
            let (start_mg, start_eg) = b[name];
            let (dm, de) = ((mg - start_mg) as f64, (eg - start_eg) as f64);
            (dm * dm + de * de) / 1e4
        })
        .sum()
}

/// `--l2` reaches the tuner: from the same start, seed and positions, a strong pull
/// (`--l2 1`) keeps the tuned weights far nearer the start than none (`--l2 0`), and the
/// default (1e-4) lies between. No held-out set, so every run writes its last epoch.
#[test]
fn l2_pulls_the_tuned_weights_towards_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let start = dir.path().join("start.txt");
    ok(&["weights", "-o", start.to_str().unwrap()]);
    let start_weights = weights_file(&start);
    let texel = fixture(TEXEL);
    let tuned = |l2: Option<&str>| {
        let out = dir
            .path()
            .join(format!("l2-{}.txt", l2.unwrap_or("default")));
        let mut args = vec![
            "tune",
            &texel,
            "-o",
            out.to_str().unwrap(),
            "--epochs",
            "8",
            "--k",
            "1.1",
            "--holdout",
            "0",
            "--lr",
            "2",
            "--threads",
            "2",
        ];
        let l2_args;
        if let Some(l2) = l2 {
            l2_args = ["--l2", l2];
            args.extend_from_slice(&l2_args);
        }
        let (_, summary) = ok(&args);
        let shown = l2.map_or("0.0001".to_string(), |l| {
            l.parse::<f64>().unwrap().to_string()
        });
        assert!(summary.contains(&format!("; L2 {shown};")), "{summary}");
        squared_distance(&weights_file(&out), &start_weights)
    };
    let free = tuned(Some("0"));
    let default = tuned(None);
    let strong = tuned(Some("1"));
    eprintln!("squared distance from the start (pawns^2): l2 0 {free}, 1e-4 {default}, 1 {strong}");
    assert!(free > 0.5, "the weights move without a pull: {free}");
    assert!(
        strong < 0.2 * free,
        "--l2 1 keeps the weights near the start: {strong} against {free} with --l2 0"
    );
    assert!(
        strong < default && default <= free,
        "{strong} {default} {free}"
    );
}
