//! The float model the trainer fits, its forward and backward passes, and its quantisation.
//!
//! Every parameter lives in one flat `f32` array (so that the optimiser, the gradient merge
//! and the checkpoint each run over one slice): first-layer weights `[768 K][N]` (K king
//! buckets, 1 without), with king buckets and a factoriser its shared `[768][N]` rows,
//! biases `[N]`, output weights `[B][2N]` (per output bucket, the side to move's half
//! first), the output biases `[B]`, then zeros up to a multiple of [`LANES`]. B = 1 without
//! output buckets.
//!
//! The factoriser, a 768-input layer every king bucket shares, is in [`factoriser`].
//!
//! ```text
//! acc   = bias + Σ rows of the active inputs          (one per perspective)
//! k     = bucket_of(pieces, B)                        (bullet's MaterialCount<B>)
//! out   = Σ screlu(acc_us) · w_us[k] + Σ screlu(acc_them) · w_them[k] + b[k],  screlu = clamp(x, 0, 1)²
//! eval  = 400 · out                                   (centipawns, as the engine reads it)
//! p     = sigmoid(eval / S)
//! loss  = (p − target)²,  target = W · result + (1 − W) · sigmoid(score / S)
//! ```
//!
//! S, the logistic's scale, is one unit for both halves of the blend: `train-net` fits it to
//! the data (the scale at which the stored scores best predict the results, as `tune` fits
//! K), so that mixing in results does not stretch the net's centipawns away from the
//! scores'. Bullet's examples use 400 for Stockfish-scaled data; pawnstorm's self-play
//! scores predict results at about 147.

use pawnstorm_kernels::simd::{self, LevelFn};

use crate::nnue::network::bucket_of;
use crate::nnue::{INPUTS, InputLayout, Network, QA, QB, SCALE};
use crate::training::loader::Batch;
use crate::training::net::aligned::AlignedFloats;
use crate::training::nnue::MAX_ACTIVE;

mod factoriser;
mod tiled;
pub use factoriser::{fold_factoriser_gradient, merge_factoriser, merged_first_layer};
pub use tiled::{FLAT_BYTES, TILE, TILE_AVX512, Tiling, flat_gradient, pass_params, tile, untile};
use tiled::{Item, slice_order, tiled_error_and_gradient};

/// Values handled together: one AVX-512 register of `f32`; the hidden width is a multiple.
pub const LANES: usize = 16;

/// The bound every parameter is clipped to after each step: QA · 1.98 = 505 fits `i16`
/// with 33 rows summed (16,665), QB · 1.98 = 127 keeps every quantised output weight within
/// ±128 (the kernels' `v · w` in `i16`), and QA · QB · 1.98 = 32,314 fits the output bias.
pub const CLIP: f32 = 1.98;

/// Where each part of the flat parameter array starts, for a width and a number of output
/// buckets (at most [`LANES`]: their biases share one unit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub hidden: usize,
    pub buckets: usize,
    /// The inputs (`Chess768`, or king buckets).
    pub inputs: InputLayout,
    /// With king buckets: a shared 768-input factoriser beside them.
    pub factoriser: bool,
}

impl Layout {
    /// Without output buckets.
    pub fn single(hidden: usize) -> Layout {
        Layout::new(hidden, 1)
    }
    /// `Chess768` inputs, `buckets` output buckets.
    pub fn new(hidden: usize, buckets: usize) -> Layout {
        Layout {
            hidden,
            buckets,
            inputs: InputLayout::CHESS768,
            factoriser: false,
        }
    }
    /// The first row of the factoriser (past the bucketed inputs).
    pub fn factoriser_row(self) -> usize {
        self.inputs.inputs()
    }
    /// First-layer rows: the inputs, and the factoriser's.
    pub fn ft_rows(self) -> usize {
        self.inputs.inputs() + if self.factoriser { INPUTS } else { 0 }
    }
    pub fn ft_bias(self) -> usize {
        self.ft_rows() * self.hidden
    }
    pub fn out_weights(self) -> usize {
        self.ft_bias() + self.hidden
    }
    /// The output biases, one per bucket, in one unit.
    pub fn out_bias(self) -> usize {
        self.out_weights() + self.buckets * 2 * self.hidden
    }
    /// Length of the flat array.
    pub fn len(self) -> usize {
        self.out_bias() + LANES
    }
    pub fn is_empty(self) -> bool {
        false
    }
}

/// `1 / (1 + e^-x)`.
#[inline(always)]
pub fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

