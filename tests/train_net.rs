//! `pawnstorm train-net` end to end: the loss falls, the net loads and its integer
//! evaluation follows the float model, the same seed gives the same bytes on any thread
//! count, `--resume` gives the net of a run that never stopped, an interrupt leaves the
//! last checkpoint whole, bad options and inputs are refused clearly; and the loader's
//! held-out split keeps games whole.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

use pawnstorm::db::{Columns, DbWriter};
use pawnstorm::nnue::Network;
use pawnstorm::position::labels::{GameResult, Record, parse_line};
use pawnstorm::training::loader::{Loader, LoaderConfig};
use pawnstorm::training::mix::{Input, Split};
use pawnstorm::training::net::Checkpoint;
use pawnstorm::training::net::model::{Layout, boards_of_features, evaluate_features};
use pawnstorm::training::nnue::{FeatureSet, MAX_ACTIVE};

use common::{fails, fixture, ok, read_fixture};

const TEXEL: &str = "texel/labeled-from-fixture-pgns.epd";

/// `count` positions of the fixture games with their results, scored by the hand-crafted
/// evaluation, in games of 40 (game ids), written to `path`.
fn write_db(path: &Path, count: usize) {
    let records: Vec<Record> = read_fixture(TEXEL)
        .lines()
        .filter_map(|line| parse_line(line).expect("fixture line"))
        .take(count)
        .collect();
    let mut writer = DbWriter::create(path, 4096, Columns::NONE, false).expect("create");
    for (i, mut record) in records.into_iter().enumerate() {
        record.labels.score = Some(pawnstorm::eval::evaluate(&record.position));
        record.labels.game_id = Some((i / 40) as u32);
        writer.push(&record).expect("push");
    }
    writer.finish().expect("finish");
}

/// `count` fixture positions whose results are drawn (no draws) with White winning at
/// probability `sigmoid(score / scale)`, scores spread over ±600 cp: data whose logistic
/// scale is known.
fn write_db_of_scale(path: &Path, count: usize, scale: f64) {
    let records: Vec<Record> = read_fixture(TEXEL)
        .lines()
        .filter_map(|line| parse_line(line).expect("fixture line"))
        .take(count)
        .collect();
    assert_eq!(records.len(), count, "the fixture has {count} positions");
    let mut writer = DbWriter::create(path, 4096, Columns::NONE, false).expect("create");
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for (i, mut record) in records.into_iter().enumerate() {
        let score = (uniform() * 1200.0 - 600.0).round();
        let white_wins = uniform() < 1.0 / (1.0 + (-score / scale).exp());
        record.labels.score = Some(score as i32);
        record.labels.result = Some(if white_wins {
            GameResult::WhiteWin
        } else {
            GameResult::BlackWin
        });
        record.labels.game_id = Some((i / 40) as u32);
        writer.push(&record).expect("push");
    }
    writer.finish().expect("finish");
}

/// The number after `key` on each epoch line (up to a comma or a space).
fn epoch_figures(stderr: &str, key: &str) -> Vec<f64> {
    stderr
        .lines()
        .filter(|l| l.starts_with("epoch "))
        .map(|l| {
            let rest = &l[l.find(key).unwrap_or_else(|| panic!("{key} in {l}")) + key.len()..];
            rest.split(|c: char| c == ',' || c.is_whitespace())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
        .collect()
}

/// (training loss, held-out loss) of each epoch line.
fn epoch_losses(stderr: &str) -> Vec<(f64, f64)> {
    let training = epoch_figures(stderr, "loss ");
    training
        .into_iter()
        .zip(epoch_figures(stderr, "held-out "))
        .collect()
}

fn train(db: &str, out: &str, extra: &[&str]) -> String {
    ok(&train_args(db, out, extra))
}

/// `train-net DB -o OUT` at width 32 with a small shuffle buffer, then `extra`.
fn train_args<'a>(db: &'a str, out: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec![
        "train-net",
        db,
        "-o",
        out,
        "--hidden",
        "32",
        "--shuffle-buffer",
        "4096",
    ];
    args.extend_from_slice(extra);
    args
}

/// The loss falls over the epochs (training and held out), the net loads with its
/// provenance, and its integer evaluation stays within the quantisation error of the
/// float model the checkpoint holds.
#[test]
fn loss_falls_and_the_net_follows_the_float_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 12_000);
    let out = dir.path().join("net.nnue");
    let stderr = train(
        db.to_str().unwrap(),
        out.to_str().unwrap(),
        &[
            "--epochs",
            "6",
            "--seed",
            "3",
            "--lr",
            "0.003",
            "--batch-size",
            "512",
        ],
    );
    let losses = epoch_losses(&stderr);
    assert_eq!(losses.len(), 6, "{stderr}");
    assert!(losses[5].0 < losses[0].0 * 0.9, "training loss {losses:?}");
    assert!(losses[5].1 < losses[0].1, "held-out loss {losses:?}");
    assert!(stderr.contains("results-only held-out loss"), "{stderr}");

    let net = Network::load(&out).expect("loads");
    assert_eq!(net.hidden(), 32);
    for needle in [
        "command: ",
        "train-net",
        "date: ",
        "seed 3",
        "held-out loss",
        "train.psdb",
    ] {
        assert!(
            net.provenance().contains(needle),
            "{needle}: {}",
            net.provenance()
        );
    }
    let checkpoint = Checkpoint::load(&dir.path().join("net.nnue.ckpt")).expect("checkpoint");
    assert_eq!(checkpoint.epochs_done, 6);
    follows_the_float_model(&net, &checkpoint, Layout::single(32), &db);
}

