//! The model the tuner fits: the evaluation from a position's counts, without rounding;
//! the probability a logistic gives it; the squared error to the target and its gradient;
//! the fit of K.
//!
//! With `mg = sum count_i x mg_i`, `eg = sum count_i x eg_i`, `s` the scale of the side
//! ahead in eg:
//!
//! ```text
//! eval = mg x phase / 24 + eg x (24 - phase) x s / (64 x 24)
//! p    = 1 / (1 + 10^(-K x eval / 400))
//! loss = mean over positions of (p - target)^2
//! ```
//!
//! so `d eval / d mg_i = count_i x phase / 24` and `d eval / d eg_i = count_i x (24 -
//! phase) x s / 1536`, and `d loss / d eval = 2 (p - target) p (1 - p) K ln 10 / 400`.

use rayon::prelude::*;

use super::TuneError;
use super::data::{Positions, Row};
use crate::eval::endgame::{MAX_PHASE, SCALE_NORMAL};

/// `ln 10 / 400`: `10^(-x / 400) = e^(-x ln 10 / 400)`.
pub const LN10_OVER_400: f64 = std::f64::consts::LN_10 / 400.0;

/// The range searched for K. K = 1 maps 400 centipawns to 10:1 odds; at 0.02 that takes
/// 200 pawns, at 50 eight centipawns: a fit at either end means the evaluation and the
/// results do not speak of the same thing.
pub const K_RANGE: (f64, f64) = (0.02, 50.0);

/// The probability of a White win the model gives an evaluation of `cp` centipawns.
#[inline(always)]
pub fn sigmoid(k: f64, cp: f64) -> f64 {
    1.0 / (1.0 + (-k * LN10_OVER_400 * cp).exp())
}

/// One parameter pair per weight: mg and eg, in centipawns, side by side so that a
/// position's reads and gradient writes of a weight touch one cache line.
pub type Params = [[f64; 2]];

/// The evaluation of `row` at `params`, and its derivatives by a weight's mg and eg per
/// unit of count.
#[inline(always)]
pub fn evaluate(params: &Params, row: &Row<'_>) -> (f64, f64, f64) {
    let (mut mg, mut eg) = (0.0, 0.0);
    for entry in row.entries {
        let [m, e] = params[entry.weight as usize];
        let count = entry.count as f64;
        mg += count * m;
        eg += count * e;
    }
    let scale = row.scale[(eg < 0.0) as usize] as f64;
    let max = MAX_PHASE as f64;
    let phase = row.phase as f64;
    let d_mg = phase / max;
    let d_eg = (max - phase) * scale / (SCALE_NORMAL as f64 * max);
    (mg * d_mg + eg * d_eg, d_mg, d_eg)
}

/// The summed squared error of positions `range` of `part`, and its gradient added into
/// `gradient` (unless `None`).
pub fn error_and_gradient(
    params: &Params,
    k: f64,
    part: &Positions,
    range: std::ops::Range<usize>,
    mut gradient: Option<&mut Params>,
) -> f64 {
    let mut error = 0.0;
    for i in range {
        let row = part.row(i);
        let (eval, d_mg, d_eg) = evaluate(params, &row);
        let p = sigmoid(k, eval);
        let miss = p - row.target as f64;
        error += miss * miss;
        if let Some(gradient) = gradient.as_deref_mut() {
            let d_eval = 2.0 * miss * p * (1.0 - p) * k * LN10_OVER_400;
            let (g_mg, g_eg) = (d_eval * d_mg, d_eval * d_eg);
            for entry in row.entries {
                let count = entry.count as f64;
                let slot = &mut gradient[entry.weight as usize];
                slot[0] += count * g_mg;
                slot[1] += count * g_eg;
            }
        }
    }
    error
}

/// The mean squared error over `parts` (0 when there are no positions).
pub fn loss(params: &Params, k: f64, parts: &[Positions]) -> f64 {
    // Collected, then summed in order: a reduce's float sum depends on how rayon splits.
    let errors: Vec<f64> = parts
        .par_iter()
        .map(|part| error_and_gradient(params, k, part, 0..part.len(), None))
        .collect();
    let error: f64 = errors.iter().sum();
    let n: usize = parts.iter().map(|part| part.len()).sum();
    if n == 0 { 0.0 } else { error / n as f64 }
}

/// The evaluation of every position of `parts` with the result it is labelled with, for
/// the fit of K; positions without a result are left out.
pub fn evals_and_results(params: &Params, parts: &[Positions]) -> Vec<(f64, f64)> {
    parts
        .par_iter()
        .flat_map_iter(|part| {
            (0..part.len()).filter_map(|i| {
                let result = part.result(i)?;
                Some((evaluate(params, &part.row(i)).0, result))
            })
        })
        .collect()
}