/// What the net is fitted to: the blend of result and score, and the logistic's scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// The result's share of the target.
    pub wdl: f32,
    /// Centipawns per unit of the logistic's argument (S above).
    pub scale: f32,
}

impl Objective {
    /// The target of a position: `wdl · result + (1 − wdl) · sigmoid(score / scale)` (side
    /// to move's view); `None` when a label the blend needs is missing.
    #[inline]
    pub fn target(self, score: i32, result: f32) -> Option<f32> {
        target(self.wdl, self.scale, score, result)
    }

    /// d(eval / scale) / d out.
    #[inline]
    fn slope(self) -> f32 {
        SCALE as f32 / self.scale
    }
}

#[inline]
fn target(wdl: f32, scale: f32, score: i32, result: f32) -> Option<f32> {
    let from_result = if wdl > 0.0 {
        if result.is_nan() {
            return None;
        }
        wdl * result
    } else {
        0.0
    };
    let from_score = if wdl < 1.0 {
        if score == crate::training::arrays::UNKNOWN_SCORE {
            return None;
        }
        (1.0 - wdl) * sigmoid(score as f32 / scale)
    } else {
        0.0
    };
    Some(from_result + from_score)
}

/// [`LANES`] values: the unit every hot loop works in (a whole register each, so the
/// loops compile to one vector operation per unit rather than gathers across units).
pub type V = [f32; LANES];

/// The flat parameters (or a gradient) as units.
#[inline(always)]
pub fn units(values: &[f32]) -> &[V] {
    bytemuck::cast_slice(values)
}

#[inline(always)]
pub fn units_mut(values: &mut [f32]) -> &mut [V] {
    bytemuck::cast_slice_mut(values)
}

/// Positions whose forward passes run before their gradients are scattered: the forward
/// pass reads the weights' rows, the scatter writes the gradient's, and at N = 128 the two
/// (393 KB each) do not fit a 512 KB L2 cache together; in groups each phase has its own
/// array to itself. Each gradient value still receives its terms in position order: the
/// same net as one position at a time.
const GROUP: usize = 64;

/// Scratch for a group's passes, reused.
#[derive(Clone, Debug)]
pub struct Scratch {
    acc: [AlignedFloats; 2],
    /// Each position of the group's deltas, `[position][side][unit]`.
    delta: AlignedFloats,
    sides: Vec<[Active; 2]>,
    /// The tiled passes' positions and their output sums.
    items: Vec<Item>,
    lanes: Vec<[F16; 2]>,
    /// The tiled forward pass's activations (`clamp01` of each sum), kept for the backward
    /// pass: tile after tile, `[position][side][unit of the tile]` within a tile (32 MB
    /// for a slice of 8,192 positions at N = 512).
    acts: AlignedFloats,
    /// The order of a slice's positions ([`slice_order`]).
    order: Vec<u32>,
}

impl Scratch {
    pub fn new(hidden: usize) -> Scratch {
        let c = hidden / LANES;
        Scratch {
            acc: [AlignedFloats::zeroed(hidden), AlignedFloats::zeroed(hidden)],
            delta: AlignedFloats::zeroed(GROUP * 2 * c * LANES),
            sides: Vec::with_capacity(GROUP),
            items: Vec::new(),
            lanes: Vec::new(),
            acts: AlignedFloats::default(),
            order: Vec::new(),
        }
    }
}

/// The active inputs of a `-1`-padded row of the loader's features.
#[inline(always)]
fn active(row: &[i32]) -> impl Iterator<Item = usize> + '_ {
    row.iter().take_while(|&&f| f >= 0).map(|&f| f as usize)
}

/// Sixteen `f32` lanes as a plain array, each operation a loop: the compiler makes them
/// vector instructions of the level [`error_and_gradient`] is compiled for (one AVX-512
/// register, two AVX2 ones), the same arithmetic lane by lane on every level (no fused
/// multiply-adds), so the same seed gives the same net on every CPU.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
struct F16(V);

impl F16 {
    const ZERO: F16 = F16([0.0; LANES]);
    const ONE: F16 = F16([1.0; LANES]);

