"""pawnstorm: chess positions as memory-mapped structure-of-arrays bitboards, from Python.

``Database(path)`` opens a position DB (``.psdb``, see docs/FORMAT.md) and gives its
columns as read-only numpy views of the memory map (no copy), its labels, and the CLI's
batch passes (``evaluate``, ``features``) run natively with the GIL released, into numpy
arrays equal to the files the CLI writes. ``import_files`` builds DBs as
``pawnstorm import`` does.

Blocked layout: a DB holds its rows in blocks of ``block_size`` rows, each block holding
its columns one after another. A column over the whole file is therefore a strided view of
shape ``(block_count, block_size)``; rows past ``len(db)`` in the last block are padding
(empty boards, unknown labels). ``Database.column(name)`` gives a flat array of ``len(db)``
rows, which is a copy unless the DB has a single block.
"""

from __future__ import annotations

import os
import tempfile
from typing import Literal, Sequence, Union

import numpy as np

from . import _native
from ._native import PawnstormError

__all__ = [
    "Database",
    "Loader",
    "PawnstormError",
    "evaluate_boards",
    "evaluate_fens",
    "from_arrow",
    "import_files",
    "simd_path",
    "cpu_info",
    "BITBOARDS",
    "NO_RESULT",
    "NO_SCORE",
    "NO_GAME",
    "NO_PLY",
    "NO_U16",
    "NO_SQUARE",
]

PathLike = Union[str, "os.PathLike[str]"]

#: The 8 bitboard columns, in file order: 6 piece types (both colours), then the colours.
BITBOARDS = ("pawns", "knights", "bishops", "rooks", "queens", "kings", "white", "black")
#: The per-row columns every DB has, besides the bitboards.
POSITION_COLUMNS = ("side_to_move", "castling", "en_passant", "halfmove_clock", "fullmove_number")
#: The optional label columns, in file order.
LABELS = (
    "result",
    "score",
    "game_id",
    "ply",
    "white_elo",
    "black_elo",
    "base_seconds",
    "increment",
    "move",
    "clock",
)

#: "Unknown" in each label column (docs/FORMAT.md), and the en-passant column's "none".
NO_RESULT = -128
NO_SCORE = -(2**31)
NO_GAME = 2**32 - 1
NO_PLY = 2**16 - 1
NO_U16 = 2**16 - 1
NO_SQUARE = 255

_SENTINELS = {
    "result": NO_RESULT,
    "score": NO_SCORE,
    "game_id": NO_GAME,
    "ply": NO_PLY,
    "white_elo": NO_U16,
    "black_elo": NO_U16,
    "base_seconds": NO_U16,
    "increment": NO_U16,
    "move": NO_U16,
    "clock": NO_U16,
}


def simd_path() -> str:
    """The SIMD path the batch passes take on this machine (as the CLI's summary names it)."""
    return _native.simd_path_name()


def cpu_info() -> dict:
    """This CPU and the vector code the package runs on it, as `pawnstorm info --cpu` says:
    `model`, `arch`, `detected` and `level` (`avx512`, `avx2`, `sse4` or `scalar`; set the
    environment variable `PAWNSTORM_SIMD` before the first call to force a lower one),
    `reason`, `batch_lanes`, `nnue_kernels`, `sliding_attacks`, and `available` (every
    level this CPU can run)."""
    return dict(_native.cpu_info())


def _dtype(columns: Sequence[tuple[str, str]]) -> np.dtype:
    """The numpy type of a table's records: a plain type for one column, else a packed
    structured type (as the CLI's ``.npy`` files hold them)."""
    if len(columns) == 1:
        return np.dtype(columns[0][1])
    return np.dtype([(name, kind) for name, kind in columns])


def svg(fen: str, masks: Sequence[str] = (), arrows: Sequence[str] = ()) -> str:
    """The board of ``fen`` as SVG text, with the squares of each mask marked (names from
    ``mask_names()``: the pawn-structure masks, ``white_attacks``, ``black_king_zone``
    ...) and an arrow for each UCI move in ``arrows``; what ``pawnstorm show --svg`` writes."""
    return _native.board_svg(fen, list(masks), list(arrows))


def mask_names() -> list[str]:
    """The masks ``svg`` and ``Position`` can mark."""
    return _native.mask_names()


class Position:
    """A position by its FEN, shown in Jupyter as its board (``_repr_svg_``) with the squares
    of ``masks`` marked."""

    def __init__(self, fen: str, masks: Sequence[str] = ()) -> None:
        # Checked now: a bad FEN or mask fails here, not when a notebook draws it.
        _native.board_svg(fen, list(masks), [])
        self.fen: str = fen
        self.masks: list[str] = list(masks)

    def __repr__(self) -> str:
        return f"Position({self.fen!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Position) and (self.fen, self.masks) == (other.fen, other.masks)

    def svg(self, masks: Sequence[str] | None = None, arrows: Sequence[str] = ()) -> str:
        return svg(self.fen, self.masks if masks is None else masks, arrows)

    def _repr_svg_(self) -> str:
        return self.svg()


