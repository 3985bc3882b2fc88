"""A served session's policy (tui_lab/served.py): paths stay in the session's folder, the operator's download and
pickle choices bind the page, the quota holds."""

from __future__ import annotations

import os

import pytest

from tui_lab.served import ENV, ServedPolicy


@pytest.fixture
def policy(tmp_path):
    home = tmp_path / "root" / "sessions" / "tok"
    home.mkdir(parents=True)
    return ServedPolicy(str(home), download=True, from_hf="gpt2", quota=10_000)


@pytest.mark.parametrize("text, rule", [
    ("/etc/x", "no absolute path"), ("~/x", "no absolute path or ~"), ("~root", "~"), ("../x", "no .."),
    ("runs/../../x", "no .."), ("", "give a name"),
])
def test_paths_outside_the_session_folder_are_refused(policy, text, rule):
    with pytest.raises(ValueError, match=rule) as err:
        policy.path(text, "folder")
    assert str(err.value).startswith("folder") and "\n" not in str(err.value)


def test_a_link_out_is_refused_and_names_inside_resolve_there(policy, tmp_path):
    os.symlink(tmp_path, policy.home / "out")
    with pytest.raises(ValueError, match="through a link"):
        policy.path("out/x")
    assert policy.path("runs/run-1") == policy.home / "runs" / "run-1"


def test_the_operators_choices_bind_the_page(policy):
    policy.check_download("gpt2")  # the --from-hf id, with --download
    with pytest.raises(ValueError, match="downloads only gpt2"):
        policy.check_download("distilgpt2")
    with pytest.raises(ValueError, match="--allow-pickle"):
        policy.check_download("gpt2", allow_pickle=True)
    with pytest.raises(ValueError, match="without --download"):
        ServedPolicy(policy.folder).check_download("gpt2")
    ServedPolicy(policy.folder, download=True, download_any=True, allow_pickle=True).check_download("x/y", True)


def test_the_quota_counts_the_folder(policy):
    (policy.home / "big").write_bytes(b"x" * 8000)
    policy.check_quota(1000)
    with pytest.raises(ValueError, match="quota"):
        policy.check_quota(3000)


def test_the_policy_travels_in_the_environment(policy):
    assert ServedPolicy.from_env({ENV: policy.to_env()}) == policy
    assert ServedPolicy.from_env({}) is None


def test_every_page_path_goes_through_the_policy(policy, tmp_path, monkeypatch):
    """The Train view's text file, Generate's comparison model and every export use `page_path` /
    `exports_folder`: in a terminal `~` is expanded; served, names stay in the session's folder."""
    from tui_lab.served import exports_folder, page_path

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.delenv("TUI_LAB_EXPORTS", raising=False)
    assert page_path("~/notes.txt", "text file") == tmp_path / "notes.txt"
    assert exports_folder() == tmp_path / "tui-lab" / "exports"
    monkeypatch.setenv(ENV, policy.to_env())
    assert page_path("data/notes.txt", "text file") == policy.home / "data" / "notes.txt"
    with pytest.raises(ValueError, match="^text file"):
        page_path("/etc/passwd", "text file")
    assert exports_folder() == policy.home / "exports"


def test_training_slots_one_per_core_across_sessions(tmp_path):
    from tui_lab.served import training_slot

    a = ServedPolicy(str(tmp_path / "a"), train_slots=1, root=str(tmp_path))
    b = ServedPolicy(str(tmp_path / "b"), train_slots=1, root=str(tmp_path))
    with training_slot(a):
        with pytest.raises(ValueError, match="all 1 training slots of this server are in use"):
            with training_slot(b):
                pass
    with training_slot(b):  # released when the run ended
        pass


def test_the_operators_own_model_folder_opens_in_a_served_session(policy, tmp_path, monkeypatch):
    """serve --from-hf /a/folder: the app receives an absolute folder the page could never name; it is the
    operator's, so it opens."""
    from tui_lab.app.hub_open import _served_spec

    operator = ServedPolicy(policy.folder, from_hf=str(tmp_path / "gpt2-folder"))
    assert _served_spec(operator, str(tmp_path / "gpt2-folder")) == str(tmp_path / "gpt2-folder")
    assert _served_spec(operator, "gpt2") == "gpt2"  # an id: the shared cache
    with pytest.raises(ValueError, match="model folder"):
        _served_spec(operator, str(tmp_path / "elsewhere"))


def test_an_experiments_output_folder_stays_in_the_session(tmp_path, monkeypatch):
    import pytest

    from tui_lab.served import ENV, ServedPolicy, output_folder

    home = tmp_path / "sessions" / "tok"
    home.mkdir(parents=True)
    monkeypatch.setenv(ENV, ServedPolicy(str(home)).to_env())
    assert output_folder("runs/lora", "lora-merged") == str(home.resolve() / "runs" / "lora")
    assert output_folder("", "lora-merged").startswith(str(home.resolve() / "exports" / "lora-merged-"))
    for bad in ("/tmp/x", "../x", "~/x"):
        with pytest.raises(ValueError, match="out"):
            output_folder(bad, "lora-merged")
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("HOME", str(tmp_path / "me"))
    assert output_folder("~/x", "lora-merged") == str(tmp_path / "me" / "x")  # a terminal: ~ is expanded