    #[inline(always)]
    fn splat(x: f32) -> F16 {
        F16([x; LANES])
    }
    #[inline(always)]
    fn zip(self, other: F16, f: impl Fn(f32, f32) -> f32) -> F16 {
        // A loop, not `array::from_fn`, whose closure may not be inlined into the
        // level's function (see `simd::inlined`).
        let mut out = self.0;
        for (lane, &b) in out.iter_mut().zip(&other.0) {
            *lane = f(*lane, b);
        }
        F16(out)
    }
    #[inline(always)]
    fn max(self, other: F16) -> F16 {
        self.zip(other, |a, b| if a > b { a } else { b })
    }
    #[inline(always)]
    fn min(self, other: F16) -> F16 {
        self.zip(other, |a, b| if a < b { a } else { b })
    }
    /// `2v` where `a < 1`, else 0: the slope of `clamp(a, 0, 1)²` given `v = clamp(a)`.
    #[inline(always)]
    fn screlu_slope(a: F16, v: F16) -> F16 {
        a.zip(v, |a, v| if a < 1.0 { v + v } else { 0.0 })
    }
    #[inline(always)]
    fn to_array(self) -> V {
        self.0
    }
}

impl std::ops::Add for F16 {
    type Output = F16;
    #[inline(always)]
    fn add(self, other: F16) -> F16 {
        self.zip(other, |a, b| a + b)
    }
}

impl std::ops::Mul for F16 {
    type Output = F16;
    #[inline(always)]
    fn mul(self, other: F16) -> F16 {
        self.zip(other, |a, b| a * b)
    }
}

impl std::ops::AddAssign for F16 {
    #[inline(always)]
    fn add_assign(&mut self, other: F16) {
        *self = *self + other;
    }
}

#[inline(always)]
fn load(v: &V) -> F16 {
    F16(*v)
}

#[inline(always)]
fn add_row(acc: &mut [V], row: &[V]) {
    for (a, w) in acc.iter_mut().zip(row) {
        *a = (load(a) + load(w)).to_array();
    }
}

#[inline(always)]
fn clamp01(x: F16) -> F16 {
    x.max(F16::ZERO).min(F16::ONE)
}

/// `Σ screlu(acc) · w` in [`LANES`] partial sums, then those summed in order: the same
/// arithmetic on every instruction set.
#[inline(always)]
fn output_sum(acc: &[V], weights: &[V]) -> f32 {
    let mut lanes = F16::ZERO;
    for (a, w) in acc.iter().zip(weights) {
        let v = clamp01(load(a));
        lanes += v * v * load(w);
    }
    lanes.to_array().iter().sum()
}

/// Units a block of the first layer keeps in registers, so that a row is added with loads
/// alone and the sums stored once: blocks of 8 took all 16 of AVX2's registers and spilled
/// (the pass ran at 0.6 of the speed of blocks of 4). The block changes which units are
/// summed together, not the order of any unit's sums: every block gives the same net.
const BLOCK: usize = 4;

/// Calls `block::<B>(start)` over `0..units` in blocks of `BLOCK`, then 4, 2, 1.
macro_rules! in_blocks {
    ($block:ident, $units:expr, $f:ident, $($arg:expr),*) => {{
        let units = $units;
        let mut start = 0;
        while start + $block <= units {
            $f::<$block>(start, $($arg),*);
            start += $block;
        }
        if start + 4 <= units {
            $f::<4>(start, $($arg),*);
            start += 4;
        }
        if start + 2 <= units {
            $f::<2>(start, $($arg),*);
            start += 2;
        }
        if start < units {
            $f::<1>(start, $($arg),*);
        }
    }};
}

/// `acc[start..start + B] = bias + Σ rows of features`, the sums in registers.
#[inline(always)]
fn accumulate_block<const B: usize>(
    start: usize,
    params: &[V],
    c: usize,
    bias: &[V],
    features: &[u16],
    acc: &mut [V],
) {
    let mut sums = [F16::ZERO; B];
    for (k, sum) in sums.iter_mut().enumerate() {
        *sum = load(&bias[start + k]);
    }
    for &f in features {
        let row = &params[f as usize * c + start..][..B];
        for k in 0..B {
            sums[k] += load(&row[k]);
        }
    }
    for k in 0..B {
        acc[start + k] = sums[k].to_array();
    }
}

/// `rows of features[start..start + B] += delta`, the delta in registers.
#[inline(always)]
fn scatter_block<const B: usize>(
    start: usize,
    grad: &mut [V],
    c: usize,
    delta: &[V],
    features: &[u16],
) {
    let mut d = [F16::ZERO; B];
    for (k, d) in d.iter_mut().enumerate() {
        *d = load(&delta[start + k]);
    }
    for &f in features {
        let row = &mut grad[f as usize * c + start..][..B];
        for k in 0..B {
            row[k] = (load(&row[k]) + d[k]).to_array();
        }
    }
}

