#!/usr/bin/env python3
"""Recomputes `pawnstorm eval` from a `features --kind terms` file, with numpy alone.

    python3 examples/recompute_eval.py FILE.npz [--weights WEIGHTS.txt] > scores.csv

Prints `index,score` lines (the DB row and the score, centipawns, White's point of view),
by the formula of docs/EVAL.md ("Coefficients"):

    mg, eg  = coefficients @ weights[:, 0], coefficients @ weights[:, 1]
    scale   = scale_white where eg >= 0, else scale_black
    score   = trunc((mg * phase + trunc(eg * (24 - phase) * scale / 64)) / 24)
    score   = rule_score where rule != 0 (an endgame rule decides)

`--weights` evaluates with a weights file (`name mg eg` lines, as `pawnstorm weights`
writes) over the file's own weights instead: the same formula, any weights.
"""

import argparse
import sys

import numpy as np


def trunc_div(a, b):
    """Integer division rounding toward zero, as Rust's i32 `/` does."""
    q = np.abs(a) // b
    return np.where(a < 0, -q, q)


def coefficient_sums(z, weights):
    """(mg, eg) per position, int64, from the dense or the sparse coefficients."""
    w = weights.astype(np.int64)
    if "coefficients" in z.files:
        c = z["coefficients"].astype(np.int64)
        return c @ w[:, 0], c @ w[:, 1]
    indptr, indices, values = z["indptr"], z["indices"], z["values"].astype(np.int64)
    rows = np.repeat(np.arange(len(indptr) - 1), np.diff(indptr))
    n = len(indptr) - 1
    mg = np.bincount(rows, weights=values * w[indices, 0], minlength=n)
    eg = np.bincount(rows, weights=values * w[indices, 1], minlength=n)
    # Sums of integers below 2^53 are exact in float64.
    return mg.astype(np.int64), eg.astype(np.int64)


def read_weights(path, names, defaults):
    weights = defaults.copy()
    place = {name: i for i, name in enumerate(names)}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#")[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 3 or parts[0] not in place:
                sys.exit(f"{path}:{number}: not a `name mg eg` line of a known weight: {line}")
            weights[place[parts[0]]] = (int(parts[1]), int(parts[2]))
    return weights


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--weights")
    args = parser.parse_args()
    z = np.load(args.file)
    weights = z["weights"]
    if args.weights:
        weights = read_weights(args.weights, list(z["weight_names"]), weights)
    mg, eg = coefficient_sums(z, weights)
    phase = z["phase"].astype(np.int64)
    scale = np.where(eg >= 0, z["scale_white"], z["scale_black"]).astype(np.int64)
    score = trunc_div(mg * phase + trunc_div(eg * (24 - phase) * scale, 64), 24)
    score = np.where(z["rule"] != 0, z["rule_score"], score)
    out = sys.stdout
    out.write("index,score\n")
    out.writelines(f"{i},{s}\n" for i, s in zip(z["index"].tolist(), score.tolist()))


if __name__ == "__main__":
    main()