class Database:
    """An open position DB (``.psdb``), memory-mapped.

    Opening reads and checks the header and the file's size only, not the checksums of the
    blocks (that would read the whole file): ``columns()`` hands out the mapped bytes as
    they are. ``evaluate`` and ``features`` check each block's CRC and positions as they
    read it (unless ``verify=False``), as the CLI does; ``verify()`` checks the whole file
    at once. (A version-1 file has one checksum for its whole payload, checked on opening
    when ``verify`` is true.)

    The arrays that ``columns()`` and ``bitboards()`` return are read-only views of the
    map and keep it alive: they stay valid after the ``Database`` is gone.
    """

    def __init__(self, path: PathLike, *, verify: bool = True) -> None:
        self._native = _native.NativeDatabase(os.fspath(path), verify)
        layout = self._native.layout()
        self.path: str = os.fspath(path)
        #: Format version of the file (1 to 5).
        self.version: int = layout["version"]
        #: Rows a block.
        self.block_size: int = layout["block_size"]
        #: Blocks in the file (the last one padded).
        self.block_count: int = layout["block_count"]
        self._block_bytes: int = layout["block_bytes"]
        self._header_size: int = layout["header_size"]
        self._offsets = {name: (offset, np.dtype(kind)) for name, offset, kind in layout["columns"]}
        # The whole file as one read-only byte array whose base is the native object (which
        # owns the map): every view below hangs from it.
        self._bytes = np.frombuffer(self._native, dtype=np.uint8)

    def __len__(self) -> int:
        return len(self._native)

    def __getitem__(self, index: int) -> Position:
        """Row ``index`` (negative counts from the end) as a ``Position``, which Jupyter
        shows as its board."""
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"a Database is indexed by row number, not {type(index).__name__}")
        index = int(index)
        if index < 0:
            index += len(self)
        if index < 0:
            raise IndexError("index before the first position")
        return Position(self._native.fen(index))

    def __repr__(self) -> str:
        return f"Database({self.path!r}, {len(self)} positions, labels {self.label_names()})"

    def label_names(self) -> list[str]:
        """The optional label columns this DB has, in file order."""
        return [name for name in LABELS if name in self._offsets]

    def _view(self, offset: int, dtype: np.dtype, inner: tuple[int, ...], inner_strides: tuple[int, ...]) -> np.ndarray:
        shape = (self.block_count, *inner)
        if self.block_count == 0:
            empty = np.empty(shape, dtype=dtype)
            empty.flags.writeable = False
            return empty
        return np.ndarray(
            shape,
            dtype=dtype,
            buffer=self._bytes,
            offset=self._header_size + offset,
            strides=(self._block_bytes, *inner_strides),
        )

    def _column_view(self, name: str) -> np.ndarray:
        try:
            offset, dtype = self._offsets[name]
        except KeyError:
            raise KeyError(f"{self.path}: no column {name!r} (has {list(self._offsets)})") from None
        return self._view(offset, dtype, (self.block_size,), (dtype.itemsize,))

    def columns(self) -> dict[str, np.ndarray]:
        """Every column as a read-only ``(block_count, block_size)`` view of the map, no copy.

        Keys: the bitboards (``BITBOARDS``, uint64, bit 0 = a1), ``side_to_move`` (0 White,
        1 Black), ``castling``, ``en_passant`` (255 none), ``halfmove_clock``,
        ``fullmove_number``, then the label columns the DB has (sentinels for unknown, see
        ``labels``). Rows past ``len(self)`` in the last block are padding. For flat arrays
        of ``len(self)`` rows, see ``column``.
        """
        return {name: self._column_view(name) for name in self._offsets}

    def bitboards(self) -> np.ndarray:
        """The 8 bitboard columns (``BITBOARDS`` order) as one read-only
        ``(block_count, 8, block_size)`` uint64 view of the map, no copy."""
        offset, dtype = self._offsets["pawns"]
        return self._view(offset, dtype, (8, self.block_size), (self.block_size * 8, 8))

    def column(self, name: str) -> np.ndarray:
        """Column ``name`` as a flat array of ``len(self)`` rows: a read-only view when the
        DB has one block, a copy otherwise (the blocks are not adjacent in the file)."""
        view = self._column_view(name).reshape(-1)
        return view[: len(self)]

    def labels(self, masked: bool = False) -> dict[str, np.ndarray]:
        """The label columns the DB has, each a flat array of ``len(self)`` rows (copies).

        Unknown values hold the sentinels of docs/FORMAT.md (``NO_RESULT``, ``NO_SCORE``,
        ``NO_GAME``, ``NO_PLY``, ``NO_U16``); with ``masked=True`` they are numpy masked
        arrays with those values masked instead. ``result`` is from White's side (1, 0, -1),
        ``score`` centipawns from White's side, ``move`` as ``from + 64 * to + 4096 *
        promotion``, ``clock`` the mover's time left in whole seconds after the move played
        from the position (lichess ``[%clk]``, at most 65,534; format 5, so never in older
        files).
        """
        out = {}
        for name in self.label_names():
            values = np.array(self.column(name))
            if masked:
                values = np.ma.masked_equal(values, _SENTINELS[name])
            out[name] = values
        return out

    def to_arrow(self, threads: int | None = None):
        """Every position as a ``pyarrow.Table`` with the columns of ``pawnstorm export
        --format parquet`` (names, types, nulls and order: ``pq.read_table`` of an export
        of this DB gives an equal table): ``index``, the twelve piece bitboards
        ``white_pawns`` .. ``black_kings``, ``side_to_move``, ``castling``, ``en_passant``,
        ``halfmove_clock``, ``fullmove_number``, ``fen``, then the labels the DB has
        (unknown values are nulls).

        The columns are built by Rust on ``threads`` workers (default one per core) with
        the GIL released, every block's checksum and positions checked as ``evaluate``
        checks them; pyarrow takes the Rust buffers as they are (no copy). Polars:
        ``polars.from_arrow(db.to_arrow())``; DuckDB queries the table by name.
        """
        import pyarrow as pa

        fields, arrays = [], []
        for name, kind, nullable, nulls, values, validity, offsets in self._native.arrow_columns(threads):
            arrow_type = getattr(pa, kind)()
            wrap = [None if validity is None else pa.py_buffer(validity)]
            if offsets is not None:
                wrap.append(pa.py_buffer(offsets))
            wrap.append(pa.py_buffer(values))
            arrays.append(pa.Array.from_buffers(arrow_type, len(self), wrap, null_count=nulls))
            fields.append(pa.field(name, arrow_type, nullable=nullable))
        return pa.Table.from_arrays(arrays, schema=pa.schema(fields))

    def verify(self) -> None:
        """Checks every block's checksum and positions and the header's checksum of them
        (reads the whole file, GIL released). Raises ``PawnstormError`` naming the damage."""
        self._native.verify()

    def evaluate(
        self,
        threads: int | None = None,
        terms: bool = False,
        *,
        pov: Literal["white", "stm"] = "white",
        weights: PathLike | None = None,
        scalar: bool = False,
        eval: Literal["hce", "nnue"] | None = None,
        net: PathLike | None = None,
        arch: str | None = None,
    ) -> np.ndarray:
        """Evaluates every position, as ``pawnstorm eval DB -o OUT.npy`` does, with the GIL
        released, on ``threads`` worker threads (default one per core).

        Returns int32 centipawn scores (White's view, or the side to move's with
        ``pov="stm"``), equal to the CLI's ``.npy``. With ``terms=True``, the CLI's
        ``--terms`` table instead: a structured array with the fields ``index`` (uint64),
        ``score``, ``phase``, ``scale``, ``rule`` and each term's ``_mg``, ``_eg`` and
        ``_final`` (int32). ``weights`` is a weights file (``pawnstorm weights``);
        ``scalar`` runs the one-lane kernels (the CLI's ``--scalar``).

        ``eval="nnue"`` scores with the network instead (``eval --eval nnue``, the exact
        endgame rules on top; docs/NNUE.md): ``net`` is a network file (bullet's raw layout
        or pawnstorm's), else the network compiled into the package (``PawnstormError`` if
        there is none); ``arch`` describes a raw bullet ``net`` as the CLI's ``--arch`` does
        (``"king-buckets=4,output-buckets=8"``: docs/NNUE.md; a pawnstorm file records its
        own). ``eval`` defaults to ``"nnue"`` when ``net`` is given, else
        ``"hce"`` (the hand-crafted evaluation). A network has no ``terms`` and no
        ``weights``; ``scalar`` takes its portable kernels. A file that is no network raises
        ``PawnstormError`` saying why (size, checksum, architecture).
        """
        if pov not in ("white", "stm"):
            raise ValueError(f"pov must be 'white' or 'stm', not {pov!r}")
        nnue, net_path = _network(eval, net)
        out = np.empty(len(self), dtype=_dtype(self._native.score_columns(terms)))
        self._native.evaluate_into(
            out.view(np.uint8),
            terms,
            pov == "stm",
            threads,
            None if weights is None else os.fspath(weights),
            scalar,
            nnue,
            net_path,
            arch,
        )
        return out

    def features(
        self,
        kind: Literal["masks", "terms", "planes", "nnue"] = "masks",
        threads: int | None = None,
        *,
        set: str | None = None,
        sparse: bool = False,
        unpacked: bool = False,
        weights: PathLike | None = None,
        scalar: bool = False,
        skip_check: bool = False,
        skip_plies: int = 0,
        pieces: str | None = None,
        drop_mates: bool = False,
        require_score: bool = False,
        require_result: bool = False,
        quiet_only: bool = False,
    ) -> Union[np.ndarray, dict[str, np.ndarray]]:
        """The CLI's ``pawnstorm features --kind KIND`` as numpy arrays.

        ``masks``: a structured array, one record a position, equal to the CLI's ``.npy``
        (computed straight into the array). ``terms`` and ``planes``: a dict of the arrays
        of the CLI's ``.npz`` (features and labels; ``sparse`` for terms' CSR layout,
        ``unpacked`` for planes of one byte a square), written by the library's ``.npz``
        writer to a temporary file and loaded. ``nnue`` (with ``set``: ``768``, ``halfkp``,
        ``halfka_v2_hm``): the arrays of ``--kind nnue --set SET``, score and result from
        the side to move's view. The filters are the CLI's (``pieces`` as ``"MIN..MAX"``),
        for ``terms``, ``planes`` and ``nnue``.
        """
        filters = {
            "skip_check": skip_check,
            "skip_plies": skip_plies,
            "pieces": pieces,
            "drop_mates": drop_mates,
            "require_score": require_score,
            "require_result": require_result,
            "quiet_only": quiet_only,
        }
        if kind == "masks":
            if sparse or unpacked or weights is not None:
                raise ValueError("sparse, unpacked and weights are for kinds 'terms' and 'planes'")
            if skip_check or skip_plies or pieces is not None or drop_mates or require_score or require_result or quiet_only:
                raise ValueError("kind 'masks' writes a row per DB position; filters are for kinds 'terms' and 'planes'")
            out = np.empty(len(self), dtype=_dtype(self._native.mask_columns()))
            self._native.masks_into(out.view(np.uint8), threads, scalar)
            return out
        if kind not in ("terms", "planes", "nnue"):
            raise ValueError(f"kind must be 'masks', 'terms', 'planes' or 'nnue', not {kind!r}")
        if (kind == "nnue") != (set is not None):
            raise ValueError("kind 'nnue' needs set= (768, halfkp, halfka_v2_hm, 768xKhm or 768hm:MAP); set is for 'nnue' only")
        with tempfile.TemporaryDirectory(prefix="pawnstorm-") as tmp:
            path = os.path.join(tmp, f"{kind}.npz")
            self._native.write_npz(
                kind if set is None else f"nnue:{set}",
                path,
                threads,
                sparse,
                unpacked,
                None if weights is None else os.fspath(weights),
                scalar,
                filters,
            )
            with np.load(path) as npz:
                return {name: npz[name] for name in npz.files}


