//! Every fuzz target's entry point (`pawnstorm::fuzzing`) on every seed of its corpus
//! (`fuzz/corpus/TARGET`) and on every input a fuzzer once found a fault with
//! (`fuzz/regressions/TARGET`, each named after what it found): none may panic, and each
//! makes the target's own assertions (FEN round trips, legal moves against shakmaty, the
//! lichess scanner against serde_json, the evaluation's paths against each other). The
//! fuzzers themselves run in CI through `scripts/fuzz`; this keeps their findings fixed in
//! every test run.

use std::path::Path;

use pawnstorm::fuzzing::{TARGETS, run};

fn inputs(folder: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut paths: Vec<_> = entries
        .map(|e| e.expect("a directory entry").path())
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_seed_and_every_past_finding_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut checked = Vec::new();
    for target in TARGETS {
        let seeds = inputs(&root.join("corpus").join(target));
        assert!(!seeds.is_empty(), "fuzz/corpus/{target} has no seeds");
        let findings = inputs(&root.join("regressions").join(target));
        for path in seeds.iter().chain(&findings) {
            let data = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            eprintln!("{target}: {}", path.display());
            assert!(run(target, &data), "no target {target}");
        }
        checked.push(format!("{target} {}+{}", seeds.len(), findings.len()));
    }
    eprintln!("seeds+findings: {}", checked.join(", "));
}

#[test]
fn an_unknown_target_is_refused() {
    assert!(!run("no such target", b""));
}
