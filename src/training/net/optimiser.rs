//! AdamW over the flat parameters, the learning-rate schedule, and the trainer that turns a
//! batch into one step on a thread pool.
//!
//! A batch is cut into slices of [`SLICE`] positions, whatever the thread count; each slice
//! sums its gradient into a buffer of its own, one position after another, and the buffers
//! are added in slice order, parameter by parameter, in the same pass as the update. So a
//! step's arithmetic is the same on any number of threads and in any timing: the same seed
//! and inputs give the same net bit for bit.

use pawnstorm_kernels::simd::{self, LevelFn};
use rayon::prelude::*;

use super::aligned::AlignedFloats;
use super::model::{self, CLIP, Layout, Objective, Scratch, Tiling};
use crate::training::loader::Batch;

/// Positions a gradient buffer sums: 8 slices for a batch of 16,384, so two threads share
/// them evenly and each buffer (393 KB at N = 128) stays in its core's L2 cache.
pub const SLICE: usize = 2048;
/// Positions a gradient buffer sums for `layout`: [`SLICE`] while the first layer is passed
/// flat; beyond, four times that (two slices for a batch of 16,384). There every slice
/// loads each row of the first layer it touches and a gradient buffer as large as the
/// model, which the update then reads (at `768x8hm → 512`, 14 MB each); fewer slices share
/// that cost among more positions. The slices depend on the layout alone, never on the
/// threads: the same seed gives the same net on any number of them.
pub fn slice_len(layout: Layout) -> usize {
    if Tiling::of(layout).is_flat() {
        SLICE
    } else {
        4 * SLICE
    }
}
pub const BETA1: f32 = 0.9;
pub const BETA2: f32 = 0.999;
pub const EPSILON: f32 = 1e-8;
/// AdamW's decoupled weight decay unless a run sets its own (bullet's default): each step
/// multiplies every parameter by `1 - lr * decay` before the update.
pub const WEIGHT_DECAY: f32 = 0.01;
/// Parameters one task of the update handles.
const UPDATE_CHUNK: usize = 16 * 1024;

/// The learning rate of epoch `epoch` (from 0) of `epochs`: the first `warmup` epochs climb
/// linearly to `lr` (`lr · (e + 1) / (warmup + 1)`, so none starts at 0 and the first after
/// them is at `lr`), then cosine from `lr` down to `final_lr` at the last epoch (bullet's
/// warm-up and `CosineDecayLR`, by epoch as bullet's are by superbatch: with
/// `--epoch-positions` an epoch is one).
pub fn scheduled_lr(lr: f64, final_lr: f64, warmup: usize, epoch: usize, epochs: usize) -> f64 {
    if epoch < warmup {
        return lr * (epoch + 1) as f64 / (warmup + 1) as f64;
    }
    let (epoch, epochs) = (epoch - warmup, epochs.saturating_sub(warmup));
    if epochs <= 1 {
        return lr;
    }
    let progress = epoch as f64 / (epochs - 1) as f64;
    final_lr + 0.5 * (lr - final_lr) * (1.0 + (std::f64::consts::PI * progress).cos())
}

/// The model and the optimiser's state: what a checkpoint holds besides the run's place.
#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub layout: Layout,
    /// Each starts a cache line ([`AlignedFloats`]): the passes read the parameters in
    /// whole units.
    pub params: AlignedFloats,
    /// Adam's moments.
    pub m: AlignedFloats,
    pub v: AlignedFloats,
    /// Steps taken (Adam's bias correction).
    pub steps: u64,
}

impl State {
    pub fn new(layout: Layout, seed: u64) -> State {
        State {
            layout,
            params: model::initial(layout, seed).into(),
            m: AlignedFloats::zeroed(layout.len()),
            v: AlignedFloats::zeroed(layout.len()),
            steps: 0,
        }
    }
}

/// The parameters the passes read: the model's own (in the passes' layout), or with a
/// factoriser merged into `merged` first.
fn passes_read<'a>(state: &'a State, tiling: Tiling, merged: &'a mut AlignedFloats) -> &'a [f32] {
    if state.layout.factoriser {
        model::merge_factoriser(&state.params, state.layout, tiling, merged);
        merged
    } else {
        &state.params
    }
}

impl State {
    /// The same state with the first layer of the parameters and moments in `tiling`'s
    /// layout ([`model::tile`]), or back ([`model::untile`]).
    fn tiled(mut self, tiling: Tiling) -> State {
        for values in [&mut self.params, &mut self.m, &mut self.v] {
            *values = model::tile(values, tiling).into();
        }
        self
    }
    fn untiled(&self, tiling: Tiling) -> State {
        State {
            layout: self.layout,
            params: model::untile(&self.params, tiling).into(),
            m: model::untile(&self.m, tiling).into(),
            v: model::untile(&self.v, tiling).into(),
            steps: self.steps,
        }
    }
}