def import_files(
    inputs: Sequence[PathLike],
    output: PathLike,
    *,
    append: bool = False,
    strict: bool = False,
    skip_plies: int = 0,
    every: int = 1,
    block_size: int = 4096,
    format: Literal["auto", "lines", "pgn", "jsonl", "binpack", "parquet"] = "auto",
    require_eval: bool = False,
    min_elo: int | None = None,
    min_base_seconds: int | None = None,
    max_messages: int = 1000,
    max_elo: int | None = None,
    speed: Sequence[str] | str = (),
    date: str | None = None,
    termination: Sequence[str] | str = (),
    rated_only: bool = False,
    threads: int | None = None,
) -> dict:
    """Imports EPD/FEN lines, PGN games and lichess evaluation JSONL (plain, gzip, zstd or
    bzip2), Stockfish binpack and Parquet (a ``fen`` column, labels by the export's column
    names) into the DB ``output``, as ``pawnstorm import`` does (same options), with the GIL
    released. The lichess filters: ``max_elo``, ``speed`` (classes such as ``"blitz"`` or a
    list of them), ``date`` (``"2024.01.01..2024.01.31"``, inclusive), ``termination``
    (``"Normal"``, ``"Time forfeit"``, ... or a list), ``rated_only``; ``threads`` for PGN,
    EPD and JSONL (default: one per core).

    Returns a dict: ``positions`` and ``games`` imported, ``rejected`` records, ``dropped``
    (games left out by each filter: ``min_elo``, ``max_elo``, ``min_base_seconds``, ``speed``,
    ``date``, ``termination``, ``rated_only``, ``require_eval``), ``total``
    positions in the DB, ``appended_to`` (positions already there with ``append``),
    ``rejections``, the messages of the first ``max_messages`` rejected records (file, line,
    reason, text), and ``rejected_records``, the same as ``(file, line, reason, text)``
    tuples (for Parquet, ``line`` is the row, counted from 0). Raises ``PawnstormError`` with the CLI's message on failure (with
    ``strict``, at the first bad record: nothing is written), ``FileNotFoundError`` for a
    missing input.
    """
    return _native.import_files(
        [os.fspath(p) for p in inputs],
        os.fspath(output),
        append,
        strict,
        skip_plies,
        every,
        block_size,
        format,
        require_eval,
        min_elo,
        min_base_seconds,
        max_messages,
        max_elo,
        [speed] if isinstance(speed, str) else list(speed),
        date,
        [termination] if isinstance(termination, str) else list(termination),
        rated_only,
        threads,
    )


