//! The passes over a first layer in tiles ([`Tiling`]): its layout, the conversions to and
//! from the flat one, and the two passes a slice runs a tile at a time.

use pawnstorm_kernels::simd;

use crate::training::net::aligned::AlignedFloats;

use super::{
    Active, Batch, F16, INPUTS, LANES, Layout, MAX_ACTIVE, Objective, Scratch, V, bucket, clamp01,
    fold_factoriser_gradient, load, merge_factoriser, sides_of, sigmoid, units, units_mut,
};

/// How the passes lay out the first layer's rows (the king buckets' rows, not a
/// factoriser's): in tiles of `tile` units, tile after tile, each tile's rows one after
/// another. A tile as wide as the layer is the flat `[768 K][N]` layout itself.
///
/// Why: at `768x8hm → 512` the first layer is 12.6 MB, and a pass that sums each
/// position's rows whole reads and writes some 130 KB a position from beyond the L2 cache
/// (0.11M positions/s on a 2-core Intel Xeon, 0.27M on a Zen 4). A pass over one tile of
/// every position of a slice keeps that tile's rows (786 KB at two units and 6,144 rows) and
/// their gradient in L2, at the cost of summing each accumulator twice (once for the output,
/// once for the deltas, which need the output first). Each value still gets its terms in
/// the same order, so every tiling gives the same net bit for bit. With slices of 8,192
/// (`optimiser::slice_len`) the whole run is 1.65 times as fast there (docs/NNUE.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Rows tiled: the inputs' (`768 K`).
    pub rows: usize,
    /// Units in a row (`N / 16`).
    pub units: usize,
    /// Units in a tile (the last may be narrower).
    pub tile: usize,
}

/// Units of a tile in the passes' own choice ([`Tiling::of`]) below AVX-512: both
/// perspectives' sums of two units are 8 of AVX2's 16 registers. At `768x8hm → 512` on 2
/// threads, tiles of 2 ran at 187K positions/s, of 1 at 160K (half the sums in flight), of
/// 4 at 143K (the sums spill, and a tile's rows no longer fit L2 beside their gradient).
pub const TILE: usize = 2;

/// The same at AVX-512, whose 32 registers hold the sums of four units: once the backward
/// pass stopped summing again (it reads the forward pass's activations), tiles of 4 ran
/// `768x8hm → 512` 1.06× as fast as tiles of 2 on an Intel Xeon (median of 7 alternating
/// pairs; 3 units: no faster than 2).
pub const TILE_AVX512: usize = 4;

/// First layers up to this size are passed flat, a position's rows whole: they stay in L2
/// with their gradient (768 → 128 is 393 KB), and a tiled pass would only sum twice.
pub const FLAT_BYTES: usize = 768 * 1024;

impl Tiling {
    /// The passes' choice for `layout` in this process: flat while the first layer is
    /// small, else [`TILE`]-unit tiles ([`TILE_AVX512`] where the passes run at AVX-512).
    /// Every tiling gives the same net, so the choice is speed alone.
    pub fn of(layout: Layout) -> Tiling {
        let flat = Tiling::flat(layout);
        if flat.rows * layout.hidden * 4 <= FLAT_BYTES {
            flat
        } else if simd::level() == simd::Level::Avx512 {
            Tiling::with_tile(layout, TILE_AVX512)
        } else {
            Tiling::with_tile(layout, TILE)
        }
    }
    pub fn flat(layout: Layout) -> Tiling {
        let units = layout.hidden / LANES;
        Tiling {
            tile: units.max(1),
            ..Tiling::with_tile(layout, 1)
        }
    }
    /// Tiles of `tile` units (1 to 4).
    pub fn with_tile(layout: Layout, tile: usize) -> Tiling {
        let units = layout.hidden / LANES;
        Tiling {
            rows: layout.inputs.inputs(),
            units,
            tile: tile.clamp(1, 4).min(units.max(1)),
        }
    }
    pub fn is_flat(self) -> bool {
        self.tile >= self.units
    }
    pub fn tiles(self) -> usize {
        self.units.div_ceil(self.tile)
    }
    /// Tile `t`'s first unit and width.
    #[inline(always)]
    pub(super) fn tile_range(self, t: usize) -> (usize, usize) {
        let start = t * self.tile;
        (start, self.tile.min(self.units - start))
    }
    /// Where unit `unit` of row `row` lies, in units from the start of the array.
    #[inline(always)]
    pub fn unit(self, row: usize, unit: usize) -> usize {
        let (start, width) = self.tile_range(unit / self.tile);
        start * self.rows + row * width + (unit - start)
    }
    /// Where unit `q` of the flat layout lies in the tiled one (units past the first
    /// layer's rows stay where they are).
    #[inline(always)]
    pub fn of_flat_unit(self, q: usize) -> usize {
        if q < self.rows * self.units {
            self.unit(q / self.units, q % self.units)
        } else {
            q
        }
    }
}