/// The trained net predicts the held-out positions' results better than the baselines:
/// predicting a draw everywhere (a constant) and an untrained net of the same width, both
/// measured as `train-net` reports it (`compare::results_only`: `tune`'s loss with K fitted).
/// And `compare` itself: both runs over the same held-out positions give the hand-crafted
/// evaluation the same fit, better than a draw everywhere.
#[test]
fn the_trained_net_beats_a_constant_and_an_untrained_net_on_held_out_positions() {
    use pawnstorm::training::net::compare;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 12_000);
    let out = dir.path().join("net.nnue");
    train(
        db.to_str().unwrap(),
        out.to_str().unwrap(),
        &[
            "--epochs",
            "6",
            "--seed",
            "5",
            "--lr",
            "0.003",
            "--batch-size",
            "512",
        ],
    );
    let held_out = || in_order(&db, 1000, Split::HeldOut(0.1));
    let prepared = pawnstorm::eval::default_weights();
    let trained = Network::load(&out).expect("loads");
    let trained = compare::results_only(held_out(), std::sync::Arc::new(trained), prepared)
        .expect("compared");
    let untrained = Network::random(32, 11).expect("a random net");
    let untrained = compare::results_only(held_out(), std::sync::Arc::new(untrained), prepared)
        .expect("compared");
    assert!(
        trained.positions > 500,
        "{} held-out positions",
        trained.positions
    );
    let fit = trained.net.as_ref().expect("the trained net's results fit");
    assert!(
        fit.loss < fit.baseline * 0.97,
        "trained {:.5} against a draw everywhere {:.5}",
        fit.loss,
        fit.baseline
    );
    // An untrained net fits no better than a constant (an error: its K is flat) or, if it
    // fits, worse than the trained one.
    if let Ok(random) = &untrained.net {
        assert!(
            fit.loss < random.loss,
            "trained {:.5} against untrained {:.5}",
            fit.loss,
            random.loss
        );
    }
    assert_eq!(untrained.positions, trained.positions);
    let hce = trained.hce.as_ref().expect("the terms' results fit");
    assert_eq!(untrained.hce.as_ref().ok(), Some(hce));
    assert!(hce.loss < hce.baseline && (hce.baseline - fit.baseline).abs() < 1e-12);
}

/// `db`'s positions on `split`'s side, in order, as Chess768 batches of `batch_size`.
fn in_order(db: &Path, batch_size: usize, split: Split) -> Loader {
    in_order_as(db, batch_size, split, FeatureSet::Chess768)
}

/// [`in_order`] in the feature set `set`.
fn in_order_as(db: &Path, batch_size: usize, split: Split, set: FeatureSet) -> Loader {
    Loader::start(LoaderConfig {
        inputs: vec![Input {
            path: db.to_path_buf(),
            weight: 1.0,
        }],
        mixing: false,
        batch_size,
        set,
        shuffle: false,
        shuffle_buffer: 0,
        seed: 0,
        threads: 1,
        filter: Default::default(),
        split,
    })
    .unwrap()
}