/// The fitted K, its error, and the error of predicting a draw everywhere.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KFit {
    pub k: f64,
    pub loss: f64,
    pub baseline: f64,
}

/// The least relative gain over predicting a draw everywhere that makes results
/// informative: real games give tens of percent, labels independent of the evaluation a
/// fraction of a permille.
const MIN_GAIN: f64 = 1e-3;

/// K minimising the mean squared error between `sigmoid(K, eval)` and the results: the
/// best of a grid on a log scale over [`K_RANGE`], refined by golden-section search between
/// its neighbours. A best K at the edge of the range, or a loss hardly below that of
/// predicting a draw everywhere, is an error rather than a K to tune with: the first would
/// blow the gradients up or flatten them, the second fit noise.
pub fn fit_k(samples: &[(f64, f64)]) -> Result<KFit, TuneError> {
    // Summed in fixed chunks, then the chunks in order: rayon's own reduction splits by the
    // thread count, and a K differing in its last bits gave train-net a different net on
    // one thread than on two.
    let error = |k: f64| -> f64 {
        let chunks: Vec<f64> = samples
            .par_chunks(4096)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|&(eval, result)| {
                        let miss = sigmoid(k, eval) - result;
                        miss * miss
                    })
                    .sum()
            })
            .collect();
        chunks.iter().sum::<f64>() / samples.len().max(1) as f64
    };
    let baseline = error(0.0);
    let (low, high) = (K_RANGE.0.ln(), K_RANGE.1.ln());
    const STEPS: usize = 40;
    let grid: Vec<f64> = (0..=STEPS)
        .map(|i| low + (high - low) * i as f64 / STEPS as f64)
        .collect();
    let errors: Vec<f64> = grid.iter().map(|&x| error(x.exp())).collect();
    let best = (0..errors.len())
        .min_by(|&a, &b| errors[a].total_cmp(&errors[b]))
        .expect("a grid");
    let flat = |loss: f64| loss > baseline * (1.0 - MIN_GAIN);
    if flat(errors[best]) {
        // Results that the negated evaluation predicts were stored from the wrong view.
        let reversed = grid
            .iter()
            .map(|&x| error(-x.exp()))
            .min_by(f64::total_cmp)
            .unwrap_or(baseline);
        if !flat(reversed) {
            return Err(TuneError::KReversed {
                loss: reversed,
                baseline,
            });
        }
        return Err(TuneError::KFlat {
            loss: errors[best],
            baseline,
        });
    }
    if best == 0 || best == STEPS {
        return Err(TuneError::KAtBoundary {
            k: grid[best].exp(),
            min: K_RANGE.0,
            max: K_RANGE.1,
        });
    }
    // Golden section on ln K between the grid neighbours of the best point.
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    let (mut a, mut b) = (grid[best - 1], grid[best + 1]);
    let mut c = b - ratio * (b - a);
    let mut d = a + ratio * (b - a);
    let (mut fc, mut fd) = (error(c.exp()), error(d.exp()));
    while b - a > 1e-6 {
        if fc < fd {
            (b, d, fd) = (d, c, fc);
            c = b - ratio * (b - a);
            fc = error(c.exp());
        } else {
            (a, c, fc) = (c, d, fd);
            d = a + ratio * (b - a);
            fd = error(d.exp());
        }
    }
    let k = ((a + b) / 2.0).exp();
    Ok(KFit {
        k,
        loss: error(k),
        baseline,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::coefficients::Extras;
    use crate::eval::endgame::Rule;

    fn extras(phase: u8, scale: [u8; 2]) -> Extras {
        Extras {
            phase,
            scale,
            rule: Rule::Terms,
            rule_score: 0,
        }
    }

    #[test]
    fn sigmoid_is_the_logistic_of_base_10() {
        assert_eq!(sigmoid(1.0, 0.0), 0.5);
        assert!((sigmoid(1.0, 400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((sigmoid(2.0, -200.0) - 1.0 / 11.0).abs() < 1e-12);
    }

    /// The taper without rounding, and the scale of the side ahead in eg.
    #[test]
    fn evaluation_tapers_and_scales() {
        let mut part = Positions::default();
        let mut counts = vec![0i16; 3];
        counts[0] = 2;
        counts[2] = -1;
        part.push(&counts, &extras(6, [64, 16]), 1, 0);
        let params = [[10.0, 40.0], [999.0, 999.0], [4.0, 100.0]];
        // mg = 20 - 4 = 16, eg = 80 - 100 = -20: Black ahead, scale 16.
        let (eval, d_mg, d_eg) = evaluate(&params, &part.row(0));
        assert_eq!((d_mg, d_eg), (0.25, 18.0 * 16.0 / 1536.0));
        assert!((eval - (16.0 * 0.25 - 20.0 * 18.0 * 16.0 / 1536.0)).abs() < 1e-12);
        let params = [[10.0, 60.0], [0.0, 0.0], [4.0, 100.0]];
        let (_, _, d_eg) = evaluate(&params, &part.row(0));
        assert_eq!(d_eg, 18.0 * 64.0 / 1536.0);
    }

    /// The analytic gradient equals central differences of the error.
    #[test]
    fn gradient_matches_finite_differences() {
        let mut part = Positions::default();
        let rows: [(&[i16], u8, [u8; 2], i8); 4] = [
            (&[1, 0, 3], 24, [64, 64], 1),
            (&[-2, 1, 0], 0, [64, 8], -1),
            (&[1, -1, 2], 11, [48, 24], 0),
            (&[0, 5, -1], 17, [64, 64], 1),
        ];
        for (counts, phase, scale, result) in rows {
            part.push(counts, &extras(phase, scale), result, 0);
        }
        part.set_targets(1.0, 1.0);
        let params = vec![[30.0, -20.0], [-15.0, 45.0], [12.0, 7.0]];
        let k = 1.3;
        let mut gradient = vec![[0.0; 2]; 3];
        error_and_gradient(&params, k, &part, 0..4, Some(&mut gradient));
        for w in 0..3 {
            for phase in 0..2 {
                let h = 1e-4;
                let at = |delta: f64| {
                    let mut p = params.clone();
                    p[w][phase] += delta;
                    error_and_gradient(&p, k, &part, 0..4, None)
                };
                let numeric = (at(h) - at(-h)) / (2.0 * h);
                let analytic = gradient[w][phase];
                assert!(
                    (numeric - analytic).abs() < 1e-8 * (1.0 + analytic.abs()),
                    "weight {w} phase {phase}: {numeric} vs {analytic}"
                );
                assert!(analytic != 0.0 || numeric.abs() < 1e-12);
            }
        }
    }

    /// Results drawn from a logistic of known K give that K back; results that ignore the
    /// evaluation, or that it predicts perfectly, are refused.
    #[test]
    fn k_fit_recovers_k_and_guards() {
        let mut rng = super::super::Rng::new(11);
        let uniform =
            |rng: &mut super::super::Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let evals: Vec<f64> = (0..40_000)
            .map(|_| (uniform(&mut rng) - 0.5) * 1600.0)
            .collect();
        let labelled: Vec<(f64, f64)> = evals
            .iter()
            .map(|&e| {
                let win = uniform(&mut rng) < sigmoid(1.7, e);
                (e, if win { 1.0 } else { 0.0 })
            })
            .collect();
        let fit = fit_k(&labelled).expect("fits");
        assert!((fit.k - 1.7).abs() < 0.1, "{fit:?}");
        assert!(fit.loss < fit.baseline * 0.9, "{fit:?}");

        let noise: Vec<(f64, f64)> = evals
            .iter()
            .map(|&e| (e, (uniform(&mut rng) < 0.5) as u8 as f64))
            .collect();
        assert!(matches!(fit_k(&noise), Err(TuneError::KFlat { .. })));
        let flipped: Vec<(f64, f64)> = labelled.iter().map(|&(e, r)| (e, 1.0 - r)).collect();
        let error = fit_k(&flipped).unwrap_err();
        assert!(matches!(error, TuneError::KReversed { .. }), "{error}");

        let certain: Vec<(f64, f64)> = evals
            .iter()
            .map(|&e| (e, if e > 0.0 { 1.0 } else { 0.0 }))
            .collect();
        let error = fit_k(&certain).unwrap_err();
        assert!(matches!(error, TuneError::KAtBoundary { .. }), "{error}");
    }

    /// The fit is the same to the bit on any number of threads: train-net's logistic scale
    /// comes from it, and a scale differing in its last bits gave another net.
    #[test]
    fn k_fit_does_not_depend_on_the_thread_count() {
        let mut rng = super::super::Rng::new(5);
        let uniform =
            |rng: &mut super::super::Rng| (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        let samples: Vec<(f64, f64)> = (0..100_000)
            .map(|_| {
                let eval = (uniform(&mut rng) - 0.5) * 1600.0;
                let win = uniform(&mut rng) < sigmoid(1.3, eval);
                (eval, if win { 1.0 } else { 0.0 })
            })
            .collect();
        let fit_on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .expect("a pool");
            pool.install(|| fit_k(&samples).expect("fits"))
        };
        let one = fit_on(1);
        for threads in [2, 3, 7] {
            let other = fit_on(threads);
            assert_eq!(one.k.to_bits(), other.k.to_bits(), "{threads} threads");
            assert_eq!(
                one.loss.to_bits(),
                other.loss.to_bits(),
                "{threads} threads"
            );
        }
    }
}