/// `values` (parameters, a moment or a gradient, flat) with the first layer in `tiling`'s
/// layout; the rest where it was.
pub fn tile(values: &[f32], tiling: Tiling) -> Vec<f32> {
    let mut tiled = values.to_vec();
    let from = units(values);
    let to = units_mut(&mut tiled);
    for q in 0..tiling.rows * tiling.units {
        to[tiling.of_flat_unit(q)] = from[q];
    }
    tiled
}

/// The inverse of [`tile`].
pub fn untile(values: &[f32], tiling: Tiling) -> Vec<f32> {
    let mut flat = values.to_vec();
    let from = units(values);
    for (q, v) in units_mut(&mut flat)[..tiling.rows * tiling.units]
        .iter_mut()
        .enumerate()
    {
        *v = from[tiling.of_flat_unit(q)];
    }
    flat
}

/// The parameters as the passes read them, from the model's own (flat), into `out`: the
/// first layer in `tiling`'s layout ([`tile`]), a factoriser added into every king
/// bucket's rows ([`merge_factoriser`]).
pub fn pass_params(params: &[f32], layout: Layout, tiling: Tiling, out: &mut AlignedFloats) {
    let tiled = tile(params, tiling);
    if layout.factoriser {
        merge_factoriser(&tiled, layout, tiling, out);
    } else {
        out.assign(&tiled);
    }
}

/// A gradient the passes took in `tiling`'s layout, in the flat layout of the parameters
/// (the factoriser's rows filled, [`fold_factoriser_gradient`]).
pub fn flat_gradient(grad: &[f32], layout: Layout, tiling: Tiling) -> Vec<f32> {
    let mut tiled = grad.to_vec();
    fold_factoriser_gradient(&mut tiled, layout, tiling);
    untile(&tiled, tiling)
}

