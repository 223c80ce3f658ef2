//! One build, every vector path: the binary run at each level this CPU has
//! (`PAWNSTORM_SIMD`) gives the same bytes, the same node counts and the same search, and
//! `info --cpu` says which path it took and why.

use crate::common;

use std::process::{Command, Output};

use assert_cmd::prelude::*;
use pawnstorm_kernels::simd::Level;

fn run(level: Option<&str>, args: &[&str]) -> Output {
    let mut command = Command::cargo_bin("pawnstorm").expect("binary built");
    command.env_remove("PAWNSTORM_SIMD");
    if let Some(level) = level {
        command.env("PAWNSTORM_SIMD", level);
    }
    let output = command.args(args).output().expect("runs");
    assert!(
        output.status.success(),
        "{level:?} {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).to_string()
}

fn field(info: &str, key: &str) -> String {
    info.lines()
        .find_map(|l| l.strip_prefix(&format!("{key}: ")))
        .unwrap_or_else(|| panic!("no {key} in {info}"))
        .to_string()
}

#[test]
fn info_cpu_names_the_level_and_forcing_lowers_it() {
    let native = stdout(&run(None, &["info", "--cpu"]));
    let detected = Level::parse(&field(&native, "detected")).expect("a level name");
    assert!(
        field(&native, "level").starts_with(detected.name()),
        "{native}"
    );
    for level in Level::available() {
        let forced = stdout(&run(Some(level.name()), &["info", "--cpu"]));
        assert_eq!(
            field(&forced, "level"),
            format!(
                "{} (forced by PAWNSTORM_SIMD={})",
                level.name(),
                level.name()
            )
        );
        assert_eq!(field(&forced, "detected"), detected.name());
        if level < Level::Avx2 {
            assert_eq!(field(&forced, "sliding attacks"), "magics", "{forced}");
            assert_eq!(field(&forced, "nnue kernels"), "portable", "{forced}");
        }
        if level == Level::Scalar {
            assert_eq!(field(&forced, "scalar popcount"), "portable");
        }
    }
    // A level the CPU lacks, or no level at all: a warning, and the detected level.
    let unknown = run(Some("avx9000"), &["info", "--cpu"]);
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("PAWNSTORM_SIMD=\"avx9000\""));
    assert!(field(&stdout(&unknown), "level").starts_with(detected.name()));
}

/// Bulk evaluation (the terms and the network), masks, NNUE features, perft and bench at
/// every level: byte-identical outputs, equal node counts.
#[test]
fn every_level_gives_the_same_results() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    let pgn = common::fixture("pgn/famous-games.pgn");
    run(None, &["import", &pgn, "-o", db.to_str().unwrap()]);
    let db = db.to_str().unwrap();
    let mut reference: Option<Vec<Vec<u8>>> = None;
    for level in Level::available() {
        let name = level.name();
        let out = |file: &str| dir.path().join(format!("{name}-{file}"));
        let (terms, net, masks) = (out("terms.npy"), out("nnue.npy"), out("masks.npy"));
        // The NNUE feature loop and the DB's block check take the process's level too.
        let features = out("features.npz");
        run(
            Some(name),
            &[
                "features",
                db,
                "--kind",
                "nnue",
                "--set",
                "768",
                "-o",
                features.to_str().unwrap(),
            ],
        );
        run(Some(name), &["eval", db, "-o", terms.to_str().unwrap()]);
        run(
            Some(name),
            &["eval", db, "--eval", "nnue", "-o", net.to_str().unwrap()],
        );
        run(
            Some(name),
            &[
                "features",
                db,
                "--kind",
                "masks",
                "-o",
                masks.to_str().unwrap(),
            ],
        );
        let perft = stdout(&run(Some(name), &["perft", "5"]));
        let bench = stdout(&run(Some(name), &["bench"]));
        let nodes = bench
            .lines()
            .find(|l| l.starts_with("Nodes searched"))
            .unwrap_or_else(|| panic!("{bench}"))
            .to_string();
        let mut results: Vec<Vec<u8>> = [terms, net, masks, features]
            .iter()
            .map(|p| std::fs::read(p).unwrap())
            .collect();
        results.push(perft.split(',').next().unwrap_or("").as_bytes().to_vec());
        results.push(nodes.into_bytes());
        match &reference {
            None => reference = Some(results),
            Some(expected) => {
                for (i, (got, want)) in results.iter().zip(expected).enumerate() {
                    assert!(
                        got == want,
                        "{name}: output {i} differs from the first level's"
                    );
                }
            }
        }
    }
}

/// The trainer gives the same net bit for bit at every level: its pass keeps each
/// gradient value's sums in one order whatever the vector width (the flat pass runs the
/// AVX2 level's code at AVX-512: `model::training_level`). 144 neurons are 9 units of 16:
/// two blocks of 4 held in registers and a remainder of 1.
#[test]
fn every_level_trains_the_same_net() {
    // One run a level that has code of its own, so that no two runs of one function are
    // compared.
    let mut levels: Vec<Level> = Level::available()
        .into_iter()
        .map(pawnstorm::training::net::model::training_level)
        .collect();
    levels.dedup();
    every_level_trains(&levels, &["--hidden", "144"]);
}

// The bucketed net below must be past the flat passes' bound.
const _: () = assert!(4 * 768 * 80 * 4 > pawnstorm::training::net::model::FLAT_BYTES);

/// The same for the tiled passes of king-bucketed nets, which run at every level's own
/// code, AVX-512 included (where it trained `768x8hm → 512` 1.08× faster than AVX2's
/// code on an Intel Xeon). 80 neurons are 5 units: tiles of 2, 2 and 1; four buckets of
/// 768 rows make the first layer 983 KB, past `FLAT_BYTES`, so the passes are tiled.
#[test]
fn every_level_trains_the_same_bucketed_net() {
    every_level_trains(
        &Level::available(),
        &["--hidden", "80", "--king-buckets", "4"],
    );
}

fn every_level_trains(levels: &[Level], net_args: &[&str]) {
    #[cfg(target_arch = "x86_64")]
    assert!(levels.len() >= 2, "only {levels:?} to compare");
    let dir = tempfile::tempdir().expect("temporary folder");
    let input = common::fixture("texel/labeled-from-fixture-pgns.epd");
    let mut nets = Vec::new();
    for &level in levels {
        let out = dir.path().join(format!("{}.nnue", level.name()));
        let out = out.to_str().expect("a UTF-8 path");
        let mut args = vec!["train-net", &input, "-o", out];
        args.extend_from_slice(net_args);
        args.extend_from_slice(&[
            "--epochs",
            "2",
            "--batch-size",
            "5000",
            "--shuffle-buffer",
            "8192",
            "--wdl",
            "1",
            "--scale",
            "400",
        ]);
        run(Some(level.name()), &args);
        let net = pawnstorm::nnue::Network::load(std::path::Path::new(out)).expect("the net loads");
        nets.push((level, net.raw_bytes()));
    }
    let (first, bytes) = &nets[0];
    for (level, other) in &nets[1..] {
        assert!(
            other == bytes,
            "{} and {} trained different nets",
            first.name(),
            level.name()
        );
    }
}
