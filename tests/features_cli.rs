//! `pawnstorm features` end to end: the CSV and the .npy agree with the masks fixture, the
//! scalar and SIMD paths write identical files, DB and text inputs give the same result.

use crate::common;

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use assert_cmd::prelude::*;

use common::fixture;

fn pawnstorm() -> Command {
    Command::cargo_bin("pawnstorm").expect("binary built")
}

fn run(args: &[&str]) -> String {
    let output = pawnstorm().args(args).output().expect("runs");
    let stderr = String::from_utf8_lossy(&output.stderr).to_string();
    assert!(output.status.success(), "{args:?} failed: {stderr}");
    stderr
}

/// Reads a .npy structured array by the format's specification: the header's dtype
/// fields, then fixed-size records.
/// A table row by column name.
type Row = HashMap<String, u64>;

fn read_npy(path: &Path) -> (Vec<(String, String)>, Vec<Row>) {
    let bytes = std::fs::read(path).expect("npy written");
    assert_eq!(&bytes[..8], b"\x93NUMPY\x01\x00", "magic and version 1.0");
    let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    assert_eq!((10 + header_len) % 64, 0, "data starts 64-byte aligned");
    let header = std::str::from_utf8(&bytes[10..10 + header_len]).expect("ASCII header");
    assert!(header.ends_with('\n'));
    assert!(header.contains("'fortran_order': False"));
    let descr = &header[header.find("[(").unwrap() + 1..header.find(")]").unwrap() + 1];
    let fields: Vec<(String, String)> = descr
        .split("), (")
        .map(|f| {
            let f = f.trim_matches(|c| c == '(' || c == ')');
            let parts: Vec<&str> = f.split(", ").map(|p| p.trim_matches('\'')).collect();
            (parts[0].to_string(), parts[1].to_string())
        })
        .collect();
    let shape: usize = header[header.find("'shape': (").unwrap() + 10..]
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let width = |t: &str| match t {
        "<u8" => 8,
        "<u2" => 2,
        other => panic!("unexpected type {other}"),
    };
    let record: usize = fields.iter().map(|(_, t)| width(t)).sum();
    let data = &bytes[10 + header_len..];
    assert_eq!(data.len(), shape * record, "records fill the file exactly");
    let rows = data
        .chunks_exact(record)
        .map(|chunk| {
            let mut at = 0;
            let mut row = HashMap::new();
            for (name, kind) in &fields {
                let w = width(kind);
                let mut value = [0u8; 8];
                value[..w].copy_from_slice(&chunk[at..at + w]);
                row.insert(name.clone(), u64::from_le_bytes(value));
                at += w;
            }
            row
        })
        .collect();
    (fields, rows)
}

fn read_csv(path: &Path) -> Vec<Row> {
    let text = std::fs::read_to_string(path).expect("csv written");
    let mut lines = text.lines();
    let header: Vec<String> = lines.next().unwrap().split(',').map(String::from).collect();
    lines
        .map(|line| {
            header
                .iter()
                .cloned()
                .zip(line.split(',').map(|v| v.parse::<u64>().expect("integer")))
                .collect()
        })
        .collect()
}

#[test]
fn csv_and_npy_hold_the_expected_masks_on_both_paths() {
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("masks.csv");
    let npy = dir.path().join("masks.npy");
    let npy_scalar = dir.path().join("masks-scalar.npy");
    let input = fixture("masks/positions.epd");
    let summary = run(&[
        "features",
        &input,
        "--kind",
        "masks",
        "-o",
        csv.to_str().unwrap(),
    ]);
    assert!(
        summary.contains("2000 positions") && summary.contains("path SIMD"),
        "{summary}"
    );
    run(&["features", &input, "-o", npy.to_str().unwrap()]);
    let summary = run(&[
        "--scalar",
        "features",
        &input,
        "-o",
        npy_scalar.to_str().unwrap(),
    ]);
    assert!(summary.contains("path scalar"), "{summary}");
    assert_eq!(
        std::fs::read(&npy).unwrap(),
        std::fs::read(&npy_scalar).unwrap()
    );

    let expected = read_csv(Path::new(&fixture("masks/expected.csv")));
    let from_csv = read_csv(&csv);
    let (fields, from_npy) = read_npy(&npy);
    let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names[..17],
        [
            "index",
            "white_passed",
            "white_isolated",
            "white_doubled",
            "white_backward",
            "white_supported",
            "white_phalanx",
            "black_passed",
            "black_isolated",
            "black_doubled",
            "black_backward",
            "black_supported",
            "black_phalanx",
            "white_kdist_own",
            "white_kdist_their",
            "black_kdist_own",
            "black_kdist_their",
        ]
    );
    assert_eq!(expected.len(), 2000);
    assert_eq!(from_csv.len(), 2000);
    assert_eq!(from_npy.len(), 2000);
    for (i, row) in expected.iter().enumerate() {
        for (name, value) in row {
            assert_eq!(from_csv[i][name], *value, "csv row {i} {name}");
            assert_eq!(from_npy[i][name], *value, "npy row {i} {name}");
        }
    }
}

#[test]
fn a_db_input_gives_the_same_features_as_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("masks.psdb");
    let from_db = dir.path().join("from-db.csv");
    let from_text = dir.path().join("from-text.csv");
    let input = fixture("masks/positions.epd");
    run(&["import", &input, "-o", db.to_str().unwrap()]);
    run(&[
        "features",
        db.to_str().unwrap(),
        "-o",
        from_db.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    run(&[
        "features",
        &input,
        "-o",
        from_text.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    assert_eq!(
        std::fs::read(&from_db).unwrap(),
        std::fs::read(&from_text).unwrap()
    );
}

#[test]
fn unknown_output_format_fails_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("masks.parquet");
    let output = pawnstorm()
        .args([
            "features",
            &fixture("epd/bk.epd"),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("unknown output format"));
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// numpy itself loads the file as it is (the project's virtual environment's numpy).
#[test]
fn numpy_loads_the_npy() {
    let Some(python) = common::python_with_numpy() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let npy = dir.path().join("masks.npy");
    run(&[
        "features",
        &fixture("masks/positions.epd"),
        "-o",
        npy.to_str().unwrap(),
    ]);
    let script = format!(
        "import numpy, csv\n\
         a = numpy.load({npy:?})\n\
         rows = list(csv.DictReader(open({csv:?})))\n\
         assert a.shape == (len(rows),), a.shape\n\
         bad = sum(int(a[k][int(r['index'])]) != int(v) for r in rows for k, v in r.items())\n\
         assert bad == 0, bad\n\
         print('ok', a.dtype.names[1])\n",
        npy = npy.to_str().unwrap(),
        csv = fixture("masks/expected.csv"),
    );
    let output = Command::new(&python)
        .args(["-c", &script])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&output.stdout).trim(),
        "ok white_passed"
    );
}
