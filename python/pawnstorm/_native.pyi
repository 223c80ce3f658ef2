"""Type stubs of the native module (PyO3). The public API is `pawnstorm` (``__init__.py``)."""

from os import PathLike
from typing import Any

class PawnstormError(Exception):
    """A pawnstorm error: a corrupt or foreign DB, a bad input, a failed pass (the CLI's message)."""

class NativeDatabase:
    """An open DB; exports the mapped file, read-only, through the buffer protocol."""

    def __init__(self, path: str | PathLike[str], verify: bool = True) -> None: ...
    def __len__(self) -> int: ...
    def fen(self, index: int) -> str: ...
    def __buffer__(self, flags: int, /) -> memoryview: ...
    def layout(self) -> dict[str, Any]:
        """The header's figures and every column the file has as ``(name, offset in a
        block, numpy type)``: the bitboards, the position columns, then the label columns
        present, in file order (``result``, ``score``, ``game_id``, ``ply``, ``white_elo``,
        ``black_elo``, ``base_seconds``, ``increment``, ``move``, ``clock``)."""
        ...
    def verify(self) -> None: ...
    def score_columns(self, terms: bool) -> list[tuple[str, str]]: ...
    def evaluate_into(
        self,
        out: Any,
        terms: bool,
        stm_pov: bool,
        threads: int | None,
        weights_path: str | None,
        scalar: bool,
        nnue: bool = False,
        net_path: str | None = None,
        arch: str | None = None,
    ) -> None:
        """Scores (or with `terms` the breakdown) of every position into `out`; with `nnue`
        the network's (`net_path`'s, else the compiled-in one)."""
        ...
    def arrow_columns(
        self, threads: int | None
    ) -> list[
        tuple[str, str, bool, int, NativeArray, NativeArray | None, NativeArray | None]
    ]:
        """(name, Arrow type, nullable, null count, values, validity, offsets) of each
        column of the Parquet export, the buffers Rust-owned."""
        ...
    def mask_columns(self) -> list[tuple[str, str]]: ...
    def masks_into(self, out: Any, threads: int | None, scalar: bool) -> None: ...
    def write_npz(
        self,
        kind: str,
        path: str,
        threads: int | None,
        sparse: bool,
        unpacked: bool,
        weights_path: str | None,
        scalar: bool,
        filters: dict[str, Any],
    ) -> None: ...

def import_files(
    inputs: list[str],
    output: str,
    append: bool = False,
    strict: bool = False,
    skip_plies: int = 0,
    every: int = 1,
    block_size: int = 4096,
    format: str | None = None,
    require_eval: bool = False,
    min_elo: int | None = None,
    min_base_seconds: int | None = None,
    max_messages: int = 1000,
    max_elo: int | None = None,
    speed: list[str] = ...,
    date: str | None = None,
    termination: list[str] = ...,
    rated_only: bool = False,
    threads: int | None = None,
) -> dict[str, Any]: ...
def evaluate_fens_into(
    fens: list[str | None] | None,
    arrow: tuple[Any, Any, Any | None, int, int, int] | None,
    out: Any,
    stm_pov: bool,
    threads: int | None,
    weights_path: str | None,
    scalar: bool,
    nnue: bool = False,
    net_path: str | None = None,
    arch: str | None = None,
) -> list[tuple[int, str, str]]:
    """Scores of `fens` (or of an Arrow string array's (offsets, data, validity, offset,
    length, offset width)) into `out`; the bad rows as (index, reason, text). With `nnue`,
    the network's scores (`net_path`'s, else the compiled-in one)."""
    ...
def evaluate_boards_into(
    boards: Any,
    side: Any,
    castling: Any | None,
    en_passant: Any | None,
    count: int,
    out: Any,
    stm_pov: bool,
    threads: int | None,
    weights_path: str | None,
    scalar: bool,
    nnue: bool = False,
    net_path: str | None = None,
    arch: str | None = None,
) -> None:
    """Scores of the first `count` rows of arrays in the DB's layout into `out`, read in
    place; ValueError names the first row that is no position. With `nnue`, the network's
    scores (`net_path`'s, else the compiled-in one)."""
    ...
def simd_path_name() -> str: ...
def board_svg(fen: str, masks: list[str] = ..., arrows: list[str] = ...) -> str: ...
def mask_names() -> list[str]: ...

class NativeArray:
    """A batch array's bytes, lent through the buffer protocol."""

class NativeLoader:
    def __init__(
        self,
        inputs: list[tuple[str, float]],
        mixing: bool,
        batch_size: int,
        features: str,
        shuffle: bool,
        shuffle_buffer: int,
        seed: int,
        threads: int | None,
        filters: dict[str, Any],
    ) -> None: ...
    def next_batch(self) -> dict[str, tuple[NativeArray, str, tuple[int, ...]]] | None: ...
    def counts(self) -> tuple[int, int, int, list[int], list[tuple[str, int]]]: ...
