"""Runs several `tui-lab` commands in one process (torch imported once), for tests/cli/test_cli_widths.py.

`python cli_widths_driver.py CASES.json [JSON_OUT]`: CASES.json maps a case name to its argv. Each command's
human output goes to this process's terminal after a marker line `@@ NAME`; with JSON_OUT, each command runs
again with `--json` (stdout captured) and the outputs are written there as one JSON object (case -> text).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys

from tui_lab.cli import main

MARK = "@@ "


def run_all(cases: dict[str, list[str]], json_out: str | None) -> None:
    answers: dict[str, str] = {}
    for name, argv in cases.items():
        print(f"{MARK}{name}", flush=True)
        code = main(argv)
        print(f"{MARK}{name} exit {code}", flush=True)
        if json_out:
            captured = io.StringIO()
            with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(io.StringIO()):
                main([*argv, "--json"])
            answers[name] = captured.getvalue()
    if json_out:
        with open(json_out, "w", encoding="utf-8") as out:
            json.dump(answers, out)
    print(f"{MARK}end", flush=True)


if __name__ == "__main__":
    run_all(json.loads(open(sys.argv[1], encoding="utf-8").read()), sys.argv[2] if len(sys.argv) > 2 else None)
