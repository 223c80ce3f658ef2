//! `pawnstorm._native`: the native half of the `pawnstorm` Python package. It exposes an
//! open DB's memory map through the buffer protocol (numpy builds its zero-copy views over
//! it in `pawnstorm/__init__.py`), and runs the library's batch passes with the GIL
//! released, writing into numpy arrays the Python side allocates.
//!
//! The passes are the CLI's: the same `TableSource`s (`ScoreTable`, `MaskTable`) on the
//! same rayon pool shape, their records encoded as the `.npy` writer encodes them, so an
//! array here equals, byte for byte, the records of the file the CLI writes.

use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use pawnstorm::db::{self, Database, DbError, Verify};
use pawnstorm::eval::batch::ScoreTable;
use pawnstorm::eval::features::{self, MaskTable};
use pawnstorm::eval::{Prepared, Weights};
use pawnstorm::export::filters::{Filter, Reason, parse_piece_range};
use pawnstorm::export::skips::parse_piece_weights;
use pawnstorm::import::{self, Format, ImportOptions, IntoDb, Observers, Source};
use pawnstorm::io::npz::NpzWriter;
use pawnstorm::io::table::{self, ColumnType};
use pawnstorm::training::arrays::{self, Layout};
use pawnstorm::training::loader::{Loader, LoaderConfig};
use pawnstorm::training::mix::Input;
use pawnstorm::training::nnue::{FeatureSet, MAX_ACTIVE};

create_exception!(
    pawnstorm,
    PawnstormError,
    PyException,
    "A pawnstorm error: a corrupt or foreign DB, a bad input, a failed pass. The message is \
     the CLI's."
);