/// The net's integer evaluation of the first 500 positions of `db` stays within the
/// quantisation error of the float model `checkpoint` holds.
fn follows_the_float_model(net: &Network, checkpoint: &Checkpoint, layout: Layout, db: &Path) {
    let set = if layout.inputs.is_mirrored() {
        FeatureSet::KingBuckets(layout.inputs)
    } else {
        FeatureSet::Chess768
    };
    let batch = in_order_as(db, 500, Split::All, set)
        .next()
        .unwrap()
        .unwrap();
    let (mut largest, mut total_error) = (0.0f32, 0.0f32);
    for i in 0..batch.len {
        let ours = &batch.stm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
        let theirs = &batch.nstm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
        let float = evaluate_features(&checkpoint.state.params, layout, ours, theirs);
        let black = batch.stm[i] == 1;
        let int = net.evaluate_reference(&boards_of_features(ours, black), black) as f32;
        // Output weights at QB = 64 are rounded by up to 1/128: over 64 of them a few
        // centipawns either way, as bullet's quantisation gives.
        let error = (float - int).abs();
        assert!(
            error <= 20.0 + 0.05 * float.abs(),
            "{i}: float {float}, integer {int}"
        );
        total_error += error;
        largest = largest.max(float.abs());
    }
    let mean = total_error / batch.len as f32;
    assert!(mean < 6.0, "mean quantisation error {mean} centipawns");
    // The net learnt something: not every evaluation is near zero.
    assert!(largest > 50.0, "largest |eval| {largest}");
}

/// With output buckets (`--output-buckets 8`), the net says so in its header and its
/// provenance, its integer evaluation (the bucket chosen by the plain reference) follows
/// the float model (the bucket chosen as the trainer chose it), and a resume with another
/// number of buckets is refused.
#[test]
fn output_buckets_train_and_the_net_follows_the_float_model() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 12_000);
    let out = dir.path().join("net.nnue");
    let options = [
        "--epochs",
        "4",
        "--seed",
        "3",
        "--lr",
        "0.003",
        "--batch-size",
        "512",
        "--output-buckets",
        "8",
    ];
    train(db.to_str().unwrap(), out.to_str().unwrap(), &options);
    let net = Network::load(&out).expect("loads");
    assert_eq!((net.hidden(), net.buckets()), (32, 8));
    assert!(
        net.provenance().contains("8 output buckets"),
        "{}",
        net.provenance()
    );
    let checkpoint = Checkpoint::load(&dir.path().join("net.nnue.ckpt")).expect("checkpoint");
    let layout = Layout::new(32, 8);
    assert_eq!(checkpoint.state.layout, layout);
    follows_the_float_model(&net, &checkpoint, layout, &db);

    let four_buckets = [&options[..options.len() - 1], &["4", "--resume"]].concat();
    let stderr = fails(&train_args(
        db.to_str().unwrap(),
        out.to_str().unwrap(),
        &four_buckets,
    ));
    assert!(
        stderr.contains("output-buckets: 8 in the checkpoint, 4 now"),
        "{stderr}"
    );
}

/// With king buckets (`--king-buckets 4`, factorised), the net is written as a version 2
/// file with its map, reads king-bucketed inputs as the float model does (merged
/// factoriser included), and a resume with another map, or without the factoriser, is
/// refused.
#[test]
fn king_buckets_train_and_the_net_follows_the_float_model() {
    use pawnstorm::training::net::compare;
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 12_000);
    let out = dir.path().join("net.nnue");
    let options = [
        "--epochs",
        "4",
        "--seed",
        "3",
        "--lr",
        "0.003",
        "--batch-size",
        "512",
        "--output-buckets",
        "4",
        "--king-buckets",
        "4",
    ];
    let stderr = train(db.to_str().unwrap(), out.to_str().unwrap(), &options);
    let net = Network::load(&out).expect("loads");
    // The results-only comparison scores the held-out positions themselves, not their
    // boards mirrored by the king buckets: the hand-crafted evaluation's fit is the one a
    // plain Chess768 pass over them gives.
    let plain = compare::results_only(
        in_order(&db, 1000, Split::HeldOut(0.1)),
        std::sync::Arc::new(net.clone()),
        pawnstorm::eval::default_weights(),
    )
    .expect("compared");
    let hce = plain.hce.as_ref().expect("the terms' results fit");
    let expected = format!("hand-crafted evaluation {:.6} (K {:.4})", hce.loss, hce.k);
    assert!(stderr.contains(&expected), "{expected} not in {stderr}");
    let four = pawnstorm::nnue::InputLayout::standard(4).unwrap();
    assert_eq!((net.hidden(), net.buckets(), net.inputs()), (32, 4, four));
    assert!(
        net.provenance()
            .contains("768x4hm, king buckets 0011/2222/3333/")
            && net.provenance().contains("factorised"),
        "{}",
        net.provenance()
    );
    let checkpoint = Checkpoint::load(&dir.path().join("net.nnue.ckpt")).expect("checkpoint");
    let layout = Layout {
        inputs: four,
        factoriser: true,
        ..Layout::new(32, 4)
    };
    assert_eq!(checkpoint.state.layout, layout);
    // The factoriser learnt: its rows are no longer the zeros they started at.
    let shared = &checkpoint.state.params[layout.factoriser_row() * 32..layout.ft_bias()];
    assert!(shared.iter().filter(|w| **w != 0.0).count() > shared.len() / 10);
    follows_the_float_model(&net, &checkpoint, layout, &db);

    for (other, expected) in [
        (&["--king-buckets", "8"][..], "king-buckets"),
        (
            &["--king-buckets", "4", "--no-factoriser"][..],
            "factoriser",
        ),
    ] {
        let args = [&options[..options.len() - 2], other, &["--resume"]].concat();
        let stderr = fails(&train_args(
            db.to_str().unwrap(),
            out.to_str().unwrap(),
            &args,
        ));
        assert!(
            stderr.contains(&format!("{expected}: ")) && stderr.contains("in the checkpoint"),
            "{stderr}"
        );
    }
}

