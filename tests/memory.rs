//! Bounded memory: the anonymous memory (heap, not the DB's pages mapped from its file) of
//! `import` (EPD, PGN, zstd-compressed PGN, lichess JSONL, Stockfish binpack), `eval -o`,
//! `features -o`, `export` (EPD, binpack), `label` (pawnstorm's own search), `merge` and
//! `tune` does not grow with the input beyond what a command holds by design. Each runs on
//! about 250k and 1M positions; the peak, sampled from /proc, must stay small, and the
//! larger run's may exceed the smaller's by at most 5 bytes for each position more (some
//! 3.7 MiB over the ~760k more positions), so that a leak of 10 bytes a position (7.3 MiB)
//! fails with room to spare. `tune` holds its training set (about 150 bytes a position) by
//! design: its allowance adds the set's size, counted by the library's loader.
//! (`features --kind terms --sparse` holds its arrays until the end by design: the
//! non-zero count goes first in the file. The Python `Loader` is measured nowhere here: it
//! is Python's, not this binary's.)

use crate::common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use pawnstorm::db::{Columns, Database, DbWriter};
use pawnstorm::eval::Prepared;
use pawnstorm::movegen::{Board, MoveList, legal_moves};
use pawnstorm::position::labels::{Record, parse_line};
use pawnstorm::training::tune::{Dataset, LoadOptions};

use common::read_fixture;

/// The growth of a peak allowed for each position more: half of the 10 bytes a position
/// that a leak must not get past.
const LEAK_BYTES: u64 = 5;

