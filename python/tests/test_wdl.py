"""The win-draw-loss constants in src/eval/wdl.rs come out of scripts/fit-wdl.py run on the data
committed beside them (fixtures/wdl/selfplay-sample.csv.gz): refitted here, the model's
a(m) and b(m) curves must match the Rust constants at every material count the model uses."""

import re
import subprocess
import sys

from conftest import ROOT, required

np = required("numpy")
required("scipy")

MATERIAL_MIN, MATERIAL_MAX, MATERIAL_SCALE = 17, 78, 58.0


def cubic(c, m):
    return ((c[0] * m + c[1]) * m + c[2]) * m + c[3]


def constants(text, name):
    match = re.search(rf"{name}: \[f64; 4\] = \[([^\]]+)\];", text)
    assert match, f"no {name} in {text[:200]!r}"
    return [float(v) for v in match.group(1).split(",")]


def test_the_fit_reproduces_the_rust_constants():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fit-wdl.py"), str(ROOT / "fixtures" / "wdl" / "selfplay-sample.csv.gz")],
        capture_output=True, text=True, check=True,
    )
    fitted_a, fitted_b = constants(done.stdout, "WDL_A"), constants(done.stdout, "WDL_B")
    rust = (ROOT / "src" / "eval" / "wdl.rs").read_text()
    rust_a, rust_b = constants(rust, "const A"), constants(rust, "const B")
    for material in range(MATERIAL_MIN, MATERIAL_MAX + 1):
        m = material / MATERIAL_SCALE
        # The printed constants have three decimals: the curves agree to well under a cp.
        assert abs(cubic(fitted_a, m) - cubic(rust_a, m)) < 0.5, (material, fitted_a, rust_a)
        assert abs(cubic(fitted_b, m) - cubic(rust_b, m)) < 0.5, (material, fitted_b, rust_b)
    assert "with material: 0.7226" in done.stdout, done.stdout


def test_the_fit_refuses_a_table_it_cannot_read(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("score,material,result\n12,40,1\n12,forty,1\n")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fit-wdl.py"), str(bad)], capture_output=True, text=True,
    )
    assert done.returncode != 0
    assert f"{bad}:3: cannot read '12,forty,1'" in done.stderr, done.stderr