/// The same seed gives the same network whatever the thread count; another seed another.
#[test]
fn the_same_seed_gives_the_same_net_on_any_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 5000);
    let db = db.to_str().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // Batches of several slices (2048 positions each) and a last one of fewer.
    let common = ["--epochs", "2", "--batch-size", "5000"];
    for (name, threads, seed) in [("a", "1", "7"), ("b", "2", "7"), ("c", "2", "8")] {
        let mut extra = common.to_vec();
        extra.extend_from_slice(&["--threads", threads, "--seed", seed]);
        train(db, &path(name), &extra);
    }
    let raw = |name: &str| Network::load(Path::new(&path(name))).unwrap().raw_bytes();
    assert_eq!(raw("a"), raw("b"), "1 and 2 threads differ");
    assert_ne!(raw("a"), raw("c"), "seeds 7 and 8 gave one net");
}

/// Stopping after epoch 1 and resuming gives the net of the uninterrupted run, with
/// epochs of whole passes and with epochs that end in the middle of a pass.
#[test]
fn resume_gives_the_uninterrupted_net() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 5000);
    let db = db.to_str().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    // The same positions as text too: passes of a file that is not a DB are kept in the
    // pass cache, and the uninterrupted run replays its third pass from it where the
    // resumed run reads it.
    let epd = path("train.epd");
    ok(&["export", db, "-o", &epd]);
    for input in [db, epd.as_str()] {
        for extra in [
            &["--batch-size", "512"][..],
            &["--batch-size", "512", "--epoch-positions", "2600"][..],
        ] {
            let mut full = vec!["--epochs", "3"];
            full.extend_from_slice(extra);
            train(input, &path("whole"), &full);
            let mut first = vec!["--epochs", "1"];
            first.extend_from_slice(extra);
            train(input, &path("parts"), &first);
            let mut rest = vec!["--epochs", "3", "--resume"];
            rest.extend_from_slice(extra);
            let stderr = train(input, &path("parts"), &rest);
            assert!(stderr.contains("resuming from"), "{stderr}");
            assert_eq!(epoch_losses(&stderr).len(), 2, "{stderr}");
            let raw = |name: &str| Network::load(Path::new(&path(name))).unwrap().raw_bytes();
            assert_eq!(raw("whole"), raw("parts"), "{input} {extra:?}");
        }
    }
    // Another width is refused, naming the option.
    let error = fails(&[
        "train-net",
        db,
        "-o",
        &path("parts"),
        "--hidden",
        "64",
        "--resume",
        "--epochs",
        "3",
        "--batch-size",
        "512",
        "--shuffle-buffer",
        "4096",
    ]);
    assert!(
        error.contains("hidden: 32 in the checkpoint, 64 now"),
        "{error}"
    );
}

