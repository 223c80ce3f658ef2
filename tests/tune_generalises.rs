//! The tuner generalises: tuned on one half of the fixture games (split by game), the
//! weights it writes do not raise the loss on the other half's games, on all the fixture
//! games and on a ~10k-position sample of them, where a tuner without early stopping and
//! a game-tight split overfits (measured: the other half's loss rose 0.1768 -> 0.1793 on
//! the sample with 100 epochs and no held-out stop). Also: early stopping keeps the best
//! epoch, and the summary names the weights that moved most.

use crate::common;

use std::path::Path;

use pawnstorm::db::{Database, DbWriter};

use common::{fixture, ok};

/// The fixture games from ply 16 on (as the texel set was made), at most `limit`
/// positions, split by game id parity into two DBs: no game on both sides.
fn halves(dir: &Path, limit: usize) -> (String, String) {
    let all = dir.join("games.psdb");
    ok(&[
        "import",
        &fixture("pgn/famous-games.pgn"),
        &fixture("pgn/chess-informant-d00.pgn"),
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "--skip-plies",
        "16",
        "-o",
        all.to_str().unwrap(),
    ]);
    let db = Database::open(&all).unwrap();
    let paths = [dir.join("even.psdb"), dir.join("odd.psdb")];
    let mut writers = paths
        .clone()
        .map(|p| DbWriter::create(p, 4096, db.columns(), false).unwrap());
    for record in db.records(0..db.len().min(limit as u64)) {
        let record = record.unwrap();
        let game = record.labels.game_id.expect("PGN positions have game ids");
        writers[(game % 2) as usize].push(&record).unwrap();
    }
    for writer in writers {
        writer.finish().unwrap();
    }
    let [a, b] = paths.map(|p| p.to_str().unwrap().to_string());
    (a, b)
}

/// A number after `key` in `text`.
fn number_after(text: &str, key: &str) -> f64 {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("`{key}` in {text}"))
        + key.len();
    text[at..]
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()
        .unwrap()
        .parse()
        .unwrap_or_else(|e| panic!("{key} in {text}: {e}"))
}

/// The loss of `weights` (None: the defaults) on `db` at K `k`, as the tuner computes it.
fn loss_on(db: &str, weights: Option<&str>, k: f64, dir: &Path) -> f64 {
    let out = dir.join("scratch.txt");
    let k = format!("{k}");
    let mut args = vec![
        "tune",
        db,
        "-o",
        out.to_str().unwrap(),
        "--epochs",
        "0",
        "--holdout",
        "0",
        "--k",
        &k,
    ];
    if let Some(weights) = weights {
        args.extend(["--start", weights]);
    }
    number_after(&ok(&args), "; loss ")
}

/// Tunes on `train`, returns (the other half's loss before, after, the summary).
fn tune_and_check(train: &str, other: &str, dir: &Path) -> (f64, f64, String) {
    let tuned = dir.join("tuned.txt");
    let summary = ok(&[
        "tune",
        train,
        "-o",
        tuned.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    let k = number_after(&summary, "K ");
    let before = loss_on(other, None, k, dir);
    let after = loss_on(other, Some(tuned.to_str().unwrap()), k, dir);
    (before, after, summary)
}

#[test]
fn tuning_one_half_does_not_raise_the_other_halfs_loss() {
    let dir = tempfile::tempdir().unwrap();
    let (even, odd) = halves(dir.path(), usize::MAX);
    for (train, other) in [(&even, &odd), (&odd, &even)] {
        let (before, after, summary) = tune_and_check(train, other, dir.path());
        assert!(
            after <= before,
            "{train} -> {other}: {before} -> {after}\n{summary}"
        );
        // Early stopping: the epoch kept is named, and the run ended before 100 epochs.
        let kept = number_after(&summary, "kept epoch ");
        assert!(kept >= 1.0, "{summary}");
        assert!(summary.contains("stopped early"), "{summary}");
        assert!(summary.contains("the weights that moved most"), "{summary}");
    }
}

#[test]
fn tuning_a_small_sample_does_not_raise_the_other_halfs_loss() {
    let dir = tempfile::tempdir().unwrap();
    let (even, odd) = halves(dir.path(), 10_000);
    let (before, after, summary) = tune_and_check(&even, &odd, dir.path());
    assert!(after <= before, "{before} -> {after}\n{summary}");
}

/// Without a held-out set the run goes to its last epoch; with one, the weights written
/// have the held-out loss the summary reports as the lowest.
#[test]
fn early_stopping_writes_the_best_epoch() {
    let dir = tempfile::tempdir().unwrap();
    let (even, _) = halves(dir.path(), 10_000);
    let tuned = dir.path().join("tuned.txt");
    let tuned = tuned.to_str().unwrap();
    let summary = ok(&[
        "tune",
        &even,
        "-o",
        tuned,
        "--holdout",
        "0",
        "--epochs",
        "7",
    ]);
    assert!(summary.contains("7 of 7 epochs"), "{summary}");
    assert!(!summary.contains("kept epoch"), "{summary}");

    let summary = ok(&[
        "tune",
        &even,
        "-o",
        tuned,
        "--epochs",
        "60",
        "--patience",
        "3",
        "--verbose",
    ]);
    let kept = number_after(&summary, "kept epoch ") as usize;
    // Each epoch's losses are printed with --verbose; the kept one is the lowest held-out.
    let held: Vec<f64> = summary
        .lines()
        .filter(|l| l.starts_with("epoch "))
        .map(|l| number_after(l, "held-out "))
        .collect();
    let last = summary
        .lines()
        .find(|l| l.starts_with("tune: positions"))
        .expect("summary line");
    let start = number_after(last, "held-out ");
    let (best, lowest) = held
        .iter()
        .copied()
        .enumerate()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .expect("epochs ran");
    if lowest < start {
        assert_eq!(kept, best + 1, "{summary}");
        // The file holds the kept epoch's weights, rounded to integers.
        let written = number_after(last, &format!("held-out {start:.6} -> "));
        assert!(
            (written - lowest).abs() < 2e-3,
            "{written} against {lowest}"
        );
    } else {
        assert_eq!(kept, 0, "{summary}");
    }
    // The run stopped `patience` epochs after the best one, or at the end.
    assert!(
        held.len() == 60 || held.len() == kept + 3,
        "{} epochs, kept {kept}",
        held.len()
    );
}
