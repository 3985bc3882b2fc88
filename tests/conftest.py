import os

# Tests run on shared 2-core machines: keep torch from oversubscribing them.
os.environ.setdefault("OMP_NUM_THREADS", "1")
# The app's trainer process too (it takes every core by default): its 2 OpenMP threads spin at each
# barrier, which on a 2-core runner doubled a Pilot training test's CPU time (32 s vs 18 s) for the same
# tiny steps. Tests of the thread policy set their own counts.
os.environ.setdefault("TUI_LAB_TRAIN_THREADS", "1")

import tempfile  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _private_user_folders(tmp_path_factory, monkeypatch):
    """Exports and per-machine measurements go to a temporary folder, never the person's home."""
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path_factory.mktemp("exports")))
    monkeypatch.setenv("TUI_LAB_CACHE", os.environ.get("TUI_LAB_TEST_CACHE") or _SESSION_CACHE)


_SESSION_CACHE = tempfile.mkdtemp(prefix="tui-lab-cache-")