/// A position's active inputs from one perspective, unpacked once for both passes.
#[derive(Clone, Copy, Debug)]
struct Active {
    features: [u16; MAX_ACTIVE],
    len: usize,
}

impl Active {
    #[inline(always)]
    fn of(row: &[i32]) -> Active {
        let mut features = [0u16; MAX_ACTIVE];
        let mut len = 0;
        for f in active(row) {
            features[len] = f as u16;
            len += 1;
        }
        Active { features, len }
    }

    #[inline(always)]
    fn get(&self) -> &[u16] {
        &self.features[..self.len]
    }
}

/// Position `i` of `batch`'s active inputs from both perspectives, side to move first.
#[inline(always)]
fn sides_of(batch: &Batch, i: usize) -> [Active; 2] {
    let ours = &batch.stm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
    let theirs = &batch.nstm_features[i * MAX_ACTIVE..(i + 1) * MAX_ACTIVE];
    [Active::of(ours), Active::of(theirs)]
}

/// The output bucket of a position: its pieces are its active inputs from either side.
#[inline(always)]
fn bucket(layout: Layout, sides: &[Active; 2]) -> usize {
    bucket_of(sides[0].len, layout.buckets)
}

/// The model's output (before the sigmoid) for one position: the accumulators are left in
/// `acc`.
#[inline(always)]
fn forward(params: &[V], layout: Layout, sides: &[Active; 2], acc: &mut [AlignedFloats; 2]) -> f32 {
    let c = layout.hidden / LANES;
    let k = bucket(layout, sides);
    let bias = &params[layout.ft_bias() / LANES..][..c];
    let out_w = &params[layout.out_weights() / LANES + k * 2 * c..][..2 * c];
    let mut out = params[layout.out_bias() / LANES][k];
    for (side, features) in sides.iter().enumerate() {
        let acc = units_mut(&mut acc[side]);
        in_blocks!(
            BLOCK,
            c,
            accumulate_block,
            params,
            c,
            bias,
            features.get(),
            acc
        );
        out += output_sum(acc, &out_w[side * c..(side + 1) * c]);
    }
    out
}

/// The squared error of positions `range` of `batch`, and (with `gradient`) its gradient
/// scaled by `scale` added in. With a factoriser, `params` are merged
/// ([`merge_factoriser`]) and the gradient's factoriser rows are left for
/// [`fold_factoriser_gradient`]. Positions in order, one after another: the sums depend on
/// nothing but the data. Returns (error sum, positions counted). Compiled for each SIMD
/// level, run at the process's ([`simd::dispatch`]).
///
/// `params` and the gradient are in `tiling`'s layout ([`pass_params`], [`flat_gradient`]).
#[allow(clippy::too_many_arguments)]
pub fn error_and_gradient(
    params: &[f32],
    layout: Layout,
    tiling: Tiling,
    objective: Objective,
    batch: &Batch,
    range: std::ops::Range<usize>,
    scratch: &mut Scratch,
    gradient: Option<(&mut [f32], f32)>,
) -> (f64, usize) {
    struct Pass<'a> {
        params: &'a [f32],
        layout: Layout,
        tiling: Tiling,
        objective: Objective,
        batch: &'a Batch,
        range: std::ops::Range<usize>,
        scratch: &'a mut Scratch,
        gradient: Option<(&'a mut [f32], f32)>,
    }
    impl LevelFn for Pass<'_> {
        type Output = (f64, usize);
        #[inline(always)]
        fn call(self) -> (f64, usize) {
            let Pass {
                params,
                layout,
                tiling,
                objective,
                batch,
                range,
                scratch,
                gradient,
            } = self;
            // A direct call (not a function pointer, which would be compiled without the
            // level's instruction sets).
            let (params, gradient) = (units(params), gradient.map(|(g, s)| (units_mut(g), s)));
            if tiling.is_flat() {
                error_and_gradient_here(params, layout, objective, batch, range, scratch, gradient)
            } else {
                tiled_error_and_gradient(
                    params, layout, tiling, objective, batch, range, scratch, gradient,
                )
            }
        }
    }
    let pass = Pass {
        params,
        layout,
        tiling,
        objective,
        batch,
        range,
        scratch,
        gradient,
    };
    // `Path::scalar` has the process's level, which `dispatch_level` compiles for.
    let path = if tiling.is_flat() {
        training_path()
    } else {
        simd::Path::scalar()
    };
    simd::dispatch_level(path, pass)
}

