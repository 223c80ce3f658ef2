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
use pyo3::types::{PyDict, PyList, PyString};

use pawnstorm::db::{self, Database, DbError, Verify};
use pawnstorm::eval::features::{self, MaskTable};
use pawnstorm::eval::{Prepared, Weights};
use pawnstorm::export::filters::{Filter, Reason, parse_piece_range};
use pawnstorm::export::skips::parse_piece_weights;
use pawnstorm::import::{self, Format, ImportOptions, IntoDb, Observers, Source};
use pawnstorm::io::npz::NpzWriter;
use pawnstorm::io::table::{self, ColumnType};
use pawnstorm::nnue::{self, NetError, NnueEvaluator, simd::Level};
use pawnstorm::scoring::ScoreTable;
use pawnstorm::scoring::columns as eval_columns;
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
        if let Some(NetError::Io { error, .. }) = cause.downcast_ref::<NetError>() {
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

/// The evaluator of `eval="nnue"` (`None` for the terms): `net`'s network (read as `arch`
/// says where `net` is a raw bullet file: the CLI's `--arch`), or the one compiled in;
/// `scalar` takes the portable kernels. A network has no terms to list and no weights file.
fn network(
    nnue: bool,
    net: Option<&Path>,
    arch: Option<&str>,
    terms: bool,
    weights_path: Option<&Path>,
    scalar: bool,
) -> PyResult<Option<NnueEvaluator>> {
    if arch.is_some() && net.is_none() {
        return Err(PyValueError::new_err(
            "arch describes a raw bullet net file; give the file as net",
        ));
    }
    if !nnue {
        if net.is_some() {
            return Err(PyValueError::new_err(
                "net is the network of eval='nnue'; the hand-crafted evaluation has none",
            ));
        }
        return Ok(None);
    }
    if terms {
        return Err(PyValueError::new_err(
            "terms lists the hand-crafted evaluation's terms; a network has none",
        ));
    }
    if weights_path.is_some() {
        return Err(PyValueError::new_err(
            "weights are the hand-crafted evaluation's; the network's file is net",
        ));
    }
    let network = match net {
        Some(path) => {
            let arch = arch
                .map(|text| {
                    text.parse::<nnue::Arch>()
                        .map_err(|e| PyValueError::new_err(format!("arch {text:?}: {e}")))
                })
                .transpose()?;
            Arc::new(nnue::Network::load_as(path, arch.as_ref()).map_err(|e| to_py(e.into()))?)
        }
        None => nnue::bulk::load(None).map_err(to_py)?,
    };
    let level = if scalar {
        Level::Portable
    } else {
        Level::best()
    };
    Ok(Some(NnueEvaluator::with_level(network, level)))
}

/// The columns' scorer: the network if there is one, else the terms.
fn scorer<'a>(
    network: &'a Option<NnueEvaluator>,
    path: features::Path,
    prepared: &'a Prepared,
) -> eval_columns::Scorer<'a> {
    match network {
        Some(evaluator) => eval_columns::Scorer::Network(evaluator),
        None => eval_columns::Scorer::Terms { path, prepared },
    }
}

