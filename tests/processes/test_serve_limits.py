"""What `tui-lab serve` bounds for each page (issue 37), checked without starting a server: the terminal size, the
tokens it issues, each app's memory, the disk the sessions' folders share, and the reason a page is given."""

from __future__ import annotations

import signal
import socket

import pytest

from tui_lab.cli import main
from tui_lab.cli.serve import session_memory
from tui_lab.cli.serve_access import MAX_HEIGHT, MAX_WIDTH, Tokens, terminal_size
from tui_lab.cli.serve_ending import ended_reason
from tui_lab.served import ENV, ServedPolicy, check_room


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("asked, given", [
    ((30000, 30000), (MAX_WIDTH, MAX_HEIGHT)), ((80, 24), (80, 24)), (("120", "40"), (120, 40)),
    ((None, None), (80, 24)), (("wide", "tall"), (80, 24)), ((-5, 0), (1, 1)), ((10**30, 3), (MAX_WIDTH, 3)),
])
def test_a_page_asks_for_a_terminal_size_and_gets_at_most_500x200(asked, given):
    assert terminal_size(*asked) == given
    assert (MAX_WIDTH, MAX_HEIGHT) == (500, 200)


def test_tokens_are_the_servers_own_and_survive_a_restart(tmp_path):
    tokens = Tokens(tmp_path)
    token = tokens.issue()
    assert len(token) == 32 and tokens.valid(token) and Tokens(tmp_path).valid(token)  # the key stays in the root
    assert (tmp_path / ".session-key").stat().st_mode & 0o777 == 0o600
    assert not tokens.valid("a" * 16) and not tokens.valid("a" * 32)
    assert not tokens.valid(token[:-1] + ("A" if token[-1] != "A" else "B"))
    (tmp_path / "elsewhere").mkdir()
    assert not Tokens(tmp_path / "elsewhere").valid(token)  # another server (its own key) does not take it


def test_the_reason_an_app_ended_is_one_line():
    memory = 512 * 1024**2
    oom = b"Traceback (most recent call last):\n  File ...\nMemoryError\n"
    assert ended_reason(0, oom, memory) is None  # it quit cleanly: nothing to say
    said = ended_reason(1, oom, memory)
    assert "memory limit (512.0 MiB, serve --session-memory-mb)" in said and "\n" not in said
    said = ended_reason(1, b"Traceback (most recent call last):\nValueError: something else\n", memory)
    assert "exit 1" in said and "ValueError: something else" in said and "memory" not in said
    assert "exit -9" in ended_reason(-signal.SIGKILL, b"", memory) and "\n" not in ended_reason(1, b"a\nb\n", 0)


def test_each_sessions_memory_is_its_share_of_free_memory_at_least_1_gib():
    gib = 1024**3
    assert session_memory(None, free=16 * gib, sessions=4) == 4 * gib
    assert session_memory(None, free=2 * gib, sessions=8) == gib  # the floor: an app needs ~0.4 GB to work
    assert session_memory(None, free=None, sessions=2) == gib
    assert session_memory(300, free=16 * gib, sessions=1) == 300 * 1024**2  # the operator's choice


@pytest.mark.parametrize("flags, needle", [
    (["--session-memory-mb", "10"], "--session-memory-mb (10)"),
    (["--total-quota-mb", "10", "--quota-mb", "20"], "--total-quota-mb (10) must be at least --quota-mb (20)"),
])
def test_bad_limits_are_one_line(flags, needle, capsys):
    assert main(["serve", "--port", str(free_port()), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1


def test_a_write_checks_the_session_and_the_servers_share(tmp_path, monkeypatch):
    sessions = tmp_path / "sessions"
    mine, other = sessions / "mine", sessions / "other"
    mine.mkdir(parents=True)
    other.mkdir()
    (other / "runs").write_bytes(b"x" * 9000)
    policy = ServedPolicy(str(mine), quota=5000, root=str(tmp_path), total_quota=10_000)
    policy.check_quota(900)  # 900 of 5000 here, 9900 of 10000 together
    with pytest.raises(ValueError, match=r"sessions' folders on this server hold .* \(serve --total-quota-mb\)"):
        policy.check_quota(1200)  # fits this session's quota, not the server's
    monkeypatch.setenv(ENV, policy.to_env())
    with pytest.raises(ValueError, match="the export needs about"):
        check_room(2000, "the export")
    monkeypatch.delenv(ENV)
    check_room(10**12, "the export")  # a terminal app writes where it is told


def test_the_attention_export_goes_to_the_sessions_folder_within_its_quota(tmp_path, monkeypatch):
    """The Attention view's `e` wrote to the server's own exports folder, outside every quota: a served session's
    export lands in its own exports/, and is refused in one line when its folder is full."""
    from tui_lab.app.grids import GridSpec
    from tui_lab.app.views.attention.draw import export_grid

    home = tmp_path / "sessions" / "tok"
    home.mkdir(parents=True)
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path / "server-exports"))
    spec = GridSpec("causal", [[1.0, float("nan")], [0.5, 0.5]], ["a", "b"], ["a", "b"])
    monkeypatch.setenv(ENV, ServedPolicy(str(home), quota=10_000, root=str(tmp_path)).to_env())
    path = export_grid(spec, "causal")
    assert path.parent == home.resolve() / "exports" and not (tmp_path / "server-exports").exists()
    (home / "full").write_bytes(b"x" * 10_000)
    with pytest.raises(ValueError, match="the export needs about .* quota"):
        export_grid(spec, "causal")
