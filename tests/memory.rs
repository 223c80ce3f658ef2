//! Bounded memory: the anonymous memory (heap, not the DB's pages mapped from its file) of
//! `import`, `eval -o`, `features -o` and `export` does not grow with the input. Each runs
//! on 250k and on 1M generated positions; the peak, sampled from /proc, must stay small and
//! the same within a few MiB (a leak of even 10 bytes a position shows as 7 MiB).
//! (`features --kind terms --sparse` holds its arrays until the end by design: the
//! non-zero count goes first in the file.)

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use common::read_fixture;

/// The peak RssAnon of `pawnstorm args` in KiB, sampled every 2 ms.
fn peak_anon_kib(args: &[&str], dir: &Path) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
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
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    peak
}

#[test]
fn anonymous_memory_does_not_grow_with_the_input() {
    if !Path::new("/proc/self/status").exists() {
        eprintln!("SKIPPED: no /proc to sample memory from");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let work = dir.path();
    let texel = read_fixture("texel/labeled-from-fixture-pgns.epd");
    let mut peaks = Vec::new();
    for (name, copies) in [("small", 4), ("large", 16)] {
        std::fs::write(work.join(format!("{name}.epd")), texel.repeat(copies)).unwrap();
        let epd = format!("{name}.epd");
        let db = format!("{name}.psdb");
        let runs: [&[&str]; 6] = [
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
                "import",
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
        eprintln!("{what}: peak anonymous memory {small} KiB at 256k positions, {large} KiB at 1M");
        assert!(*large < 64 * 1024, "{what}: {large} KiB");
        assert!(
            *large <= small + 8 * 1024,
            "{what}: {small} KiB at 256k positions, {large} KiB at 1M"
        );
    }
}
