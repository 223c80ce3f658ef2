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
    "import_files",
    "simd_path",
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
}


def simd_path() -> str:
    """The SIMD path the batch passes take on this machine (as the CLI's summary names it)."""
    return _native.simd_path_name()


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
        #: Format version of the file (1 to 4).
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
        promotion``.
        """
        out = {}
        for name in self.label_names():
            values = np.array(self.column(name))
            if masked:
                values = np.ma.masked_equal(values, _SENTINELS[name])
            out[name] = values
        return out

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
    ) -> np.ndarray:
        """Evaluates every position, as ``pawnstorm eval DB -o OUT.npy`` does, with the GIL
        released, on ``threads`` worker threads (default one per core).

        Returns int32 centipawn scores (White's view, or the side to move's with
        ``pov="stm"``), equal to the CLI's ``.npy``. With ``terms=True``, the CLI's
        ``--terms`` table instead: a structured array with the fields ``index`` (uint64),
        ``score``, ``phase``, ``scale``, ``rule`` and each term's ``_mg``, ``_eg`` and
        ``_final`` (int32). ``weights`` is a weights file (``pawnstorm weights``);
        ``scalar`` runs the one-lane kernels (the CLI's ``--scalar``).
        """
        if pov not in ("white", "stm"):
            raise ValueError(f"pov must be 'white' or 'stm', not {pov!r}")
        out = np.empty(len(self), dtype=_dtype(self._native.score_columns(terms)))
        self._native.evaluate_into(
            out.view(np.uint8),
            terms,
            pov == "stm",
            threads,
            None if weights is None else os.fspath(weights),
            scalar,
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
            raise ValueError("kind 'nnue' needs set= (768, halfkp or halfka_v2_hm); set is for 'nnue' only")
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
    format: Literal["auto", "lines", "pgn", "jsonl"] = "auto",
    require_eval: bool = False,
    min_elo: int | None = None,
    min_base_seconds: int | None = None,
    max_messages: int = 1000,
) -> dict:
    """Imports EPD/FEN lines, PGN games and lichess evaluation JSONL (plain, gzip, zstd or
    bzip2) into the DB ``output``, as ``pawnstorm import`` does (same options), with the GIL
    released.

    Returns a dict: ``positions`` and ``games`` imported, ``rejected`` records, ``dropped``
    (games left out by each filter: ``min_elo``, ``min_base_seconds``, ``require_eval``), ``total``
    positions in the DB, ``appended_to`` (positions already there with ``append``), and
    ``rejections``, the messages of the first ``max_messages`` rejected records (file, line,
    reason, text). Raises ``PawnstormError`` with the CLI's message on failure (with
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
    )


class Loader:
    """Batches of NNUE training features, built ahead by Rust worker threads.

    ``Loader(inputs, batch_size=16384, features="halfka_v2_hm", shuffle=True,
    shuffle_buffer=1_000_000, seed=0, threads=None, **filters)`` reads ``.psdb`` DBs,
    ``.binpack`` files and anything ``pawnstorm import`` reads (EPD/FEN, PGN, lichess JSONL,
    compressed or not), of any size, and yields one dict of numpy arrays per batch:

    - ``stm_features``, ``nstm_features``: (B, 32) int32, the active inputs of ``features``
      (``768``, ``halfkp``, ``halfka_v2_hm``) from the side to move's and the other side's
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
    ``unique``'s set). Filters are those of ``pawnstorm export`` and ``features`` (README,
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
        if features not in ("768", "halfkp", "halfka_v2_hm"):
            raise ValueError(f"{features!r} is not a feature set: 768, halfkp or halfka_v2_hm")
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
