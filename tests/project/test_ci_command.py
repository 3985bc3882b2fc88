"""The README's test command is the one CI runs (.ci/run), and it runs every test once: the walks collect only
tests/walk/ (tests/conftest.py stops a run that finds a walk anywhere else)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _pytest_runs(text: str) -> list[str]:
    """Each `.venv/bin/python -m pytest ...` of the one line that sets up and runs the tests."""
    line = next(line for line in text.splitlines() if "pip install" in line and "-m pytest" in line)
    return [run.strip() for run in line.split("&&") if "-m pytest" in run]


def test_readme_and_ci_run_the_same_tests():
    readme = _pytest_runs((ROOT / "README.md").read_text())
    ci = _pytest_runs((ROOT / ".ci" / "run").read_text())
    assert readme == ci
    assert readme[0].endswith('-m pytest -n 3 -m "not walk"')  # everything but the walks, three workers
    assert readme[1].endswith("-m pytest -m walk tests/walk")  # the walks alone, serially


def test_every_walk_is_in_a_walk_file():
    """A `walk` mark outside tests/walk/: the walk command would not collect it, the other deselects it."""
    stray = [str(path.relative_to(ROOT)) for path in (ROOT / "tests").rglob("test_*.py")
             if path.parent.name != "walk" and re.search(r"\bmark\.walk\b", path.read_text())]
    assert not stray


def test_tests_live_in_rooms():
    """Every test file sits in a room that mirrors the package (tests/core, hf, cli, mechanism, experiments,
    app/<view>, walk, processes, project), helpers in tests/support: none is left loose in tests/."""
    loose = [path.name for path in (ROOT / "tests").glob("*.py") if path.name != "conftest.py"]
    assert not loose