def _check_pov(pov: str) -> None:
    if pov not in ("white", "stm"):
        raise ValueError(f"pov must be 'white' or 'stm', not {pov!r}")


def _network(eval: str | None, net: PathLike | None) -> tuple[bool, str | None]:
    """(whether to score with the network, its path) from ``eval`` and ``net``: ``eval``
    defaults to the network when a ``net`` is given, as the CLI's ``--net`` implies
    ``--eval nnue``."""
    if eval is None:
        eval = "hce" if net is None else "nnue"
    if eval not in ("hce", "nnue"):
        raise ValueError(f"eval must be 'hce' or 'nnue', not {eval!r}")
    return eval == "nnue", None if net is None else os.fspath(net)


def _is_arrow(value) -> bool:
    """Whether ``value`` is a pyarrow array (checked without importing pyarrow)."""
    return type(value).__module__.split(".")[0] == "pyarrow"


def evaluate_fens(
    fens,
    threads: int | None = None,
    *,
    pov: Literal["white", "stm"] = "white",
    errors: Literal["raise", "sentinel"] = "raise",
    weights: PathLike | None = None,
    scalar: bool = False,
    eval: Literal["hce", "nnue"] | None = None,
    net: PathLike | None = None,
    arch: str | None = None,
) -> np.ndarray:
    """Evaluates positions given as FEN text: an int32 array, one score a FEN, equal to
    what ``pawnstorm eval`` gives the same positions (centipawns, White's view, or the side
    to move's with ``pov="stm"``).

    ``fens``: a sequence of ``str`` (a list, a tuple, a numpy array of strings, a pandas
    Series), or a pyarrow string array (``string``, ``large_string``, ``string_view``;
    chunked or not), whose buffers are read in place. Six-field FENs, or four (clocks
    ``0 1``); surrounding spaces are ignored. Parsing and evaluation run on ``threads``
    Rust threads (default one per core) with the GIL released; ``weights``, ``scalar``,
    ``eval``, ``net`` and ``arch`` (the network: ``eval="nnue"``) as ``Database.evaluate``.

    A FEN that does not parse (or a None/null): with ``errors="raise"`` (the default),
    ``ValueError`` naming the first such row, its index, text and the reason; with
    ``errors="sentinel"``, its score is ``NO_SCORE`` (-2**31, no real score) and the rest
    are scored: ``np.flatnonzero(scores == pawnstorm.NO_SCORE)`` lists the rejected rows.
    """
    _check_pov(pov)
    if errors not in ("raise", "sentinel"):
        raise ValueError(f"errors must be 'raise' or 'sentinel', not {errors!r}")
    weights_path = None if weights is None else os.fspath(weights)
    nnue, net_path = _network(eval, net)
    if _is_arrow(fens):
        import pyarrow as pa

        chunks = fens.chunks if isinstance(fens, pa.ChunkedArray) else [fens]
        out = np.empty(sum(len(c) for c in chunks), dtype=np.int32)
        bad = []
        start = 0
        for chunk in chunks:
            if pa.types.is_string_view(chunk.type) or pa.types.is_dictionary(chunk.type):
                chunk = chunk.cast(pa.large_string())
            if pa.types.is_string(chunk.type):
                width = 4
            elif pa.types.is_large_string(chunk.type):
                width = 8
            else:
                raise TypeError(f"fens is a pyarrow array of {chunk.type}, not of strings")
            validity, offsets, data = chunk.buffers()
            if data is None:
                data = pa.py_buffer(b"")
            # pyarrow lends its buffers as signed bytes; read as unsigned, still in place.
            def raw(buffer):
                return None if buffer is None else memoryview(buffer).cast("B")

            rows = _native.evaluate_fens_into(
                None,
                (raw(offsets), raw(data), raw(validity), chunk.offset, len(chunk), width),
                out[start : start + len(chunk)].view(np.uint8),
                pov == "stm",
                threads,
                weights_path,
                scalar,
                nnue,
                net_path,
                arch,
            )
            bad.extend((start + i, reason, text) for i, reason, text in rows)
            start += len(chunk)
    else:
        if isinstance(fens, str):
            raise TypeError("fens is one str; pass a list of FENs")
        items = fens if isinstance(fens, list) else list(fens)
        out = np.empty(len(items), dtype=np.int32)
        bad = _native.evaluate_fens_into(
            items, None, out.view(np.uint8), pov == "stm", threads, weights_path, scalar,
            nnue, net_path, arch,
        )
    if bad and errors == "raise":
        index, reason, text = bad[0]
        more = f" (and {len(bad) - 1} more bad rows)" if len(bad) > 1 else ""
        raise ValueError(f"fens[{index}] is not a FEN: {reason}: {text!r}{more}")
    return out


