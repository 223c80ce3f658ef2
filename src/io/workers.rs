//! The worker threads of a batch pass.

/// A rayon pool of `threads` workers: one per core when `None`, at least one.
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, rayon::ThreadPoolBuildError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or_else(rayon::current_num_threads).max(1))
        .build()
}
