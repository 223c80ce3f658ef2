"""The pictures in a real browser: headless Chromium (Debian's ``chromium``, which
``scripts/install-chromium`` installs) renders a board with marks, the evaluation chart and
the report page to PNG; the pictures are not blank, each marked square shows the mark's
colour (blended over the square as drawn) at its pixels, and the report's charts all
render. Skipped, saying so, where Chromium is not installed, unless PAWNSTORM_REQUIRE_BROWSER
is set (CI), where it fails."""

import os
import shutil
import subprocess

import pytest

import pawnstorm
from conftest import required

FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4"
SQUARE, MARGIN = 45, 20
LIGHT, DARK = (0xF0, 0xD9, 0xB5), (0xB5, 0x88, 0x63)
MARK = (0xE6, 0x19, 0x4B)


def chromium() -> str:
    for name in ["chromium", "chromium-browser", "google-chrome"]:
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("PAWNSTORM_REQUIRE_BROWSER") or os.environ.get("CI", "") not in ("", "0", "false"):
        pytest.fail("Chromium is not installed (scripts/install-chromium installs it)")
    pytest.skip("Chromium is not installed (scripts/install-chromium installs it)")


def render(page, png, width, height):
    done = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars", "--force-device-scale-factor=1", f"--user-data-dir={png.parent / 'profile'}",
         f"--window-size={width},{height}", f"--screenshot={png}", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert png.exists(), done.stderr
    required("PIL")
    from PIL import Image

    image = Image.open(png).convert("RGB")
    assert len(set(image.getdata())) > 10, "a blank picture"
    return image


def close(a, b, tolerance=12):
    return all(abs(x - y) <= tolerance for x, y in zip(a, b))


def test_marked_squares_show_the_mark_colour(tmp_path):
    marks = pawnstorm.svg(FEN, masks=["white_attacks"])
    page = tmp_path / "board.svg"
    page.write_text(marks)
    image = render(page, tmp_path / "board.png", 400, 500)
    chess = required("chess")
    board = chess.Board(FEN)
    attacked = {s for s in chess.SQUARES if board.is_attacked_by(chess.WHITE, s)}
    for square in chess.SQUARES:
        file, rank = chess.square_file(square), chess.square_rank(square)
        x, y = MARGIN + file * SQUARE + 4, MARGIN + (7 - rank) * SQUARE + 4
        base = LIGHT if (file + rank) % 2 == 1 else DARK
        expected = tuple(round(0.6 * m + 0.4 * b) for m, b in zip(MARK, base)) if square in attacked else base
        assert close(image.getpixel((x, y)), expected), (chess.square_name(square), image.getpixel((x, y)), expected)
    image.save(tmp_path / "board-checked.png")


def test_the_chart_and_the_report_render(cli, fixtures, tmp_path):
    chart = tmp_path / "eval.svg"
    cli("eval", "--fen", FEN, "--svg", chart)
    image = render(chart, tmp_path / "eval.png", 960, 600)
    # The board's a1 corner at its place, and dark (White's) and light bars in the chart.
    assert close(image.getpixel((MARGIN + 2, MARGIN + 7 * SQUARE + 2)), DARK)
    chart_colours = {image.getpixel((x, y)) for x in range(480, 940, 3) for y in range(60, 400, 3)}
    assert any(close(c, (0x33, 0x33, 0x33)) for c in chart_colours)
    assert any(close(c, (0xF4, 0xF4, 0xF4), 3) for c in chart_colours)
    db = tmp_path / "games.psdb"
    cli("import", fixtures / "pgn" / "lichess-2025-05-sample.pgn", "-o", db)
    report = tmp_path / "report.html"
    cli("report", db, "-o", report)
    image = render(report, tmp_path / "report.png", 900, 3200)
    # The histograms' blue bars and the calibration's red dots are drawn.
    colours = set(image.getdata())
    assert any(close(c, (0x43, 0x63, 0xD8)) for c in colours)
    assert any(close(c, (0xE6, 0x19, 0x4B)) for c in colours)
