"""Property: every CLI command's numeric flags, driven with nan, inf, negatives, zero and huge values, through
validation only, end in exit 2 with one line or in the command's work (never reached here: it is replaced by a
marker), never in a traceback. nan, inf and negatives are always refused; a huge value of a flag that costs
time or memory is refused too (an estimate past a limit, or memory this machine does not have).

Nothing here allocates a model bigger than gpt2-toy: the model loader returns one small model built once, and
the trainer, the generation loop, the benchmark, the experiment runner and the web server are markers.
"""

from __future__ import annotations

import contextlib
import io
import types

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tui_lab.cli import main

BAD = ["nan", "inf", "-inf", "-1", "-0.5", "-9999999999999999999999"]  # never a valid value of any numeric flag
HUGE = ["1e30", "1000000000000000000000000000000"]
VALUES = st.sampled_from(BAD + HUGE + ["0", "1", "2", "0.5", "64", "99999999999999"])

# command -> (the argv before the flag, {flag: refused when huge}); experiments' options go through --set.
COMMANDS = {
    "info": (["info", "--preset", "gpt2-toy", "--json"],
             {"--layers": False, "--d-model": False, "--heads": False, "--d-ff": False, "--vocab": False,
              "--batch": False, "--seq-len": False, "--set norm_eps": False, "--set dropout": False,
              "--set rope_base": False}),
    "train": (["train", "--preset", "gpt2-toy", "--json", "--device", "cpu"],
              {"--steps": True, "--batch-size": True, "--seq-len": True, "--lr": False, "--seed": True,
               "--layers": True, "--d-model": True, "--d-ff": True, "--set warmup": False, "--set min_lr": False,
               "--set weight_decay": False, "--set eps": False, "--set grad_clip": False, "--set eval_batches": True,
               "--set label_smoothing": True, "--set dropout": True, "--set norm_eps": False}),
    "generate": (["generate", "--preset", "gpt2-toy", "--prompt", "hi", "--json"],
                 {"--max-new-tokens": True, "--temperature": False, "--top-k": True, "--top-p": True,
                  "--beam-size": True, "--nat-length": True, "--seed": True}),
    "bench": (["bench", "generate", "--preset", "gpt2-toy", "--json"],
              {"--new-tokens": True, "--prompt-len": True, "--repeats": True, "--batch": True, "--seed": True}),
    "experiment": (["experiment", "run", "lora", "--json"],
                   {"--set steps": True, "--set lr_lora": False, "--set lora_rank": True, "--set seq_len": True,
                    "--set batch_size": True, "--set seed": True, "--set threads": True}),
    "serve": (["serve", "--preset", "gpt2-toy"],
              {"--port": True, "--max-sessions": True, "--idle-minutes": True, "--quota-mb": True}),
}


class Ran(Exception):
    """The command got past its checks to its real work."""


def _ran(*args, **kwargs):
    raise Ran


class FakeTrainer:
    """What `train` reads of a Trainer before it runs one."""

    is_seq2seq = False  # the thread choice reads the tokens a step trains on (batch x window)

    def __init__(self, model_config, train_config, device="cpu", **kwargs) -> None:
        self.model_config, self.train_config, self.step_count, self.device = model_config, train_config, 0, "cpu"
        self.source, self.on_event = types.SimpleNamespace(context=lambda: 64), None


@pytest.fixture(scope="module")
def small_model():
    from tui_lab.loading import load_model

    return load_model("preset", "gpt2-toy", "cpu")


@pytest.fixture(scope="module")
def patched(small_model, tmp_path_factory):
    import tui_lab.train
    from tui_lab.bench import kv_speed as speed
    from tui_lab.cli import experiment, model_args, serve, train
    from tui_lab.generation import session

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TUI_LAB_DATA", str(tmp_path_factory.mktemp("data")))
        mp.setattr(model_args, "load_model", lambda *a, **k: small_model)
        mp.setattr(session, "complete", _ran)
        mp.setattr(speed, "compare_generation", _ran)
        mp.setattr(tui_lab.train, "Trainer", FakeTrainer)
        mp.setattr(train, "_run", _ran)
        mp.setattr(experiment, "_run", _ran)
        mp.setattr(serve, "_serve", _ran)
        yield


def run_cli(argv: list[str]) -> tuple[int | str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except Ran:
            code = "ran"
    return code, out.getvalue() + err.getvalue()


def flag_argv(flag: str, value: str) -> list[str]:
    if flag.startswith("--set "):
        return ["--set", f"{flag.split()[1]}={value}"]
    return [flag, value]


CASES = st.sampled_from(sorted(COMMANDS)).flatmap(
    lambda name: st.tuples(st.just(name), st.sampled_from(sorted(COMMANDS[name][1])), VALUES))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=CASES)
def test_numeric_flags_are_refused_in_one_line_or_reach_the_work(patched, case):
    name, flag, value = case
    argv = COMMANDS[name][0] + flag_argv(flag, value)
    code, text = run_cli(argv)
    assert "Traceback" not in text, (argv, text)
    if code in ("ran", 0):  # 0: info, whose work is arithmetic
        event(f"{name}: ran")
        assert value not in BAD, f"{argv} reached the work"
        assert not (value in HUGE and COMMANDS[name][1][flag]), f"{argv} reached the work"
        return
    event(f"{name}: refused")
    assert code == 2, (argv, code, text)
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("tui-lab: error: "), (argv, text)