/// The order a slice's positions are passed in: by the pair of king buckets of their two
/// perspectives (stable, so in batch order within a pair; batch order without king
/// buckets). Positions of one pair read the same two buckets' rows, so a tile's rows in
/// use at a time are two buckets' (196 KB at `768x8hm → 512` in two-unit tiles) rather
/// than all of them. Every tiling passes positions in this order.
pub(super) fn slice_order(
    layout: Layout,
    batch: &Batch,
    range: std::ops::Range<usize>,
    order: &mut Vec<u32>,
) {
    order.clear();
    let buckets = layout.inputs.inputs() / INPUTS;
    if buckets <= 1 {
        order.extend(range.map(|i| i as u32));
        return;
    }
    let key = |i: usize| {
        let bucket = |features: &[i32]| features[i * MAX_ACTIVE].max(0) as usize / INPUTS;
        bucket(&batch.stm_features) * buckets + bucket(&batch.nstm_features)
    };
    let mut starts = vec![0u32; buckets * buckets + 1];
    for i in range.clone() {
        starts[key(i) + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    order.resize(range.len(), 0);
    for i in range {
        let k = key(i);
        order[starts[k] as usize] = i as u32;
        starts[k] += 1;
    }
}

/// A position of a slice with a target, for the tiled passes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Item {
    sides: [Active; 2],
    target: f32,
    /// Its output bucket.
    bucket: usize,
    /// d loss / d out (after the first pass).
    g: f32,
}

/// `[sums of side 0, sums of side 1]` of units `start..start + W` of a position: the bias
/// plus its rows, read from a tile of width `W` (`first`, the tile's rows).
#[inline(always)]
fn tile_sums<const W: usize>(
    first: &[V],
    bias: &[V],
    start: usize,
    sides: &[Active; 2],
) -> [[F16; W]; 2] {
    let mut sums = [[F16::ZERO; W]; 2];
    for side in &mut sums {
        for (k, sum) in side.iter_mut().enumerate() {
            *sum = load(&bias[start + k]);
        }
    }
    let (ours, theirs) = (sides[0].get(), sides[1].get());
    // Both perspectives at once: twice the independent sums in flight.
    let both = ours.len().min(theirs.len());
    for (&a, &b) in ours[..both].iter().zip(&theirs[..both]) {
        let (ra, rb) = (&first[a as usize * W..][..W], &first[b as usize * W..][..W]);
        for k in 0..W {
            sums[0][k] += load(&ra[k]);
            sums[1][k] += load(&rb[k]);
        }
    }
    for (side, rest) in [(0, &ours[both..]), (1, &theirs[both..])] {
        for &f in rest {
            let row = &first[f as usize * W..][..W];
            for k in 0..W {
                sums[side][k] += load(&row[k]);
            }
        }
    }
    sums
}

/// The first of the tiled passes over tile `start..start + W`: each position's share of
/// `Σ screlu(acc) · w`, lane by lane, in `lanes` (units in order, as [`output_sum`]), and,
/// where `acts` is not empty, each position's activations `[side][k]` into it for
/// [`tile_backward`].
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn tile_forward<const W: usize>(
    start: usize,
    params: &[V],
    layout: Layout,
    tiling: Tiling,
    items: &[Item],
    lanes: &mut [[F16; 2]],
    acts: &mut [V],
) {
    let c = tiling.units;
    let first = &params[start * tiling.rows..][..tiling.rows * W];
    let bias = &params[layout.ft_bias() / LANES..][..c];
    let out_w = layout.out_weights() / LANES;
    let keep = !acts.is_empty();
    for (i, (item, lanes)) in items.iter().zip(lanes).enumerate() {
        let sums = tile_sums::<W>(first, bias, start, &item.sides);
        let w = &params[out_w + item.bucket * 2 * c..][..2 * c];
        for side in 0..2 {
            for k in 0..W {
                let v = clamp01(sums[side][k]);
                if keep {
                    store_streaming(&mut acts[(i * 2 + side) * W + k], v.to_array());
                }
                lanes[side] += v * v * load(&w[side * c + start + k]);
            }
        }
    }
}

/// `*to = v`, past the caches where the CPU can: the activations are read again only
/// after the whole forward pass, and written through the caches they would push the
/// tile's rows out of L2.
#[inline(always)]
fn store_streaming(to: &mut V, v: V) {
    #[cfg(target_arch = "x86_64")]
    {
        let to = to.as_mut_ptr();
        // `_mm_stream_ps` needs 16-byte alignment; a `[f32; 16]` only promises 4, though
        // the buffer this writes starts a cache line (`Scratch::acts`; else the plain
        // store).
        if (to as usize).is_multiple_of(16) {
            use std::arch::x86_64::{_mm_loadu_ps, _mm_stream_ps};
            for q in 0..4 {
                // SAFETY: SSE is part of x86-64; `to + 4q` is 16-aligned and the four
                // floats there lie inside `*to`, as `v + 4q`'s inside `v`.
                unsafe { _mm_stream_ps(to.add(q * 4), _mm_loadu_ps(v.as_ptr().add(q * 4))) };
            }
            return;
        }
    }
    *to = v;
}

/// The second: the output layer's gradient, the deltas, the bias's gradient and the
/// deltas into the tile's rows of the gradient, from the activations [`tile_forward`] kept
/// (`acts`, this tile's), so that no accumulator is summed twice: at `768x8hm → 512` a
/// second sum read every active row of every tile from L2 again, a quarter of the passes'
/// traffic, where the kept activations are 256 bytes a position and tile read in order.
#[inline(always)]
fn tile_backward<const W: usize>(
    start: usize,
    params: &[V],
    layout: Layout,
    tiling: Tiling,
    items: &[Item],
    acts: &[V],
    grad: &mut [V],
) {
    let c = tiling.units;
    let out_w = layout.out_weights() / LANES;
    let bias_grad = layout.ft_bias() / LANES;
    let (grad_first, grad_rest) = grad.split_at_mut(tiling.rows * c);
    let grad_first = &mut grad_first[start * tiling.rows..][..tiling.rows * W];
    let bias_grad = bias_grad - tiling.rows * c;
    let out_grad = out_w - tiling.rows * c;
    for (i, item) in items.iter().enumerate() {
        let g = F16::splat(item.g);
        let units = item.bucket * 2 * c;
        let mut delta = [[F16::ZERO; W]; 2];
        for side in 0..2 {
            for k in 0..W {
                let unit = units + side * c + start + k;
                let v = load(&acts[(i * 2 + side) * W + k]);
                let gw = &mut grad_rest[out_grad + unit];
                *gw = (load(gw) + g * v * v).to_array();
                // screlu's slope from the activation alone: `a < 1` exactly where `v < 1`,
                // and `v + v` is 0 where `a ≤ 0`.
                let slope = F16::screlu_slope(v, v);
                delta[side][k] = g * load(&params[out_w + unit]) * slope;
            }
        }
        for side in &delta {
            for (k, d) in side.iter().enumerate() {
                let b = &mut grad_rest[bias_grad + start + k];
                *b = (load(b) + *d).to_array();
            }
        }
        for (side, d) in item.sides.iter().zip(&delta) {
            for &f in side.get() {
                let row = &mut grad_first[f as usize * W..][..W];
                for k in 0..W {
                    row[k] = (load(&row[k]) + d[k]).to_array();
                }
            }
        }
    }
}

/// Calls `$f::<W>(start, ...)` for a tile's width (1 to 4).
macro_rules! by_width {
    ($width:expr, $f:ident, $($arg:expr),*) => {
        match $width {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            _ => $f::<4>($($arg),*),
        }
    };
}

/// [`error_and_gradient_here`] over a tiled first layer: the output of every position of
/// the range a tile at a time, then (with a gradient) the deltas and the rows' gradient a
/// tile at a time. Each value gets its terms in the order of the flat pass.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(super) fn tiled_error_and_gradient(
    params: &[V],
    layout: Layout,
    tiling: Tiling,
    objective: Objective,
    batch: &Batch,
    range: std::ops::Range<usize>,
    scratch: &mut Scratch,
    gradient: Option<(&mut [V], f32)>,
) -> (f64, usize) {
    let slope = objective.slope();
    slice_order(layout, batch, range, &mut scratch.order);
    let items = &mut scratch.items;
    items.clear();
    for &i in &scratch.order {
        let i = i as usize;
        let Some(target) = objective.target(batch.score[i], batch.result[i]) else {
            continue;
        };
        let sides = sides_of(batch, i);
        let bucket = bucket(layout, &sides);
        items.push(Item {
            sides,
            target,
            bucket,
            g: 0.0,
        });
    }
    let lanes = &mut scratch.lanes;
    lanes.clear();
    lanes.resize(items.len(), [F16::ZERO; 2]);
    // Tile t's activations start at `start · 2 · items`: the tiles before it hold `start`
    // units of each position's two sides.
    let per_unit = 2 * items.len();
    // Every activation is written before it is read: grown, never cleared.
    let keep = gradient.is_some();
    if keep && scratch.acts.len() < tiling.units * per_unit * LANES {
        scratch.acts.resize(tiling.units * per_unit * LANES);
    }
    let acts = units_mut(&mut scratch.acts);
    for t in 0..tiling.tiles() {
        let (start, width) = tiling.tile_range(t);
        let tile_acts = if !keep {
            &mut [][..]
        } else {
            &mut acts[start * per_unit..][..width * per_unit]
        };
        by_width!(
            width,
            tile_forward,
            start,
            params,
            layout,
            tiling,
            items,
            lanes,
            tile_acts
        );
    }
    // The streaming stores are weakly ordered: fenced before anything reads them back.
    #[cfg(target_arch = "x86_64")]
    if keep {
        // SAFETY: SSE is part of x86-64.
        unsafe { std::arch::x86_64::_mm_sfence() };
    }
    let mut error = 0.0f64;
    let out_bias = layout.out_bias() / LANES;
    let mut gradient = gradient;
    for (item, lanes) in items.iter_mut().zip(lanes.iter()) {
        let mut out = params[out_bias][item.bucket];
        for side in lanes {
            out += side.to_array().iter().sum::<f32>();
        }
        let p = sigmoid(out * slope);
        let miss = p - item.target;
        error += (miss * miss) as f64;
        if let Some((grad, scale)) = gradient.as_mut() {
            item.g = 2.0 * miss * p * (1.0 - p) * slope * *scale;
            grad[out_bias][item.bucket] += item.g;
        }
    }
    let counted = items.len();
    if let Some((grad, _)) = gradient {
        for t in 0..tiling.tiles() {
            let (start, width) = tiling.tile_range(t);
            let tile_acts = &units(&scratch.acts)[start * per_unit..][..width * per_unit];
            by_width!(
                width,
                tile_backward,
                start,
                params,
                layout,
                tiling,
                items,
                tile_acts,
                grad
            );
        }
    }
    (error, counted)
}