/// The level the flat training passes run at: the process's, but AVX2 where that is
/// AVX-512. (The tiled passes, whose unit loops are fixed at the tile's width, run at the
/// process's level: AVX-512 trained `768x8hm → 512` 1.08× faster there on an Intel Xeon,
/// the same net.)
/// With AVX-512 enabled the compiler vectorises the 16-lane arrays across the units of a
/// block instead (gathers and scatters, `vgatherqps`/`vscatterqps`, for every load and
/// store of a row): on a 2-core Zen 4 the whole training ran at 0.28M positions/s there
/// against 2.8M at the AVX2 level, the same arithmetic and the same net.
fn training_path() -> simd::Path {
    simd::Path::new(training_level(simd::level()), simd::Width::One)
        .unwrap_or_else(simd::Path::scalar)
}

/// The level the flat training passes run at in a process at `level`: the same, but AVX2
/// for AVX-512 (above). Public for the test that trains at each level (tests/simd_levels.rs).
pub fn training_level(level: simd::Level) -> simd::Level {
    match level {
        simd::Level::Avx512 => simd::Level::Avx2,
        other => other,
    }
}

/// [`error_and_gradient`], compiled for whatever calls it.
#[inline(always)]
fn error_and_gradient_here(
    params: &[V],
    layout: Layout,
    objective: Objective,
    batch: &Batch,
    range: std::ops::Range<usize>,
    scratch: &mut Scratch,
    gradient: Option<(&mut [V], f32)>,
) -> (f64, usize) {
    let slope = objective.slope();
    let c = layout.hidden / LANES;
    let mut gradient = gradient;
    let mut error = 0.0f64;
    let mut counted = 0;
    // Taken out of the scratch for the pass, so that the loop's reads of it are not
    // thought to alias the scratch's writes.
    // Without king buckets the order is the batch's, read without the list.
    let mut order = std::mem::take(&mut scratch.order);
    let sorted = layout.inputs.inputs() > INPUTS;
    if sorted {
        slice_order(layout, batch, range.clone(), &mut order);
    }
    let len = range.len();
    let mut next = 0;
    while next < len {
        // Forward passes, the output layer's gradient and the deltas of a group.
        scratch.sides.clear();
        let mut filled = 0;
        while next < len && filled < GROUP {
            let i = if sorted {
                order[next] as usize
            } else {
                range.start + next
            };
            next += 1;
            let Some(target) = objective.target(batch.score[i], batch.result[i]) else {
                continue;
            };
            let sides = sides_of(batch, i);
            let Scratch { acc, delta, .. } = scratch;
            let out = forward(params, layout, &sides, acc);
            let p = sigmoid(out * slope);
            let miss = p - target;
            error += (miss * miss) as f64;
            counted += 1;
            let Some((grad, scale)) = gradient.as_mut() else {
                continue;
            };
            // d loss / d out.
            let g = F16::splat(2.0 * miss * p * (1.0 - p) * slope * *scale);
            let k = bucket(layout, &sides);
            grad[layout.out_bias() / LANES][k] += g.to_array()[0];
            let deltas = &mut units_mut(delta)[filled * 2 * c..(filled + 1) * 2 * c];
            let out_units = layout.out_weights() / LANES + k * 2 * c;
            for side in 0..2 {
                let grad_out = &mut grad[out_units + side * c..][..c];
                let w = &params[out_units + side * c..][..c];
                let deltas = &mut deltas[side * c..(side + 1) * c];
                for u in 0..c {
                    // An opaque index: otherwise LLVM vectorises this loop across the
                    // units (a gather of one lane from each, `vinsertps` by the dozen;
                    // a fifth of the step's time at N = 128) instead of along the lanes.
                    let u = std::hint::black_box(u);
                    let a = load(&units(&acc[side])[u]);
                    let v = clamp01(a);
                    grad_out[u] = (load(&grad_out[u]) + g * v * v).to_array();
                    // d screlu / d acc = 2v inside (0, 1), 0 outside (v is 0 below).
                    let slope = F16::screlu_slope(a, v);
                    deltas[u] = (g * load(&w[u]) * slope).to_array();
                }
            }
            let bias = layout.ft_bias() / LANES;
            for side in 0..2 {
                add_row(&mut grad[bias..bias + c], &deltas[side * c..(side + 1) * c]);
            }
            scratch.sides.push(sides);
            filled += 1;
        }
        let Some((grad, _)) = gradient.as_mut() else {
            continue;
        };
        // Then the group's deltas into the first layer's rows.
        for (k, sides) in scratch.sides.iter().enumerate() {
            for (side, features) in sides.iter().enumerate() {
                let delta = &units(&scratch.delta)[(k * 2 + side) * c..][..c];
                in_blocks!(BLOCK, c, scatter_block, grad, c, delta, features.get());
            }
        }
    }
    scratch.order = order;
    (error, counted)
}