/// The Python exception for an error: a missing file is `FileNotFoundError`, other I/O
/// `OSError`, the rest `PawnstormError`; the message is what the CLI prints after `error:`.
fn to_py(error: anyhow::Error) -> PyErr {
    let message = format!("{error:#}");
    let io = error.chain().find_map(|cause| {
        if let Some(DbError::Io { error, .. }) = cause.downcast_ref::<DbError>() {
            return Some(error.kind());
        }
        match cause.downcast_ref() {
            Some(import::ImportError::Io { error, .. })
            | Some(import::ImportError::Db(DbError::Io { error, .. })) => {
                return Some(error.kind());
            }
            _ => {}
        }
        cause.downcast_ref::<std::io::Error>().map(|e| e.kind())
    });
    match io {
        Some(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(message),
        Some(_) => PyOSError::new_err(message),
        None => PawnstormError::new_err(message),
    }
}

fn db_err(error: DbError) -> PyErr {
    to_py(error.into())
}

/// A rayon pool of `threads` workers (default: one per core), as the CLI builds one.
fn pool(threads: Option<usize>) -> PyResult<rayon::ThreadPool> {
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    pawnstorm::io::workers::pool(threads)
        .context("starting worker threads")
        .map_err(to_py)
}

fn weights(path: Option<&Path>) -> PyResult<Prepared> {
    let weights = match path {
        Some(path) => Weights::read(path).map_err(|e| to_py(e.into()))?,
        None => Weights::default(),
    };
    Ok(Prepared::new(weights))
}

fn simd_path(scalar: bool) -> features::Path {
    if scalar {
        features::Path::Scalar
    } else {
        features::Path::native()
    }
}

/// The library's filter from the CLI's filter options given by name.
fn filter(options: &Bound<'_, PyDict>, prepared: &Prepared) -> PyResult<Filter> {
    let mut filter = Filter::default();
    for (key, value) in options.iter() {
        let key: String = key.extract()?;
        match key.as_str() {
            "skip_check" => filter.skip_check = value.extract()?,
            "skip_plies" => filter.skip_plies = value.extract()?,
            "drop_mates" => filter.drop_mates = value.extract()?,
            "require_score" => filter.require_score = value.extract()?,
            "require_result" => filter.require_result = value.extract()?,
            "quiet_only" => {
                filter.quiet_only = value.extract::<bool>()?.then(|| prepared.clone());
            }
            "pieces" => {
                filter.pieces = match value.extract::<Option<String>>()? {
                    Some(text) => Some(parse_piece_range(&text).map_err(PyValueError::new_err)?),
                    None => None,
                }
            }
            "skip_capture" => filter.skip_capture = value.extract()?,
            "max_score" => filter.max_score = value.extract()?,
            "random_skip" => filter.random_skip = value.extract()?,
            "wdl_skip" => filter.wdl_skip = value.extract()?,
            "unique" => filter.unique = value.extract()?,
            "skip_seed" => filter.seed = value.extract()?,
            "piece_skip" => {
                // True: flat; "Y0,Y16,Y32" or three numbers: nnue-pytorch's parabola.
                filter.piece_skip = if let Ok(on) = value.extract::<bool>() {
                    on.then_some([1.0; 3])
                } else if value.is_none() {
                    None
                } else if let Ok(text) = value.extract::<String>() {
                    Some(parse_piece_weights(&text).map_err(PyValueError::new_err)?)
                } else {
                    let y: Vec<f64> = value.extract()?;
                    let text = y.iter().map(f64::to_string).collect::<Vec<_>>().join(",");
                    Some(parse_piece_weights(&text).map_err(PyValueError::new_err)?)
                }
            }
            other => {
                return Err(PyValueError::new_err(format!("unknown filter {other:?}")));
            }
        }
    }
    Ok(filter)
}

/// A writable, C-contiguous byte buffer of a Python object (a numpy array's memory), held
/// while a pass writes into it with the GIL released.
struct Output {
    buffer: PyBuffer<u8>,
}

/// The buffer's memory as a Rust slice, for the pass that fills it. Only the pass that
/// holds the [`Output`] touches it.
struct RawOut(*mut u8, usize);
// SAFETY: the memory stays valid while the `Output` holding the Python buffer lives (the
// whole pass), and one pass writes it, split into disjoint pieces by rayon.
unsafe impl Send for RawOut {}
unsafe impl Sync for RawOut {}

impl Output {
    fn get(object: &Bound<'_, PyAny>, expected: usize) -> PyResult<Output> {
        let buffer = PyBuffer::<u8>::get(object)?;
        if buffer.readonly() || !buffer.is_c_contiguous() {
            return Err(PyValueError::new_err(
                "output must be a writable, C-contiguous uint8 buffer",
            ));
        }
        if buffer.len_bytes() != expected {
            return Err(PyValueError::new_err(format!(
                "output holds {} bytes, the pass writes {expected}",
                buffer.len_bytes()
            )));
        }
        Ok(Output { buffer })
    }

    fn raw(&self) -> RawOut {
        RawOut(self.buffer.buf_ptr() as *mut u8, self.buffer.len_bytes())
    }
}

impl RawOut {
    /// SAFETY: the caller keeps the [`Output`] this came from alive while it uses the
    /// slice, and makes no other.
    unsafe fn into_slice<'a>(self) -> &'a mut [u8] {
        if self.1 == 0 {
            return &mut [];
        }
        unsafe { std::slice::from_raw_parts_mut(self.0, self.1) }
    }
}

fn column_list(columns: &[(String, ColumnType)]) -> Vec<(String, &'static str)> {
    columns
        .iter()
        .map(|(name, kind)| (name.clone(), kind.numpy()))
        .collect()
}

/// An open position DB (`.psdb`): its header checked, its file memory-mapped. Exports the
/// mapped file, read-only, through the buffer protocol.
#[pyclass(frozen, module = "pawnstorm._native", name = "NativeDatabase")]
struct NativeDatabase {
    db: Arc<Database>,
}

#[pymethods]
impl NativeDatabase {
    #[new]
    #[pyo3(signature = (path, verify = true))]
    fn new(py: Python<'_>, path: PathBuf, verify: bool) -> PyResult<Self> {
        let verify = if verify {
            Verify::Checksums
        } else {
            Verify::Off
        };
        let db = py
            .detach(|| Database::open_with(&path, verify))
            .map_err(db_err)?;
        Ok(NativeDatabase { db: Arc::new(db) })
    }

    fn __len__(&self) -> usize {
        self.db.len() as usize
    }

    /// The FEN of row `index` (checked: its block's CRC when verifying, and that it is a
    /// position).
    fn fen(&self, index: u64) -> PyResult<String> {
        if index >= self.db.len() {
            return Err(pyo3::exceptions::PyIndexError::new_err(format!(
                "index {index} is past the last of {} positions",
                self.db.len()
            )));
        }
        Ok(self.db.record(index).map_err(db_err)?.position.to_fen())
    }

    /// The file's layout: where each column of a block starts, for the numpy views. (No
    /// path: converting one imports `pathlib`, milliseconds on a first open.)
    fn layout<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let header = self.db.header();
        let layout = header.layout();
        let out = PyDict::new(py);
        out.set_item("version", header.version)?;
        out.set_item("count", header.count)?;
        out.set_item("block_size", header.block_size)?;
        out.set_item("block_count", header.block_count())?;
        out.set_item("block_bytes", header.block_bytes)?;
        out.set_item("header_size", db::HEADER_SIZE)?;
        let columns = PyList::empty(py);
        let names = [
            "pawns", "knights", "bishops", "rooks", "queens", "kings", "white", "black",
        ];
        for (name, offset) in names.iter().zip(layout.bitboards) {
            columns.append((name, offset, "<u8"))?;
        }
        columns.append(("side_to_move", layout.side_to_move, "|u1"))?;
        columns.append(("castling", layout.castling, "<u2"))?;
        columns.append(("en_passant", layout.en_passant, "|u1"))?;
        columns.append(("halfmove_clock", layout.halfmove_clock, "<u2"))?;
        columns.append(("fullmove_number", layout.fullmove_number, "<u2"))?;
        let labels = [
            ("result", layout.result, "|i1"),
            ("score", layout.score, "<i4"),
            ("game_id", layout.game_id, "<u4"),
            ("ply", layout.ply, "<u2"),
        ];
        let u16_labels = db::U16_LABELS
            .iter()
            .zip(layout.u16_labels)
            .map(|(&(_, name), offset)| (name, offset, "<u2"));
        for (name, offset, kind) in labels.into_iter().chain(u16_labels) {
            if let Some(offset) = offset {
                columns.append((name, offset, kind))?;
            }
        }
        out.set_item("columns", columns)?;
        Ok(out)
    }

    /// Checks every checksum of the file and every block's positions (reads it all).
    fn verify(&self, py: Python<'_>) -> PyResult<()> {
        let db = &self.db;
        py.detach(|| db.verify()).map_err(db_err)
    }

    /// The columns (name, numpy type) of `evaluate`'s records: as the CLI's `.npy`.
    #[pyo3(signature = (terms))]
    fn score_columns(&self, terms: bool) -> Vec<(String, &'static str)> {
        let prepared = Prepared::new(Weights::default());
        column_list(&self.score_table(&prepared, terms, false, false).columns())
    }

    /// Evaluates every position into `out` (the bytes of `score_columns` records).
    #[pyo3(signature = (out, terms, stm_pov, threads, weights_path, scalar))]
    #[allow(clippy::too_many_arguments)]
    fn evaluate_into(
        &self,
        py: Python<'_>,
        out: &Bound<'_, PyAny>,
        terms: bool,
        stm_pov: bool,
        threads: Option<usize>,
        weights_path: Option<PathBuf>,
        scalar: bool,
    ) -> PyResult<()> {
        let prepared = weights(weights_path.as_deref())?;
        let source = self.score_table(&prepared, terms, stm_pov, scalar);
        let columns = source.columns();
        self.fill(py, out, &source, &columns, threads)
    }

    /// The columns (name, numpy type) of the masks table: as the CLI's `.npy`.
    fn mask_columns(&self) -> Vec<(String, &'static str)> {
        let source = MaskTable {
            db: &self.db,
            path: features::Path::Scalar,
        };
        column_list(&source.columns())
    }

    /// The masks of every position into `out` (the bytes of `mask_columns` records).
    #[pyo3(signature = (out, threads, scalar))]
    fn masks_into(
        &self,
        py: Python<'_>,
        out: &Bound<'_, PyAny>,
        threads: Option<usize>,
        scalar: bool,
    ) -> PyResult<()> {
        let source = MaskTable {
            db: &self.db,
            path: simd_path(scalar),
        };
        let columns = source.columns();
        self.fill(py, out, &source, &columns, threads)
    }

    /// Writes the training features of `kind` ("terms" or "planes") with their labels to
    /// the `.npz` at `path`, as `pawnstorm features --kind KIND` does.
    /// `filters` holds the CLI's filter options by name (`skip_check`, `skip_plies`,
    /// `pieces` as `MIN..MAX`, `drop_mates`, `require_score`, `require_result`,
    /// `quiet_only`).
    #[pyo3(signature = (kind, path, threads, sparse, unpacked, weights_path, scalar, filters))]
    #[allow(clippy::too_many_arguments)]
    fn write_npz(
        &self,
        py: Python<'_>,
        kind: &str,
        path: PathBuf,
        threads: Option<usize>,
        sparse: bool,
        unpacked: bool,
        weights_path: Option<PathBuf>,
        scalar: bool,
        filters: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        // `nnue:SET` names the NNUE kind with its feature set.
        let nnue = match kind.strip_prefix("nnue:") {
            Some(set) => Some(FeatureSet::parse(set).ok_or_else(|| {
                PyValueError::new_err(format!(
                    "{set:?} is not a feature set: 768, halfkp or halfka_v2_hm"
                ))
            })?),
            None => None,
        };
        let terms = match kind {
            "terms" => true,
            "planes" => false,
            _ if nnue.is_some() => false,
            other => {
                return Err(PyValueError::new_err(format!(
                    "unknown npz feature kind {other:?} (terms, planes or nnue)"
                )));
            }
        };
        if unpacked && nnue.is_some() {
            return Err(PyValueError::new_err("unpacked is for kind 'planes'"));
        }
        if sparse && !terms {
            return Err(PyValueError::new_err("sparse is for kind 'terms'"));
        }
        if unpacked && terms {
            return Err(PyValueError::new_err("unpacked is for kind 'planes'"));
        }
        let prepared = weights(weights_path.as_deref())?;
        let filter = filter(filters, &prepared)?;
        let pool = pool(threads)?;
        let db = &self.db;
        let path_simd = simd_path(scalar);
        py.detach(|| {
            pool.install(|| -> anyhow::Result<()> {
                let selection = arrays::select(db, &filter)?;
                let mut npz = NpzWriter::create(&path)
                    .with_context(|| format!("creating {}", path.display()))?;
                let progress = |_: u64| {};
                if let Some(set) = nnue {
                    arrays::write_nnue(db, &selection, set, &mut npz, &progress)?;
                } else if terms {
                    let layout = if sparse {
                        Layout::Sparse
                    } else {
                        Layout::Dense
                    };
                    arrays::write_terms(
                        db, &selection, &prepared, layout, path_simd, &mut npz, &progress,
                    )?;
                } else {
                    arrays::write_planes(db, &selection, unpacked, path_simd, &mut npz, &progress)?;
                }
                let pov = if nnue.is_some() {
                    arrays::Pov::SideToMove
                } else {
                    arrays::Pov::White
                };
                arrays::write_labels(db, &selection, pov, &mut npz)?;
                npz.finish()?;
                Ok(())
            })
            .with_context(|| format!("writing {}", path.display()))
        })
        .map_err(to_py)
    }

    /// Exports the mapped file (header and blocks), read-only.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let bytes = slf.get().db.mapped_bytes();
        // An empty DB has no map; a zero-length buffer still needs a valid pointer.
        let pointer = if bytes.is_empty() {
            std::ptr::NonNull::<u8>::dangling().as_ptr()
        } else {
            bytes.as_ptr() as *mut u8
        };
        // SAFETY: `view` is the caller's, `pointer` points at `bytes.len()` bytes that live
        // as long as this object, which the view holds a reference to (its `obj`); the
        // buffer is read-only (a writable request is refused with BufferError).
        let status = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                pointer as *mut c_void,
                bytes.len() as ffi::Py_ssize_t,
                1,
                flags,
            )
        };
        if status == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

