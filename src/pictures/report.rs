//! `pawnstorm report`: one pass over a DB (every block, or evenly spaced blocks for
//! `--sample`) gathering what a trainer looks at before training on it, then one
//! self-contained HTML page of inline SVG charts (no script, no network).

use std::fmt::Write;

use rayon::prelude::*;

use crate::db::{Database, DbError};
use crate::eval::Prepared;
use crate::eval::batch::{BREAKDOWN_WIDTH, rows_breakdown};
use crate::eval::features::Path;
use crate::eval::terms::Term;
use crate::pictures::svg::escape;
use crate::training::tune::model::{fit_k, sigmoid};

/// Score histograms span this many centipawns either side, in bins of `SCORE_BIN`.
pub const SCORE_SPAN: i32 = 1500;
pub const SCORE_BIN: i32 = 50;
const SCORE_BINS: usize = (2 * SCORE_SPAN / SCORE_BIN) as usize;
/// The calibration curve's bins of evaluation.
const CALIBRATION_BIN: i32 = 100;
const CALIBRATION_SPAN: i32 = 1000;
const CALIBRATION_BINS: usize = (2 * CALIBRATION_SPAN / CALIBRATION_BIN) as usize;
/// The joint histogram of evaluation and stored score: this many bins a side.
const JOINT_BINS: usize = 30;
/// Phase buckets for the per-term means: 0-4, 5-9, 10-14, 15-19, 20-24.
pub const PHASE_BUCKETS: usize = 5;
/// At most this many (evaluation, result) pairs are kept for fitting K.
const MAX_SAMPLES: usize = 2_000_000;

/// Everything the page shows, gathered in one pass.
#[derive(Clone, Debug, Default)]
pub struct Summary {
    pub positions: u64,
    pub in_db: u64,
    pub labels: Vec<String>,
    pub eval: Vec<u64>,
    pub stored: Vec<u64>,
    pub scored: u64,
    pub phase: Vec<u64>,
    pub pieces: Vec<u64>,
    /// White wins, draws, Black wins.
    pub results: [u64; 3],
    /// Per evaluation bin: positions with a result, and their results summed (1, 0.5, 0).
    pub calibration: Vec<(u64, f64)>,
    pub joint: Vec<u64>,
    /// Per term and phase bucket, the tapered contribution summed; and the positions per
    /// bucket.
    pub term_sums: Vec<[f64; PHASE_BUCKETS]>,
    pub bucket_counts: [u64; PHASE_BUCKETS],
    /// (evaluation, result) pairs for K.
    pub samples: Vec<(f64, f64)>,
}

impl Summary {
    fn empty() -> Summary {
        Summary {
            eval: vec![0; SCORE_BINS],
            stored: vec![0; SCORE_BINS],
            phase: vec![0; 25],
            pieces: vec![0; 33],
            calibration: vec![(0, 0.0); CALIBRATION_BINS],
            joint: vec![0; JOINT_BINS * JOINT_BINS],
            term_sums: vec![[0.0; PHASE_BUCKETS]; Term::COUNT],
            ..Summary::default()
        }
    }

    fn merge(mut self, other: Summary) -> Summary {
        self.positions += other.positions;
        self.scored += other.scored;
        let add = |a: &mut Vec<u64>, b: &[u64]| a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        add(&mut self.eval, &other.eval);
        add(&mut self.stored, &other.stored);
        add(&mut self.phase, &other.phase);
        add(&mut self.pieces, &other.pieces);
        add(&mut self.joint, &other.joint);
        for i in 0..3 {
            self.results[i] += other.results[i];
        }
        for (a, b) in self.calibration.iter_mut().zip(&other.calibration) {
            a.0 += b.0;
            a.1 += b.1;
        }
        for (a, b) in self.term_sums.iter_mut().zip(&other.term_sums) {
            for k in 0..PHASE_BUCKETS {
                a[k] += b[k];
            }
        }
        for k in 0..PHASE_BUCKETS {
            self.bucket_counts[k] += other.bucket_counts[k];
        }
        let room = MAX_SAMPLES.saturating_sub(self.samples.len());
        self.samples.extend(other.samples.into_iter().take(room));
        self
    }
}

/// The bin of `value` among `bins` bins of `width` from `-span` (values outside go to the
/// end bins).
fn bin(value: i32, span: i32, width: i32, bins: usize) -> usize {
    (((value.clamp(-span, span - 1) + span) / width) as usize).min(bins - 1)
}

