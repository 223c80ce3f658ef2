"""The README's Python snippets and its `$ python ...` commands, run as shown, against the
installed package (docs/TESTING.md, "The README's commands"). tests/readme.rs runs the
README's `pawnstorm` commands and UCI sessions and checks what they print; here they are
run again only to make the files the snippets and commands read.

The README's commands run in a directory laid out as the repository's root is (its
`fixtures/`, `data/` and `examples/` linked, `target/` empty), so that their relative paths
hold and nothing is written into the checkout."""

import re
import shlex
import subprocess
import sys

import pytest
from conftest import ROOT, required


def readme_blocks() -> list[tuple[str, list[str]]]:
    """The README's fenced blocks: (info string, lines)."""
    blocks, lang, lines = [], None, []
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("```"):
            if lang is None:
                lang, lines = line[3:].strip(), []
            else:
                blocks.append((lang, lines))
                lang = None
        elif lang is not None:
            lines.append(line)
    assert lang is None, "README: a code block is never closed"
    return blocks


def console_commands(program: str) -> list[tuple[str, list[str]]]:
    """The `$ PROGRAM ...` commands of the README's console blocks, without the `$ `, in
    order, each with the output lines shown after it."""
    commands = []
    for lang, lines in readme_blocks():
        if lang != "console":
            continue
        current = None
        for line in lines:
            if line.startswith("$ "):
                current = (line[2:], []) if line.startswith(f"$ {program} ") else None
                if current:
                    commands.append(current)
            elif current:
                current[1].append(line)
    return commands


SIMD_WORDS = {"avx512", "avx2", "sse4", "scalar", "portable", "neon"}


def shape(line: str) -> str:
    """A line as tests/readme.rs compares it: parenthesised remarks left out, every word with
    a digit, every SIMD level name and every bar of `#` as one `#`, runs of them as one."""
    words = []
    for word in re.sub(r"\([^()]*\)", "", line).split():
        if re.search(r"[0-9]", word) or set(word) == {"#"} or word.strip(",;:.") in SIMD_WORDS:
            word = "#"
        if not (word == "#" and words and words[-1] == "#"):
            words.append(word)
    return " ".join(words)


@pytest.fixture(scope="module")
def readme_dir(tmp_path_factory, pawnstorm_bin):
    """The directory the README's commands run in, after every `$ pawnstorm ...` command of
    the README has run there (the snippets read their outputs)."""
    root = tmp_path_factory.mktemp("readme")
    for name in ("fixtures", "data", "examples"):
        (root / name).symlink_to(ROOT / name)
    (root / "target").mkdir()
    commands = console_commands("pawnstorm")
    assert commands, "README: no `$ pawnstorm ...` command"
    for command, _ in commands:
        done = subprocess.run([str(pawnstorm_bin), *shlex.split(command)[1:]], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0, f"README: `{command}` failed:\n{done.stderr}"
    return root


def test_the_python_snippets_run(readme_dir):
    snippets = ["\n".join(lines) for lang, lines in readme_blocks() if lang == "python"]
    assert snippets, "README: no python block"
    for code in snippets:
        done = subprocess.run([sys.executable, "-c", code], cwd=readme_dir, capture_output=True, text=True)
        assert done.returncode == 0, f"README snippet failed:\n{code}\n{done.stderr}"


def test_the_python_commands_run_and_print_what_is_shown(readme_dir):
    # The README's Ray command: examples/ray_eval.py on a local instance. That the shards'
    # scores are `pawnstorm eval`'s is test_ray_eval.py's part; here, that the command runs
    # as shown and prints what the README shows (in shape, as tests/readme.rs compares).
    required("ray")
    commands = console_commands("python")
    assert commands, "README: no `$ python ...` command"
    for command, shown in commands:
        done = subprocess.run([sys.executable, *shlex.split(command)[1:]], cwd=readme_dir, capture_output=True, text=True)
        assert done.returncode == 0, f"README: `{command}` failed:\n{done.stderr}"
        printed = [shape(line) for line in (done.stdout + done.stderr).splitlines()]
        for line in shown:
            if line.strip() != "...":
                assert shape(line) in printed, f"README: `{command}` does not print (in shape)\n  {line}\nIt printed:\n  " + "\n  ".join(printed)
        if "examples/ray_eval.py" in command:
            assert len(list((readme_dir / "target" / "shard-scores").glob("shard-*.npy"))) == 4
