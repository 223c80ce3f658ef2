//! The factoriser of king-bucketed layouts.
//!
//! The factoriser (bullet's `Factorised<ChessBucketsMirrored, Chess768>`) is a 768-input
//! layer every king bucket shares: an active input `f` also activates row `768 K + f mod
//! 768`, so what every bucket should know is learnt from all positions at once, and each
//! bucket's own rows learn only how it differs. On quantising it is added into each
//! bucket's rows; the network file has no trace of it.
//!
//! The passes never touch a factoriser row per position: a step first adds the factoriser
//! into every bucket's rows once ([`merge_factoriser`]), the passes read those merged rows
//! (one row an input, as without a factoriser), and the factoriser's gradient is the sum of
//! its buckets' rows' gradients, taken once a slice ([`fold_factoriser_gradient`]). The
//! same arithmetic as activating both rows for every input (up to the order of the sums),
//! at the cost of two passes over the first layer a step instead of twice the rows a
//! position.

use rayon::prelude::*;

use super::{CLIP, Layout, Tiling, load, units, units_mut};
use crate::nnue::INPUTS;
use crate::training::net::aligned::AlignedFloats;

/// `params` (the first layer in `tiling`'s layout) with the factoriser added into every
/// king bucket's rows, into `out` (the factoriser's own rows copied unchanged): what the
/// passes read ([`super::error_and_gradient`]).
pub fn merge_factoriser(params: &[f32], layout: Layout, tiling: Tiling, out: &mut AlignedFloats) {
    let n = layout.hidden;
    if tiling.is_flat() {
        out.assign(params);
        let (buckets, rest) = out.split_at_mut(layout.factoriser_row() * n);
        let shared = &rest[..INPUTS * n];
        for bucket in buckets.chunks_exact_mut(INPUTS * n) {
            for (w, s) in bucket.iter_mut().zip(shared) {
                *w += s;
            }
        }
        return;
    }
    // Each tile's rows written once, straight from `params`, the tiles in parallel: run on
    // the calling thread alone before the passes, the copy and the sums were a tenth of a
    // `768x8hm → 512` step's wall time while the other core waited.
    // Every value of `out` is written below: sized once, never copied first.
    out.resize(params.len());
    let c = tiling.units;
    let first = tiling.rows * c;
    let shared = layout.factoriser_row();
    let params = units(params);
    let (out_first, out_rest) = units_mut(out).split_at_mut(first);
    out_rest.copy_from_slice(&params[first..]);
    let tile_len = tiling.tile * tiling.rows;
    out_first
        .par_chunks_mut(tile_len)
        .zip(params[..first].par_chunks(tile_len))
        .enumerate()
        .for_each(|(t, (out, from))| {
            let (start, width) = tiling.tile_range(t);
            let rows = out.chunks_exact_mut(width).zip(from.chunks_exact(width));
            for (row, (out, from)) in rows.enumerate() {
                let s = &params[(shared + row % INPUTS) * c + start..][..width];
                for ((out, from), s) in out.iter_mut().zip(from).zip(s) {
                    *out = (load(from) + load(s)).to_array();
                }
            }
        });
}

/// Fills the factoriser's rows of `grad` (a gradient taken on merged parameters, the
/// first layer in `tiling`'s layout) with the sum of the king buckets' rows: each shared
/// weight enters every bucket's row of its input. Nothing without a factoriser.
pub fn fold_factoriser_gradient(grad: &mut [f32], layout: Layout, tiling: Tiling) {
    if !layout.factoriser {
        return;
    }
    let n = layout.hidden;
    if tiling.is_flat() {
        let (buckets, rest) = grad.split_at_mut(layout.factoriser_row() * n);
        let shared = &mut rest[..INPUTS * n];
        shared.copy_from_slice(&buckets[..INPUTS * n]);
        for bucket in buckets.chunks_exact(INPUTS * n).skip(1) {
            for (s, g) in shared.iter_mut().zip(bucket) {
                *s += g;
            }
        }
        return;
    }
    let c = tiling.units;
    let shared = layout.factoriser_row();
    let buckets = tiling.rows / INPUTS;
    let g = units_mut(grad);
    // A tile at a time, so that each bucket's rows are read in order (8 streams the
    // prefetchers follow, where a row at a time across every tile was 64).
    for t in 0..tiling.tiles() {
        let (start, width) = tiling.tile_range(t);
        for f in 0..INPUTS {
            for k in 0..width {
                let u = start + k;
                let mut sum = load(&g[tiling.unit(f, u)]);
                for b in 1..buckets {
                    sum += load(&g[tiling.unit(b * INPUTS + f, u)]);
                }
                g[(shared + f) * c + u] = sum.to_array();
            }
        }
    }
}

/// The first layer's weights as the network has them, `[768 K][N]`: with a factoriser,
/// each bucket's rows plus the shared row of the same `Chess768` input, held within the
/// clipping bound each part is trained within (so that 33 rows still fit an `i16` sum).
pub fn merged_first_layer(params: &[f32], layout: Layout) -> Vec<f32> {
    let n = layout.hidden;
    let mut weights = params[..layout.inputs.inputs() * n].to_vec();
    if layout.factoriser {
        let shared = &params[layout.factoriser_row() * n..layout.ft_bias()];
        for (row, weights) in weights.chunks_exact_mut(n).enumerate() {
            let shared = &shared[(row % INPUTS) * n..][..n];
            for (w, s) in weights.iter_mut().zip(shared) {
                *w = (*w + s).clamp(-CLIP, CLIP);
            }
        }
    }
    weights
}