/// The peak RssAnon of `pawnstorm args` in KiB, sampled every 2 ms, under a fixed glibc
/// mmap threshold (below).
/// Its standard error goes to a file: a pipe read only at the end would stop a command
/// that reports many rejections once the pipe is full.
fn peak_anon_kib(args: &[&str], dir: &Path) -> u64 {
    let stderr_path = dir.join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        // Blocks of a few MB freed by one worker and allocated by the next: with glibc's
        // sliding mmap threshold they come from per-thread arenas that keep them, and the
        // peak then swings by several blocks from one run to the next (16 to 27 MiB for
        // `features --kind terms`, against a bound of 3.7 MiB). A fixed threshold returns
        // them when freed, so the peak is what is live: a leak still counts in full.
        .env("MALLOC_MMAP_THRESHOLD_", "131072")
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr_path).expect("a file for stderr"))
        .spawn()
        .expect("starts");
    let status_path = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    while child.try_wait().unwrap().is_none() {
        if let Ok(status) = std::fs::read_to_string(&status_path)
            && let Some(kib) = status
                .lines()
                .find_map(|l| l.strip_prefix("RssAnon:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let status = child.wait().unwrap();
    let stderr = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(status.success(), "{args:?}: {stderr}");
    // Every generated record is good: a rejection means the input, not the memory, is off.
    assert!(
        stderr.contains("rejected 0 records") || !args.contains(&"import"),
        "{args:?}: {stderr}"
    );
    peak
}

#[test]
fn anonymous_memory_does_not_grow_with_the_input() {
    if !Path::new("/proc/self/status").exists() {
        common::skip("no /proc to sample memory from");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let texel = read_fixture("texel/labeled-from-fixture-pgns.epd");
    // 28,976 positions with [%eval] comments, ratings and clocks in 438 games.
    let pgn = read_fixture("pgn/lichess-2025-05-sample.pgn");
    // lichess evaluation lines for the texel positions, one or two evaluations each.
    let jsonl: String = texel
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let fen: Vec<&str> = line.split_whitespace().take(4).collect();
            format!(
                "{{\"fen\":\"{}\",\"evals\":[{{\"pvs\":[{{\"cp\":{},\"line\":\"e2e4 e7e5\"}}],\"knodes\":{},\"depth\":{}}}]}}\n",
                fen.join(" "),
                (i % 300) as i64 - 150,
                i % 5000,
                20 + i % 30
            )
        })
        .collect();
    // The texel positions, each with a score and its first legal move (the binpack export
    // needs a score, a result and a move): no position follows from the one before, so
    // every binpack entry starts a chain and both sizes fill many of the writer's 1 MiB
    // blocks (the reader holds one block's entries at a time).
    let with_moves: Vec<Record> = texel
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let mut record = parse_line(line).unwrap().unwrap();
            let mut moves = MoveList::new();
            legal_moves(&Board::new(record.position.clone()), &mut moves);
            record.labels.move_played = Some(moves[0].label_code());
            record.labels.score = Some((i % 600) as i32 - 300);
            record
        })
        .collect();
    let mut peaks = Vec::new();
    for (name, copies, games) in [("small", 4, 9), ("large", 16, 35)] {
        std::fs::write(work.join(format!("{name}.epd")), texel.repeat(copies)).unwrap();
        std::fs::write(work.join(format!("{name}.pgn")), pgn.repeat(games)).unwrap();
        std::fs::write(
            work.join(format!("{name}.pgn.zst")),
            zstd::encode_all(pgn.repeat(games).as_bytes(), 3).unwrap(),
        )
        .unwrap();
        std::fs::write(work.join(format!("{name}.jsonl")), jsonl.repeat(copies)).unwrap();
        let mut writer = DbWriter::create(
            work.join(format!("{name}-moves.psdb")),
            4096,
            Columns::NONE,
            false,
        )
        .unwrap();
        for _ in 0..copies {
            for record in &with_moves {
                writer.push(record).unwrap();
            }
        }
        writer.finish().unwrap();
        let epd = format!("{name}.epd");
        let db = format!("{name}.psdb");
        let (games_pgn, games_zst, evals, moves_db, binpack, shards) = (
            format!("{name}.pgn"),
            format!("{name}.pgn.zst"),
            format!("{name}.jsonl"),
            format!("{name}-moves.psdb"),
            format!("{name}.binpack"),
            format!("{name}-shards"),
        );
        let (shard0, shard1) = (
            format!("{shards}/shard-00000.psdb"),
            format!("{shards}/shard-00001.psdb"),
        );
        // (what, arguments, the DB whose length is the positions the run handles)
        let runs: [(&str, &[&str], &str); 15] = [
            (
                "import pgn",
                &["import", &games_pgn, "-o", "games.psdb"],
                "games.psdb",
            ),
            (
                "import pgn.zst",
                &["import", &games_zst, "-o", "games.psdb"],
                "games.psdb",
            ),
            (
                "import jsonl",
                &["import", &evals, "-o", "evals.psdb"],
                "evals.psdb",
            ),
            ("import epd", &["import", &epd, "-o", &db], &db),
            ("eval", &["eval", &db, "-o", "scores.npy"], &db),
            (
                "features planes",
                &["features", &db, "--kind", "planes", "-o", "planes.npz"],
                &db,
            ),
            (
                "features nnue",
                &[
                    "features",
                    &db,
                    "--kind",
                    "nnue",
                    "--set",
                    "halfka_v2_hm",
                    "-o",
                    "nnue.npz",
                ],
                &db,
            ),
            ("export", &["export", &db, "-o", "out.epd"], &db),
            (
                "features terms",
                &["features", &db, "--kind", "terms", "-o", "terms.npz"],
                &db,
            ),
            (
                "label --nodes 1",
                &["label", &db, "-o", "labelled.psdb", "--nodes", "1"],
                &db,
            ),
            (
                "merge",
                &["merge", &shard0, &shard1, "-o", "merged.psdb"],
                "merged.psdb",
            ),
            (
                "export binpack",
                &["export", &moves_db, "-o", &binpack],
                &moves_db,
            ),
            (
                "import binpack",
                &["import", &binpack, "-o", "from-binpack.psdb"],
                "from-binpack.psdb",
            ),
            // K given: fitting it would hold every training position's (eval, result) too.
            (
                "tune",
                &[
                    "tune",
                    &db,
                    "-o",
                    "tuned.txt",
                    "--epochs",
                    "2",
                    "--k",
                    "1.1",
                ],
                &db,
            ),
            // Not measured: the merge's inputs, halves of the DB (run before the merge).
            (
                "split",
                &["split", &db, "--shards", "2", "-o", &shards],
                &db,
            ),
        ];
        let mut measured = Vec::new();
        for index in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 14, 10, 11, 12, 13] {
            let (what, args, counted) = runs[index];
            let started = Instant::now();
            let peak = peak_anon_kib(args, work);
            let seconds = started.elapsed().as_secs_f64();
            if what == "split" {
                continue;
            }
            let positions = Database::open(work.join(counted)).unwrap().len();
            // What tune holds by design: its training set, as its loader counts it (tune
            // loads with results needed, --holdout 0.1 and --seed 1 by default).
            let by_design = if what == "tune" {
                let options = LoadOptions {
                    needs_result: true,
                    holdout: 0.1,
                    seed: 1,
                    ..LoadOptions::default()
                };
                let mut dataset = Dataset::default();
                dataset
                    .add_db(
                        &Database::open(work.join(counted)).unwrap(),
                        0,
                        &Prepared::default(),
                        &options,
                        &|_| {},
                    )
                    .unwrap();
                dataset.size().1 as u64
            } else {
                0
            };
            measured.push(Run {
                what,
                positions,
                peak,
                by_design,
                seconds,
            });
        }
        peaks.push(measured);
    }
    for (small, large) in peaks[0].iter().zip(&peaks[1]) {
        let what = small.what;
        let more = large.positions.saturating_sub(small.positions);
        assert!(
            more > 700_000,
            "{what}: {} then {} positions",
            small.positions,
            large.positions
        );
        let design = large.by_design.saturating_sub(small.by_design) / 1024;
        let allowed = design + more * LEAK_BYTES / 1024;
        eprintln!(
            "{what}: peak anonymous memory {} KiB at {} positions ({:.1} s), {} KiB at {} ({:.1} s): \
             {:+} KiB, allowed {allowed} KiB ({design} KiB by design)",
            small.peak,
            small.positions,
            small.seconds,
            large.peak,
            large.positions,
            large.seconds,
            large.peak as i64 - small.peak as i64,
        );
        assert!(
            large.peak < 64 * 1024 + design,
            "{what}: {} KiB",
            large.peak
        );
        assert!(
            large.peak <= small.peak + allowed,
            "{what}: {} KiB at {} positions, {} KiB at {}: more than {LEAK_BYTES} bytes for \
             each position more ({allowed} KiB, {design} KiB of them by design)",
            small.peak,
            small.positions,
            large.peak,
            large.positions
        );
    }
}

/// One measured command at one size.
struct Run {
    what: &'static str,
    positions: u64,
    peak: u64,
    /// Bytes the command holds for its input by design.
    by_design: u64,
    seconds: f64,
}