/// SIGINT while a checkpoint is being written: the process ends with 130, leaves no
/// temporary file, and the checkpoint on disk is the last complete one.
#[test]
fn an_interrupt_leaves_the_last_checkpoint_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 3000);
    let child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args([
            "train-net",
            db.to_str().unwrap(),
            "-o",
            "net.nnue",
            "--hidden",
            "512",
            "--epochs",
            "1000",
            "--batch-size",
            "1024",
            "--holdout",
            "0",
        ])
        .current_dir(dir.path())
        .env("PAWNSTORM_TEST_STOP_IN_CHECKPOINT", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let pid = child.id() as i32;
    let checkpoint = dir.path().join("net.nnue.ckpt");
    let temporary = || {
        std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .any(|name| name.starts_with(".ckpt-"))
    };
    // The trainer stops itself in each save with the temporary file written and not yet
    // renamed (PAWNSTORM_TEST_STOP_IN_CHECKPOINT): no race with the writer, at any load.
    let wait_until_stopped = || {
        let mut status = 0;
        // SAFETY: waits on our own child; WUNTRACED reports the stop without reaping it.
        let waited = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
        assert_eq!(waited, pid);
        assert!(
            libc::WIFSTOPPED(status),
            "the trainer ended (status {status}) before its second save"
        );
    };
    // The first save: nothing to keep yet, so on to the second.
    wait_until_stopped();
    assert!(temporary() && !checkpoint.exists());
    unsafe { libc::kill(pid, libc::SIGCONT) };
    // The second, being written over the first: interrupted there.
    wait_until_stopped();
    assert!(temporary() && checkpoint.exists());
    unsafe {
        libc::kill(pid, libc::SIGINT);
        libc::kill(pid, libc::SIGCONT);
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{stderr}");
    assert!(!temporary(), "a temporary file was left behind");
    let checkpoint = Checkpoint::load(&checkpoint).expect("the last checkpoint is whole");
    assert!(checkpoint.epochs_done >= 1);
    assert!(!dir.path().join("net.nnue").exists());
}

/// `--scale fit` finds the scale the results were drawn at, says so, and records it in the
/// net; a given scale is used as given.
#[test]
fn the_logistic_scale_is_fitted_to_the_results() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("scaled.psdb");
    write_db_of_scale(&db, 12_000, 150.0);
    let out = dir.path().join("net.nnue");
    let (db, out) = (db.to_str().unwrap(), out.to_str().unwrap());
    let stderr = train(db, out, &["--epochs", "1", "--wdl", "0.5"]);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("train-net: logistic scale "))
        .unwrap_or_else(|| panic!("no scale line: {stderr}"));
    let scale: f64 = line["train-net: logistic scale ".len()..]
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((135.0..165.0).contains(&scale), "{line}");
    assert!(line.contains("fitted: K"), "{line}");
    let net = Network::load(Path::new(out)).expect("loads");
    assert!(
        net.provenance()
            .contains(&format!("logistic scale: {scale:.1} (fitted")),
        "{}",
        net.provenance()
    );

    let fitted = net.checksum();
    let stderr = train(
        db,
        out,
        &["--epochs", "1", "--wdl", "0.5", "--scale", "400"],
    );
    assert!(
        stderr.contains("train-net: logistic scale 400 (given)"),
        "{stderr}"
    );
    // The scale reaches the loss: the same seed and data at another scale give another net.
    let given = Network::load(Path::new(out)).expect("loads").checksum();
    assert_ne!(fitted, given);
    let error = fails(&["train-net", db, "-o", out, "--scale", "wide"]);
    assert!(error.contains("neither `fit` nor a number"), "{error}");
}

#[test]
fn bad_options_and_inputs_are_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 600);
    let db = db.to_str().unwrap();
    let out = dir.path().join("net.nnue");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 10] = [
        (
            &["train-net", db, "-o", out, "--hidden", "100"],
            "multiple of 16",
        ),
        (
            &["train-net", db, "-o", out, "--hidden", "2048"],
            "multiple of 16",
        ),
        (&["train-net", db, "-o", out, "--wdl", "1.5"], "from 0 to 1"),
        (
            &["train-net", db, "-o", out, "--weight-decay", "-0.1"],
            "of 0 or more",
        ),
        // Negative numbers reach each option's own check, not clap's "unexpected argument".
        (
            &["train-net", db, "-o", out, "--lr", "-1"],
            "not a positive number",
        ),
        (
            &["train-net", db, "-o", out, "--holdout", "-0.1"],
            "not a fraction",
        ),
        (
            &["train-net", "missing.psdb", "-o", out],
            "missing.psdb: no such file",
        ),
        (&["train-net", db, "-o", out, "--resume"], "--resume"),
        (&["train-net", "-", "-o", out], "standard input"),
        (
            &["train-net", db, "-o", "/no/such/dir/net.nnue"],
            "no such directory",
        ),
    ];
    for (args, needle) in cases {
        let error = fails(args);
        assert!(error.contains(needle), "{args:?}: {error}");
    }
    // Positions without the labels the target needs: none to train on, said so.
    let unlabelled = fixture("db/wac-v1.psdb");
    let error = fails(&[
        "train-net",
        &unlabelled,
        "-o",
        out,
        "--holdout",
        "0",
        "--wdl",
        "0",
    ]);
    assert!(error.contains("no training positions"), "{error}");
    assert!(error.contains("--require-score"), "{error}");
    assert!(
        error.contains("no training position has both a score and a result"),
        "{error}"
    );
    let error = fails(&[
        "train-net",
        &unlabelled,
        "-o",
        out,
        "--holdout",
        "0",
        "--wdl",
        "1",
    ]);
    assert!(error.contains("--require-result"), "{error}");
}

