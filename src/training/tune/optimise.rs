//! Adam over minibatches of the training positions, the gradient of each computed in
//! parallel (one gradient vector per group of runs, the groups summed in order at the end
//! of the minibatch, so that any thread count gives the same weights).

use rayon::prelude::*;

use super::data::Positions;
use super::model::{self, Params};
use super::{Rng, TuneError};
use crate::eval::weights::max_count;
use crate::eval::{Weight, Weights};

/// The largest |weight| the weights file takes.
pub const MAX_WEIGHT: f64 = 100_000.0;

/// Positions a minibatch is made of runs of (each epoch shuffles the runs): short enough
/// to mix many places of the data into one minibatch, long enough to amortise a task.
const RUN: usize = 256;

/// Runs a task sums the gradient of (a minibatch of the default 16,384 positions is 64 runs,
/// 8 tasks): fixed, so that the sums do not depend on the threads.
const RUNS_PER_GROUP: usize = 8;

/// Adam's state (Kingma and Ba), one moment pair per parameter.
#[derive(Clone, Debug)]
pub struct Adam {
    pub beta1: f64,
    pub beta2: f64,
    /// The usual 1e-8. The mean gradient of a weight that hardly changes the loss (the mg
    /// part of a term of pawn endings, a weight few positions count) is of that order, so
    /// its steps are damped: without it, Adam's normalised steps walk such weights far
    /// along flat directions (a mg of -400 for `unstoppable_passer` was seen at 1e-12).
    pub epsilon: f64,
    first: Vec<[f64; 2]>,
    second: Vec<[f64; 2]>,
    steps: i32,
}

impl Adam {
    pub fn new(parameters: usize) -> Adam {
        Adam {
            beta1: 0.9,
            beta2: 0.999,
            epsilon: 1e-8,
            first: vec![[0.0; 2]; parameters],
            second: vec![[0.0; 2]; parameters],
            steps: 0,
        }
    }

    /// One step of size `lr` along `gradient`, for the parameters `trainable` marks;
    /// results are kept within ±[`MAX_WEIGHT`].
    pub fn step(&mut self, params: &mut Params, gradient: &Params, trainable: &[bool], lr: f64) {
        self.steps += 1;
        let correct1 = 1.0 - self.beta1.powi(self.steps);
        let correct2 = 1.0 - self.beta2.powi(self.steps);
        for (i, param) in params.iter_mut().enumerate() {
            if !trainable[i] {
                continue;
            }
            for phase in 0..2 {
                let g = gradient[i][phase];
                let m = &mut self.first[i][phase];
                *m = self.beta1 * *m + (1.0 - self.beta1) * g;
                let v = &mut self.second[i][phase];
                *v = self.beta2 * *v + (1.0 - self.beta2) * g * g;
                let step = lr * (*m / correct1) / ((*v / correct2).sqrt() + self.epsilon);
                param[phase] = (param[phase] - step).clamp(-MAX_WEIGHT, MAX_WEIGHT);
            }
        }
    }
}

/// The learning rate of epoch `epoch` (0-based) of `epochs`: cosine from `lr` down to a
/// tenth of it at the last epoch, so that the last epochs settle the noise of minibatches.
pub fn scheduled_lr(lr: f64, epoch: usize, epochs: usize) -> f64 {
    let progress = if epochs > 1 {
        epoch as f64 / (epochs - 1) as f64
    } else {
        0.0
    };
    lr * (0.1 + 0.9 * 0.5 * (1.0 + (std::f64::consts::PI * progress).cos()))
}

/// Centipawns a weight moves for the L2 penalty to count one unit of it: the penalty is
/// `l2 x sum over weights of ((w - w_start) / L2_UNIT)^2`, weights in pawns.
pub const L2_UNIT: f64 = 100.0;

/// A tuning run's state: the weights as reals, which of them move, Adam's moments.
#[derive(Clone, Debug)]
pub struct Tuner {
    params: Vec<[f64; 2]>,
    /// The starting weights, which the L2 penalty pulls towards.
    start: Vec<[f64; 2]>,
    /// The penalty's strength (0: none), see [`L2_UNIT`].
    l2: f64,
    trainable: Vec<bool>,
    k: f64,
    adam: Adam,
    rng: Rng,
}

impl Tuner {
    /// Starts from `start`; the weights `trainable` leaves false keep their values.
    pub fn new(start: &Weights, trainable: Vec<bool>, k: f64, seed: u64) -> Tuner {
        assert_eq!(trainable.len(), Weights::COUNT, "one flag a weight");
        let params = start
            .values()
            .iter()
            .map(|w| [w.mg as f64, w.eg as f64])
            .collect::<Vec<_>>();
        Tuner {
            start: params.clone(),
            params,
            l2: 0.0,
            trainable,
            k,
            adam: Adam::new(Weights::COUNT),
            rng: Rng::new(seed),
        }
    }

