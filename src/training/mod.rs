//! Training data and what makes it: the term and plane arrays (`arrays`), NNUE inputs
//! (`nnue`), the streaming loader (`loader`), the tuner of the hand-crafted weights
//! (`tune`), labelling by a deeper search or another engine (`label`), self-play
//! (`datagen`) and the network's trainer (`net`).

pub mod arrays;
pub mod datagen;
pub mod label;
pub mod loader;
pub mod mix;
pub mod net;
pub mod nnue;
pub mod selection;
pub mod tune;