impl NativeDatabase {
    fn score_table<'a>(
        &'a self,
        prepared: &'a Prepared,
        terms: bool,
        stm_pov: bool,
        scalar: bool,
    ) -> ScoreTable<'a> {
        ScoreTable {
            db: &self.db,
            path: simd_path(scalar),
            prepared,
            breakdown: terms,
            // As the CLI's .npy: the breakdown names its positions, the scores do not.
            with_index: terms,
            stm_pov,
            wdl: false,
        }
    }

    /// Fills `out` with the records of `source` on a pool of `threads`, GIL released.
    fn fill<S>(
        &self,
        py: Python<'_>,
        out: &Bound<'_, PyAny>,
        source: &S,
        columns: &[(String, ColumnType)],
        threads: Option<usize>,
    ) -> PyResult<()>
    where
        S: table::TableSource<Error = anyhow::Error>,
    {
        let record: usize = columns.iter().map(|(_, t)| t.bytes()).sum();
        let rows = self.db.len();
        let output = Output::get(out, rows as usize * record)?;
        let raw = output.raw();
        let pool = pool(threads)?;
        let piece_rows = self.db.block_size();
        py.detach(|| {
            pool.install(|| {
                // SAFETY: `output` holds the buffer for the whole pass; nothing else writes it.
                let bytes = unsafe { raw.into_slice() };
                table::fill_records(source, columns, rows, piece_rows, bytes, |_| {})
            })
        })
        .map_err(to_py)?;
        drop(output);
        Ok(())
    }
}

