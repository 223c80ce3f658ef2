//! The integration tests in one test binary: each file beside this one is a module here
//! (`cargo test --release --test integration -- selfplay::` runs one file's tests). One
//! binary links once where 36 linked one each (about a third of a fresh 2-core build of
//! `scripts/test`), and its tests share the harness's threads. The tests that CI and
//! `scripts/test-cpus` run again on lower SIMD levels and emulated CPUs keep binaries of
//! their own (Cargo.toml's `[[test]]` list).

mod common;

mod binpack;
mod broken_pipe;
mod cli;
mod datagen;
mod db;
mod dedup;
mod eval_cli;
mod eval_columns;
mod export;
mod features_cli;
mod fen_oracle;
mod fuzz_corpus;
mod integrity;
mod interrupt;
mod label;
mod lichess_import;
mod memory;
mod nnue_search_cli;
mod parquet_import;
mod pictures;
mod readme;
mod report;
mod selfplay;
mod simd_levels;
mod skips;
mod split_cli;
mod suites;
mod train_net;
mod training;
mod tune;
mod tune_generalises;
mod uci;
mod uci_nnue;
mod uci_soak;
mod uci_tune;
mod wdl;

/// With `autotests = false`, a file added to `tests/` that is neither a module here nor a
/// `[[test]]` of Cargo.toml would never run, and nothing would say so.
#[test]
fn every_file_of_tests_is_a_module_here_or_a_test_target_of_its_own() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let read = |path: &str| {
        std::fs::read_to_string(root.join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
    };
    let this = read("tests/integration.rs");
    let modules: Vec<&str> = this
        .lines()
        .filter_map(|l| l.strip_prefix("mod ")?.strip_suffix(';'))
        .collect();
    let manifest = read("Cargo.toml");
    let targets: Vec<&str> = manifest
        .lines()
        .filter_map(|l| l.strip_prefix("path = \"tests/")?.strip_suffix(".rs\""))
        .collect();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(root.join("tests")).expect("tests/") {
        let path = entry.expect("an entry of tests/").path();
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            files.push(name);
        }
    }
    assert!(files.len() > 40, "{files:?}");
    for name in &files {
        let as_module = modules.contains(&name.as_str());
        let as_target = targets.contains(&name.as_str());
        assert!(
            as_module != as_target,
            "tests/{name}.rs: a module of tests/integration.rs: {as_module}, a [[test]] of \
             Cargo.toml: {as_target}; it must be exactly one"
        );
    }
    // `common` is tests/common/mod.rs, the helpers every test file shares.
    for module in modules.iter().filter(|&&m| m != "common") {
        assert!(
            files.iter().any(|f| f == module),
            "mod {module}: no tests/{module}.rs"
        );
    }
}
