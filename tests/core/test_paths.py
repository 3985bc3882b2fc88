from pathlib import Path

from tui_lab.paths import cache_dir, exports_dir


def test_exports_go_to_the_chosen_folder_not_the_current_one(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUI_LAB_EXPORTS", str(tmp_path / "mine"))
    assert exports_dir() == tmp_path / "mine" and (tmp_path / "mine").is_dir()
    monkeypatch.delenv("TUI_LAB_EXPORTS")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert exports_dir() == tmp_path / "home" / "tui-lab" / "exports"
    assert not list(Path.cwd().glob("tui-lab-*"))


def test_cache_dir_follows_xdg_then_home(tmp_path, monkeypatch):
    monkeypatch.delenv("TUI_LAB_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tui-lab"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_dir() == tmp_path / "home" / ".cache" / "tui-lab"
    monkeypatch.setenv("TUI_LAB_CACHE", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"


def test_kept_measurements_share_one_file_helper(tmp_path, monkeypatch):
    from tui_lab.paths import keep, read_kept

    monkeypatch.setenv("TUI_LAB_CACHE", str(tmp_path))
    assert read_kept("m.json") == {}
    keep("m.json", "a", {"flops": 1.0})
    keep("m.json", "b", {"threads": 2})
    kept = read_kept("m.json")
    assert kept["a"]["flops"] == 1.0 and kept["b"]["threads"] == 2 and "measured" in kept["b"]
    (tmp_path / "m.json").write_text("{not json")
    assert read_kept("m.json") == {}  # unreadable: measured again, then rewritten whole
    keep("m.json", "c", {"x": 1})
    assert list(read_kept("m.json")) == ["c"]