/// Imports EPD/FEN/PGN/JSONL inputs into the DB `output`, as `pawnstorm import` does.
/// Returns the counts and the rejected records' messages (at most `max_messages` of them).
#[pyfunction]
#[pyo3(signature = (inputs, output, append = false, strict = false, skip_plies = 0, every = 1, block_size = db::DEFAULT_BLOCK_SIZE, format = None, require_eval = false, min_elo = None, min_base_seconds = None, max_messages = 1000))]
#[allow(clippy::too_many_arguments)]
fn import_files<'py>(
    py: Python<'py>,
    inputs: Vec<String>,
    output: PathBuf,
    append: bool,
    strict: bool,
    skip_plies: u32,
    every: u32,
    block_size: u32,
    format: Option<String>,
    require_eval: bool,
    min_elo: Option<u16>,
    min_base_seconds: Option<u32>,
    max_messages: usize,
) -> PyResult<Bound<'py, PyDict>> {
    if inputs.is_empty() {
        return Err(PyValueError::new_err("no inputs"));
    }
    let format = match format.as_deref() {
        None | Some("auto") => None,
        Some("lines") => Some(Format::Lines),
        Some("pgn") => Some(Format::Pgn),
        Some("jsonl") => Some(Format::Jsonl),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "unknown format {other:?} (auto, lines, pgn or jsonl)"
            )));
        }
    };
    let request = IntoDb {
        sources: inputs.iter().map(|a| Source::from_arg(a)).collect(),
        format,
        options: ImportOptions {
            skip_plies,
            every,
            require_eval,
            min_elo,
            min_base_seconds,
        },
        strict,
        output,
        append,
        block_size,
    };
    request.check().map_err(PyValueError::new_err)?;
    let mut messages = Vec::new();
    let outcome = py.detach(|| {
        request.run(&mut Observers {
            reject: &mut |rejection| {
                if messages.len() < max_messages {
                    messages.push(format!("skipped {rejection}"));
                }
            },
            source: &mut |_| {},
            progress: &mut |_| {},
        })
    });
    let imported = outcome.map_err(|e| to_py(e.into()))?;
    let counts = imported.counts;
    let out = PyDict::new(py);
    out.set_item("positions", counts.positions)?;
    out.set_item("rejected", counts.rejected)?;
    out.set_item("games", counts.games)?;
    let dropped = PyDict::new(py);
    dropped.set_item("min_elo", counts.dropped.min_elo)?;
    dropped.set_item("min_base_seconds", counts.dropped.min_base_seconds)?;
    dropped.set_item("require_eval", counts.dropped.require_eval)?;
    out.set_item("dropped", dropped)?;
    out.set_item("total", imported.total)?;
    out.set_item("appended_to", imported.appended_to)?;
    out.set_item("rejections", messages)?;
    Ok(out)
}

