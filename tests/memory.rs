//! Bounded memory: the anonymous memory (heap, not the DB's pages mapped from its file) of
//! `import` (EPD, PGN, zstd-compressed PGN, lichess JSONL), `eval -o`, `features -o` and
//! `export` does not grow with the input. Each runs on about 250k and 1M generated
//! positions; the peak, sampled from /proc, must stay small and the same within a few MiB
//! (a leak of even 10 bytes a position shows as 7 MiB).
//! (`features --kind terms --sparse` holds its arrays until the end by design: the
//! non-zero count goes first in the file.)

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::read_fixture;

/// The peak RssAnon of `pawnstorm args` in KiB, sampled every 2 ms.
/// Its standard error goes to a file: a pipe read only at the end would stop a command
/// that reports many rejections once the pipe is full.
fn peak_anon_kib(args: &[&str], dir: &Path) -> u64 {
    let stderr_path = dir.join("stderr.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
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
        let epd = format!("{name}.epd");
        let db = format!("{name}.psdb");
        let (games_pgn, games_zst, evals) = (
            format!("{name}.pgn"),
            format!("{name}.pgn.zst"),
            format!("{name}.jsonl"),
        );
        let runs: [&[&str]; 9] = [
            &["import", &games_pgn, "-o", "games.psdb"],
            &["import", &games_zst, "-o", "games.psdb"],
            &["import", &evals, "-o", "evals.psdb"],
            &["import", &epd, "-o", &db],
            &["eval", &db, "-o", "scores.npy"],
            &["features", &db, "--kind", "planes", "-o", "planes.npz"],
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
            &["export", &db, "-o", "out.epd"],
            &["features", &db, "--kind", "terms", "-o", "terms.npz"],
        ];
        let measured: Vec<(&'static str, u64)> = runs
            .iter()
            .zip([
                "import pgn",
                "import pgn.zst",
                "import jsonl",
                "import epd",
                "eval",
                "features planes",
                "features nnue",
                "export",
                "features terms",
            ])
            .map(|(args, what)| (what, peak_anon_kib(args, work)))
            .collect();
        peaks.push(measured);
    }
    for ((what, small), (_, large)) in peaks[0].iter().zip(&peaks[1]) {
        eprintln!(
            "{what}: peak anonymous memory {small} KiB at ~256k positions, {large} KiB at ~1M"
        );
        assert!(*large < 64 * 1024, "{what}: {large} KiB");
        assert!(
            *large <= small + 8 * 1024,
            "{what}: {small} KiB at ~256k positions, {large} KiB at ~1M"
        );
    }
}