fn simd_path(scalar: bool) -> features::Path {
    if scalar {
        features::Path::scalar()
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

    /// Evaluates every position into `out` (the bytes of `score_columns` records), with
    /// the terms, or with the network when `nnue` (`net_path`'s, else the compiled-in one).
    #[pyo3(signature = (out, terms, stm_pov, threads, weights_path, scalar, nnue = false, net_path = None, arch = None))]
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
        nnue: bool,
        net_path: Option<PathBuf>,
        arch: Option<String>,
    ) -> PyResult<()> {
        let network = network(
            nnue,
            net_path.as_deref(),
            arch.as_deref(),
            terms,
            weights_path.as_deref(),
            scalar,
        )?;
        let prepared = weights(weights_path.as_deref())?;
        let mut source = self.score_table(&prepared, terms, stm_pov, scalar);
        source.network = network.as_ref();
        let columns = source.columns();
        self.fill(py, out, &source, &columns, threads)
    }

    /// The columns (name, numpy type) of the masks table: as the CLI's `.npy`.
    fn mask_columns(&self) -> Vec<(String, &'static str)> {
        let source = MaskTable {
            db: &self.db,
            path: features::Path::scalar(),
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
                    "{set:?} is not a feature set: {}",
                    FeatureSet::NAMES
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

    /// Every row as the Parquet export's columns, in Arrow's layout: a list of (name,
    /// Arrow type, nullable, null count, values, validity or None, offsets or None), the
    /// buffers Rust-owned and lent through the buffer protocol (pyarrow wraps them as
    /// they are). Computed on `threads` workers with the GIL released.
    #[allow(clippy::type_complexity)]
    fn arrow_columns(
        &self,
        py: Python<'_>,
        threads: Option<usize>,
    ) -> PyResult<
        Vec<(
            String,
            &'static str,
            bool,
            usize,
            Py<NativeArray>,
            Option<Py<NativeArray>>,
            Option<Py<NativeArray>>,
        )>,
    > {
        use pawnstorm::export::columns::{Values, export_columns};
        let pool = pool(threads)?;
        let db = &self.db;
        let columns = py
            .detach(|| pool.install(|| export_columns(db)))
            .map_err(db_err)?;
        let mut out = Vec::with_capacity(columns.len());
        for column in columns {
            let (kind, values, offsets) = match column.values {
                Values::U64(v) => ("uint64", BatchColumn::U64(v), None),
                Values::U32(v) => ("uint32", BatchColumn::U32(v), None),
                Values::U16(v) => ("uint16", BatchColumn::U16(v), None),
                Values::U8(v) => ("uint8", BatchColumn::U8(v), None),
                Values::I32(v) => ("int32", BatchColumn::I32(v), None),
                Values::I8(v) => ("int8", BatchColumn::I8(v), None),
                // `string` (32-bit offsets) while the text fits, as pyarrow reads an
                // export's text columns; `large_string` past 2 GiB.
                Values::Text { offsets, data } => match i32::try_from(data.len()) {
                    Ok(_) => (
                        "string",
                        BatchColumn::U8(data),
                        Some(BatchColumn::I32(
                            offsets.iter().map(|&o| o as i32).collect(),
                        )),
                    ),
                    Err(_) => (
                        "large_string",
                        BatchColumn::U8(data),
                        Some(BatchColumn::I64(offsets)),
                    ),
                },
            };
            out.push((
                column.name,
                kind,
                column.nullable,
                column.nulls,
                native_array(py, values, None)?,
                column
                    .validity
                    .map(|v| native_array(py, BatchColumn::U8(v), None))
                    .transpose()?,
                offsets.map(|o| native_array(py, o, None)).transpose()?,
            ));
        }
        Ok(out)
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
            network: None,
            sorted: Default::default(),
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
#[pyo3(signature = (inputs, output, append = false, strict = false, skip_plies = 0, every = 1, block_size = db::DEFAULT_BLOCK_SIZE, format = None, require_eval = false, min_elo = None, min_base_seconds = None, max_messages = 1000, max_elo = None, speed = Vec::new(), date = None, termination = Vec::new(), rated_only = false, threads = None))]
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
    max_elo: Option<u16>,
    speed: Vec<String>,
    date: Option<String>,
    termination: Vec<String>,
    rated_only: bool,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    if inputs.is_empty() {
        return Err(PyValueError::new_err("no inputs"));
    }
    let mut speeds = 0;
    for name in &speed {
        let class = import::lichess::Speed::parse(name)
            .ok_or_else(|| PyValueError::new_err(format!("{name:?} is not a speed class")))?;
        speeds |= class.bit();
    }
    let dates = date
        .as_deref()
        .map(import::lichess::parse_date_range)
        .transpose()
        .map_err(PyValueError::new_err)?;
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let format = match format.as_deref() {
        None | Some("auto") => None,
        Some("lines") => Some(Format::Lines),
        Some("pgn") => Some(Format::Pgn),
        Some("jsonl") => Some(Format::Jsonl),
        Some("binpack") => Some(Format::Binpack),
        Some("parquet") => Some(Format::Parquet),
        Some(other) => {
            return Err(PyValueError::new_err(format!(
                "unknown format {other:?} (auto, lines, pgn, jsonl, binpack or parquet)"
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
            max_elo,
            min_base_seconds,
            speeds,
            dates,
            terminations: termination
                .iter()
                .map(|t| t.trim().to_ascii_lowercase())
                .collect(),
            rated_only,
            threads,
        },
        strict,
        output,
        append,
        block_size,
    };
    request.check().map_err(PyValueError::new_err)?;
    let mut messages = Vec::new();
    let mut rows = Vec::new();
    let outcome = py.detach(|| {
        request.run(&mut Observers {
            reject: &mut |rejection| {
                if messages.len() < max_messages {
                    messages.push(format!("skipped {rejection}"));
                    rows.push((
                        rejection.file.clone(),
                        rejection.line,
                        rejection.reason.clone(),
                        rejection.text.clone(),
                    ));
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
    for (option, count) in counts.dropped.by_filter() {
        let name = option.trim_start_matches("--").replace('-', "_");
        dropped.set_item(name, count)?;
    }
    out.set_item("dropped", dropped)?;
    out.set_item("total", imported.total)?;
    out.set_item("appended_to", imported.appended_to)?;
    out.set_item("rejections", messages)?;
    out.set_item("rejected_records", rows)?;
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
    I8(Vec<i8>),
    U16(Vec<u16>),
    U32(Vec<u32>),
    U64(Vec<u64>),
    I64(Vec<i64>),
}

impl BatchColumn {
    fn bytes_mut(&mut self) -> &mut [u8] {
        match self {
            BatchColumn::I32(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::F32(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::U8(v) => v,
            BatchColumn::I8(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::U16(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::U32(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::U64(v) => bytemuck::cast_slice_mut(v),
            BatchColumn::I64(v) => bytemuck::cast_slice_mut(v),
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
                "{features:?} is not a feature set: {}",
                FeatureSet::NAMES
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
            split: Default::default(),
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

/// FENs for [`evaluate_fens_into`]: Python `str` objects (held, read in place through
/// their UTF-8 form), or an Arrow string array's buffers.
enum FenSource {
    Strings(Vec<Option<Py<PyString>>>),
    Arrow(ArrowStrings),
}

/// An Arrow `string` or `large_string` array's buffers, lent by pyarrow, read in place.
struct ArrowStrings {
    offsets: PyBuffer<u8>,
    data: PyBuffer<u8>,
    validity: Option<PyBuffer<u8>>,
    /// The array's offset into its buffers (a slice of a larger array), in rows.
    offset: usize,
    len: usize,
    /// 4 (`string`) or 8 (`large_string`).
    offset_width: usize,
}

fn contiguous_bytes(buffer: &PyBuffer<u8>) -> &[u8] {
    if buffer.len_bytes() == 0 {
        return &[];
    }
    // SAFETY: a C-contiguous buffer (checked by the caller) of `len_bytes` bytes, alive
    // as long as `buffer`, which the caller holds for the whole pass.
    unsafe { std::slice::from_raw_parts(buffer.buf_ptr() as *const u8, buffer.len_bytes()) }
}

impl ArrowStrings {
    fn check(&self) -> PyResult<()> {
        let buffers = [
            Some(&self.offsets),
            Some(&self.data),
            self.validity.as_ref(),
        ];
        if buffers.iter().flatten().any(|b| !b.is_c_contiguous()) {
            return Err(PyValueError::new_err("Arrow buffers must be contiguous"));
        }
        let offsets = self.offsets.len_bytes() / self.offset_width;
        if self.len > 0 && offsets < self.offset + self.len + 1 {
            return Err(PyValueError::new_err(format!(
                "Arrow offsets buffer holds {offsets} offsets, the array needs {}",
                self.offset + self.len + 1
            )));
        }
        if let Some(validity) = &self.validity
            && validity.len_bytes() * 8 < self.offset + self.len
        {
            return Err(PyValueError::new_err("Arrow validity buffer too short"));
        }
        Ok(())
    }

    /// Row `i`'s bytes, `None` for a null or offsets that leave the data buffer.
    fn get<'a>(
        &self,
        offsets: &'a [u8],
        data: &'a [u8],
        validity: Option<&[u8]>,
        i: usize,
    ) -> Option<&'a [u8]> {
        let at = self.offset + i;
        if let Some(bits) = validity
            && bits[at / 8] & (1 << (at % 8)) == 0
        {
            return None;
        }
        let read = |k: usize| -> usize {
            let bytes = &offsets[k * self.offset_width..(k + 1) * self.offset_width];
            match self.offset_width {
                4 => i32::from_le_bytes(bytes.try_into().expect("4 bytes")) as usize,
                _ => i64::from_le_bytes(bytes.try_into().expect("8 bytes")) as usize,
            }
        };
        data.get(read(at)..read(at + 1))
    }
}

/// Scores of FENs into `out` (int32, one a FEN) with the GIL released; returns the bad
/// rows as (index, reason, text), every row of them (their scores are NO_SCORE).
/// `fens` is a list of `str` (or None), or `arrow` is (offsets, data, validity, offset,
/// length, offset width) of an Arrow string array.
#[pyfunction]
#[pyo3(signature = (fens, arrow, out, stm_pov, threads, weights_path, scalar, nnue = false, net_path = None, arch = None))]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
fn evaluate_fens_into(
    py: Python<'_>,
    fens: Option<&Bound<'_, PyList>>,
    arrow: Option<(
        Bound<'_, PyAny>,
        Bound<'_, PyAny>,
        Option<Bound<'_, PyAny>>,
        usize,
        usize,
        usize,
    )>,
    out: &Bound<'_, PyAny>,
    stm_pov: bool,
    threads: Option<usize>,
    weights_path: Option<PathBuf>,
    scalar: bool,
    nnue: bool,
    net_path: Option<PathBuf>,
    arch: Option<String>,
) -> PyResult<Vec<(u64, String, String)>> {
    let network = network(
        nnue,
        net_path.as_deref(),
        arch.as_deref(),
        false,
        weights_path.as_deref(),
        scalar,
    )?;
    let source = match (fens, arrow) {
        (Some(list), None) => {
            let mut strings = Vec::with_capacity(list.len());
            for (i, item) in list.iter().enumerate() {
                if item.is_none() {
                    strings.push(None);
                    continue;
                }
                let text = item.cast::<PyString>().map_err(|_| {
                    pyo3::exceptions::PyTypeError::new_err(format!(
                        "fens[{i}] is {}, not str",
                        item.get_type()
                            .name()
                            .map_or("?".to_string(), |n| n.to_string())
                    ))
                })?;
                strings.push(Some(text.clone().unbind()));
            }
            FenSource::Strings(strings)
        }
        (None, Some((offsets, data, validity, offset, len, offset_width))) => {
            if offset_width != 4 && offset_width != 8 {
                return Err(PyValueError::new_err("Arrow offsets are 4 or 8 bytes"));
            }
            let strings = ArrowStrings {
                offsets: PyBuffer::get(&offsets)?,
                data: PyBuffer::get(&data)?,
                validity: validity.map(|v| PyBuffer::get(&v)).transpose()?,
                offset,
                len,
                offset_width,
            };
            strings.check()?;
            FenSource::Arrow(strings)
        }
        _ => return Err(PyValueError::new_err("fens or arrow, one of them")),
    };
    let rows = match &source {
        FenSource::Strings(s) => s.len(),
        FenSource::Arrow(a) => a.len,
    };
    let output = Output::get(out, rows * 4)?;
    if rows == 0 {
        return Ok(Vec::new());
    }
    let raw = output.raw();
    let prepared = weights(weights_path.as_deref())?;
    let pool = pool(threads)?;
    let scorer = scorer(&network, simd_path(scalar), &prepared);
    // The UTF-8 of each `str` (made now, with the GIL), borrowed from the objects held in
    // `source` for the whole pass.
    let texts: Vec<Option<&str>> = match &source {
        FenSource::Strings(strings) => strings
            .iter()
            .map(|s| s.as_ref().map(|s| s.to_str(py)).transpose())
            .collect::<PyResult<_>>()?,
        FenSource::Arrow(_) => Vec::new(),
    };
    let bad = py.detach(|| {
        pool.install(|| {
            // SAFETY: `output` holds the buffer for the whole pass; nothing else writes it.
            let bytes = unsafe { raw.into_slice() };
            let out: &mut [i32] = bytemuck::cast_slice_mut(bytes);
            match &source {
                FenSource::Strings(_) => {
                    let fen = |i: usize| texts[i].map(str::as_bytes);
                    eval_columns::fen_scores(scorer, &fen, stm_pov, out)
                }
                FenSource::Arrow(arrow) => {
                    let offsets = contiguous_bytes(&arrow.offsets);
                    let data = contiguous_bytes(&arrow.data);
                    let validity = arrow.validity.as_ref().map(contiguous_bytes);
                    let fen = |i: usize| arrow.get(offsets, data, validity, i);
                    eval_columns::fen_scores(scorer, &fen, stm_pov, out)
                }
            }
        })
    });
    drop(output);
    Ok(bad
        .into_iter()
        .map(|row| {
            let i = row.index as usize;
            let text = match &source {
                FenSource::Strings(_) => texts[i].unwrap_or("").to_string(),
                FenSource::Arrow(arrow) => {
                    let (offsets, data) = (
                        contiguous_bytes(&arrow.offsets),
                        contiguous_bytes(&arrow.data),
                    );
                    let validity = arrow.validity.as_ref().map(contiguous_bytes);
                    arrow
                        .get(offsets, data, validity, i)
                        .map(|b| String::from_utf8_lossy(b).into_owned())
                        .unwrap_or_default()
                }
            };
            (row.index, row.reason, text)
        })
        .collect())
}

/// A strided buffer's runs of contiguous rows: each a pointer to its first element.
struct Runs {
    /// The start of each run (one a block of a `(blocks, rows)` array), by column.
    starts: Vec<Vec<usize>>,
    /// Rows a run.
    rows: usize,
}

/// The runs of `buffer`, an array of shape `(rows,)` / `(columns, rows)` (2-D layout) or
/// `(blocks, rows)` / `(blocks, columns, rows)` (blocked), each run contiguous.
fn runs_of<T: pyo3::buffer::Element>(
    buffer: &PyBuffer<T>,
    what: &str,
    columns: Option<usize>,
) -> PyResult<Runs> {
    let shape = buffer.shape();
    let strides = buffer.strides();
    let size = std::mem::size_of::<T>();
    let (blocks, block_stride, cols, col_stride, rows, row_stride) =
        match (columns.is_some(), shape.len()) {
            (false, 1) => (1, 0, 1, 0, shape[0], strides[0]),
            (false, 2) => (shape[0], strides[0], 1, 0, shape[1], strides[1]),
            (true, 2) => (1, 0, shape[0], strides[0], shape[1], strides[1]),
            (true, 3) => (
                shape[0], strides[0], shape[1], strides[1], shape[2], strides[2],
            ),
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{what} has {} dimensions",
                    shape.len()
                )));
            }
        };
    if let Some(expected) = columns
        && cols != expected
    {
        return Err(PyValueError::new_err(format!(
            "{what} has {cols} boards a position, not {expected}"
        )));
    }
    if rows > 1 && row_stride != size as isize {
        return Err(PyValueError::new_err(format!(
            "{what}'s positions are not contiguous (stride {row_stride} bytes): pass a contiguous array"
        )));
    }
    let base = buffer.buf_ptr() as isize;
    let mut starts = vec![Vec::with_capacity(blocks); cols];
    for (c, column) in starts.iter_mut().enumerate() {
        for b in 0..blocks {
            let at = base + b as isize * block_stride + c as isize * col_stride;
            if !(at as usize).is_multiple_of(std::mem::align_of::<T>()) {
                return Err(PyValueError::new_err(format!("{what} is not aligned")));
            }
            column.push(at as usize);
        }
    }
    Ok(Runs { starts, rows })
}

/// Scores of positions in the DB's layout into `out` (int32), read where they are, with the
/// GIL released. `boards` is uint64 `(8, N)` or `(blocks, 8, n)`, the others `(N,)` or
/// `(blocks, n)`; the first `count` rows are evaluated. A row that is no position raises
/// ValueError naming its index.
#[pyfunction]
#[pyo3(signature = (boards, side, castling, en_passant, count, out, stm_pov, threads, weights_path, scalar, nnue = false, net_path = None, arch = None))]
#[allow(clippy::too_many_arguments)]
fn evaluate_boards_into(
    py: Python<'_>,
    boards: &Bound<'_, PyAny>,
    side: &Bound<'_, PyAny>,
    castling: Option<&Bound<'_, PyAny>>,
    en_passant: Option<&Bound<'_, PyAny>>,
    count: usize,
    out: &Bound<'_, PyAny>,
    stm_pov: bool,
    threads: Option<usize>,
    weights_path: Option<PathBuf>,
    scalar: bool,
    nnue: bool,
    net_path: Option<PathBuf>,
    arch: Option<String>,
) -> PyResult<()> {
    let network = network(
        nnue,
        net_path.as_deref(),
        arch.as_deref(),
        false,
        weights_path.as_deref(),
        scalar,
    )?;
    let boards = PyBuffer::<u64>::get(boards)?;
    let side = PyBuffer::<u8>::get(side)?;
    let castling = castling.map(PyBuffer::<u16>::get).transpose()?;
    let en_passant = en_passant.map(PyBuffer::<u8>::get).transpose()?;
    let board_runs = runs_of(&boards, "boards", Some(8))?;
    let side_runs = runs_of(&side, "side", None)?;
    let castling_runs = castling
        .as_ref()
        .map(|b| runs_of(b, "castling", None))
        .transpose()?;
    let en_passant_runs = en_passant
        .as_ref()
        .map(|b| runs_of(b, "en_passant", None))
        .transpose()?;
    let shape = |runs: &Runs| (runs.starts[0].len(), runs.rows);
    let expected = shape(&board_runs);
    for (name, runs) in [
        ("side", Some(&side_runs)),
        ("castling", castling_runs.as_ref()),
        ("en_passant", en_passant_runs.as_ref()),
    ] {
        if let Some(runs) = runs
            && shape(runs) != expected
        {
            return Err(PyValueError::new_err(format!(
                "{name} holds {:?} (blocks, positions), boards {:?}",
                shape(runs),
                expected
            )));
        }
    }
    let (blocks, rows) = expected;
    if count > blocks * rows {
        return Err(PyValueError::new_err(format!(
            "count {count} is more than the {} positions given",
            blocks * rows
        )));
    }
    let output = Output::get(out, count * 4)?;
    if count == 0 {
        return Ok(());
    }
    let raw = output.raw();
    let prepared = weights(weights_path.as_deref())?;
    let pool = pool(threads)?;
    let scorer = scorer(&network, simd_path(scalar), &prepared);
    let all = RawRuns {
        boards: board_runs,
        side: side_runs,
        castling: castling_runs,
        en_passant: en_passant_runs,
    };
    let outcome = py.detach(|| {
        pool.install(|| {
            // SAFETY: the buffers behind every run are held (`boards`, `side`, ...) for the
            // whole pass; `runs_of` checked their shapes, strides and alignment.
            let runs = unsafe { all.columns(count) };
            // SAFETY: `output` holds the buffer for the whole pass; nothing else writes it.
            let bytes = unsafe { raw.into_slice() };
            eval_columns::board_scores(scorer, &runs, stm_pov, bytemuck::cast_slice_mut(bytes))
        })
    });
    drop(output);
    drop((boards, side, castling, en_passant));
    outcome.map_err(|bad| {
        PyValueError::new_err(format!(
            "position {} is impossible: {}",
            bad.index, bad.reason
        ))
    })
}

/// The runs of every column, as addresses: lent to the workers with the GIL released.
struct RawRuns {
    boards: Runs,
    side: Runs,
    castling: Option<Runs>,
    en_passant: Option<Runs>,
}

// SAFETY: addresses of Python buffers held by the caller for the whole pass, only read.
unsafe impl Send for RawRuns {}
unsafe impl Sync for RawRuns {}

impl RawRuns {
    /// The columns of the first `count` rows, a `BoardColumns` a run.
    ///
    /// SAFETY: the buffers the runs point into must be alive and hold the rows `runs_of`
    /// found, for as long as the result is used.
    unsafe fn columns(&self, count: usize) -> Vec<eval_columns::BoardColumns<'_>> {
        let rows = self.side.rows;
        let mut out = Vec::new();
        let mut left = count;
        for b in 0..self.side.starts[0].len() {
            let n = rows.min(left);
            if n == 0 {
                break;
            }
            left -= n;
            // SAFETY: see the function's contract; `n` is at most the run's rows.
            let slice = |address: usize, size: usize| unsafe {
                std::slice::from_raw_parts(address as *const u8, n * size)
            };
            let boards = |c: usize| -> &[pawnstorm::Bitboard] {
                bytemuck::cast_slice(slice(self.boards.starts[c][b], 8))
            };
            out.push(eval_columns::BoardColumns {
                pieces: [
                    boards(0),
                    boards(1),
                    boards(2),
                    boards(3),
                    boards(4),
                    boards(5),
                ],
                colors: [boards(6), boards(7)],
                side_to_move: slice(self.side.starts[0][b], 1),
                castling: self
                    .castling
                    .as_ref()
                    .map(|r| bytemuck::cast_slice(slice(r.starts[0][b], 2))),
                en_passant: self.en_passant.as_ref().map(|r| slice(r.starts[0][b], 1)),
            });
        }
        out
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

/// The inputs of NNUE feature set `name` (one past the largest index), or why `name` is
/// none: the Loader checks its `features` with it when made.
#[pyfunction]
fn feature_set_inputs(name: &str) -> PyResult<usize> {
    FeatureSet::parse(name)
        .map(FeatureSet::inputs)
        .ok_or_else(|| {
            PyValueError::new_err(format!(
                "{name:?} is not a feature set: {}",
                FeatureSet::NAMES
            ))
        })
}

#[pyfunction]
fn simd_path_name() -> String {
    features::Path::native().describe()
}

/// What `pawnstorm info --cpu` prints, as a dict.
#[pyfunction]
fn cpu_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let cpu = pawnstorm_kernels::simd::cpu();
    let info = PyDict::new(py);
    info.set_item("model", &cpu.model)?;
    info.set_item("arch", std::env::consts::ARCH)?;
    info.set_item("detected", cpu.detected.name())?;
    info.set_item("level", cpu.level.name())?;
    info.set_item("reason", &cpu.reason)?;
    info.set_item("batch_lanes", features::Path::native().describe())?;
    info.set_item("nnue_kernels", Level::best().name())?;
    info.set_item(
        "sliding_attacks",
        pawnstorm_kernels::attacks::slider_index(),
    )?;
    info.set_item(
        "available",
        pawnstorm_kernels::simd::Level::available()
            .iter()
            .map(|l| l.name())
            .collect::<Vec<_>>(),
    )?;
    Ok(info)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<NativeDatabase>()?;
    m.add_class::<NativeArray>()?;
    m.add_class::<NativeLoader>()?;
    m.add_function(wrap_pyfunction!(import_files, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_fens_into, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_boards_into, m)?)?;
    m.add_function(wrap_pyfunction!(simd_path_name, m)?)?;
    m.add_function(wrap_pyfunction!(cpu_info, m)?)?;
    m.add_function(wrap_pyfunction!(board_svg, m)?)?;
    m.add_function(wrap_pyfunction!(mask_names, m)?)?;
    m.add_function(wrap_pyfunction!(feature_set_inputs, m)?)?;
    m.add("PawnstormError", m.py().get_type::<PawnstormError>())?;
    Ok(())
}
