"""`tui-lab train` under torchrun with 2 CPU ranks (gloo) matches one process with the same global batch."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from train_helpers import TEXT

from tui_lab.cli import main

ARGS = ["train", "--preset", "gpt2-toy", "--layers", "1", "--d-model", "32", "--heads", "2", "--d-ff", "64",
        "--set", "dropout=0.0", "--set", "eval_every=3", "--set", "eval_batches=2", "--batch-size", "8",
        "--seq-len", "16", "--steps", "6", "--seed", "5", "--device", "cpu", "--json"]
LAUNCHER = "import sys\nfrom tui_lab.cli import main\nsys.exit(main())\n"


def run_torchrun(tmp_path: Path, args: list[str]) -> subprocess.CompletedProcess:
    script = tmp_path / "launch.py"
    script.write_text(LAUNCHER)
    root = Path(__file__).resolve().parents[2]
    env = os.environ | {"OMP_NUM_THREADS": "1", "PYTHONPATH": str(root)}
    command = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
               str(script), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=120, cwd=tmp_path)


def failure(result: subprocess.CompletedProcess) -> str:
    """What a failed launch said: the ranks' own errors (early in stderr) and torchrun's summary (at its end)."""
    return result.stderr[:3000] + "\n...\n" + result.stderr[-1500:]


def events(out: str, kind: str) -> list[dict]:
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return [d for d in lines if d["event"] == kind]


def test_two_ranks_match_one_process(tmp_path, capsys):
    data = tmp_path / "prose.txt"
    data.write_text(TEXT, encoding="utf-8")
    args = [*ARGS, "--data", str(data), "--out", str(tmp_path / "ddp-ckpt")]
    result = run_torchrun(tmp_path, args)
    assert result.returncode == 0, failure(result)
    ddp_start = events(result.stdout, "start")
    assert len(ddp_start) == 1 and ddp_start[0]["world_size"] == 2  # rank 0 alone prints
    assert len(events(result.stdout, "done")) == 1 and (tmp_path / "ddp-ckpt" / "model.safetensors").exists()

    assert main([*ARGS, "--data", str(data)]) == 0
    single = capsys.readouterr().out
    ddp_losses = [e["train_loss"] for e in events(result.stdout, "step")]
    single_losses = [e["train_loss"] for e in events(single, "step")]
    assert len(ddp_losses) == len(single_losses) == 6
    assert ddp_losses == pytest.approx(single_losses, rel=1e-4)
    assert [e["val_loss"] for e in events(result.stdout, "eval")] == pytest.approx(
        [e["val_loss"] for e in events(single, "eval")], rel=1e-4)


def test_batch_must_split_evenly_over_ranks(monkeypatch):
    from tui_lab.train.distributed import env_info, setup

    monkeypatch.setenv("WORLD_SIZE", "2")
    monkeypatch.setenv("RANK", "1")
    info = env_info()
    assert info.enabled and not info.is_main and info.shard(8) == (4, 8)
    with pytest.raises(ValueError, match="batch_size \\(7\\) must be divisible by the number of processes \\(2\\)"):
        setup("cpu", 7)


def test_two_ranks_train_a_mixture_of_experts_like_one_process(tmp_path, capsys):
    """Eight experts, top-1, 16 tokens a rank: some expert goes unchosen on some rank, which DDP must allow.
    The load-balancing loss is per rank (as in transformers), so it is off here to compare the losses exactly."""
    data = tmp_path / "prose.txt"
    data.write_text(TEXT, encoding="utf-8")
    moe = ["--set", "ffn=moe", "--set", "experts=8", "--set", "experts_per_token=1", "--set",
           "router_aux_loss_coef=0", "--batch-size", "2", "--steps", "3", "--data", str(data)]
    args = [*ARGS[:ARGS.index("--batch-size")], *ARGS[ARGS.index("--seq-len"):ARGS.index("--steps")],
            *ARGS[ARGS.index("--seed"):], *moe]
    result = run_torchrun(tmp_path, args)
    assert result.returncode == 0, failure(result)
    assert main(args) == 0
    single = events(capsys.readouterr().out, "step")
    ddp = events(result.stdout, "step")
    assert [e["train_loss"] for e in ddp] == pytest.approx([e["train_loss"] for e in single], rel=1e-4)
    assert [e["expert_load"] for e in ddp] == [e["expert_load"] for e in single]  # summed over the ranks
    assert any(0 in row for e in single for row in e["expert_load"])  # an expert unchosen somewhere
