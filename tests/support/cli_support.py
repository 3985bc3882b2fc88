"""`tui-lab ARGS` run in the test's own process (no tests here).

For tests about what a command prints, not about the process: a subprocess imports torch (and
transformers, for a Hugging Face folder) again, ~3-4 s CPU per run. The CLI's help, its base install and
its pipe handling keep real subprocesses (tests/cli/test_cli_help.py, test_cli_base_install.py, test_cli_info.py).
"""

from __future__ import annotations

import subprocess

from tui_lab.cli import main


def run_cli(capsys, *args: str) -> subprocess.CompletedProcess:
    """Exit code, stdout and stderr of `main(args)`, shaped like `subprocess.run`'s answer."""
    capsys.readouterr()  # what the test printed before is not the command's
    code = main(list(args))
    out = capsys.readouterr()
    return subprocess.CompletedProcess(["tui-lab", *args], code, out.out, out.err)