/// A batch array's bytes, lent to numpy through the buffer protocol (writable, so that
/// `torch.from_numpy` takes it as it is): `np.frombuffer` over it copies nothing, and
/// neither does making one: it owns the vector the worker filled.
#[pyclass(frozen, module = "pawnstorm._native", name = "NativeArray")]
struct NativeArray {
    values: std::sync::Mutex<BatchColumn>,
    /// Where a feature array goes when Python lets go of it.
    recycler: Option<pawnstorm::training::loader::Recycler>,
}

impl Drop for NativeArray {
    fn drop(&mut self) {
        if let Some(recycler) = &self.recycler
            && let Ok(values) = self.values.get_mut()
            && let BatchColumn::I32(array) = std::mem::replace(values, BatchColumn::U8(Vec::new()))
        {
            recycler.give(array);
        }
    }
}

enum BatchColumn {
    I32(Vec<i32>),
    F32(Vec<f32>),
    U8(Vec<u8>),
}

impl BatchColumn {
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            BatchColumn::I32(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::F32(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::U8(v) => v,
        }
    }
}

#[pymethods]
impl NativeArray {
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        let (pointer, len) = {
            let mut values = slf
                .get()
                .values
                .lock()
                .map_err(|_| PyValueError::new_err("batch array poisoned"))?;
            let bytes = values.bytes_mut();
            if bytes.is_empty() {
                (std::ptr::NonNull::<u8>::dangling().as_ptr(), 0)
            } else {
                (bytes.as_mut_ptr(), bytes.len())
            }
        };
        // SAFETY: the vector is never resized after construction, so `pointer` stays valid
        // for `len` bytes as long as this object lives, and the view holds a reference to
        // it (its `obj`).
        let status = unsafe {
            ffi::PyBuffer_FillInfo(
                view,
                slf.as_ptr(),
                pointer as *mut c_void,
                len as ffi::Py_ssize_t,
                0,
                flags,
            )
        };
        if status == -1 {
            return Err(PyErr::fetch(slf.py()));
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}
}