/// Steps a [`State`] on batches, with the gradient buffers and scratch it reuses. It holds
/// the state with its first layer in the passes' layout ([`Tiling`]), so that the update
/// runs over the gradients where the passes left them; [`Trainer::state`] gives it back
/// flat.
pub struct Trainer {
    state: State,
    pub objective: Objective,
    buffers: Vec<(AlignedFloats, Scratch)>,
    /// With a factoriser: the parameters the passes read (`model::merge_factoriser`).
    merged: AlignedFloats,
    /// The passes' layout of the first layer (every tiling gives the same steps).
    tiling: Tiling,
    /// Positions a gradient buffer sums ([`slice_len`]).
    slice: usize,
    /// AdamW's decoupled weight decay ([`WEIGHT_DECAY`] unless set).
    weight_decay: f32,
}

impl Trainer {
    pub fn new(state: State, objective: Objective) -> Trainer {
        let tiling = Tiling::of(state.layout);
        Trainer::with_tiling(state, objective, tiling)
    }

    /// With the passes' layout given (for the tests that hold every layout to the flat one).
    pub fn with_tiling(state: State, objective: Objective, tiling: Tiling) -> Trainer {
        Trainer {
            tiling,
            slice: slice_len(state.layout),
            state: state.tiled(tiling),
            objective,
            buffers: Vec::new(),
            merged: AlignedFloats::default(),
            weight_decay: WEIGHT_DECAY,
        }
    }

    /// With AdamW's weight decay `decay` instead of [`WEIGHT_DECAY`].
    pub fn with_weight_decay(mut self, decay: f32) -> Trainer {
        self.weight_decay = decay;
        self
    }

    fn slices(&mut self, len: usize) -> usize {
        let slices = len.div_ceil(self.slice);
        let (size, hidden) = (self.state.layout.len(), self.state.layout.hidden);
        while self.buffers.len() < slices {
            self.buffers
                .push((AlignedFloats::zeroed(size), Scratch::new(hidden)));
        }
        slices
    }

    /// One AdamW step on `batch` at learning rate `lr` (on the current rayon pool).
    /// Returns the batch's error sum and the positions it counted.
    pub fn step(&mut self, batch: &Batch, lr: f32) -> (f64, usize) {
        let slices = self.slices(batch.len);
        let (layout, objective, tiling, slice) =
            (self.state.layout, self.objective, self.tiling, self.slice);
        let params = passes_read(&self.state, tiling, &mut self.merged);
        // The mean over the positions the batch has a target for; counted first so that
        // each slice can scale as it goes.
        let counted = (0..batch.len)
            .filter(|&i| objective.target(batch.score[i], batch.result[i]).is_some())
            .count();
        if counted == 0 {
            return (0.0, 0);
        }
        let scale = 1.0 / counted as f32;
        let sums: Vec<(f64, usize)> = self.buffers[..slices]
            .par_iter_mut()
            .enumerate()
            .map(|(s, (grad, scratch))| {
                // The buffer is zero here: new, or zeroed by the last step's update as it
                // read it (a separate pass over 14 MB a buffer at `768x8hm → 512` cost
                // 2% of a run).
                let range = s * slice..((s + 1) * slice).min(batch.len);
                let sum = model::error_and_gradient(
                    params,
                    layout,
                    tiling,
                    objective,
                    batch,
                    range,
                    scratch,
                    Some((grad, scale)),
                );
                model::fold_factoriser_gradient(grad, layout, tiling);
                sum
            })
            .collect();
        self.state.steps += 1;
        let t = self.state.steps as i32;
        let correction1 = 1.0 - BETA1.powi(t);
        let correction2 = 1.0 - BETA2.powi(t);
        // Each task of the update takes its chunk of every slice's buffer, to read and
        // leave zeroed for the next step.
        let chunks = self.state.params.len().div_ceil(UPDATE_CHUNK);
        let mut grads: Vec<Vec<&mut [f32]>> =
            (0..chunks).map(|_| Vec::with_capacity(slices)).collect();
        for (grad, _) in &mut self.buffers[..slices] {
            for (c, chunk) in grad.chunks_mut(UPDATE_CHUNK).enumerate() {
                grads[c].push(chunk);
            }
        }
        let shrink = 1.0 - lr * self.weight_decay;
        // The update at the process's level: its divisions and square roots in the widest
        // vectors (the same IEEE results at every width), where plain x86-64 code did them
        // four at a time. 15% of a `768x8hm → 512` run's samples before. (`Path::scalar`
        // has the process's level, which `dispatch_level` compiles for.)
        let path = simd::Path::scalar();
        let state = &mut self.state;
        state
            .params
            .par_chunks_mut(UPDATE_CHUNK)
            .zip(state.m.par_chunks_mut(UPDATE_CHUNK))
            .zip(state.v.par_chunks_mut(UPDATE_CHUNK))
            .zip(grads.par_iter_mut())
            .for_each(|(((p, m), v), grads)| {
                let update = Update {
                    p,
                    m,
                    v,
                    grads,
                    lr,
                    shrink,
                    correction1,
                    correction2,
                };
                simd::dispatch_level(path, update);
            });
        sums.into_iter()
            .fold((0.0, 0), |(e, n), (de, dn)| (e + de, n + dn))
    }

