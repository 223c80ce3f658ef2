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
    def layout(self) -> dict[str, Any]: ...
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
    ) -> None: ...
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
) -> dict[str, Any]: ...
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