fn native_array(
    py: Python<'_>,
    values: BatchColumn,
    recycler: Option<&pawnstorm::training::loader::Recycler>,
) -> PyResult<Py<NativeArray>> {
    Py::new(
        py,
        NativeArray {
            values: std::sync::Mutex::new(values),
            recycler: recycler.cloned(),
        },
    )
}

/// One pass of the batch loader (`pawnstorm.Loader` starts one per epoch).
#[pyclass(frozen, module = "pawnstorm._native", name = "NativeLoader")]
struct NativeLoader {
    inner: std::sync::Mutex<Loader>,
    counts: Arc<std::sync::Mutex<pawnstorm::training::loader::ReadCounts>>,
    recycler: pawnstorm::training::loader::Recycler,
}

#[pymethods]
impl NativeLoader {
    #[new]
    #[pyo3(signature = (inputs, mixing, batch_size, features, shuffle, shuffle_buffer, seed, threads, filters))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        inputs: Vec<(PathBuf, f64)>,
        mixing: bool,
        batch_size: usize,
        features: &str,
        shuffle: bool,
        shuffle_buffer: usize,
        seed: u64,
        threads: Option<usize>,
        filters: &Bound<'_, PyDict>,
    ) -> PyResult<Self> {
        let set = FeatureSet::parse(features).ok_or_else(|| {
            PyValueError::new_err(format!(
                "{features:?} is not a feature set: 768, halfkp or halfka_v2_hm"
            ))
        })?;
        let filter = filter(filters, pawnstorm::eval::default_weights())?;
        let threads =
            threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let inputs = inputs
            .into_iter()
            .map(|(path, weight)| Input { path, weight })
            .collect();
        let loader = Loader::start(LoaderConfig {
            inputs,
            mixing,
            batch_size,
            set,
            shuffle,
            shuffle_buffer,
            seed,
            threads,
            filter,
        })
        .map_err(PyValueError::new_err)?;
        Ok(NativeLoader {
            counts: loader.counts_handle(),
            recycler: loader.recycler(),
            inner: std::sync::Mutex::new(loader),
        })
    }

    /// The next batch as {name: (NativeArray, dtype, shape)}, or None at the end of the
    /// pass. Waits for the workers with the GIL released.
    fn next_batch(&self, py: Python<'_>) -> PyResult<Option<Py<PyDict>>> {
        // The lock too is taken with the GIL released: a second Python thread iterating
        // the same pass waits here without holding the GIL the first one needs back.
        let next = py
            .detach(|| match self.inner.lock() {
                Ok(mut loader) => Ok(loader.next()),
                Err(_) => Err(()),
            })
            .map_err(|()| PyValueError::new_err("loader poisoned"))?;
        let batch = match next {
            None => return Ok(None),
            Some(Err(message)) => return Err(PawnstormError::new_err(message)),
            Some(Ok(batch)) => batch,
        };
        let n = batch.len;
        let recycler = &self.recycler;
        let dict = PyDict::new(py);
        dict.set_item(
            "stm_features",
            (
                native_array(py, BatchColumn::I32(batch.stm_features), Some(recycler))?,
                "<i4",
                (n, MAX_ACTIVE),
            ),
        )?;
        dict.set_item(
            "nstm_features",
            (
                native_array(py, BatchColumn::I32(batch.nstm_features), Some(recycler))?,
                "<i4",
                (n, MAX_ACTIVE),
            ),
        )?;
        dict.set_item(
            "stm",
            (
                native_array(py, BatchColumn::U8(batch.stm), None)?,
                "|u1",
                (n,),
            ),
        )?;
        dict.set_item(
            "score",
            (
                native_array(py, BatchColumn::I32(batch.score), None)?,
                "<i4",
                (n,),
            ),
        )?;
        dict.set_item(
            "result",
            (
                native_array(py, BatchColumn::F32(batch.result), None)?,
                "<f4",
                (n,),
            ),
        )?;
        Ok(Some(dict.unbind()))
    }

    /// (kept, dropped by the filters, rejected bad records, positions each input gave,
    /// {filter option: positions it dropped}) so far.
    #[allow(clippy::type_complexity)]
    fn counts(&self) -> PyResult<(u64, u64, u64, Vec<u64>, Vec<(String, u64)>)> {
        let c = self
            .counts
            .lock()
            .map_err(|_| PyValueError::new_err("loader poisoned"))?
            .clone();
        let by = Reason::ALL
            .iter()
            .filter(|r| c.dropped_by.count(**r) > 0)
            .map(|r| (r.option().to_string(), c.dropped_by.count(*r)))
            .collect();
        Ok((
            c.kept,
            c.dropped,
            c.rejected,
            c.inputs.iter().map(|i| i.given).collect(),
            by,
        ))
    }
}

