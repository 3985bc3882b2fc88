"""Training agrees with transformers: the lab's Trainer on gpt2-toy vs `GPT2LMHeadModel`, step for step.

Same initial weights (the lab model's, exported with `hf_state_dict`), the same batches (each batch the lab's
Trainer draws from the built-in corpus, recorded and fed to both), the same AdamW (the Trainer's own
`make_optimizer` on both: decay on matrices only, its betas and eps), the same learning rate at every step (the
Trainer's schedule, read from its StepEvent) and the same clipping of the total gradient norm; dropout 0.
Prints both loss curves at every logged step and the largest relative gap; the last line is one JSON object.

Measured (Intel Xeon, 1 thread, batch 32 x 128, 200 steps, 644 s for both): identical to 4 digits through step 40
(4.1447 -> 2.3120), then the gap wanders, at most 0.852% (step 100: 1.9376 vs 1.9213), 0.158% at step 200
(1.2570 vs 1.2550). With --double (float64) the largest gap over 100 steps is 0.0006%: what separates the
float32 curves is rounding (fused vs unfused attention, summation order) that training amplifies.

    python benchmarks/agreement/train_curves_vs_hf.py [--steps 200] [--log-every 10] [--batch 32] [--seq-len 128] \
        [--threads N]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from transformers import GPT2Config, GPT2LMHeadModel

from tui_lab import load_preset
from tui_lab.hf.weights import hf_state_dict
from tui_lab.train.config import train_config_for
from tui_lab.train.setup import make_optimizer
from tui_lab.train.trainer import Trainer


@dataclass
class Curves:
    steps: list[int]
    ours: list[float]
    theirs: list[float]

    @property
    def worst_gap(self) -> float:
        """The largest |ours - theirs| / theirs over the logged steps."""
        return max(abs(a - b) / b for a, b in zip(self.ours, self.theirs, strict=True))


def hf_twin(config) -> GPT2LMHeadModel:
    """GPT2LMHeadModel with the lab config's shape, dropout 0."""
    hf = GPT2Config(vocab_size=config.vocab, n_positions=config.max_len, n_embd=config.d_model,
                    n_layer=config.decoder_layers, n_head=config.heads, n_inner=config.d_ff,
                    activation_function="gelu_new", layer_norm_epsilon=config.norm_eps, resid_pdrop=0.0,
                    embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=config.tie_embeddings, bos_token_id=0,
                    eos_token_id=0)
    return GPT2LMHeadModel(hf)


def paired_curves(preset: str = "gpt2-toy", steps: int = 200, log_every: int = 10, double: bool = False,
                  **train) -> Curves:
    """Train the lab's Trainer and a transformers twin side by side; their losses at every logged step.
    `double`: both models in float64 (before the first step, so the optimizers' state follows), to show that
    what separates the curves is float32 rounding, amplified by training, not a different computation."""
    c = train_config_for(None, steps=steps, dropout=0.0, eval_every=0, sample_every=0, **train)
    trainer = Trainer(load_preset(preset, dropout=0.0), c, peak_flops=1.0)  # MFU is not what this measures
    if double:
        trainer.model.double()
    twin = hf_twin(trainer.model_config).to(torch.float64 if double else torch.float32)
    missing, unexpected = twin.load_state_dict(hf_state_dict(trainer.model), strict=False)
    assert not unexpected and all(k == "lm_head.weight" or k.endswith("attn.bias") for k in missing), missing
    twin.train()
    optimizer = make_optimizer(twin, c, "cpu")
    batches = []
    draw = trainer.source.batch
    trainer.source.batch = lambda *a, **k: batches.append(draw(*a, **k)) or batches[-1]  # what the lab trains on
    curves = Curves([], [], [])
    for step in range(1, steps + 1):
        event = trainer.step()
        batch = batches[-1]
        for group in optimizer.param_groups:
            group["lr"] = event.lr
        logits = twin(input_ids=batch.inputs).logits
        loss = F.cross_entropy(logits.flatten(0, 1).float(), batch.targets.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(twin.parameters(), c.grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step == 1 or step % log_every == 0:
            curves.steps.append(step)
            curves.ours.append(event.train_loss)
            curves.theirs.append(loss.item())
    return curves


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="gpt2-toy")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--log-every", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--seq-len", type=int, default=128)
    parser.add_argument("--double", action="store_true", help="both models in float64 (the gap is then rounding)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch threads (default: torch's; 1 on a busy machine, where spin-waits dominate)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    start = time.perf_counter()
    curves = paired_curves(args.preset, args.steps, args.log_every, args.double, batch_size=args.batch,
                           seq_len=args.seq_len)
    print(f"{args.preset}, batch {args.batch} x seq {args.seq_len}, {'float64' if args.double else 'float32'}, "
          f"{torch.get_num_threads()} threads, "
          f"{time.perf_counter() - start:.0f} s")
    print(f"{'step':>5} {'tui-lab':>9} {'GPT2LMHeadModel':>16} {'gap %':>7}")
    for step, a, b in zip(curves.steps, curves.ours, curves.theirs, strict=True):
        print(f"{step:>5} {a:>9.4f} {b:>16.4f} {100 * abs(a - b) / b:>7.3f}")
    print(f"largest gap {100 * curves.worst_gap:.3f}% (the issue asks for under 1% at every logged step)")
    print(json.dumps({"steps": curves.steps, "ours": [round(x, 5) for x in curves.ours],
                      "theirs": [round(x, 5) for x in curves.theirs], "worst_gap": round(curves.worst_gap, 6)}))


if __name__ == "__main__":
    main()
