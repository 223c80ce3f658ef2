//! The win-draw-loss model (`pawnstorm::eval::wdl`) against the games themselves: on self-play
//! positions the fit never saw (`fixtures/wdl/selfplay-heldout.csv.gz`, other games of the
//! same engine), the win, draw and loss rates counted per score bucket are what the model
//! predicts on average, within a tolerance. The constants' own reproduction from the fit's
//! data is `python/tests/test_wdl.py`.

use crate::common;

use std::io::Read;

use common::fixture;
use pawnstorm::eval::wdl::wdl;

/// (score, material, result) rows, side to move's view.
fn held_out() -> Vec<(i32, u32, i8)> {
    let path = fixture("wdl/selfplay-heldout.csv.gz");
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(file)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("score,material,result"));
    lines
        .map(|line| {
            let mut fields = line.split(',').map(|f| f.parse::<i32>().expect(line));
            let (s, m, r) = (fields.next(), fields.next(), fields.next());
            (s.unwrap(), m.unwrap() as u32, r.unwrap() as i8)
        })
        .collect()
}

#[test]
fn predicted_rates_match_the_counted_ones_per_score_bucket() {
    let rows = held_out();
    assert!(rows.len() > 90_000, "{} rows", rows.len());
    // (low, high, tolerance on the expected score, win + draw / 2). The model is one
    // logistic curve in the score for wins and its mirror for losses, draws the rest: it
    // gets the expected score close where most positions are (measured: within 0.025 for
    // |score| < 150) and less so beyond, where the 5,000-node games are more decisive than
    // the curve; each of the three rates on its own is off by up to 0.115 (draws near
    // ±200 cp; measured on this file), which RATE_TOLERANCE allows and no more.
    let buckets = [
        (-2000, -300, 0.02),
        (-300, -150, 0.08),
        (-150, -75, 0.035),
        (-75, -25, 0.02),
        (-25, 25, 0.02),
        (25, 75, 0.02),
        (75, 150, 0.02),
        (150, 300, 0.08),
        (300, 2001, 0.02),
    ];
    const RATE_TOLERANCE: f64 = 0.13;
    let mut report = Vec::new();
    let mut failures = Vec::new();
    for (low, high, tolerance) in buckets {
        let inside: Vec<_> = rows
            .iter()
            .filter(|(s, _, _)| (low..high).contains(s))
            .collect();
        assert!(inside.len() > 2000, "[{low}, {high}): {}", inside.len());
        let n = inside.len() as f64;
        let counted = |outcome: i8| inside.iter().filter(|r| r.2 == outcome).count() as f64 / n;
        let (mut win, mut draw, mut loss) = (0.0, 0.0, 0.0);
        for (score, material, _) in &inside {
            let w = wdl(*score, *material);
            win += f64::from(w.win) / 1000.0;
            draw += f64::from(w.draw) / 1000.0;
            loss += f64::from(w.loss) / 1000.0;
        }
        let predicted = [win / n, draw / n, loss / n];
        let observed = [counted(1), counted(0), counted(-1)];
        report.push(format!(
            "[{low}, {high}) {} positions: observed w/d/l {:.3} {:.3} {:.3}, predicted {:.3} {:.3} {:.3}",
            inside.len(),
            observed[0],
            observed[1],
            observed[2],
            predicted[0],
            predicted[1],
            predicted[2]
        ));
        let expected = |rates: [f64; 3]| rates[0] + rates[1] / 2.0;
        if (expected(observed) - expected(predicted)).abs() > tolerance {
            failures.push(format!(
                "[{low}, {high}): expected score beyond {tolerance}"
            ));
        }
        if observed
            .iter()
            .zip(&predicted)
            .any(|(o, p)| (o - p).abs() > RATE_TOLERANCE)
        {
            failures.push(format!("[{low}, {high}): a rate beyond {RATE_TOLERANCE}"));
        }
    }
    // The log loss of the results under the model: what the fit minimised, on games it
    // never saw. Measured 0.6969 (the best model without material: 0.7465; Nelder-Mead's
    // poorer local minimum of the same data, once committed: 0.7073).
    let loss: f64 = rows
        .iter()
        .filter(|(s, _, _)| s.abs() <= 2000)
        .map(|&(score, material, result)| {
            let w = wdl(score, material);
            let p = match result {
                1 => w.win,
                0 => w.draw,
                _ => w.loss,
            };
            -(f64::from(p.max(1)) / 1000.0).ln()
        })
        .sum::<f64>()
        / rows.iter().filter(|(s, _, _)| s.abs() <= 2000).count() as f64;
    report.push(format!("log loss {loss:.5}"));
    if loss > 0.700 {
        failures.push(format!("log loss {loss:.5} > 0.700"));
    }
    eprintln!("{}", report.join("\n"));
    assert!(failures.is_empty(), "{failures:?}\n{}", report.join("\n"));
}
