"""`pawnstorm.Loader`: every position once per epoch, the same batches for the same seed
(whatever the thread count), features and labels equal to `features --kind nnue`, inputs
of every kind, and the GIL released while batches are built."""

import collections
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


def looks_inside(call):
    """How many times this thread got to run Python while one native call made by `call`
    (run in another thread, repeated for half a second) was still in progress: many when
    the call releases the GIL, at most a few when it holds it throughout.

    The other thread's profile hook marks each native call's start and end. A call that
    holds the GIL lets this thread run only once it has returned, at the hook for its end
    (which runs Python, so may switch threads before it clears the mark): one look per
    call, more only if the other thread then waits for a core longer than a sleep here
    lasts, again and again. No rate and no wall-clock bound, so a loaded machine tells
    the two apart as an idle one does. Measured (a look a millisecond): 60-130 for the
    calls below and 1-8 for the regex on an idle 2-core machine; 197-411 and 1 beside
    `stress --cpu 8`."""
    mark = {"call": 0, "inside": False}

    def profile(frame, event, arg):
        if event == "c_call":
            mark["call"] += 1
            mark["inside"] = True
        elif event in ("c_return", "c_exception"):
            mark["inside"] = False

    def repeat():
        sys.setprofile(profile)
        try:
            start = time.perf_counter()
            # Repeated to half a second at least, so that a fast machine still tells.
            while time.perf_counter() - start < 0.5:
                call()
        finally:
            sys.setprofile(None)

    thread = threading.Thread(target=repeat)
    looks = collections.Counter()
    thread.start()
    while thread.is_alive():
        if mark["inside"]:
            looks[mark["call"]] += 1
        time.sleep(0.001)
    thread.join()
    return max(looks.values(), default=0)


def test_the_gil_is_released_while_batches_are_built(inputs):
    loader = pawnstorm.Loader([inputs["texel"]] * 4, batch_size=200_000, shuffle_buffer=300_000, threads=1)

    def first_batch():
        # Filling the shuffle buffer and building the first batch: all in Rust.
        next(iter(loader))

    assert looks_inside(first_batch) >= 20


def test_the_gil_is_released_while_evaluate_runs(inputs):
    db = pawnstorm.Database(inputs["texel"])

    assert looks_inside(lambda: db.evaluate(threads=1, terms=True, scalar=True)) >= 20


def test_a_gil_holding_call_fails_the_check():
    """The check can fail: a native call that holds the GIL throughout (the regex engine
    backtracking, which never lets go of it) leaves the counter only the moments between calls."""
    assert looks_inside(lambda: re.match(r"(a+)+$", "a" * 21 + "b")) < 20


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


def _distinct_epd(fixtures, n):
    """The first n positions of the texel fixture (distinct), as EPD position fields."""
    lines = (fixtures / "texel" / "labeled-from-fixture-pgns.epd").read_text().splitlines()
    return [" ".join(line.split()[:4]) for line in lines[:n]]


def _white_results(batches):
    """White's result of each position (1, 0.5, 0) from the side to move's."""
    out = []
    for b in batches:
        for stm, r in zip(b["stm"], b["result"]):
            out.append(float(r) if stm == 0 else 1.0 - float(r))
    return np.array(out)


