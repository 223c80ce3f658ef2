//! File machinery below the chess: outputs written whole or not at all (`durable`), numpy
//! `.npy`/`.npz` and CSV tables filled in parallel (`npz`, `table`), and the worker pool
//! of the batch passes (`workers`).

pub mod durable;
pub mod npz;
pub mod table;
pub mod workers;
