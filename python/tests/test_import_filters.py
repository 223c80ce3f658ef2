"""The lichess filters and the clock column of `import`, against an independent reading of
the same games with python-chess: which games each filter keeps (lichess's speed classes
computed here from their definition), and the `[%clk]` of every move on the mover's row."""

import random

from conftest import ROOT, required

chess = required("chess")
import chess.pgn  # noqa: E402

pawnstorm = required("pawnstorm")

SPEEDS = [(0, "ultrabullet"), (30, "bullet"), (180, "blitz"), (480, "rapid"), (1500, "classical"),
          (21600, "correspondence")]


def speed(time_control):
    """lichess's class: base + 40 × increment seconds, by lila's bounds."""
    if time_control == "-":
        return "correspondence"
    if not all(p.isdigit() for p in time_control.split("+")) or time_control.count("+") > 1:
        return None
    base, _, increment = time_control.partition("+")
    estimate = int(base) + 40 * int(increment or 0)
    return [name for bound, name in SPEEDS if estimate >= bound][-1]


def games_file(path):
    """200 short games with every kind of tag value the filters read, some unknown."""
    rng = random.Random(7)
    events = ["Rated Blitz game", "Casual Rapid game", "rated bullet tournament https://x", "Rated", None]
    terminations = ["Normal", "Time forfeit", "Abandoned", "Rules infraction", "normal", None]
    controls = ["15+0", "29+0", "30+0", "60+0", "120+1", "120+2", "180+0", "300+3", "479+0", "480+0",
                "900+10", "1499+0", "1500+0", "-", "?", "40/7200", None]
    dates = ["2024.01.01", "2024.01.15", "2024.01.31", "2024.02.01", "2023.12.31", "2024.??.??", None]
    text = []
    for i in range(200):
        tags = {"Event": rng.choice(events), "Termination": rng.choice(terminations),
                "TimeControl": rng.choice(controls), "UTCDate": rng.choice(dates),
                "WhiteElo": rng.choice(["1500", "2000", "2400", "?", None]),
                "BlackElo": rng.choice(["1500", "2000", "2400", "?", None]), "Result": "*"}
        board = chess.Board()
        moves = []
        clock = 300
        for _ in range(rng.randrange(1, 12)):
            move = rng.choice(list(board.legal_moves))
            clock -= rng.randrange(0, 20)
            number = f"{board.fullmove_number}. " if board.turn else f"{board.fullmove_number}... "
            moves.append(f"{number}{board.san(move)} {{ [%clk 0:{clock // 60:02d}:{clock % 60:02d}] }}")
            board.push(move)
        text.append("".join(f'[{k} "{v}"]\n' for k, v in tags.items() if v is not None) + "\n" + " ".join(moves) + " *\n")
    path.write_text("\n".join(text))


def test_each_filter_keeps_exactly_the_games_it_should(tmp_path):
    path = tmp_path / "filters.pgn"
    games_file(path)
    with open(path) as f:
        headers = []
        while (game := chess.pgn.read_game(f)) is not None:
            headers.append(game.headers)

    def elo(h, name):
        return int(h[name]) if h.get(name, "?").isdigit() else None

    def kept(**options):
        out = tmp_path / "out.psdb"
        counts = pawnstorm.import_files([path], out, **options)
        return counts["games"], counts["dropped"]

    cases = [
        (dict(max_elo=2000), lambda h: all(e is not None and e <= 2000 for e in (elo(h, "WhiteElo"), elo(h, "BlackElo"))), "max_elo"),
        (dict(min_elo=2000), lambda h: all(e is not None and e >= 2000 for e in (elo(h, "WhiteElo"), elo(h, "BlackElo"))), "min_elo"),
        (dict(speed=["bullet", "blitz"]), lambda h: speed(h.get("TimeControl", "?")) in ("bullet", "blitz"), "speed"),
        (dict(speed="correspondence"), lambda h: speed(h.get("TimeControl", "?")) == "correspondence", "speed"),
        (dict(date="2024.01.01..2024.01.31"), lambda h: h.get("UTCDate", "?") in ("2024.01.01", "2024.01.15", "2024.01.31"), "date"),
        (dict(date="..2024.01.01"), lambda h: h.get("UTCDate", "?") in ("2024.01.01", "2023.12.31"), "date"),
        (dict(termination=["normal", "TIME FORFEIT"]), lambda h: h.get("Termination", "").lower() in ("normal", "time forfeit"), "termination"),
        (dict(rated_only=True), lambda h: h.get("Event", "").lower().startswith("rated "), "rated_only"),
    ]
    for options, keep, name in cases:
        expected = sum(1 for h in headers if keep(h))
        games, dropped = kept(**options)
        assert (games, dropped[name]) == (expected, len(headers) - expected), options
        assert 0 < expected < len(headers), options
    # Filters together: a game is counted under the first that leaves it out.
    games, dropped = kept(max_elo=2000, speed="blitz", rated_only=True)
    expected = sum(1 for h in headers if all(e is not None and e <= 2000 for e in (elo(h, "WhiteElo"), elo(h, "BlackElo")))
                   and speed(h.get("TimeControl", "?")) == "blitz" and h.get("Event", "").lower().startswith("rated "))
    assert games == expected and sum(dropped.values()) == len(headers) - expected


def test_clock_of_each_move_is_on_the_row_it_was_played_from(tmp_path):
    path = ROOT / "fixtures" / "pgn" / "lichess-2025-05-sample.pgn"
    out = tmp_path / "clocks.psdb"
    pawnstorm.import_files([path], out, threads=2)
    labels = pawnstorm.Database(out).labels()
    expected = []
    with open(path, encoding="utf-8") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            nodes = list(game.mainline())
            expected += [int(n.clock()) if n.clock() is not None else 65535 for n in nodes] + [65535]
    assert labels["clock"].tolist() == expected
    assert sum(c != 65535 for c in expected) > 20000


def test_threads_give_the_same_rows(tmp_path):
    path = ROOT / "fixtures" / "pgn" / "lichess-2025-05-sample.pgn"
    dbs = []
    for threads in (1, 2, 3):
        out = tmp_path / f"t{threads}.psdb"
        pawnstorm.import_files([path, ROOT / "fixtures" / "pgn" / "new-york-1924.pgn"], out, threads=threads)
        db = pawnstorm.Database(out)
        dbs.append((db.bitboards().tobytes(), {k: v.tolist() for k, v in db.labels().items()}))
    assert dbs[0] == dbs[1] == dbs[2]