    pub fn k(&self) -> f64 {
        self.k
    }

    /// Pulls every weight towards its starting value: the training objective gains
    /// `l2 x sum ((w - w_start) / 100)^2` (weights in pawns), so a weight moves only as far
    /// as the data's evidence outweighs the penalty. The losses reported leave it out.
    pub fn with_l2(mut self, l2: f64) -> Tuner {
        self.l2 = l2;
        self
    }

    /// The L2 penalty at the current weights.
    pub fn penalty(&self) -> f64 {
        let squares: f64 = self
            .params
            .iter()
            .zip(&self.start)
            .flat_map(|(p, s)| [(p[0] - s[0]) / L2_UNIT, (p[1] - s[1]) / L2_UNIT])
            .map(|d| d * d)
            .sum();
        self.l2 * squares
    }

    /// Puts back weights a [`Tuner::params`] copy holds (the best epoch's, for early
    /// stopping). Adam's moments are left as they are.
    pub fn restore(&mut self, params: &Params) {
        assert_eq!(params.len(), self.params.len(), "one pair a weight");
        self.params.copy_from_slice(params);
    }

    /// The weights as reals, (mg, eg) in file order.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The mean squared error over `parts` at the current (real) weights.
    pub fn loss(&self, parts: &[Positions]) -> f64 {
        model::loss(&self.params, self.k, parts)
    }

    /// One pass over `train` in minibatches of about `batch` positions, in a new random
    /// order, at learning rate `lr`; returns the mean error of the minibatches, each taken
    /// before its step (nothing extra to compute).
    pub fn epoch(&mut self, train: &[Positions], batch: usize, lr: f64) -> f64 {
        let mut runs: Vec<(u32, u32)> = train
            .iter()
            .enumerate()
            .flat_map(|(part, positions)| {
                (0..positions.len())
                    .step_by(RUN)
                    .map(move |start| (part as u32, start as u32))
            })
            .collect();
        self.rng.shuffle(&mut runs);
        let runs_per_batch = batch.div_ceil(RUN).max(1);
        let (mut error, mut seen) = (0.0, 0usize);
        for minibatch in runs.chunks(runs_per_batch) {
            let params = &self.params;
            let k = self.k;
            // Each group of runs sums its own gradient in order, then the groups are added
            // in order: rayon's fold and reduce group by how its workers split and steal,
            // so their float sums (and the tuned weights) changed with the thread count
            // and from run to run.
            let groups: Vec<(Vec<[f64; 2]>, f64, usize)> = minibatch
                .par_chunks(RUNS_PER_GROUP)
                .map(|group| {
                    let mut gradient = vec![[0.0; 2]; Weights::COUNT];
                    let (mut error, mut n) = (0.0, 0);
                    for &(part, start) in group {
                        let positions = &train[part as usize];
                        let range = start as usize..(start as usize + RUN).min(positions.len());
                        n += range.len();
                        error += model::error_and_gradient(
                            params,
                            k,
                            positions,
                            range,
                            Some(&mut gradient),
                        );
                    }
                    (gradient, error, n)
                })
                .collect();
            let mut gradient = vec![[0.0; 2]; Weights::COUNT];
            let (mut batch_error, mut n) = (0.0, 0);
            for (group_gradient, group_error, group_n) in &groups {
                for (a, b) in gradient.iter_mut().zip(group_gradient) {
                    a[0] += b[0];
                    a[1] += b[1];
                }
                batch_error += group_error;
                n += group_n;
            }
            let scale = 1.0 / n.max(1) as f64;
            let pull = 2.0 * self.l2 / (L2_UNIT * L2_UNIT);
            let mean: Vec<[f64; 2]> = gradient
                .iter()
                .zip(self.params.iter().zip(&self.start))
                .map(|(g, (p, s))| {
                    [
                        g[0] * scale + pull * (p[0] - s[0]),
                        g[1] * scale + pull * (p[1] - s[1]),
                    ]
                })
                .collect();
            self.adam.step(&mut self.params, &mean, &self.trainable, lr);
            error += batch_error;
            seen += n;
        }
        error / seen.max(1) as f64
    }