/// The loader's held-out split: the two sides partition the positions, keep each game on
/// one side, and hold out about the fraction asked for.
#[test]
fn the_held_out_split_keeps_games_whole() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    // Scores are unique here: they name the positions.
    let mut writer = DbWriter::create(&db, 4096, Columns::NONE, false).expect("create");
    let records: Vec<Record> = read_fixture(TEXEL)
        .lines()
        .filter_map(|line| parse_line(line).expect("fixture line"))
        .take(8000)
        .collect();
    for (i, mut record) in records.into_iter().enumerate() {
        record.labels.score = Some(i as i32);
        record.labels.result = Some(GameResult::Draw);
        record.labels.game_id = Some((i / 50) as u32);
        writer.push(&record).unwrap();
    }
    writer.finish().unwrap();
    let side = |split: Split| -> BTreeSet<i32> {
        let loader = Loader::start(LoaderConfig {
            inputs: vec![Input {
                path: db.clone(),
                weight: 1.0,
            }],
            mixing: false,
            batch_size: 1000,
            set: FeatureSet::Chess768,
            shuffle: true,
            shuffle_buffer: 3000,
            seed: 5,
            threads: 2,
            filter: Default::default(),
            split,
        })
        .unwrap();
        let mut seen = BTreeSet::new();
        for batch in loader {
            let batch = batch.unwrap();
            for i in 0..batch.len {
                // The side to move's score: back to the stored one.
                let s = if batch.stm[i] == 1 {
                    -batch.score[i]
                } else {
                    batch.score[i]
                };
                seen.insert(s);
            }
        }
        seen
    };
    let train = side(Split::Training(0.2));
    let held = side(Split::HeldOut(0.2));
    assert!(train.is_disjoint(&held));
    assert_eq!(train.len() + held.len(), 8000);
    let fraction = held.len() as f64 / 8000.0;
    assert!((0.1..0.3).contains(&fraction), "{fraction}");
    let mut games: BTreeMap<i32, BTreeSet<bool>> = BTreeMap::new();
    for (s, is_held) in train
        .iter()
        .map(|s| (s, false))
        .chain(held.iter().map(|s| (s, true)))
    {
        games.entry(s / 50).or_default().insert(is_held);
    }
    assert!(
        games.values().all(|sides| sides.len() == 1),
        "a game on both sides"
    );
}

/// A pass replayed from the pass cache gives the batches and counts a read gives, at
/// another seed than the pass that filled it; the cache is refused where a pass's positions
/// depend on its seed (a DB's blocks, random filters).
#[test]
fn a_cached_pass_gives_the_batches_of_a_read() {
    use pawnstorm::training::loader::PassCache;
    let config = |seed: u64| shuffled_fixture(seed, Split::Training(0.1));
    let pass = |seed: u64, cache: Option<std::sync::Arc<PassCache>>| {
        let mut loader = Loader::start_cached(config(seed), cache).unwrap();
        let batches: Vec<_> = loader.by_ref().map(|b| b.unwrap()).collect();
        (batches, loader.counts())
    };
    assert!(PassCache::suits(&config(1)));
    let cache = std::sync::Arc::new(PassCache::default());
    let (first, first_counts) = pass(5, Some(cache.clone()));
    assert!(cache.is_filled());
    let (replayed, replayed_counts) = pass(9, Some(cache.clone()));
    let (read, read_counts) = pass(9, None);
    assert!(read.len() > 10, "{} batches", read.len());
    assert!(replayed == read, "the replayed pass differs from a read");
    assert_eq!(replayed_counts, read_counts);
    assert_eq!(first_counts, read_counts);
    assert!(first != read, "seeds 5 and 9 gave the same order");

    let mut random = config(1);
    random.filter.random_skip = 1;
    assert!(!PassCache::suits(&random));
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 100);
    let mut from_db = config(1);
    from_db.inputs[0].path = db.clone();
    assert!(!PassCache::suits(&from_db));

    // A held-out pass (unshuffled, at the run's seed, as train-net's are) reads the same
    // positions every time, from a DB and through a random rule too: its cache replays
    // the batches of a read.
    write_db(&db, 3000);
    let mut held = from_db;
    held.shuffle = false;
    held.split = Split::HeldOut(0.3);
    held.filter.random_skip = 1;
    held.batch_size = 64;
    let held_pass = |cache: Option<std::sync::Arc<PassCache>>| {
        let mut loader = Loader::start_cached(held.clone(), cache).unwrap();
        let batches: Vec<_> = loader.by_ref().map(|b| b.unwrap()).collect();
        (batches, loader.counts())
    };
    let cache = std::sync::Arc::new(PassCache::default());
    let (filling, _) = held_pass(Some(cache.clone()));
    assert!(cache.is_filled());
    let (replayed, replayed_counts) = held_pass(Some(cache.clone()));
    let (read, read_counts) = held_pass(None);
    assert!(read.len() > 3, "{} batches", read.len());
    assert!(
        replayed == read && filling == read,
        "the held-out replay differs from a read"
    );
    assert_eq!(replayed_counts, read_counts);
}

