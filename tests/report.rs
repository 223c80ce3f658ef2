//! `pawnstorm report`: one self-contained page (no script, no external reference) with
//! every chart as inline SVG that parses as XML; each histogram counts every position
//! reported, the calibration shows the fitted K, the counts table says what the DB holds,
//! and `--sample` reports on about that many positions.

use crate::common;

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

/// The `data-count` of each element of class `class` in chart `id` of `page`, in order.
fn chart_counts(page: &str, id: &str, class: &str) -> Vec<u64> {
    let start = page
        .find(&format!("<figure id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no chart {id}"));
    let svg_start = start + page[start..].find("<svg").unwrap();
    let svg_end = svg_start + page[svg_start..].find("</svg>").unwrap() + "</svg>".len();
    let doc = roxmltree::Document::parse(&page[svg_start..svg_end]).expect("the chart is XML");
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .map(|n| n.attribute("data-count").unwrap().parse::<u64>().unwrap())
        .collect()
}

/// The rows of `<table id="terms">`: each term's name and its cells (`None` for an empty
/// cell), as the page shows them.
fn terms_table(page: &str) -> Vec<(String, Vec<Option<f64>>)> {
    let start = page.find("<table id=\"terms\">").expect("a terms table");
    let end = start + page[start..].find("</table>").unwrap() + "</table>".len();
    let doc = roxmltree::Document::parse(&page[start..end]).expect("the table is XML");
    doc.descendants()
        .filter(|n| n.has_tag_name("tr"))
        .skip(1)
        .map(|row| {
            let name = row
                .children()
                .find(|c| c.has_tag_name("th"))
                .and_then(|c| c.text())
                .unwrap()
                .to_string();
            let cells = row
                .children()
                .filter(|c| c.has_tag_name("td"))
                .map(|c| c.text().map(|t| t.parse::<f64>().unwrap()))
                .collect();
            (name, cells)
        })
        .collect()
}

/// The Texel loss of `samples` (evaluation in cp, White's score 0 / 0.5 / 1) at K.
fn texel_loss(samples: &[(f64, f64)], k: f64) -> f64 {
    samples
        .iter()
        .map(|&(eval, result)| {
            let predicted = 1.0 / (1.0 + 10f64.powf(-k * eval / 400.0));
            (predicted - result).powi(2)
        })
        .sum::<f64>()
        / samples.len() as f64
}

/// The K minimising the Texel loss: the best of a grid over ln K from 0.01 to 20, then a
/// golden-section search between its neighbours.
fn fit_k_here(samples: &[(f64, f64)]) -> f64 {
    let (low, high, steps) = (0.01f64.ln(), 20f64.ln(), 300);
    let at = |i: usize| low + (high - low) * i as f64 / steps as f64;
    let best = (0..=steps)
        .min_by(|&a, &b| {
            texel_loss(samples, at(a).exp()).total_cmp(&texel_loss(samples, at(b).exp()))
        })
        .unwrap();
    assert!(best > 0 && best < steps, "K at the grid's end");
    let (mut a, mut b) = (at(best - 1), at(best + 1));
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    while b - a > 1e-9 {
        let (c, d) = (b - ratio * (b - a), a + ratio * (b - a));
        if texel_loss(samples, c.exp()) < texel_loss(samples, d.exp()) {
            b = d;
        } else {
            a = c;
        }
    }
    ((a + b) / 2.0).exp()
}