def test_weighted_inputs_mix_at_their_rates(tmp_path, cli, fixtures):
    positions = _distinct_epd(fixtures, 2500)
    # a: 500 positions scored 1, b: 2000 scored 2, so each batch row tells its input.
    (tmp_path / "a.epd").write_text("".join(f"{p} ce 1;\n" for p in positions[:500]))
    (tmp_path / "b.epd").write_text("".join(f"{p} ce 2;\n" for p in positions[500:]))
    cli("import", tmp_path / "a.epd", "-o", tmp_path / "a.psdb")
    inputs = [(tmp_path / "a.psdb", 3), (tmp_path / "b.epd", 1)]
    loader = pawnstorm.Loader(inputs, batch_size=1000, shuffle=False, threads=2)
    batches = list(loader)
    # Side to move's view: the sign tells nothing of the input, the size does.
    scores = np.abs(np.concatenate([b["score"] for b in batches]))
    from_a = int((scores == 1).sum())
    from_b = int((scores == 2).sum())
    assert from_b == 2000, "the input largest for its weight is read once, whole"
    assert abs(from_a - 6000) <= 3
    counts = loader.counts()
    assert counts["inputs"] == [from_a, from_b]
    assert counts["kept"] == from_a + from_b
    # The rate holds along the stream, not only at the end: every batch is 3:1.
    for b in batches[:-1]:
        share = (np.abs(b["score"]) == 1).mean()
        assert abs(share - 0.75) < 0.01, share
    # Shuffled: same seed, same batches, whatever the threads.
    shuffled = pawnstorm.Loader(inputs, batch_size=1000, shuffle_buffer=3000, seed=4, threads=2)
    again = pawnstorm.Loader(inputs, batch_size=1000, shuffle_buffer=3000, seed=4, threads=1)
    assert rows(shuffled) == rows(again)
    # A plain list stays shards: each read once, in order.
    plain = pawnstorm.Loader([tmp_path / "a.psdb", tmp_path / "b.epd"], batch_size=1000, shuffle=False)
    assert len(rows(plain)) == 2500 and plain.counts()["inputs"] == [500, 2000]
    with pytest.raises(ValueError, match="positive"):
        pawnstorm.Loader([(tmp_path / "a.psdb", 0)])


def test_skip_rules_in_the_loader(tmp_path, cli, fixtures):
    positions = _distinct_epd(fixtures, 500)
    # 70% draws, 20% White wins, 10% Black wins.
    lines = []
    for i in range(6000):
        result = "0-1" if i % 10 == 0 else "1-0" if i % 10 in (1, 2) else "1/2-1/2"
        lines.append(f'{positions[(i * 7) % 500]} c9 "{result}";\n')
    (tmp_path / "skewed.epd").write_text("".join(lines))
    cli("import", tmp_path / "skewed.epd", "-o", tmp_path / "skewed.psdb")
    for path in (tmp_path / "skewed.psdb", tmp_path / "skewed.epd"):
        loader = pawnstorm.Loader(path, batch_size=512, shuffle=False, wdl_skip=True)
        results = _white_results(loader)
        for value in (1.0, 0.5, 0.0):
            share = (results == value).mean()
            assert abs(share - 1 / 3) < 0.05, (path, value, share)
        assert loader.counts()["dropped_by"]["--wdl-skip"] == 6000 - len(results)
        first = rows(pawnstorm.Loader(path, batch_size=512, seed=3, wdl_skip=True, random_skip=1))
        second = rows(pawnstorm.Loader(path, batch_size=512, seed=3, wdl_skip=True, random_skip=1, threads=1))
        assert first == second
    # The move played: a capture, a quiet move, a promotion; a lopsided score.
    (tmp_path / "moves.epd").write_text(
        "4k3/8/8/3p4/4P3/8/8/4K3 w - - move e4d5; ce 10;\n"
        "4k3/8/8/3p4/4P3/8/8/4K3 w - - move e4e5; ce 20;\n"
        "4k3/P7/8/8/8/8/8/4K3 w - - move a7a8q; ce 30;\n"
        "4k3/8/8/8/8/8/8/QQ2K3 w - - ce 2500;\n")
    kept = [int(s) for b in pawnstorm.Loader(tmp_path / "moves.epd", shuffle=False, skip_capture=True)
            for s in b["score"]]
    assert kept == [20, 2500]
    kept = [int(s) for b in pawnstorm.Loader(tmp_path / "moves.epd", shuffle=False, max_score=1000)
            for s in b["score"]]
    assert kept == [10, 20, 30]


def test_unique_drops_exactly_the_repeats(tmp_path, fixtures):
    positions = _distinct_epd(fixtures, 40)
    lines = []
    for rnd in range(3):
        for i, p in enumerate(positions):
            if rnd <= i % 3:
                lines.append(f"{p} ce {rnd * 100 + i};\n")
    (tmp_path / "repeats.epd").write_text("".join(lines))
    loader = pawnstorm.Loader(tmp_path / "repeats.epd", shuffle=False, unique=True)
    scores = sorted(abs(int(s)) for b in loader for s in b["score"])
    assert scores == list(range(40)), "the first of each position, and only it"
    assert loader.counts()["dropped_by"] == {"--unique": len(lines) - 40}