/// `--validation FILE`: the loss on FILE's positions after each epoch, printed and kept in
/// the net's provenance, without training on them. A net trained on fixture positions
/// (results from their games, scores by the evaluation) is measured on those positions and
/// on the same ones with every label turned round (the score negated, the result the other
/// side's): the second loss is the larger, and all three nets (either file, or none) are
/// the same bytes.
#[test]
fn validation_files_are_measured_and_never_trained_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
    let (train_db, turned_db) = (path("train.psdb"), path("turned.psdb"));
    write_db(Path::new(&train_db), 3000);
    let mut writer =
        DbWriter::create(Path::new(&turned_db), 4096, Columns::NONE, false).expect("create");
    let reader = pawnstorm::db::Database::open(Path::new(&train_db)).expect("open");
    for row in 0..reader.len() {
        let mut record = reader.record(row).expect("a record");
        record.labels.score = record.labels.score.map(|s| -s);
        record.labels.result = record.labels.result.map(|r| match r {
            GameResult::WhiteWin => GameResult::BlackWin,
            GameResult::BlackWin => GameResult::WhiteWin,
            GameResult::Draw => GameResult::Draw,
        });
        writer.push(&record).expect("push");
    }
    writer.finish().expect("finish");
    let common = [
        "--holdout",
        "0",
        "--scale",
        "150",
        "--epochs",
        "2",
        "--batch-size",
        "256",
    ];
    let validation_loss = |stderr: &str| epoch_figures(stderr, "validation ");
    let (same_net, turned_net, plain_net) =
        (path("same.nnue"), path("turned.nnue"), path("plain.nnue"));
    let same = train(
        &train_db,
        &same_net,
        &[&common[..], &["--validation", &train_db]].concat(),
    );
    let turned = train(
        &train_db,
        &turned_net,
        &[&common[..], &["--validation", &turned_db]].concat(),
    );
    train(&train_db, &plain_net, &common);
    let (same, turned) = (validation_loss(&same), validation_loss(&turned));
    assert_eq!((same.len(), turned.len()), (2, 2));
    assert!(same[1] < turned[1], "{same:?} against {turned:?}");
    let bytes = |p: &str| std::fs::read(p).unwrap();
    let weights = |p: &str| Network::load(Path::new(p)).unwrap().raw_bytes().to_vec();
    assert_eq!(weights(&same_net), weights(&plain_net));
    assert_eq!(weights(&turned_net), weights(&plain_net));
    let provenance = String::from_utf8_lossy(&bytes(&turned_net)).to_string();
    assert!(
        provenance.contains("validation loss"),
        "the provenance names it"
    );
}

/// `--warmup N`: the first N epochs climb to --lr, the cosine runs over the rest, as each
/// epoch line's learning rate shows; the provenance says so.
#[test]
fn a_warm_up_climbs_to_the_learning_rate_before_the_cosine() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 2000);
    let out = dir.path().join("net.nnue");
    let stderr = train(
        db.to_str().unwrap(),
        out.to_str().unwrap(),
        &[
            "--epochs",
            "5",
            "--warmup",
            "2",
            "--lr",
            "0.003",
            "--final-lr",
            "0.0001",
        ],
    );
    let rates = epoch_figures(&stderr, ", lr ");
    let expected = [0.001, 0.002, 0.003, 0.00155, 0.0001];
    assert_eq!(rates.len(), 5, "{stderr}");
    for (rate, want) in rates.iter().zip(expected) {
        assert!(
            (rate - want).abs() < want * 1e-3,
            "{rates:?} against {expected:?}"
        );
    }
    let provenance = String::from_utf8_lossy(&std::fs::read(&out).unwrap()).to_string();
    assert!(
        provenance.contains("lr 0.003 after 2 warm-up epochs"),
        "the provenance says so"
    );
}

