import json
import shutil
import subprocess
import sys

import pytest
import torch
from train_helpers import lm_config, small_lm_data, tiny_lm

import tui_lab.checkpoint.save as checkpoint_module  # the writing module, patched below
from tui_lab.checkpoint import load_checkpoint, save_checkpoint
from tui_lab.data import char_tokenizer
from tui_lab.model import build_model
from tui_lab.train import StepEvent, Trainer

PEAK = 1e11


def test_round_trip_keeps_weights_tokenizer_and_config(tmp_path):
    config = tiny_lm(vocab=20)
    model = build_model(config)
    tokenizer = char_tokenizer("abcdefghijklmnop")
    save_checkpoint(tmp_path / "ck", model, tokenizer, meta={"note": "x"})
    names = {p.name for p in (tmp_path / "ck").iterdir()}
    assert names == {"config.json", "model.safetensors", "tokenizer", "meta.json"}
    assert not list(tmp_path.glob(".*"))  # no temporary folder left behind
    ck = load_checkpoint(tmp_path / "ck")
    assert ck.config == config and ck.meta == {"note": "x"} and ck.train_state is None
    assert ck.tokenizer.encode("abc") == tokenizer.encode("abc")
    for (name, a), b in zip(model.state_dict().items(), ck.model.state_dict().values(), strict=True):
        assert torch.equal(a, b), name
    assert ck.model.lm_head.weight is ck.model.tok_embed.weight  # still tied


def test_no_pickle_anywhere(tmp_path):
    trainer = Trainer(tiny_lm(), lm_config(steps=2), data=small_lm_data(), peak_flops=PEAK)
    trainer.run()
    trainer.save(tmp_path / "ck")
    files = sorted(p.name for p in (tmp_path / "ck").rglob("*") if p.is_file())
    assert all(name.endswith((".json", ".safetensors")) for name in files), files
    state = json.loads((tmp_path / "ck" / "train_state.json").read_text())
    assert state["step"] == 2 and state["scheduler"]["name"] == "cosine" and {"cpu", "data"} <= set(state["rng"])


def test_a_crash_mid_write_leaves_the_previous_checkpoint_intact(tmp_path, monkeypatch):
    folder = tmp_path / "ck"
    tokenizer = char_tokenizer("abcdefghijklmnop")
    first = build_model(tiny_lm(vocab=20))
    save_checkpoint(folder, first, tokenizer, meta={"version": 1})

    def crash(*args, **kwargs):
        raise OSError("disk full")  # after config.json, model and tokenizer were written to the temp folder

    monkeypatch.setattr(checkpoint_module, "_write_json", _crash_on_meta(checkpoint_module._write_json, crash))
    second = build_model(tiny_lm(vocab=20, d_ff=128))
    with pytest.raises(checkpoint_module.SaveError, match="disk full"):  # one line naming the folder
        save_checkpoint(folder, second, tokenizer, meta={"version": 2})
    ck = load_checkpoint(folder)
    assert ck.meta == {"version": 1} and ck.config.d_ff == 64
    assert torch.equal(ck.model.tok_embed.weight, first.tok_embed.weight)


def _crash_on_meta(write, crash):
    def patched(path, data):
        if path.name == "meta.json":
            crash()
        write(path, data)

    return patched


def test_a_folder_that_is_not_a_checkpoint_is_a_one_line_error(tmp_path):
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ValueError, match="not a checkpoint: it lacks model.safetensors, tokenizer"):
        load_checkpoint(tmp_path)
    with pytest.raises(ValueError, match="does not exist"):
        load_checkpoint(tmp_path / "nope")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not a checkpoint"):
        save_checkpoint(tmp_path / "other", build_model(tiny_lm()), char_tokenizer("ab"))


def test_loading_a_checkpoint_leaves_torch_dynamo_unimported(tmp_path):
    """The weights are checked against config.json on the meta device; torch draws random values into meta
    tensors through a kernel whose first call imports torch._dynamo (~1 s of CPU in each process that loads a
    checkpoint: every app launch). A fresh process, as a launch is."""
    save_checkpoint(tmp_path / "c", build_model(tiny_lm()), char_tokenizer("ab"))
    code = ("import sys; from tui_lab.checkpoint import load_checkpoint; "
            f"load_checkpoint({str(tmp_path / 'c')!r}); print('torch._dynamo' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False"]