/// One pass over `db` (evenly spaced blocks holding about `sample` positions, if given),
/// on the current rayon pool; `progress(rows)` after each block.
pub fn summarise(
    db: &Database,
    prepared: &Prepared,
    sample: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<Summary, DbError> {
    let blocks = db.block_count();
    let step = match sample {
        Some(n) if n > 0 => {
            let wanted = n.div_ceil(db.block_size() as u64).max(1) as usize;
            blocks.div_ceil(wanted).max(1)
        }
        _ => 1,
    };
    let chosen: Vec<usize> = (0..blocks).step_by(step).collect();
    let summary = chosen
        .par_iter()
        .map(|&index| {
            let block = db.block(index)?;
            let mut part = Summary::empty();
            let rows = block.len.div_ceil(8) * 8;
            let mut values = vec![0i32; rows * BREAKDOWN_WIDTH];
            rows_breakdown(Path::native(), prepared, &block, 0..rows, &mut values);
            for row in 0..block.len {
                let v = &values[row * BREAKDOWN_WIDTH..][..BREAKDOWN_WIDTH];
                let (score, phase) = (v[0], v[1]);
                part.positions += 1;
                part.eval[bin(score, SCORE_SPAN, SCORE_BIN, SCORE_BINS)] += 1;
                part.phase[phase.clamp(0, 24) as usize] += 1;
                let pieces = (block.colors[0][row].0 | block.colors[1][row].0).count_ones();
                part.pieces[pieces.min(32) as usize] += 1;
                let bucket = (phase.clamp(0, 24) as usize / 5).min(PHASE_BUCKETS - 1);
                part.bucket_counts[bucket] += 1;
                for (t, sums) in part.term_sums.iter_mut().enumerate() {
                    sums[bucket] += v[4 + 3 * t + 2] as f64;
                }
                if let Some(stored) = block.score.map(|s| s[row])
                    && stored != crate::db::NO_SCORE
                {
                    part.scored += 1;
                    part.stored[bin(stored, SCORE_SPAN, SCORE_BIN, SCORE_BINS)] += 1;
                    let joint = |s| {
                        bin(
                            s,
                            SCORE_SPAN,
                            2 * SCORE_SPAN / JOINT_BINS as i32,
                            JOINT_BINS,
                        )
                    };
                    part.joint[joint(stored) * JOINT_BINS + joint(score)] += 1;
                }
                if let Some(result) = block.result.map(|r| r[row])
                    && result != crate::db::NO_RESULT
                {
                    let (slot, value) = match result {
                        1 => (0, 1.0),
                        0 => (1, 0.5),
                        _ => (2, 0.0),
                    };
                    part.results[slot] += 1;
                    let c = &mut part.calibration
                        [bin(score, CALIBRATION_SPAN, CALIBRATION_BIN, CALIBRATION_BINS)];
                    c.0 += 1;
                    c.1 += value;
                    if part.samples.len() < MAX_SAMPLES {
                        part.samples.push((score as f64, value));
                    }
                }
            }
            progress(block.len as u64);
            Ok(part)
        })
        .try_reduce(Summary::empty, |a, b| Ok(a.merge(b)))?;
    Ok(Summary {
        in_db: db.len(),
        labels: db.columns().names().iter().map(|s| s.to_string()).collect(),
        ..summary
    })
}

/// The page: counts, then each chart as inline SVG.
pub fn html(summary: &Summary, source: &str) -> String {
    let mut page = String::new();
    let _ = write!(
        page,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>pawnstorm report: {}</title><style>body{{font-family:sans-serif;margin:24px;color:#222}}h2{{margin-top:32px}}table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}th{{text-align:left}}figure{{margin:0 0 16px 0}}</style></head><body>\n",
        escape(source)
    );
    let _ = writeln!(page, "<h1>{}</h1>", escape(source));
    let fit = fit_k(&summary.samples).ok();
    let k_text = fit
        .as_ref()
        .map(|f| {
            format!(
                "{:.3} (Texel loss {:.5}, against {:.5} for a draw everywhere)",
                f.k, f.loss, f.baseline
            )
        })
        .unwrap_or_else(|| {
            "not fitted (no results, or results the evaluation does not predict)".to_string()
        });
    let _ = writeln!(
        page,
        "<table id=\"counts\"><tr><th>positions in the DB</th><td>{}</td></tr><tr><th>positions in this report</th><td>{}</td></tr><tr><th>label columns</th><td>{}</td></tr><tr><th>with a stored score</th><td>{}</td></tr><tr><th>results (White wins / draws / Black wins)</th><td>{} / {} / {}</td></tr><tr><th>fitted K</th><td>{}</td></tr></table>",
        summary.in_db,
        summary.positions,
        if summary.labels.is_empty() {
            "none".to_string()
        } else {
            escape(&summary.labels.join(", "))
        },
        summary.scored,
        summary.results[0],
        summary.results[1],
        summary.results[2],
        k_text
    );
    let score_labels: Vec<String> = (0..SCORE_BINS)
        .map(|i| format!("{}", -SCORE_SPAN + i as i32 * SCORE_BIN))
        .collect();
    page.push_str("<h2>The evaluation</h2>\n");
    page.push_str(&histogram(
        "chart-eval",
        &summary.eval,
        &score_labels,
        "evaluation (cp, White's view; the end bins hold everything beyond)",
    ));
    if summary.scored > 0 {
        page.push_str("<h2>The stored scores</h2>\n");
        page.push_str(&histogram(
            "chart-stored",
            &summary.stored,
            &score_labels,
            "stored score (cp, White's view)",
        ));
        page.push_str("<h2>The evaluation against the stored score</h2>\n");
        page.push_str(&heatmap("chart-joint", &summary.joint));
    }
    let phase_labels: Vec<String> = (0..25).map(|i| i.to_string()).collect();
    page.push_str("<h2>Game phase</h2>\n");
    page.push_str(&histogram(
        "chart-phase",
        &summary.phase,
        &phase_labels,
        "phase (24 = all pieces on, 0 = pawns and kings)",
    ));
    let piece_labels: Vec<String> = (0..33).map(|i| i.to_string()).collect();
    page.push_str("<h2>Pieces on the board</h2>\n");
    page.push_str(&histogram(
        "chart-pieces",
        &summary.pieces,
        &piece_labels,
        "pieces, kings and pawns included",
    ));
    if let Some(fit) = &fit {
        page.push_str("<h2>Calibration: predicted against observed score</h2>\n");
        page.push_str(&calibration(
            "chart-calibration",
            &summary.calibration,
            fit.k,
        ));
    }
    page.push_str("<h2>Mean contribution of each term by phase</h2>\n");
    page.push_str(&term_table(summary));
    page.push_str("</body></html>\n");
    page
}

const CHART_W: f64 = 720.0;
const CHART_H: f64 = 240.0;
const PAD: f64 = 50.0;

fn frame(id: &str, title: &str, body: &str) -> String {
    format!(
        "<figure id=\"{id}\"><svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\"><rect width=\"{w}\" height=\"{h}\" fill=\"#ffffff\"/>{body}<text x=\"{PAD}\" y=\"{ty}\" font-size=\"12\" fill=\"#000\">{}</text></svg></figure>\n",
        escape(title),
        w = CHART_W + 2.0 * PAD,
        h = CHART_H + 2.0 * PAD,
        ty = CHART_H + PAD + 36.0
    )
}

fn histogram(id: &str, counts: &[u64], labels: &[String], title: &str) -> String {
    let most = counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let width = CHART_W / counts.len() as f64;
    let mut body = String::new();
    let every = counts.len().div_ceil(12);
    for (i, &count) in counts.iter().enumerate() {
        let h = count as f64 / most * CHART_H;
        let x = PAD + i as f64 * width;
        let _ = write!(
            body,
            "<rect class=\"bar\" data-count=\"{count}\" x=\"{x:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"#4363d8\"><title>{}: {count}</title></rect>",
            PAD + CHART_H - h,
            (width - 1.0).max(0.5),
            escape(&labels[i])
        );
        if i % every == 0 {
            let _ = write!(
                body,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\" text-anchor=\"middle\" fill=\"#000\">{}</text>",
                x + width / 2.0,
                PAD + CHART_H + 14.0,
                escape(&labels[i])
            );
        }
    }
    let _ = write!(
        body,
        "<text x=\"{PAD}\" y=\"{:.1}\" font-size=\"10\" fill=\"#000\">{} most</text>",
        PAD - 6.0,
        most as u64
    );
    frame(id, title, &body)
}

fn heatmap(id: &str, joint: &[u64]) -> String {
    let most = joint.iter().copied().max().unwrap_or(0).max(1) as f64;
    let cell = CHART_H / JOINT_BINS as f64;
    let mut body = String::new();
    for y in 0..JOINT_BINS {
        for x in 0..JOINT_BINS {
            let count = joint[y * JOINT_BINS + x];
            if count == 0 {
                continue;
            }
            // Logarithmic shade: a few positions show, the crowded cells stay apart.
            let shade = ((count as f64).ln_1p() / most.ln_1p() * 255.0) as u8;
            let _ = write!(
                body,
                "<rect class=\"cell\" data-count=\"{count}\" x=\"{:.1}\" y=\"{:.1}\" width=\"{cell:.1}\" height=\"{cell:.1}\" fill=\"rgb({},{},{})\"/>",
                PAD + x as f64 * cell,
                PAD + CHART_H - (y + 1) as f64 * cell,
                255 - shade,
                255 - shade / 2,
                255
            );
        }
    }
    let _ = write!(
        body,
        "<line x1=\"{PAD}\" y1=\"{:.1}\" x2=\"{:.1}\" y2=\"{PAD}\" stroke=\"#e6194b\" stroke-width=\"1\"/><rect x=\"{PAD}\" y=\"{PAD}\" width=\"{CHART_H}\" height=\"{CHART_H}\" fill=\"none\" stroke=\"#000\"/>",
        PAD + CHART_H,
        PAD + CHART_H
    );
    frame(
        id,
        &format!(
            "x: evaluation, y: stored score, both -{SCORE_SPAN} to {SCORE_SPAN} cp; darker: more positions (log scale); red: equal"
        ),
        &body,
    )
}

fn calibration(id: &str, bins: &[(u64, f64)], k: f64) -> String {
    let x_of =
        |cp: f64| PAD + (cp + CALIBRATION_SPAN as f64) / (2.0 * CALIBRATION_SPAN as f64) * CHART_W;
    let y_of = |p: f64| PAD + (1.0 - p) * CHART_H;
    let mut body = String::new();
    let mut curve = String::new();
    for i in 0..=100 {
        let cp = -CALIBRATION_SPAN as f64 + i as f64 * 2.0 * CALIBRATION_SPAN as f64 / 100.0;
        let _ = write!(
            curve,
            "{}{:.1},{:.1} ",
            if i == 0 { "M" } else { "L" },
            x_of(cp),
            y_of(sigmoid(k, cp))
        );
    }
    let _ = write!(
        body,
        "<path id=\"predicted\" d=\"{curve}\" fill=\"none\" stroke=\"#4363d8\" stroke-width=\"2\"/>"
    );
    for (i, &(count, sum)) in bins.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let centre = -CALIBRATION_SPAN as f64 + (i as f64 + 0.5) * CALIBRATION_BIN as f64;
        let observed = sum / count as f64;
        let _ = write!(
            body,
            "<circle class=\"observed\" data-count=\"{count}\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"{:.1}\" fill=\"#e6194b\"><title>{centre} cp: {observed:.3} from {count}</title></circle>",
            x_of(centre),
            y_of(observed),
            (2.0 + (count as f64).log10()).min(7.0)
        );
    }
    let _ = write!(
        body,
        "<rect x=\"{PAD}\" y=\"{PAD}\" width=\"{CHART_W}\" height=\"{CHART_H}\" fill=\"none\" stroke=\"#000\"/>"
    );
    frame(
        id,
        &format!(
            "x: evaluation -{CALIBRATION_SPAN} to {CALIBRATION_SPAN} cp; y: White's score 0 to 1; blue: predicted with K = {k:.3}; red: observed (dot size: positions)"
        ),
        &body,
    )
}

fn term_table(summary: &Summary) -> String {
    let mut table = String::from("<table id=\"terms\"><tr><th>term</th>");
    for k in 0..PHASE_BUCKETS {
        let _ = write!(table, "<th>phase {}-{}</th>", 5 * k, (5 * k + 4).min(24));
    }
    table.push_str("</tr>");
    for term in Term::ALL {
        let _ = write!(table, "<tr><th>{}</th>", term.name());
        for k in 0..PHASE_BUCKETS {
            let n = summary.bucket_counts[k];
            if n == 0 {
                table.push_str("<td></td>");
            } else {
                let _ = write!(
                    table,
                    "<td>{:.1}</td>",
                    summary.term_sums[term as usize][k] / n as f64
                );
            }
        }
        table.push_str("</tr>");
    }
    table.push_str("</table>\n<p>Mean tapered contribution in centipawns, White's view, over the positions of each phase.</p>\n");
    table
}