/// `--weight-decay D` trains another net than the default 0.01 (each weight pulled
/// harder towards 0), says so in the provenance, and a checkpoint made with one decay does
/// not resume with another.
#[test]
fn weight_decay_is_an_option_the_net_and_its_checkpoint_record() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("train.psdb");
    write_db(&db, 2000);
    let db = db.to_str().unwrap();
    let net = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        let mut args = vec!["--epochs", "2"];
        args.extend_from_slice(extra);
        train(db, out.to_str().unwrap(), &args);
        std::fs::read(&out).unwrap()
    };
    let plain = net("plain.nnue", &[]);
    let stated = net("stated.nnue", &["--weight-decay", "0.01"]);
    let strong = net("strong.nnue", &["--weight-decay", "2"]);
    let weights = |bytes: &[u8]| {
        Network::from_bytes(bytes, "net")
            .unwrap()
            .raw_bytes()
            .to_vec()
    };
    assert_eq!(weights(&plain), weights(&stated), "0.01 is the default");
    assert_ne!(weights(&plain), weights(&strong));
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).to_string();
    assert!(
        text(&plain).contains("weight decay 0.01,"),
        "{}",
        text(&plain)
    );
    assert!(text(&strong).contains("weight decay 2,"));
    // The strong decay's checkpoint is not resumed under the default.
    let strong_out = dir.path().join("strong.nnue");
    let error = fails(&train_args(
        db,
        strong_out.to_str().unwrap(),
        &["--epochs", "3", "--resume"],
    ));
    assert!(error.contains("weight-decay"), "{error}");
}

/// The fixture's positions in shuffled batches of 4,000 (a 10,000-position buffer).
fn shuffled_fixture(seed: u64, split: Split) -> LoaderConfig {
    LoaderConfig {
        inputs: vec![Input {
            path: fixture(TEXEL).into(),
            weight: 1.0,
        }],
        mixing: false,
        batch_size: 4000,
        set: FeatureSet::Chess768,
        shuffle: true,
        shuffle_buffer: 10_000,
        seed,
        threads: 2,
        filter: Default::default(),
        split,
    }
}

/// `--memory MIB` bounds the shuffle buffer and the pass cache together: with room for the
/// buffer only, every pass reads its inputs again, and the net is the same bytes as the one
/// trained from the cache; less than the buffer is refused, saying why.
#[test]
fn a_memory_bound_reads_again_instead_of_caching_and_trains_the_same_net() {
    use pawnstorm::training::loader::PassCache;
    // The bound itself: a cache of fewer positions than a pass keeps none.
    let input = fixture(TEXEL);
    let config = shuffled_fixture(3, Split::All);
    for (limit, filled) in [(1000, false), (1 << 20, true)] {
        let cache = std::sync::Arc::new(PassCache::with_limit(limit));
        let mut loader = Loader::start_cached(config.clone(), Some(cache.clone())).unwrap();
        assert!(loader.by_ref().all(|b| b.is_ok()));
        assert_eq!(cache.is_filled(), filled, "a limit of {limit}");
    }
    // Through the CLI (a text input, which the cache suits; results only, as it has no scores): 1 MiB holds the 4,096
    // positions of the buffer and 28,672 more, not the fixture's 63,000.
    let dir = tempfile::tempdir().unwrap();
    let (cached, bounded) = (
        dir.path().join("cached.nnue"),
        dir.path().join("bounded.nnue"),
    );
    let pack = input.as_str();
    let kept = train(
        pack,
        cached.to_str().unwrap(),
        &["--epochs", "3", "--wdl", "1", "--scale", "400"],
    );
    let read_again = train(
        pack,
        bounded.to_str().unwrap(),
        &[
            "--epochs", "3", "--wdl", "1", "--scale", "400", "--memory", "1",
        ],
    );
    assert!(
        kept.contains("kept in memory after the first pass"),
        "{kept}"
    );
    assert!(
        read_again.contains("read again every pass (more positions than 28672"),
        "{read_again}"
    );
    // The held-out tenth is kept in both (7,168 positions: within what 1 MiB leaves when
    // the training positions are not kept), and its losses are those of a read.
    for run in [&kept, &read_again] {
        assert!(
            run.contains("the held-out positions (7168, 1 MiB) kept in memory after their"),
            "{run}"
        );
    }
    assert_eq!(epoch_losses(&kept), epoch_losses(&read_again));
    assert_eq!(epoch_losses(&kept).len(), 3);
    let weights = |p: &Path| Network::load(p).unwrap().raw_bytes().to_vec();
    assert_eq!(weights(&cached), weights(&bounded));
    let refused = fails(&[
        "train-net",
        pack,
        "-o",
        "x.nnue",
        "--memory",
        "1",
        "--shuffle-buffer",
        "100000",
    ]);
    assert!(
        refused.contains("--memory 1 MiB is less than the shuffle buffer's 4 MiB"),
        "{refused}"
    );
}
