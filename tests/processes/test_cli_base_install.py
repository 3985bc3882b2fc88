"""The base install (pyproject's dependencies, no extras) trains, saves and generates.

A fresh `pip install .` once lacked numpy: torch warned `Failed to initialize NumPy` at every import and
saving died with `RuntimeError: Numpy is not available` (safetensors' torch writer and `Tensor.numpy()`
need it). The test extra pulls numpy in through transformers, so a test run in the dev venv never saw it.
Here a subprocess may import only what the base dependencies bring (their closure, from the installed
metadata); everything else installed in this venv (transformers, pytest, hypothesis...) is hidden from it.
`.ci/run` does the same for real, in a fresh venv with `pip install .`.
"""

from __future__ import annotations

import importlib.metadata as md
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
BAD_STDERR = ("Traceback", "Failed to initialize NumPy", "Warning", "warning")

# None in sys.modules: `import x` raises ModuleNotFoundError and `importlib.util.find_spec(x)` is None, as
# when x is not installed (torch probes optional modules with find_spec at import).
HIDE = """
import sys
sys.modules.update(dict.fromkeys(HIDDEN))
from tui_lab.cli import main
out = sys.argv[1]
code = main(["train", "--task", "numbers-de", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
             "--batch-size", "8", "--steps", "2", "--set", "eval_examples=8", "--device", "cpu", "--json",
             "--out", out])
assert code == 0, f"train exited {code}"
code = main(["generate", "--checkpoint", out, "--prompt", "three", "--temperature", "0", "--json"])
assert code == 0, f"generate exited {code}"
"""


def _name(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def base_closure() -> set[str]:
    """The distributions `pip install .` brings: pyproject's dependencies and theirs, no extras."""
    pending = [Requirement(r) for r in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]]
    seen: set[str] = set()
    while pending:
        req = pending.pop()
        if _name(req.name) in seen or (req.marker and not req.marker.evaluate({"extra": ""})):
            continue
        seen.add(_name(req.name))
        try:
            pending += [Requirement(r) for r in md.distribution(req.name).requires or []]
        except md.PackageNotFoundError:
            pass  # an optional platform dependency not installed here
    return seen


def hidden_modules(allowed: set[str]) -> set[str]:
    """Top-level modules of installed distributions outside `allowed` (never the stdlib or tui_lab)."""
    hidden = set()
    for module, dists in md.packages_distributions().items():
        if not any(_name(d) in allowed for d in dists) and module not in sys.stdlib_module_names:
            hidden.add(module)
    return hidden - {"tui_lab"}


def test_base_dependencies_include_what_the_core_needs():
    closure = base_closure()
    assert {"torch", "numpy", "safetensors", "tokenizers", "textual"} <= closure
    assert "peft" in closure and "pytest" not in closure  # the test extra stays out
    # transformers is in the closure now: peft (the lora experiment's adapters) requires it


def test_train_save_generate_with_only_the_base_dependencies(tmp_path):
    hidden = hidden_modules(base_closure())
    # the check is real (hypothesis, of the test extra; transformers came into the base with peft)
    assert "hypothesis" in hidden or "hypothesis" not in md.packages_distributions()
    script = f"HIDDEN = {sorted(hidden)!r}\n{HIDE}"
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "run")], capture_output=True, text=True,
                            timeout=240, cwd=tmp_path, env=_env())
    assert result.returncode == 0, result.stderr[-3000:]
    found = [bad for bad in BAD_STDERR if bad in result.stderr]
    assert not found, result.stderr[-3000:]
    assert (tmp_path / "run" / "model.safetensors").is_file() and '"event": "done"' in result.stdout


def _env() -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT)  # this checkout, run from a folder outside it
    return env


def test_every_third_party_import_of_the_package_is_a_base_dependency():
    """Static half of the check: an import the smoke above does not reach (another view, another command)
    must still come from the base install, not from the test extra."""
    import ast

    allowed, owners = base_closure(), md.packages_distributions()
    missing = {}
    for path in (ROOT / "tui_lab").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
            for name in names:
                top = name.partition(".")[0]
                if top in sys.stdlib_module_names or top == "tui_lab" or top == "__future__":
                    continue
                if not any(_name(d) in allowed for d in owners.get(top, [])):
                    missing.setdefault(top, []).append(str(path.relative_to(ROOT)))
    assert not missing, missing