/// The SIMD path the batch passes take on this machine (`avx512`, `avx2`, ...).
/// A board as SVG text (`pawnstorm::pictures::svg::board`): `masks` by name, `arrows` as UCI moves.
#[pyfunction]
#[pyo3(signature = (fen, masks = Vec::new(), arrows = Vec::new()))]
fn board_svg(fen: &str, masks: Vec<String>, arrows: Vec<String>) -> PyResult<String> {
    let position = pawnstorm::position::fen::parse_fen(fen)
        .map_err(|e| PyValueError::new_err(format!("invalid FEN {fen:?}: {e}")))?;
    let marks =
        pawnstorm::pictures::svg::marks(&position, &masks).map_err(PyValueError::new_err)?;
    let arrows = arrows
        .iter()
        .map(|text| pawnstorm::pictures::svg::parse_arrow(text).map_err(PyValueError::new_err))
        .collect::<PyResult<Vec<_>>>()?;
    Ok(pawnstorm::pictures::svg::board(&position, &marks, &arrows))
}

/// The names `board_svg` takes as masks.
#[pyfunction]
fn mask_names() -> Vec<String> {
    pawnstorm::pictures::svg::mask_names()
}

#[pyfunction]
fn simd_path_name() -> String {
    features::Path::native().describe()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeDatabase>()?;
    m.add_class::<NativeArray>()?;
    m.add_class::<NativeLoader>()?;
    m.add_function(wrap_pyfunction!(import_files, m)?)?;
    m.add_function(wrap_pyfunction!(simd_path_name, m)?)?;
    m.add_function(wrap_pyfunction!(board_svg, m)?)?;
    m.add_function(wrap_pyfunction!(mask_names, m)?)?;
    m.add("PawnstormError", m.py().get_type::<PawnstormError>())?;
    Ok(())
}
