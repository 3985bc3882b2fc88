"""Mean ablation over a chosen reference distribution (`head_ablation(reference=...)`, `ablate --mean-over`):
each head's z replaced by its mean over the reference text's positions, checked against that replacement made
by hand; the command line's held-out and file references, and its one-line refusals."""

from __future__ import annotations

import json

import pytest
import torch
from cli_support import run_cli

from tui_lab import build_model
from tui_lab.config import ModelConfig
from tui_lab.mechanism.ablation import Metric, head_ablation
from tui_lab.mechanism.cache import run_with_cache, run_with_hooks


def _model():
    torch.manual_seed(0)
    config = ModelConfig(family="decoder-only", decoder_layers=2, d_model=32, heads=4, d_ff=48, vocab=50,
                         max_len=32, dropout=0.0)
    return build_model(config).double().eval()


@torch.no_grad()
def test_the_means_come_from_the_reference_batch():
    model = _model()
    gen = torch.Generator().manual_seed(3)
    ids, reference = torch.randint(0, 50, (3, 12), generator=gen), torch.randint(0, 25, (5, 9), generator=gen)
    table = head_ablation(model, ids, "mean", Metric(), reference=reference)
    _, ref = run_with_cache(model, reference, names=["blocks.1.attn.hook_z"])
    mean = ref["blocks.1.attn.hook_z"][:, :, 2].mean(dim=(0, 1))  # L1H2's mean over the reference's positions

    def put_mean(z, _):
        z = z.clone()
        z[:, :, 2] = mean
        return z

    by_hand = Metric()(run_with_hooks(model, ids, hooks=[("blocks.1.attn.hook_z", put_mean)]), ids) \
        - Metric()(model(ids), ids)
    assert table.values[1][2] == pytest.approx(by_hand, abs=1e-10)
    own = head_ablation(model, ids, "mean", Metric())  # the batch's own means: another number
    assert abs(own.values[1][2] - table.values[1][2]) > 1e-4
    with pytest.raises(ValueError, match="only mean ablation"):
        head_ablation(model, ids, "zero", Metric(), reference=reference)


def test_ablate_mean_over_held_out_or_a_file(capsys, tmp_path):
    base = ["ablate", "--preset", "gpt2-toy-english", "--mode", "mean", "--seq-len", "16", "--batch", "2", "--json"]
    own = json.loads(run_cli(capsys, *base).stdout)
    held = json.loads(run_cli(capsys, *base, "--mean-over", "held-out").stdout)
    assert held["mean_over"] == "held-out" and held["mean_over_windows"] > own["windows"]
    assert held["delta"] != own["delta"] and held["clean"] == own["clean"]
    text = tmp_path / "ref.txt"
    text.write_text("Tom walked to the river. Anna walked to the hill. " * 20)
    from_file = json.loads(run_cli(capsys, *base, "--mean-over", str(text)).stdout)
    assert from_file["mean_over"] == str(text) and from_file["delta"] != held["delta"]
    refused = run_cli(capsys, *base[:-1], "--mode", "zero", "--mean-over", "held-out")
    assert refused.returncode != 0 and "--mean-over: only --mode mean" in refused.stderr
    missing = run_cli(capsys, *base, "--mean-over", str(tmp_path / "none.txt"))
    assert missing.returncode != 0 and "--mean-over:" in missing.stderr and "does not exist" in missing.stderr
    assert "Traceback" not in refused.stderr + missing.stderr
