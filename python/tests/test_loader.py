"""`pawnstorm.Loader`: every position once per epoch, the same batches for the same seed
(whatever the thread count), features and labels equal to `features --kind nnue`, inputs
of every kind, and the GIL released while batches are built."""

import re
import sys
import threading
import time

import numpy as np
import pytest

import pawnstorm


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, cli, fixtures):
    d = tmp_path_factory.mktemp("loader")
    texel = d / "texel.psdb"
    cli("import", fixtures / "texel" / "labeled-from-fixture-pgns.epd", "--block-size", "1024", "-o", texel)
    games = d / "games.psdb"
    cli("datagen", "-o", games, "--games", "4", "--nodes", "200", "--threads", "1", "--seed", "9")
    binpack = d / "games.binpack"
    cli("export", games, "-o", binpack)
    npz = d / "texel.npz"
    cli("features", texel, "--kind", "nnue", "--set", "halfka_v2_hm", "-o", npz)
    return {"texel": texel, "games": games, "binpack": binpack, "npz": npz,
            "epd": fixtures / "epd" / "wac.epd"}


def rows(batches):
    """Each position's (stm features, nstm features, stm, score, result) as a hashable row."""
    out = []
    for b in batches:
        for i in range(len(b["stm"])):
            out.append((b["stm_features"][i].tobytes(), b["nstm_features"][i].tobytes(),
                        int(b["stm"][i]), int(b["score"][i]), float(np.nan_to_num(b["result"][i], nan=-1))))
    return out


def test_unshuffled_batches_are_the_features_cli_output(inputs):
    loader = pawnstorm.Loader(inputs["texel"], batch_size=5000, shuffle=False, threads=2)
    batches = list(loader)
    assert [len(b["stm"]) for b in batches[:-1]] == [5000] * (len(batches) - 1)
    want = np.load(inputs["npz"])
    for name in ["stm_features", "nstm_features", "stm", "score", "result"]:
        got = np.concatenate([b[name] for b in batches])
        assert got.dtype == want[name].dtype, name
        np.testing.assert_array_equal(got, want[name], err_msg=name)
    assert loader.counts()["kept"] == len(want["stm"])


def test_every_position_once_per_epoch_and_the_seed_decides_the_order(inputs):
    plain = rows(pawnstorm.Loader(inputs["texel"], batch_size=4096, shuffle=False))
    loader = pawnstorm.Loader(inputs["texel"], batch_size=4096, shuffle_buffer=10_000, seed=5, threads=2)
    first, second = rows(loader), rows(loader)
    assert sorted(first) == sorted(plain) and sorted(second) == sorted(plain)
    assert first != plain, "not shuffled"
    assert first != second, "every epoch in the same order"
    again = pawnstorm.Loader(inputs["texel"], batch_size=4096, shuffle_buffer=10_000, seed=5, threads=1)
    assert rows(again) == first, "same seed, other thread count: other batches"
    other = pawnstorm.Loader(inputs["texel"], batch_size=4096, shuffle_buffer=10_000, seed=6, threads=2)
    assert rows(other) != first


def test_binpack_db_and_text_inputs_and_filters(inputs):
    from_db = rows(pawnstorm.Loader(inputs["games"], batch_size=100, shuffle=False))
    from_binpack = rows(pawnstorm.Loader(inputs["binpack"], batch_size=100, shuffle=False))
    # The binpack holds the DB's positions that have a move (a game's last one has none),
    # in the DB's order.
    remaining = iter(from_db)
    assert all(any(row == r for r in remaining) for row in from_binpack)
    assert len(from_db) - 8 <= len(from_binpack) < len(from_db)
    both = rows(pawnstorm.Loader([inputs["games"], inputs["epd"]], batch_size=64, shuffle=False))
    assert len(both) == len(from_db) + 300
    scored = pawnstorm.Loader([inputs["games"], inputs["epd"]], batch_size=64, require_score=True)
    assert len(rows(scored)) == len(from_db)
    assert scored.counts()["dropped"] == 300


def test_arrays_are_writable_views_without_a_copy(inputs):
    batch = next(iter(pawnstorm.Loader(inputs["texel"], batch_size=1000, shuffle=False)))
    features = batch["stm_features"]
    assert features.shape == (1000, 32) and features.dtype == np.int32
    assert not features.flags.owndata and features.flags.writeable
    assert features.base is not None


def test_bad_arguments_are_refused(inputs, tmp_path):
    with pytest.raises(ValueError, match="halfkx"):
        pawnstorm.Loader(inputs["texel"], features="halfkx")
    with pytest.raises(FileNotFoundError):
        pawnstorm.Loader(tmp_path / "missing.psdb")
    with pytest.raises(ValueError, match="colour"):
        pawnstorm.Loader(inputs["texel"], colour=1)


def gil_free_share(call):
    """The share of a counting Python thread's free-running rate it keeps while `call` runs
    in the main thread: near 1 when the call releases the GIL, near 0 when it holds it."""
    count = 0
    done = False

    def counter():
        nonlocal count
        while not done:
            count += 1

    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    thread = threading.Thread(target=counter)
    thread.start()
    try:
        before = count
        time.sleep(0.3)  # sleep releases the GIL: the free-running rate
        free_rate = (count - before) / 0.3
        before, start = count, time.perf_counter()
        # Repeated to half a second at least, so that a fast machine still tells.
        while time.perf_counter() - start < 0.5:
            call()
        seconds = time.perf_counter() - start
        during = count - before
    finally:
        done = True
        thread.join()
        sys.setswitchinterval(old)
    return during / seconds / free_rate


def test_the_gil_is_released_while_batches_are_built(inputs):
    loader = pawnstorm.Loader([inputs["texel"]] * 4, batch_size=200_000, shuffle_buffer=300_000, threads=1)

    def first_batch():
        # Filling the shuffle buffer and building the first batch: all in Rust.
        next(iter(loader))

    assert gil_free_share(first_batch) > 0.3


def test_the_gil_is_released_while_evaluate_runs(inputs):
    db = pawnstorm.Database(inputs["texel"])

    assert gil_free_share(lambda: db.evaluate(threads=1)) > 0.3


def test_a_gil_holding_call_fails_the_check():
    """The check can fail: a native call that holds the GIL throughout (the regex engine
    backtracking, which never lets go of it) keeps the counter still."""
    assert gil_free_share(lambda: re.match(r"(a+)+$", "a" * 21 + "b")) < 0.1


def test_counts_can_be_read_while_a_pass_waits_for_batches(inputs):
    """counts() from another thread while the main thread waits in the native call: the
    counts live outside the loader the waiting call holds, so neither blocks the other."""
    loader = pawnstorm.Loader(inputs["texel"], batch_size=2000, shuffle_buffer=50_000, threads=1)
    stop = False
    seen = []

    def poll():
        while not stop:
            seen.append(loader.counts()["kept"])

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    total = sum(len(b["stm"]) for b in loader)
    stop = True
    poller.join(timeout=10)
    assert not poller.is_alive()
    assert seen and max(seen) <= total == loader.counts()["kept"]