def evaluate_boards(
    boards: np.ndarray,
    side: np.ndarray,
    castling: np.ndarray | None = None,
    ep: np.ndarray | None = None,
    *,
    count: int | None = None,
    threads: int | None = None,
    pov: Literal["white", "stm"] = "white",
    weights: PathLike | None = None,
    scalar: bool = False,
    out: np.ndarray | None = None,
    eval: Literal["hce", "nnue"] | None = None,
    net: PathLike | None = None,
    arch: str | None = None,
) -> np.ndarray:
    """Evaluates positions held in numpy arrays in the DB's layout, read where they are (no
    copy): int32 scores equal to ``pawnstorm eval``'s for the same positions.

    ``boards``: uint64, shape ``(8, N)`` (the ``BITBOARDS``: pawns, knights, bishops,
    rooks, queens, kings of both colours, then all white and all black pieces; bit 0 =
    a1), or ``(blocks, 8, n)`` as ``Database.bitboards()`` gives it. ``side``: uint8, 0
    White to move, 1 Black, shape ``(N,)`` or ``(blocks, n)``. ``castling`` (uint16, the
    DB's encoding) and ``ep`` (uint8, square 0..63, ``NO_SQUARE`` for none), optional, of
    ``side``'s shape: checked, not read (the evaluation does not depend on them). Rows
    count in C order (block by block); ``count`` evaluates the first ``count`` of them
    (``len(db)`` for a DB's views, whose last block is padded). Each position's rows must
    be contiguous (the last axis); the other axes may have any stride.

    Every row is checked as a DB block's rows are (one king a side, disjoint boards, ...):
    a row that is no position raises ``ValueError`` naming its index. Runs on ``threads``
    Rust threads (default one per core) with the GIL released; the arrays must not change
    meanwhile. ``out``: an int32 array of ``count`` rows to write into (returned).
    ``eval="nnue"`` (or a ``net``, with ``arch`` for a raw bullet file) scores with the
    network, as ``Database.evaluate``; its accumulators carry from row to row, so rows in
    game order score fastest, and rows in no order (shuffled training positions) are
    taken in an order of the pass's own (by pawns), each score still in its row's place.
    """
    _check_pov(pov)
    nnue, net_path = _network(eval, net)
    arrays = {"boards": (boards, np.uint64), "side": (side, np.uint8),
              "castling": (castling, np.uint16), "ep": (ep, np.uint8)}
    for name, (array, dtype) in arrays.items():
        if array is None:
            continue
        if not isinstance(array, np.ndarray):
            raise TypeError(f"{name} must be a numpy array, not {type(array).__name__}")
        if array.dtype != np.dtype(dtype).newbyteorder("="):
            raise TypeError(f"{name} must be {np.dtype(dtype).name} (native byte order), not {array.dtype}")
    if boards.ndim not in (2, 3) or boards.shape[-2] != 8:
        raise ValueError(f"boards must have shape (8, N) or (blocks, 8, n), not {boards.shape}")
    rows_shape = boards.shape[:-2] + boards.shape[-1:]
    for name in ("side", "castling", "ep"):
        array = arrays[name][0]
        if array is not None and array.shape != rows_shape:
            raise ValueError(f"{name} has shape {array.shape}; boards {boards.shape} need {rows_shape}")
    total = int(np.prod(rows_shape))
    if count is None:
        count = total
    if not 0 <= count <= total:
        raise ValueError(f"count {count} is not between 0 and the {total} positions given")
    if out is None:
        out = np.empty(count, dtype=np.int32)
    elif not (isinstance(out, np.ndarray) and out.dtype == np.int32 and out.shape == (count,)):
        raise ValueError(f"out must be an int32 array of shape ({count},)")
    _native.evaluate_boards_into(
        boards,
        side,
        castling,
        ep,
        count,
        out.view(np.uint8),
        pov == "stm",
        threads,
        None if weights is None else os.fspath(weights),
        scalar,
        nnue,
        net_path,
        arch,
    )
    return out


