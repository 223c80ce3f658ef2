"""Shared fixtures: the CLI binary the tests compare with, and the repository's fixtures."""

import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def under_ci() -> bool:
    """Whether this is a CI run (`CI` set, as every CI service sets it): nothing may skip."""
    return os.environ.get("CI", "") not in ("", "0", "false")


def required(module: str):
    """`module` imported; skipped (with the reason shown) where it is missing, except where
    PAWNSTORM_REQUIRE_PYTHON is set (scripts/test) or under CI: there a missing module fails."""
    if os.environ.get("PAWNSTORM_REQUIRE_PYTHON") or under_ci():
        return __import__(module)
    return pytest.importorskip(module, reason=f"{module} is not installed (scripts/test installs it)")


def psdb_contents(path) -> bytes:
    """The bytes of a version 5 `.psdb` file with what differs between two writes of the
    same positions zeroed: the file id and every checksum (all of which cover the id)."""
    data = bytearray(pathlib.Path(path).read_bytes())
    assert int.from_bytes(data[8:12], "little") == 5, f"{path}: version 5"
    data[40:56] = bytes(16)
    block_bytes = int.from_bytes(data[32:40], "little")
    for end in range(128 + block_bytes, len(data) + 1, block_bytes):
        data[end - 4 : end] = bytes(4)
    return bytes(data)


def load_example(name: str):
    """examples/NAME.py as a module. Not registered in sys.modules: Ray's pickler then ships
    its code by value, as it does for a script run as __main__."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"{name}_example", ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray instance of 2 CPUs for the tests of one module."""
    ray = required("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="session")
def pawnstorm_bin() -> pathlib.Path:
    """The CLI built by `cargo build --release` (scripts/python-tests builds it and sets
    PAWNSTORM_BIN)."""
    path = pathlib.Path(os.environ.get("PAWNSTORM_BIN", ROOT / "target" / "release" / "pawnstorm"))
    if not path.exists():
        pytest.fail(f"{path}: no pawnstorm binary; run `cargo build --release` or set PAWNSTORM_BIN")
    return path


@pytest.fixture(scope="session")
def fixtures() -> pathlib.Path:
    return ROOT / "fixtures"


@pytest.fixture(scope="session")
def cli(pawnstorm_bin):
    """Runs the CLI with arguments; fails the test with its stderr if it fails."""

    def run(*args, check=True):
        done = subprocess.run([str(pawnstorm_bin), *map(str, args)], capture_output=True, text=True)
        if check and done.returncode != 0:
            pytest.fail(f"pawnstorm {' '.join(map(str, args))} failed:\n{done.stderr}")
        return done

    return run


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI a skip is a failure, whatever skipped it (a missing module, Chromium, a
    `pytest.skip` in a test): CI runs everything or says what it could not run."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and under_ci() and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under CI, which runs everything: {report.longrepr}"
