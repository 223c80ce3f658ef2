#!/usr/bin/env python3
"""Makes lichess-like inputs for measuring the importer (standard library only).

  lichess_like.py pgn GAMES.pgn... --positions N -o OUT.pgn
      Games of the inputs (comments dropped), repeated until about N positions, rewritten
      as lichess writes them: WhiteElo, BlackElo and TimeControl tags, and
      `{ [%eval 0.17] [%clk 0:03:00] }` after every move.

  lichess_like.py jsonl EPD --lines N -o OUT.jsonl
      lichess evaluation-database lines for the first four FEN fields of each EPD line
      (e.g. from `pawnstorm export`), cycled to N lines: 1-3 evals of different depths,
      each with 1-5 PVs of 10 UCI moves, an occasional mate.
"""

import argparse
import json
import random
import re

COMMENT = re.compile(r"\{[^}]*\}|;[^\n]*|\([^()]*\)")
MOVE_NUMBER = re.compile(r"^\d+\.+$|^\d+\.+")
RESULTS = {"1-0", "0-1", "1/2-1/2", "*"}


def games(paths):
    """(tags text, [SAN moves], result) for each game of the files."""
    for path in paths:
        text = open(path, encoding="utf-8", errors="replace").read()
        for chunk in re.split(r"\n\s*\n(?=\[)", text):
            tag_lines = [l for l in chunk.splitlines() if l.startswith("[")]
            movetext = "\n".join(l for l in chunk.splitlines() if not l.startswith("["))
            if any(l.startswith("[FEN") or l.startswith("[Variant") for l in tag_lines):
                continue
            previous = None
            while previous != movetext:
                previous, movetext = movetext, COMMENT.sub(" ", movetext)
            tokens = []
            result = "*"
            for token in movetext.split():
                token = MOVE_NUMBER.sub("", token)
                if not token or token.startswith("$") or "{" in token or "}" in token:
                    continue
                if token in RESULTS:
                    result = token
                    break
                tokens.append(token.rstrip("!?"))
            if tokens:
                yield tokens, result


def lichess_pgn(args):
    rng = random.Random(1)
    source = list(games(args.inputs))
    out = open(args.output, "w")
    positions = 0
    n = 0
    while positions < args.positions:
        moves, result = source[n % len(source)]
        n += 1
        base, increment = rng.choice([(60, 0), (180, 2), (300, 3), (600, 5), (900, 10)])
        out.write(
            f'[Event "Rated Blitz game"]\n[Site "https://lichess.org/{n:08d}"]\n'
            f'[Date "2025.05.01"]\n[Round "-"]\n[White "w{n}"]\n[Black "b{n}"]\n'
            f'[Result "{result}"]\n[WhiteElo "{rng.randint(800, 2800)}"]\n'
            f'[BlackElo "{rng.randint(800, 2800)}"]\n[TimeControl "{base}+{increment}"]\n'
            f'[Termination "Normal"]\n\n'
        )
        parts = []
        clock = base
        for ply, san in enumerate(moves):
            number = f"{ply // 2 + 1}." if ply % 2 == 0 else f"{ply // 2 + 1}..."
            if rng.random() < 0.02:
                evaluation = f"#{rng.choice([-1, 1]) * rng.randint(1, 9)}"
            else:
                evaluation = f"{rng.gauss(0, 2):.2f}"
            clock = max(0, clock - rng.randint(0, 5) + increment)
            parts.append(
                f"{number} {san} {{ [%eval {evaluation}] "
                f"[%clk {clock // 3600}:{clock // 60 % 60:02d}:{clock % 60:02d}] }}"
            )
        out.write(" ".join(parts) + f" {result}\n\n")
        positions += len(moves) + 1
    print(f"{n} games, {positions} positions -> {args.output}")


def lichess_jsonl(args):
    rng = random.Random(2)
    fens = []
    for line in open(args.epd):
        fields = line.split()
        if len(fields) >= 4:
            fens.append(" ".join(fields[:4]))
    squares = [f + r for f in "abcdefgh" for r in "12345678"]
    out = open(args.output, "w")
    for i in range(args.lines):
        fen = fens[i % len(fens)]
        evals = []
        for k in range(rng.randint(1, 3)):
            pvs = []
            for _ in range(rng.randint(1, 5)):
                line = " ".join(rng.choice(squares) + rng.choice(squares) for _ in range(10))
                if rng.random() < 0.03:
                    pvs.append({"mate": rng.choice([-1, 1]) * rng.randint(1, 20), "line": line})
                else:
                    pvs.append({"cp": int(rng.gauss(0, 150)), "line": line})
            evals.append(
                {"pvs": pvs, "knodes": rng.randint(1000, 500000), "depth": rng.randint(20, 60)}
            )
        out.write(json.dumps({"fen": fen, "evals": evals}, separators=(",", ":")) + "\n")
    print(f"{args.lines} lines -> {args.output}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="kind", required=True)
    pgn = sub.add_parser("pgn")
    pgn.add_argument("inputs", nargs="+")
    pgn.add_argument("--positions", type=int, default=500_000)
    pgn.add_argument("-o", "--output", required=True)
    jsonl = sub.add_parser("jsonl")
    jsonl.add_argument("epd")
    jsonl.add_argument("--lines", type=int, default=1_000_000)
    jsonl.add_argument("-o", "--output", required=True)
    args = parser.parse_args()
    {"pgn": lichess_pgn, "jsonl": lichess_jsonl}[args.kind](args)


if __name__ == "__main__":
    main()