/// The page's numbers recounted apart from `report`: the positions and results read from
/// the DB by the library, their evaluation and terms from `pawnstorm eval --terms` (its
/// scores checked against the reference `eval::evaluate` of each position), then the
/// evaluation and phase histograms binned, each term's mean by phase bucket and K fitted
/// (a grid and golden-section search of the Texel loss written here) and compared with
/// what the page shows: every bar's count, every table cell to its one decimal, K to its
/// three and the losses to their five.
#[test]
fn the_pages_numbers_match_an_independent_count() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("games.psdb");
    let db = db.to_str().unwrap();
    let (ok, stderr) = run(&[
        "import",
        &fixture("pgn/lichess-2025-05-sample.pgn"),
        "-o",
        db,
    ]);
    assert!(ok, "{stderr}");
    let html = dir.path().join("report.html");
    let (ok, stderr) = run(&["report", db, "-o", html.to_str().unwrap()]);
    assert!(ok, "{stderr}");
    let page = std::fs::read_to_string(&html).unwrap();
    let csv = dir.path().join("terms.csv");
    let (ok, stderr) = run(&["eval", db, "-o", csv.to_str().unwrap(), "--terms"]);
    assert!(ok, "{stderr}");

    let database = pawnstorm::db::Database::open(db).unwrap();
    let records: Vec<pawnstorm::position::labels::Record> = database
        .records(0..database.len())
        .map(Result::unwrap)
        .collect();
    assert!(records.len() > 20_000, "{}", records.len());
    let text = std::fs::read_to_string(&csv).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (score_at, phase_at) = (column("score"), column("phase"));
    let terms: Vec<(String, usize)> = header
        .iter()
        .enumerate()
        .filter_map(|(i, h)| h.strip_suffix("_final").map(|n| (n.to_string(), i)))
        .collect();
    assert!(terms.len() > 20, "{header:?}");
    let rows: Vec<Vec<i64>> = lines
        .map(|l| l.split(',').map(|v| v.parse::<i64>().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), records.len());

    let mut eval_bins = vec![0u64; 60];
    let mut phase_bins = vec![0u64; 25];
    let mut sums = vec![[0f64; 5]; terms.len()];
    let mut in_bucket = [0u64; 5];
    let mut samples = Vec::new();
    for (row, record) in rows.iter().zip(&records) {
        let score = row[score_at];
        assert_eq!(
            score,
            pawnstorm::eval::evaluate(&record.position) as i64,
            "{:?}",
            record.position
        );
        // 50 cp bins from -1500; whatever lies beyond goes to the end bins.
        eval_bins[((score.clamp(-1500, 1499) + 1500) / 50) as usize] += 1;
        let phase = row[phase_at];
        assert!((0..=24).contains(&phase), "{phase}");
        phase_bins[phase as usize] += 1;
        let bucket = (phase as usize / 5).min(4);
        in_bucket[bucket] += 1;
        for (t, (_, at)) in terms.iter().enumerate() {
            sums[t][bucket] += row[*at] as f64;
        }
        let result = match record.labels.result.expect("every game has a result") {
            pawnstorm::position::labels::GameResult::WhiteWin => 1.0,
            pawnstorm::position::labels::GameResult::Draw => 0.5,
            pawnstorm::position::labels::GameResult::BlackWin => 0.0,
        };
        samples.push((score as f64, result));
    }
    assert_eq!(chart_counts(&page, "chart-eval", "bar"), eval_bins);
    assert_eq!(chart_counts(&page, "chart-phase", "bar"), phase_bins);
    assert!(eval_bins[0] > 0 && eval_bins[59] > 0, "both end bins used");

    let table = terms_table(&page);
    assert_eq!(
        table.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        terms.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>()
    );
    let mut nonzero = 0;
    for ((name, cells), sums) in table.iter().zip(&sums) {
        assert_eq!(cells.len(), 5, "{name}");
        for (bucket, ((cell, &n), sum)) in cells.iter().zip(&in_bucket).zip(sums).enumerate() {
            match (*cell, n) {
                (None, 0) => {}
                (Some(shown), n) if n > 0 => {
                    let mean = sum / n as f64;
                    assert!(
                        (shown - mean).abs() <= 0.05 + 1e-9,
                        "{name}, phase bucket {bucket}: the page shows {shown}, the mean is {mean}"
                    );
                    nonzero += (shown != 0.0) as usize;
                }
                (shown, n) => panic!("{name}, bucket {bucket}: {shown:?} over {n} positions"),
            }
        }
    }
    assert!(nonzero > 50, "{nonzero} nonzero means");

    let k = fit_k_here(&samples);
    let (loss, baseline) = (texel_loss(&samples, k), texel_loss(&samples, 0.0));
    let shown = page
        .split("fitted K</th><td>")
        .nth(1)
        .and_then(|rest| rest.split("</td>").next())
        .expect("a fitted K");
    // "0.712 (Texel loss 0.12345, against 0.23456 for a draw everywhere)"
    let numbers: Vec<f64> = shown
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(numbers.len(), 3, "{shown}");
    eprintln!("K {k:.5}, loss {loss:.6}, baseline {baseline:.6}; the page: {shown}");
    assert!(
        (numbers[0] - k).abs() <= 0.0005 + 1e-9,
        "K: {shown} against {k}"
    );
    assert!(
        (numbers[1] - loss).abs() <= 0.000005 + 1e-12,
        "loss: {shown} against {loss}"
    );
    assert!(
        (numbers[2] - baseline).abs() <= 0.000005 + 1e-12,
        "baseline: {shown} against {baseline}"
    );
}