def _arrow_table(data):
    """``data`` as a ``pyarrow.Table``: a Table, a RecordBatch, or anything that exports an
    Arrow stream (``__arrow_c_stream__``: polars and DuckDB results, ...)."""
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if hasattr(data, "__arrow_c_stream__"):
        return pa.table(data)
    if hasattr(data, "to_arrow"):
        return _arrow_table(data.to_arrow())
    raise TypeError(f"from_arrow takes a pyarrow Table or RecordBatch (or an Arrow stream), not {type(data).__name__}")


def from_arrow(
    data,
    path: PathLike | None = None,
    *,
    errors: Literal["raise", "skip"] = "raise",
    block_size: int = 4096,
) -> "Database":
    """A ``Database`` of the positions of an Arrow table: a ``pyarrow.Table`` or
    ``RecordBatch``, or anything with ``__arrow_c_stream__`` (a polars DataFrame, a DuckDB
    result), with a column ``fen`` (any case) and, optionally, label columns named as
    ``pawnstorm export --format parquet`` names them (``result`` as -1/0/1 or ``1-0``
    text, ``score`` centipawns from White's side, ``game_id``, ``ply``, ``white_elo``,
    ``black_elo``, ``base_seconds``, ``increment`` as integers, ``move`` as UCI text;
    nulls are unknown labels). Other columns are not read. Row ``i`` of the table is
    position ``i`` of the DB.

    The FEN and label columns go through ``pawnstorm import``'s Parquet reader (written to
    an uncompressed Parquet file in a temporary directory, then imported): the same
    checks, the same messages. The DB is written at ``path`` (replaced whole, only once
    complete), or, without ``path``, in a temporary directory removed when the
    ``Database`` is collected (its numpy views keep the map readable).

    A row that is no position (a bad FEN, a null, a label out of range): with
    ``errors="raise"`` (the default), ``ValueError`` naming the first such row (counted
    from 0), the reason and the text, and no DB is written; with ``errors="skip"``, the
    row is left out and the ``Database`` lists the rows left out in ``rejected``, as
    ``(row, reason)``. A table without a FEN column, or with a label column of a type
    that holds no such label, raises ``PawnstormError`` naming the column.
    """
    import pyarrow.parquet as pq

    if errors not in ("raise", "skip"):
        raise ValueError(f"errors must be 'raise' or 'skip', not {errors!r}")
    table = _arrow_table(data)
    wanted = {"fen", *LABELS}
    keep = [name for name in table.column_names if name.lower() in wanted]
    # Beside `path` when there is one, so that the finished DB is renamed into place.
    where = None if path is None else os.path.dirname(os.path.abspath(os.fspath(path)))
    workdir = tempfile.TemporaryDirectory(prefix=".pawnstorm-arrow-", dir=where)
    try:
        source = os.path.join(workdir.name, "table.parquet")
        staging = os.path.join(workdir.name, "positions.psdb")
        pq.write_table(table.select(keep), source, compression="none")
        try:
            report = _native.import_files([source], staging, False, False, 0, 1, block_size,
                                          "parquet", False, None, None, 2**62)
        finally:
            os.remove(source)
        # The reason starts with the row ("row 4: ..."), given apart here.
        rejected = [(line, reason.split(": ", 1)[-1], text)
                    for _, line, reason, text in report["rejected_records"]]
        if rejected and errors == "raise":
            row, reason, text = rejected[0]
            more = f" (and {len(rejected) - 1} more bad rows)" if len(rejected) > 1 else ""
            raise ValueError(f"row {row} is no position: {reason}: {text!r}{more}")
        if path is not None:
            os.replace(staging, os.fspath(path))
            staging = os.fspath(path)
        db = Database(staging)
    except BaseException:
        workdir.cleanup()
        raise
    db.rejected = [(row, reason) for row, reason, _ in rejected]
    if path is None:
        # Removed with the Database; the map (and the views over it) outlive the file.
        db._workdir = workdir
    else:
        workdir.cleanup()
    return db


