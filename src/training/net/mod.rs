//! The network trainer behind `pawnstorm train-net`: float32 weights, a sparse first layer
//! (a position touches only its active inputs' rows), SCReLU, the output through a sigmoid
//! against a blend of the game result and the stored score (squared error, as bullet),
//! AdamW with a cosine schedule, weights clipped so that the quantised net fits `i16`.
//!
//! [`model`] has the forward and backward passes and the quantisation, [`optimiser`] AdamW
//! and the deterministic step over threads, [`checkpoint`] the file each epoch leaves,
//! [`run`] the epochs over the loader's passes, [`compare`] the results-only loss of the net
//! and of the hand-crafted evaluation on the held-out positions. `docs/NNUE.md` says why.

pub mod aligned;
pub mod checkpoint;
pub mod compare;
pub mod model;
pub mod optimiser;
pub mod run;

pub use checkpoint::Checkpoint;
pub use model::{Layout, Objective, quantise};
pub use optimiser::{State, Trainer};
pub use run::{EpochReport, Observer, Outcome, RunConfig, fit_scale, train};
