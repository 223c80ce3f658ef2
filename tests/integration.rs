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
