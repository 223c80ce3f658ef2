//! `pawnstorm report`: one self-contained page (no script, no external reference) with
//! every chart as inline SVG that parses as XML; each histogram counts every position
//! reported, the calibration shows the fitted K, the counts table says what the DB holds,
//! and `--sample` reports on about that many positions.

mod common;

use std::process::Command;

use common::fixture;

fn run(args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_pawnstorm"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

/// The sum of `data-count` over the elements of class `class` in chart `id` of `page`.
fn chart_total(page: &str, id: &str, class: &str) -> u64 {
    let start = page
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let svg_start = start + page[start..].find("<svg").unwrap();
    let svg_end = svg_start + page[svg_start..].find("</svg>").unwrap() + "</svg>".len();
    let doc = roxmltree::Document::parse(&page[svg_start..svg_end]).expect("the chart is XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .map(|n| n.attribute("data-count").unwrap().parse::<u64>().unwrap())
        .sum()
}

#[test]
fn the_report_has_every_chart_and_counts_every_position() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    let db = db.to_str().unwrap();
    let (ok, stderr) = run(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        &fixture("texel/labeled-from-fixture-pgns.epd"),
        "-o",
        db,
    ]);
    assert!(ok, "{stderr}");
    let positions = pawnstorm::db::Database::open(db).unwrap().len();
    assert!(positions > 90_000, "{positions}");
    let html = dir.path().join("report.html");
    let (ok, stderr) = run(&["report", db, "-o", html.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    assert!(
        stderr.contains(&format!("reported on {positions} of {positions} positions")),
        "{stderr}"
    );
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    // Self-contained: no script, nothing loaded from elsewhere.
    assert!(!page.contains("<script") && !page.contains("src=") && !page.contains("href="));
    for id in [
        "chart-eval",
        "chart-stored",
        "chart-joint",
        "chart-phase",
        "chart-pieces",
        "chart-calibration",
    ] {
        assert!(page.contains(&format!("<figure id=\"{id}\">")), "{id}");
    }
    for id in ["chart-eval", "chart-phase", "chart-pieces"] {
        assert_eq!(chart_total(&page, id, "bar"), positions, "{id}");
    }
    // The stored scores: the lichess games' [%eval] comments.
    let scored = chart_total(&page, "chart-stored", "bar");
    assert!(scored > 1000, "{scored}");
    assert_eq!(chart_total(&page, "chart-joint", "cell"), scored);
    // Every position has a result here.
    assert_eq!(
        chart_total(&page, "chart-calibration", "observed"),
        positions
    );
    assert!(page.contains("fitted K</th><td>0."), "a K is fitted");
    assert!(page.contains("<table id=\"terms\">"));

    let sampled = dir.path().join("sampled.html");
    let (ok, stderr) = run(&[
        "report",
        db,
        "-o",
        sampled.to_str().unwrap(),
        "--sample",
        "10000",
    ]);
    assert!(ok, "{stderr}");
    let page = std::fs::read_to_string(&sampled).unwrap();
    let reported = chart_total(&page, "chart-eval", "bar");
    assert!((10_000..=20_000).contains(&reported), "{reported}");
}