/// The float model's evaluation of one position given by its feature rows (centipawns,
/// side to move's view); `params` as the model holds them (a factoriser unmerged).
pub fn evaluate_features(params: &[f32], layout: Layout, ours: &[i32], theirs: &[i32]) -> f32 {
    let mut scratch = Scratch::new(layout.hidden);
    let sides = [Active::of(ours), Active::of(theirs)];
    let mut merged = AlignedFloats::default();
    let params = if layout.factoriser {
        merge_factoriser(params, layout, Tiling::flat(layout), &mut merged);
        &merged
    } else {
        params
    };
    forward(units(params), layout, &sides, &mut scratch.acc) * SCALE as f32
}

/// The quantised network, as bullet quantises: `round(w · QA)` for the first layer,
/// `round(w · QB)` for the output weights, `round(b · QA · QB)` for the output biases (the
/// clipping keeps every value inside `i16`; saturating all the same). A factoriser is
/// first added into every king bucket's rows ([`merged_first_layer`]).
pub fn quantise(params: &[f32], layout: Layout, provenance: &str) -> Result<Network, String> {
    let n = layout.hidden;
    let q = |values: &[f32], scale: f32| -> Vec<i16> {
        values
            .iter()
            .map(|&w| (w * scale).round().clamp(i16::MIN as f32, i16::MAX as f32) as i16)
            .collect()
    };
    let qa = QA as f32;
    let qb = QB as f32;
    Network::from_layout_parts(
        layout.inputs,
        n,
        layout.buckets,
        &q(&merged_first_layer(params, layout), qa),
        &q(&params[layout.ft_bias()..layout.out_weights()], qa),
        &q(&params[layout.out_weights()..layout.out_bias()], qb),
        &q(
            &params[layout.out_bias()..layout.out_bias() + layout.buckets],
            qa * qb,
        ),
        provenance,
    )
}

/// Starting parameters from `seed`: first-layer weights uniform in ±1/√32 (some 30 inputs
/// are active, so an accumulator starts with a spread of about 0.5), output weights
/// uniform in ±1/√(2N) (every bucket's drawn in turn), biases 0. A factoriser starts at 0
/// (as bullet's examples start it), so the net starts as the same draw without one.
pub fn initial(layout: Layout, seed: u64) -> Vec<f32> {
    let mut rng = crate::training::tune::Rng::new(crate::training::tune::mix(seed ^ 0x6e6e_7565));
    let mut uniform = |bound: f32| {
        let unit = (rng.next_u64() >> 40) as f32 / (1u64 << 24) as f32;
        (2.0 * unit - 1.0) * bound
    };
    let mut params = vec![0.0f32; layout.len()];
    let first = 1.0 / 32f32.sqrt();
    for w in &mut params[..layout.inputs.inputs() * layout.hidden] {
        *w = uniform(first);
    }
    let out = 1.0 / ((2 * layout.hidden) as f32).sqrt();
    for w in &mut params[layout.out_weights()..layout.out_bias()] {
        *w = uniform(out);
    }
    params
}

/// The boards (colour × 6 + type, White first) of a position from its side to move's
/// inputs (`black`: Black to move), for the evaluations the trainer compares. With king
/// buckets the inputs are read without their bucket and as if unmirrored: a position whose
/// side to move's king stood on files e–h comes back mirrored left to right, which its
/// inputs cannot tell apart (mirrored inputs are the same for a board and its mirror
/// image), so it has the same network evaluation, the same exact endgame rules and the
/// same hand-crafted terms (castling rights are not in the boards).
pub fn boards_of_features(ours: &[i32], black: bool) -> [u64; 12] {
    let mut boards = [0u64; 12];
    let us = black as usize;
    for f in active(ours).map(|f| f % INPUTS) {
        let colour = if f >= 384 { 1 - us } else { us };
        let kind = (f % 384) / 64;
        let square = (f % 64) ^ if black { 56 } else { 0 };
        boards[colour * 6 + kind] |= 1 << square;
    }
    boards
}

#[cfg(test)]
mod tests;
