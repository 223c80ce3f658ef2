//! The NNUE input features of the selected rows: into `.npz` arrays (`--kind nnue`) or
//! into memory, both perspectives at once.

use rayon::prelude::*;

use crate::db::{Block, Database};
use crate::io::npz::NpzWriter;
use crate::training::nnue::{FeatureSet, MAX_ACTIVE};
use pawnstorm_kernels::Color;
use pawnstorm_kernels::simd::{LevelFn, Path, dispatch_level};

#[cfg(target_arch = "x86_64")]
use crate::training::nnue::wide::Wide;
/// No AVX2 code off x86-64: nothing of this type is ever made.
#[cfg(not(target_arch = "x86_64"))]
type Wide = std::convert::Infallible;

use super::{Selection, piece_planes, stream};

/// Writes `stm_features` and `nstm_features`: the active inputs of `set` from the side to
/// move's perspective and from the other side's, (N, 32) int32 padded with -1.
pub fn write_nnue(
    db: &Database,
    selection: &Selection,
    set: FeatureSet,
    npz: &mut NpzWriter,
    progress: &(dyn Fn(u64) + Sync),
) -> anyhow::Result<()> {
    let n = selection.count;
    #[cfg(target_arch = "x86_64")]
    let wide = Wide::new(set);
    for (name, side_to_move) in [("stm_features", true), ("nstm_features", false)] {
        stream(
            db,
            selection,
            npz,
            (name, "<i4", &[n, MAX_ACTIVE as u64]),
            |_, block, rows, out| {
                let start = out.len();
                out.resize(start + rows.len() * MAX_ACTIVE * 4, 0);
                let indices: &mut [i32] = bytemuck::cast_slice_mut(&mut out[start..]);
                #[cfg(target_arch = "x86_64")]
                if let Some(wide) = &wide {
                    let position = |i: usize| {
                        let (boards, all, stm) = row_position(block, rows[i] as usize);
                        (boards, all, if side_to_move { stm } else { !stm })
                    };
                    // SAFETY: `Wide::new` found AVX2.
                    unsafe { wide.fill_rows::<false>(rows.len(), position, indices, &mut []) };
                    return;
                }
                for (&row, slot) in rows.iter().zip(indices.chunks_exact_mut(MAX_ACTIVE)) {
                    let (boards, _, stm) = row_position(block, row as usize);
                    let perspective = if side_to_move { stm } else { !stm };
                    let slot: &mut [i32; MAX_ACTIVE] = slot.try_into().expect("32 a row");
                    set.active(&boards, perspective, slot);
                }
            },
            if side_to_move { &|_| {} } else { progress },
        )?;
    }
    Ok(())
}

/// The NNUE features of the selected positions in memory: `(stm_features, nstm_features)`,
/// each `(count, 32)` row-major as [`write_nnue`] writes them, computed in parallel over
/// blocks straight into the two arrays (each block's rows know their place up front).
pub fn nnue_features(
    db: &Database,
    selection: &Selection,
    set: FeatureSet,
) -> anyhow::Result<(Vec<i32>, Vec<i32>)> {
    let n = selection.count as usize;
    let mut ours = vec![0i32; n * MAX_ACTIVE];
    let mut theirs = vec![0i32; n * MAX_ACTIVE];
    nnue_features_into(db, selection, set, &mut ours, &mut theirs)?;
    Ok((ours, theirs))
}