def test_resume_continues_the_same_run_50_plus_50_equals_100(tmp_path):
    """Dropout on, so the RNG state has to come back too, not just weights and optimizer."""
    config = lm_config(steps=100, eval_every=0, seed=7, schedule="cosine", warmup=10)
    model_config = tiny_lm(dropout=0.2)
    straight = []
    whole = Trainer(model_config, config, on_event=_steps(straight), data=small_lm_data(), peak_flops=PEAK)
    whole.run()

    first, second = [], []
    half = Trainer(model_config, config, on_event=_steps(first), data=small_lm_data(), peak_flops=PEAK)
    for _ in range(50):
        half.step()
    half.save(tmp_path / "ck")
    resumed = Trainer.from_checkpoint(tmp_path / "ck", on_event=_steps(second), data=small_lm_data())
    assert resumed.step_count == 50
    resumed.run()
    assert len(second) == 50
    assert first + second == pytest.approx(straight, rel=1e-5, abs=1e-6)
    for (name, a), b in zip(whole.model.state_dict().items(), resumed.model.state_dict().values(), strict=True):
        assert torch.allclose(a, b, atol=1e-6), name


def test_resume_needs_training_state(tmp_path):
    save_checkpoint(tmp_path / "ck", build_model(tiny_lm(vocab=20)), char_tokenizer("abcdefghijklmnop"))
    with pytest.raises(ValueError, match="cannot be resumed"):
        Trainer.from_checkpoint(tmp_path / "ck")


def _steps(into: list):
    return lambda e: into.append(e.train_loss) if isinstance(e, StepEvent) else None


# -- corrupt checkpoints: refused with one line naming the file, before anything big is allocated ------
@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """A resumable checkpoint (weights, tokenizer, optimizer, train state), written once per module."""
    folder = tmp_path_factory.mktemp("pristine") / "ck"
    trainer = Trainer(tiny_lm(), lm_config(steps=2, eval_every=0), data=small_lm_data(), peak_flops=PEAK)
    trainer.run()
    trainer.save(folder)
    return folder


def _truncate(path, keep=0.5):
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])


def _json(name, text):
    return lambda ck: (ck / name).write_text(text)


def _edit_config(**changes):
    def edit(ck):
        data = json.loads((ck / "config.json").read_text())
        (ck / "config.json").write_text(json.dumps(data | changes))

    return edit


def _tensors(change):
    """Rewrite model.safetensors with `change(dict of tensors)` applied."""
    from safetensors.torch import load_file, save_file

    def edit(ck):
        tensors = load_file(str(ck / "model.safetensors"))
        change(tensors)
        save_file(tensors, str(ck / "model.safetensors"))

    return edit


def _meta_without(key):
    def edit(ck):
        path = ck / "tokenizer" / "tokenizer_meta.json"
        data = json.loads(path.read_text())
        del data[key]
        path.write_text(json.dumps(data))

    return edit


def _bigger_tokenizer(ck):
    shutil.rmtree(ck / "tokenizer")
    char_tokenizer("".join(chr(c) for c in range(0x4E00, 0x4E00 + 200))).save(ck / "tokenizer")


