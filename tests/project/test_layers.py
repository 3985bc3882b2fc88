"""The two layers: the core never imports textual or rich, and the app never imports the CLI.

`tui_lab/cli` and `tui_lab/app` are two faces over the core, side by side; neither imports the other
(the CLI's launcher starts the app, which is the one exception the other way round).
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "tui_lab"
FACES = ("app", "cli")


def modules(under: Path) -> list[str]:
    """Dotted names of every module in `under` (a folder of the package)."""
    root = PACKAGE.parent
    names = []
    for path in sorted(under.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


def in_a_face(name: str) -> bool:
    return name.split(".")[1:2] in ([face] for face in FACES)


def core_modules() -> list[str]:
    return [m for m in modules(PACKAGE) if not in_a_face(m)]


def imported_names(path: Path) -> set[str]:
    """Every module an import statement in `path` names, at any depth (lazy imports in functions too)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def test_the_app_never_imports_the_cli():
    offenders = {}
    for path in sorted((PACKAGE / "app").rglob("*.py")):
        cli = sorted(n for n in imported_names(path) if n == "tui_lab.cli" or n.startswith("tui_lab.cli."))
        if cli:
            offenders[str(path.relative_to(PACKAGE.parent))] = cli
    assert offenders == {}


def test_the_scan_sees_lazy_imports(tmp_path):
    sample = tmp_path / "m.py"
    sample.write_text("def f():\n    from tui_lab.cli.generate import x\n")
    assert "tui_lab.cli.generate" in imported_names(sample)


def test_every_core_module_imports_without_textual_or_rich():
    names = core_modules()
    assert {"tui_lab.loading", "tui_lab.devices", "tui_lab.generation.session", "tui_lab.train.trainer"} <= set(names)
    assert not [n for n in names if in_a_face(n)] and in_a_face("tui_lab.app.app") and in_a_face("tui_lab.cli")
    # One fresh interpreter imports them one by one and names the first module that pulled a UI library in.
    code = (
        "import importlib, json, sys\n"
        "culprits = {}\n"
        f"for name in {names!r}:\n"
        "    importlib.import_module(name)\n"
        "    for ui in ('textual', 'rich'):\n"
        "        if ui in sys.modules and ui not in culprits:\n"
        "            culprits[ui] = name\n"
        "print(json.dumps(culprits))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=PACKAGE.parent)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {}


def test_the_import_contracts_hold():
    """pyproject.toml's import-linter contracts: the faces side by side, the core's layers, no Textual in the
    core, no torch in what a person lists and edits, the app's own layers, no view importing the App, the views
    independent, no cycles between siblings (imports inside functions count)."""
    root = Path(__file__).resolve().parents[2]
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or shutil.which("lint-imports")
    assert exe, "import-linter is in the test extra"
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([exe, "--no-cache"], cwd=root, capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_module_of_the_package_has_its_place_in_the_layers():
    """A new module is placed in the contracts (pyproject.toml) or lint-imports would never look at it."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    faces, core = (c for c in contracts if c["type"] == "layers" and c["containers"] == ["tui_lab"])
    placed = {name.strip() for layer in faces["layers"] + core["layers"] for name in layer.replace("|", ":").split(":")}
    modules = {p.stem for p in (root / "tui_lab").iterdir()
               if (p.suffix == ".py" or (p / "__init__.py").exists()) and not p.name.startswith("__")}
    assert modules - placed == set(), "place these in pyproject.toml's import contracts"
    no_textual = next(c for c in contracts if c["type"] == "forbidden")["source_modules"]
    assert {f"tui_lab.{m}" for m in modules - {"app", "cli"}} == set(no_textual)


def test_every_part_of_the_app_has_its_place_in_the_app_layers():
    """The app's own layers (the App over the views over the modals over the widgets) name each of its packages,
    so a new one is placed or the test says where it is missing."""
    import tomllib

    root = Path(__file__).resolve().parents[2]
    contracts = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    app_layers = next(c for c in contracts if c["type"] == "layers" and c["containers"] == ["tui_lab.app"])
    placed = {name.strip() for layer in app_layers["layers"] for name in layer.replace("|", ":").split(":")}
    packages = {p.name for p in (root / "tui_lab" / "app").iterdir() if (p / "__init__.py").exists()}
    assert packages | {"app"} <= placed