class Loader:
    """Batches of NNUE training features, built ahead by Rust worker threads.

    ``Loader(inputs, batch_size=16384, features="halfka_v2_hm", shuffle=True,
    shuffle_buffer=1_000_000, seed=0, threads=None, **filters)`` reads ``.psdb`` DBs,
    ``.binpack`` files and anything ``pawnstorm import`` reads (EPD/FEN, PGN, lichess JSONL,
    compressed or not), of any size, and yields one dict of numpy arrays per batch:

    - ``stm_features``, ``nstm_features``: (B, 32) int32, the active inputs of ``features``
      (``768``, ``halfkp``, ``halfka_v2_hm``, ``768xKhm``, ``768hm:MAP``) from the side to move's and the other side's
      perspective, padded with -1 (docs/TRAINING.md gives the formulas);
    - ``stm``: (B,) uint8, 0 White to move, 1 Black;
    - ``score``: (B,) int32, centipawns from the side to move's view (-2**31 unknown);
    - ``result``: (B,) float32, the side to move's result: 1, 0.5, 0 (NaN unknown).

    ``inputs`` is a path, a list of paths, or a list mixing paths and ``(path, weight)``
    pairs. Paths alone are shards of one dataset: read one after the other, each once per
    pass. With any weight (a path alone then weighs 1) the inputs are interleaved: each
    gives ``weight / sum of weights`` of the positions, to within one position at any
    point; an input that ends starts again (a small dataset is oversampled), and the pass
    ends when every input has been read to its end at least once. The shares are of the
    positions the filters keep.

    The arrays own Rust memory lent through the buffer protocol: ``torch.from_numpy`` takes
    them without a copy. Each ``iter(loader)`` is one pass (epoch); the last batch may be
    shorter. With ``shuffle``, DB blocks are read in a random order and positions pass
    through a buffer of ``shuffle_buffer`` positions (32 bytes each); the same ``seed``
    gives the same batches, epoch by epoch (epoch ``e`` uses the seed mixed with ``e``),
    whatever ``threads``. Memory is the shuffle buffer plus two batches per thread (plus
    ``unique``'s set). Filters are those of ``pawnstorm export`` and ``features`` (docs/CLI.md,
    "Filters"): ``skip_check``, ``skip_capture``, ``skip_plies``, ``max_score``,
    ``random_skip``, ``wdl_skip``, ``piece_skip`` (True, ``"Y0,Y16,Y32"`` or three numbers),
    ``unique``, ``drop_mates``, ``require_score``, ``require_result``, ``quiet_only``,
    ``pieces`` ("MIN..MAX"). The random ones draw from ``seed`` and the epoch. ``unique``
    keeps a set of 8-byte position keys for the pass: 9 to 18 bytes a position given. Bad
    records in text or binpack inputs are skipped and counted (``counts()``).
    """

    _FILTERS = {"skip_check", "skip_capture", "skip_plies", "max_score", "random_skip",
                "wdl_skip", "piece_skip", "unique", "drop_mates", "require_score",
                "require_result", "quiet_only", "pieces"}

    def __init__(self, inputs, batch_size: int = 16384, features: str = "halfka_v2_hm",
                 shuffle: bool = True, shuffle_buffer: int = 1_000_000, seed: int = 0,
                 threads: int | None = None, **filters):
        if isinstance(inputs, (str, os.PathLike, tuple)):
            inputs = [inputs]
        self.inputs = []
        self.mixing = False
        for item in inputs:
            if isinstance(item, tuple):
                if len(item) != 2:
                    raise ValueError(f"an input is a path or (path, weight), not {item!r}")
                path, weight = item
                weight = float(weight)
                if not weight > 0 or weight != weight or weight == float("inf"):
                    raise ValueError(f"the weight of {os.fspath(path)!r} must be a positive number, not {weight!r}")
                self.mixing = True
            else:
                path, weight = item, 1.0
            self.inputs.append((os.fspath(path), weight))
        self.paths = [path for path, _ in self.inputs]
        self.batch_size = batch_size
        self.features = features
        self.shuffle = shuffle
        self.shuffle_buffer = shuffle_buffer
        self.seed = seed
        self.threads = threads
        self.filters = filters
        self._epoch = 0
        self._last = None
        # The arguments are checked now rather than at the first batch.
        if not self.inputs:
            raise ValueError("no inputs")
        _native.feature_set_inputs(features)  # raises ValueError naming the sets
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        for path in self.paths:
            if not os.path.exists(path):
                raise FileNotFoundError(path)
        unknown = set(filters) - self._FILTERS
        if unknown:
            raise ValueError(f"unknown filter {sorted(unknown)[0]!r}")

    def __iter__(self):
        seed = (self.seed * 0x9E3779B97F4A7C15 + self._epoch) % 2**64
        self._epoch += 1
        native = _native.NativeLoader(self.inputs, self.mixing, self.batch_size, self.features,
                                      self.shuffle, self.shuffle_buffer, seed, self.threads,
                                      self.filters)
        self._last = native
        while True:
            batch = native.next_batch()
            if batch is None:
                return
            yield {name: np.frombuffer(buffer, dtype=dtype).reshape(shape)
                   for name, (buffer, dtype, shape) in batch.items()}

    def counts(self) -> dict:
        """Of the last pass so far: positions kept (given to the batches), dropped by the
        filters, rejected (bad records); ``inputs``, the positions each input gave, in the
        order given; ``dropped_by``, {filter option: positions it dropped}."""
        if self._last is None:
            return {"kept": 0, "dropped": 0, "rejected": 0,
                    "inputs": [0] * len(self.inputs), "dropped_by": {}}
        kept, dropped, rejected, inputs, by = self._last.counts()
        return {"kept": kept, "dropped": dropped, "rejected": rejected,
                "inputs": list(inputs), "dropped_by": dict(by)}
