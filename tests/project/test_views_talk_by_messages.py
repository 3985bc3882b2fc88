"""A view never looks at another view (issue 35): it learns what another is doing from a message the App passes on
to every view (view_contract.py's `TrainingNews`), and opens another through the App (`show_view` with an
`Opening`). The import contracts cannot see a look-up by string (the App imports the views by name), so this scan
reads the views' source: no call that fetches a view (`mounted_view`, `view`, `views`, `with_view`), and no
selector naming a widget id only another view defines.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

VIEWS = Path(__file__).resolve().parents[2] / "tui_lab" / "app" / "views"
LOOKUPS = {"mounted_view", "view", "views", "with_view"}  # the App's ways to a view
ID = re.compile(r"""\bid\s*=\s*["']([\w-]+)["']""")
SELECTOR_ID = re.compile(r"#([\w-]+)")


def view_lookups(source: str, where: str) -> list[str]:
    """`where:line` for each call of a view look-up on anything (`self.app.view(...)`, `app.with_view(...)`)."""
    return [f"{where}:{node.lineno}" for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute) and node.func.attr in LOOKUPS]


def selector_ids(source: str) -> set[str]:
    """Ids named by `#...` in the string literals of `source` (f-strings' literal parts too)."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.update(SELECTOR_ID.findall(node.value))
    return found


def packages() -> dict[str, list[Path]]:
    return {p.name: sorted(p.rglob("*.py")) for p in sorted(VIEWS.iterdir()) if (p / "__init__.py").exists()}


def test_no_view_fetches_another_view():
    found = [hit for files in packages().values() for path in files
             for hit in view_lookups(path.read_text(encoding="utf-8"), path.relative_to(VIEWS).as_posix())]
    assert found == [], "a view hears of another by a message, and opens it through the App's show_view"


def test_no_view_queries_an_id_only_another_view_defines():
    files = packages()
    defined = {name: {i for path in paths for i in ID.findall(path.read_text(encoding="utf-8"))}
               for name, paths in files.items()}
    offenders = {}
    for name, paths in files.items():
        others = set().union(*(ids for other, ids in defined.items() if other != name)) - defined[name]
        for path in paths:
            used = selector_ids(path.read_text(encoding="utf-8")) & others
            if used:
                offenders[path.relative_to(VIEWS).as_posix()] = sorted(used)
    assert offenders == {}


def test_the_scans_see_what_the_speed_view_and_the_tour_once_did():
    speed = 'training = getattr(self.app.mounted_view("train"), "training", False)\n'
    tour = 'app.with_view("attention", cb)\napp.view("architecture").show_tab(tab)\nwidget.query_one("#att-src")\n'
    assert view_lookups(speed, "speed") == ["speed:1"]
    assert view_lookups(tour, "tour") == ["tour:1", "tour:2"]
    assert selector_ids(tour) == {"att-src"}
    assert view_lookups("self.query_one(TrainForm).view_activated()\n", "ok") == []


APP = VIEWS.parent


def test_every_view_is_a_lab_view_and_the_app_asks_no_hook_by_name():
    """The App asks a view only what view_contract.LabView declares: each of the App's views is one (JobView is a
    LabView), and the App and its parts look up nothing by name (a module's class, imported by name, excepted)."""
    specs = re.findall(r'ViewSpec\("(\w+)", "[^"]*", "([\w.]+):(\w+)"\)', (APP / "app.py").read_text(encoding="utf-8"))
    assert len(specs) == 7
    for view_id, module, name in specs:
        tree = ast.parse((APP.parent.parent / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8"))
        cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)
        assert [b.id for b in cls.bases if isinstance(b, ast.Name)] in (["LabView"], ["JobView"]), view_id
    by_name = []
    for path in [APP / "app.py", *sorted((APP / "shell").glob("*.py")), *sorted((APP / "live").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                    node.func.id in ("getattr", "hasattr") and not isinstance(node.args[0], ast.Call):
                by_name.append(f"{path.relative_to(APP).as_posix()}:{node.lineno}")
    assert by_name == []