    /// The weights rounded to integers, refused if some position's sums could overflow
    /// i32 (as the weights loader would refuse the file).
    pub fn weights(&self) -> Result<Weights, TuneError> {
        let values: Vec<Weight> = self
            .params
            .iter()
            .map(|&[mg, eg]| Weight {
                mg: mg.round() as i32,
                eg: eg.round() as i32,
            })
            .collect();
        let weights = Weights::from_values(&values).expect("one value a weight");
        let bounds = weights.sum_bounds();
        if bounds.fit_i32() {
            return Ok(weights);
        }
        let mut costs: Vec<(i64, String)> = Weights::names()
            .into_iter()
            .zip(&values)
            .map(|(name, w)| {
                let cost = max_count(&name)
                    * (w.mg.unsigned_abs() as i64 + 64 * w.eg.unsigned_abs() as i64);
                (cost, format!("{name} {} {}", w.mg, w.eg))
            })
            .collect();
        costs.sort_by_key(|c| std::cmp::Reverse(c.0));
        let culprits: Vec<String> = costs.into_iter().take(3).map(|(_, text)| text).collect();
        Err(TuneError::Overflow {
            mg: bounds.mg,
            eg: bounds.eg,
            culprits: culprits.join(", "),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_runs_from_lr_to_a_tenth() {
        assert_eq!(scheduled_lr(2.0, 0, 50), 2.0);
        assert!((scheduled_lr(2.0, 49, 50) - 0.2).abs() < 1e-12);
        assert!((scheduled_lr(2.0, 1, 3) - 1.1).abs() < 1e-12);
        assert_eq!(scheduled_lr(2.0, 0, 1), 2.0);
    }

    /// Adam moves trainable parameters against the gradient, by about lr at first, keeps
    /// the others and clamps to the file's bound.
    #[test]
    fn adam_steps_and_clamps() {
        let mut adam = Adam::new(4);
        let mut params = vec![
            [10.0, 10.0],
            [10.0, 10.0],
            [99_999.5, -99_999.5],
            [10.0, 10.0],
        ];
        let gradient = vec![[1e-4, -1e-5], [1.0, 1.0], [-1.0, 1.0], [1e-10, 0.0]];
        adam.step(&mut params, &gradient, &[true, false, true, true], 2.0);
        assert!((params[0][0] - 8.0).abs() < 1e-3, "{params:?}");
        assert!((params[0][1] - 12.0).abs() < 1e-2, "{params:?}");
        assert_eq!(params[1], [10.0, 10.0]);
        assert_eq!(params[2], [MAX_WEIGHT, -MAX_WEIGHT]);
        // A gradient far below epsilon barely moves its weight.
        assert!((params[3][0] - 10.0).abs() < 0.05, "{params:?}");
        // A parameter with no gradient does not move.
        let mut still = vec![[5.0, 5.0]];
        let mut adam = Adam::new(1);
        for _ in 0..10 {
            adam.step(&mut still, &[[0.0, 0.0]], &[true], 1.0);
        }
        assert_eq!(still, vec![[5.0, 5.0]]);
    }

    /// Data that asks a weight to move 300 centipawns moves it less under the L2 penalty,
    /// and the penalty counts pawns squared.
    #[test]
    fn l2_pulls_towards_the_start() {
        use crate::eval::coefficients::Extras;
        use crate::eval::endgame::Rule;
        let start = Weights::default();
        let extras = Extras {
            phase: 24,
            scale: [64, 64],
            rule: Rule::Terms,
            rule_score: 0,
        };
        // Positions whose only count is one White pawn's material (weight 0), all scored
        // 300 centipawns above what the starting weight gives.
        let mut counts = vec![0i16; Weights::COUNT];
        counts[0] = 1;
        let target = start.values()[0].mg + 300;
        let mut part = Positions::default();
        for _ in 0..64 {
            part.push(&counts, &extras, crate::db::NO_RESULT, target);
        }
        part.set_targets(1.0, 0.0);
        let parts = [part];
        let moved = |l2: f64| {
            let mut tuner = Tuner::new(&start, vec![true; Weights::COUNT], 1.0, 0).with_l2(l2);
            for _ in 0..600 {
                tuner.epoch(&parts, 64, 2.0);
            }
            (
                tuner.params()[0][0] - start.values()[0].mg as f64,
                tuner.penalty(),
            )
        };
        let (free, no_penalty) = moved(0.0);
        let (held, penalty) = moved(1e-2);
        assert!(free > 250.0, "{free}");
        assert_eq!(no_penalty, 0.0);
        assert!(held > 0.0 && held < 0.8 * free, "{held} against {free}");
        assert!(
            (penalty - 1e-2 * (held / 100.0).powi(2)).abs() < 1e-9,
            "{penalty}"
        );
    }

    #[test]
    fn overflowing_weights_are_refused_with_the_culprit() {
        let mut start = Weights::default();
        start.material[4] = Weight {
            mg: 90_000,
            eg: 90_000,
        };
        let tuner = Tuner::new(&start, vec![true; Weights::COUNT], 1.0, 0);
        let error = tuner.weights().unwrap_err().to_string();
        assert!(error.contains("material.queen 90000 90000"), "{error}");
        let fine = Tuner::new(&Weights::default(), vec![true; Weights::COUNT], 1.0, 0);
        assert_eq!(fine.weights().expect("fits"), Weights::default());
    }
}