/// [`nnue_features`] into arrays the caller holds (`selection.count × 32` each), so that a
/// trainer filling the same memory again pays no allocation and no page faults.
pub fn nnue_features_into(
    db: &Database,
    selection: &Selection,
    set: FeatureSet,
    ours: &mut [i32],
    theirs: &mut [i32],
) -> anyhow::Result<()> {
    let n = selection.count as usize;
    anyhow::ensure!(
        ours.len() == n * MAX_ACTIVE && theirs.len() == n * MAX_ACTIVE,
        "the feature arrays hold {} and {} values, not {} positions x {MAX_ACTIVE}",
        ours.len(),
        theirs.len(),
        n
    );
    // Each block's share of the two arrays, in DB order.
    let mut shares = Vec::with_capacity(db.block_count());
    let (mut our_rest, mut their_rest) = (ours, theirs);
    for index in 0..db.block_count() {
        let rows = match selection.rows() {
            Some(rows) => rows[index].len(),
            // Every block is full but the last.
            None => (db.len() as usize - index * db.block_size()).min(db.block_size()),
        };
        let (our_share, rest) = our_rest.split_at_mut(rows * MAX_ACTIVE);
        our_rest = rest;
        let (their_share, rest) = their_rest.split_at_mut(rows * MAX_ACTIVE);
        their_rest = rest;
        shares.push((index, our_share, their_share));
    }
    #[cfg(target_arch = "x86_64")]
    let wide = Wide::new(set);
    #[cfg(not(target_arch = "x86_64"))]
    let wide: Option<Wide> = None;
    shares
        .into_par_iter()
        .try_for_each(|(index, our_share, their_share)| -> anyhow::Result<()> {
            let block = db.block(index)?;
            let rows = selection.rows_of(index, &block);
            block_nnue_features(set, wide.as_ref(), &block, &rows, our_share, their_share);
            Ok(())
        })
}

/// Row `r`'s piece boards, their union and the side to move.
#[inline(always)]
fn row_position(block: &Block<'_>, r: usize) -> ([u64; 12], u64, Color) {
    let us = if block.side_to_move[r] == 0 {
        Color::White
    } else {
        Color::Black
    };
    let [p, n, b, q, rook, k] = block.pieces;
    let all = (p[r].0 | n[r].0 | b[r].0 | q[r].0 | rook[r].0 | k[r].0)
        & (block.colors[0][r].0 | block.colors[1][r].0);
    (piece_planes(block, r), all, us)
}

/// The features of rows `rows` of `block` into `ours` and `theirs` (32 a row, in order):
/// with `wide`'s AVX2 code where the process has it, else a loop run through
/// [`dispatch_level`], compiled per instruction-set level with the packing (PEXT) and the
/// feature loop inlined (called from plain x86-64 code it ran at 0.90 of a
/// `target-cpu=native` build's speed).
fn block_nnue_features(
    set: FeatureSet,
    wide: Option<&Wide>,
    block: &Block<'_>,
    rows: &[u32],
    ours: &mut [i32],
    theirs: &mut [i32],
) {
    struct Rows<'a, 'b> {
        set: FeatureSet,
        block: &'a Block<'b>,
        rows: &'a [u32],
        ours: &'a mut [i32],
        theirs: &'a mut [i32],
    }
    #[cfg(target_arch = "x86_64")]
    if let Some(wide) = wide {
        let position = |i: usize| row_position(block, rows[i] as usize);
        // SAFETY: `Wide::new` found AVX2.
        unsafe { wide.fill_rows::<true>(rows.len(), position, ours, theirs) };
        return;
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = wide;
    impl LevelFn for Rows<'_, '_> {
        type Output = ();
        #[inline(always)]
        fn call(self) {
            let slots = self
                .ours
                .chunks_exact_mut(MAX_ACTIVE)
                .zip(self.theirs.chunks_exact_mut(MAX_ACTIVE));
            for (&row, (our_slot, their_slot)) in self.rows.iter().zip(slots) {
                let (boards, _, us) = row_position(self.block, row as usize);
                self.set.active_both(
                    &boards,
                    us,
                    our_slot.try_into().expect("32 a row"),
                    their_slot.try_into().expect("32 a row"),
                );
            }
        }
    }
    dispatch_level(
        Path::scalar(),
        Rows {
            set,
            block,
            rows,
            ours,
            theirs,
        },
    )
}