CORRUPTIONS = {
    "truncated weights": (lambda ck: _truncate(ck / "model.safetensors"), "model.safetensors"),
    "weights cut to a few bytes": (lambda ck: _truncate(ck / "model.safetensors", 0.0001), "model.safetensors"),
    "weights not safetensors": (_json("model.safetensors", "not weights at all"), "model.safetensors"),
    "a tensor of the wrong shape": (_tensors(lambda t: t.update({"pos_embed.weight": torch.zeros(3, 32)})),
                                    "pos_embed.weight has shape [3, 32]"),
    "a tensor missing": (_tensors(lambda t: t.pop("decoder.0.ffn.up.weight")), "lacks 1 tensor"),
    "a tensor too many": (_tensors(lambda t: t.update({"stray.weight": torch.zeros(2)})), "stray.weight"),
    "config of another model": (_edit_config(d_ff=128), "model.safetensors"),
    # without the header check first, this would allocate a 10^9-row embedding before failing
    "config claiming a huge vocab": (_edit_config(vocab=10**9), "model.safetensors"),
    "config.json missing": (lambda ck: (ck / "config.json").unlink(), "config.json"),
    "config.json malformed": (_json("config.json", '{"d_model": 32,'), "config.json"),
    "config.json a list": (_json("config.json", "[1, 2]"), "config.json"),
    "config.json not UTF-8": (lambda ck: (ck / "config.json").write_bytes(b"\xff\xfe{}"), "config.json"),
    "config.json unknown field": (_edit_config(colour="blue"), "config.json: unknown field 'colour'"),
    "config.json bad value": (_edit_config(heads=3), "config.json: d_model (32) must be divisible by heads (3)"),
    "config.json wrong type": (_edit_config(d_model="32"), "config.json: d_model must be an integer"),
    "tokenizer folder missing": (lambda ck: shutil.rmtree(ck / "tokenizer"), "lacks tokenizer"),
    "tokenizer.json missing": (lambda ck: (ck / "tokenizer" / "tokenizer.json").unlink(), "tokenizer.json"),
    "tokenizer.json malformed": (_json("tokenizer/tokenizer.json", "{oops"), "cannot read"),
    "tokenizer meta malformed": (_json("tokenizer/tokenizer_meta.json", "[]"),
                                 "tokenizer_meta.json must hold a JSON object"),
    "tokenizer meta lacks an id": (_meta_without("pad_id"), "tokenizer_meta.json lacks 'pad_id'"),
    "tokenizer bigger than the vocab": (_bigger_tokenizer, "tokens but config.json's vocab is"),
    "meta.json malformed": (_json("meta.json", "{"), "meta.json"),
    "meta.json a number": (_json("meta.json", "3"), "meta.json"),
    "train_state.json malformed": (_json("train_state.json", "nope"), "train_state.json"),
    "train_state.json bad step": (lambda ck: _edit_json(ck / "train_state.json", step="ten"), "train_state.json"),
    "optimizer truncated": (lambda ck: _truncate(ck / "optimizer.safetensors"), "optimizer.safetensors"),
    "optimizer missing": (lambda ck: (ck / "optimizer.safetensors").unlink(), "optimizer.safetensors"),
}


def _edit_json(path, **changes):
    path.write_text(json.dumps(json.loads(path.read_text()) | changes))


@pytest.mark.parametrize("corruption", list(CORRUPTIONS))
def test_a_corrupt_checkpoint_is_one_line_naming_the_file(corruption, pristine, tmp_path):
    corrupt, needle = CORRUPTIONS[corruption]
    folder = tmp_path / "ck"
    shutil.copytree(pristine, folder)
    load_checkpoint(folder)  # the copy loads before the corruption
    corrupt(folder)
    with pytest.raises(ValueError) as caught:
        load_checkpoint(folder)
    message = str(caught.value)
    assert needle in message and len(message.splitlines()) == 1, message


def test_a_folder_being_written_is_refused_by_name(pristine, tmp_path):
    for kind, words in (("tmp", "being written"), ("old", "being replaced")):
        partial = tmp_path / f".ck.{kind}-k2j_9x"  # the names save_checkpoint gives its temporary folders
        shutil.copytree(pristine, partial)
        with pytest.raises(ValueError, match=f"{words} by save_checkpoint; load .*ck once") as caught:
            load_checkpoint(partial)
        assert str(partial) in str(caught.value) and len(str(caught.value).splitlines()) == 1


@pytest.mark.slow  # a Pilot app
async def test_the_app_keeps_its_live_model_when_a_checkpoint_is_corrupt(pristine, tmp_path):
    from app_support import SIZE, app_for, wait_for, wait_ready
    from textual.widgets import Input

    app = app_for("--preset", "gpt2-toy")
    async with app.run_test(size=SIZE) as pilot:
        await wait_ready(pilot)
        model, generation = app.live.model, app.live.generation
        await pilot.press("4")  # the Train view, whose `o` loads the folder typed in its form
        for corruption in ("truncated weights", "a tensor of the wrong shape", "config.json malformed"):
            corrupt, needle = CORRUPTIONS[corruption]
            folder = tmp_path / corruption.replace(" ", "-")
            shutil.copytree(pristine, folder)
            corrupt(folder)
            app.query_one("#tf-folder", Input).value = str(folder)
            app.view("train").action_load()
            await wait_for(pilot, lambda folder=folder: str(folder) in app.sub_title and not app.live.building)
            assert needle in app.sub_title and len(app.sub_title.splitlines()) == 1, app.sub_title
            assert app.live.model is model and app.live.generation == generation  # nothing was lost
        app.query_one("#tf-folder", Input).value = str(pristine)  # and a sound one still loads
        app.view("train").action_load()
        await wait_ready(pilot, generation + 1)
        assert app.live.origin == f"checkpoint {pristine}" and app.live.config.d_model == 32