    /// The model and optimiser state, flat (as checkpoints and quantising read it).
    pub fn state(&self) -> State {
        self.state.untiled(self.tiling)
    }

    /// The error sum of `batch` and the positions counted, without a step.
    pub fn error(&mut self, batch: &Batch) -> (f64, usize) {
        let slices = self.slices(batch.len);
        let (layout, objective, tiling, slice) =
            (self.state.layout, self.objective, self.tiling, self.slice);
        let params = passes_read(&self.state, tiling, &mut self.merged);
        let sums: Vec<(f64, usize)> = self.buffers[..slices]
            .par_iter_mut()
            .enumerate()
            .map(|(s, (_, scratch))| {
                let range = s * slice..((s + 1) * slice).min(batch.len);
                model::error_and_gradient(
                    params, layout, tiling, objective, batch, range, scratch, None,
                )
            })
            .collect();
        sums.into_iter()
            .fold((0.0, 0), |(e, n), (de, dn)| (e + de, n + dn))
    }
}

/// AdamW on one chunk of the parameters: the slices' gradients for it (`grads`, one chunk
/// a slice) summed in slice order and left zeroed, the moments, then the decayed, clipped
/// parameter.
struct Update<'a, 'g> {
    p: &'a mut [f32],
    m: &'a mut [f32],
    v: &'a mut [f32],
    grads: &'a mut [&'g mut [f32]],
    lr: f32,
    shrink: f32,
    correction1: f32,
    correction2: f32,
}

impl LevelFn for Update<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn call(self) {
        let Update {
            p,
            m,
            v,
            grads,
            lr,
            shrink,
            correction1,
            correction2,
        } = self;
        // In blocks, the gradients summed first (in slice order, as one loop per buffer) and
        // the moments and parameters then updated, so that both loops run in vectors.
        const BLOCK: usize = 256;
        let mut g = [0.0f32; BLOCK];
        for (b, ((p, m), v)) in p
            .chunks_mut(BLOCK)
            .zip(m.chunks_mut(BLOCK))
            .zip(v.chunks_mut(BLOCK))
            .enumerate()
        {
            let (from, n) = (b * BLOCK, p.len());
            let (g, m, v) = (&mut g[..n], &mut m[..n], &mut v[..n]);
            // Zeroed while the block is in L1, where a pass of its own had to fetch it again.
            let (first, others) = grads.split_first_mut().expect("a step has a slice");
            let first = &mut first[from..from + n];
            g.copy_from_slice(first);
            first.fill(0.0);
            for other in others {
                let other = &mut other[from..from + n];
                for (g, &o) in g.iter_mut().zip(&*other) {
                    *g += o;
                }
                other.fill(0.0);
            }
            for i in 0..n {
                m[i] = BETA1 * m[i] + (1.0 - BETA1) * g[i];
                v[i] = BETA2 * v[i] + (1.0 - BETA2) * g[i] * g[i];
                let update = (m[i] / correction1) / ((v[i] / correction2).sqrt() + EPSILON);
                let decayed = p[i] * shrink;
                p[i] = (decayed - lr * update).clamp(-CLIP, CLIP);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schedule_runs_from_lr_to_final_lr() {
        assert_eq!(scheduled_lr(1e-3, 1e-5, 0, 0, 10), 1e-3);
        assert!((scheduled_lr(1e-3, 1e-5, 0, 9, 10) - 1e-5).abs() < 1e-12);
        let mid = scheduled_lr(1e-3, 0.0, 0, 5, 11);
        assert!((mid - 5e-4).abs() < 1e-12);
        assert_eq!(scheduled_lr(1e-3, 1e-5, 0, 0, 1), 1e-3);
    }

    #[test]
    fn a_warm_up_climbs_to_lr_and_the_cosine_follows_it() {
        let lr = |epoch| scheduled_lr(1e-3, 1e-5, 3, epoch, 13);
        assert!((lr(0) - 2.5e-4).abs() < 1e-12);
        assert!((lr(2) - 7.5e-4).abs() < 1e-12);
        // The cosine over the 10 epochs after the warm-up, as without one.
        for epoch in 3..13 {
            assert!((lr(epoch) - scheduled_lr(1e-3, 1e-5, 0, epoch - 3, 10)).abs() < 1e-15);
        }
        // A warm-up as long as the run: it climbs, and ends below lr.
        assert!(scheduled_lr(1e-3, 1e-5, 5, 4, 5) < 1e-3);
    }
}
