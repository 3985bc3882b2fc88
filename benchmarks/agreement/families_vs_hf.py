"""Every family the lab loads against transformers (issue 39, item 3): cached greedy generation, training steps, MFU.

Each family is a random small transformers model (tests/support's fixtures: GPT-2, Llama with GQA, Mistral with a
sliding window, Qwen2, Mixtral, Marian, T5), saved as a folder and opened with `load_hf`, as tests/hf does.
Generation: batch 1, `--new-tokens` greedy tokens with a KV cache on both sides, eos banned on ours and held off by
`min_new_tokens` on theirs (the same -inf), interleaved repeats, median kept; prints tokens/s of each, the ratio
(target >= 2x) and whether the ids are identical. Training (`--train`): one AdamW step (forward, backward, update)
on the same batch, ours and theirs alternately, on a GPT-2 and a Llama shape (target >= 1.2x), with torch's default
AdamW on both (foreach); `--optim fused` gives both the AdamW both trainers build by default (transformers'
TrainingArguments for torch >= 2.8, `optim="adamw_torch_fused"`; ours, train/setup.py `make_optimizer`). `--mfu`: a
gpt2-small-shaped training step (batch 8 x 256) of ours, its FLOPs (analysis.cost) over the measured matmul peak.
`--floor` (with `--train`): the time of the kernels a step cannot do without (its matmuls, attention, loss and
AdamW, each run alone), and the ratio ours would reach if it spent nothing else. Every line carries the load
average; one thread unless `--threads`. Last line: JSON.

    python benchmarks/agreement/families_vs_hf.py [--new-tokens 240] [--repeats 3] [--train [--floor]] [--optim O]
        [--mfu]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests" / "support"))  # the tests' own fixtures
from hf_family_fixtures import randomise, save_causal  # noqa: E402
from hf_fixtures import hf_gpt2  # noqa: E402

from tui_lab import build_model, load_preset  # noqa: E402
from tui_lab.analysis.cost import training_flops_per_token  # noqa: E402
from tui_lab.generation import generate  # noqa: E402
from tui_lab.hf import load_hf  # noqa: E402

POSITIONS = 512  # room for a 16-token prompt and 240 new tokens
SHAPE = dict(hidden_size=64, intermediate_size=256, num_hidden_layers=2, num_attention_heads=4, vocab_size=256,
             max_position_embeddings=POSITIONS)


def save_family(name: str, folder: Path):
    """(transformers model, what our generate needs) for one family, its folder written."""
    if name == "gpt2":
        model = hf_gpt2(0, vocab_size=256, n_positions=POSITIONS, n_embd=64, n_layer=2, n_head=4, n_inner=256,
                       bos_token_id=1, eos_token_id=1, pad_token_id=1)
        model.save_pretrained(folder)
        return model, {}
    if name == "marian":  # as the fixture's (opus-mt's ids), with room for 240 positions
        import transformers

        config = transformers.MarianConfig(
            d_model=64, encoder_ffn_dim=256, decoder_ffn_dim=256, encoder_layers=2, decoder_layers=2,
            encoder_attention_heads=4, decoder_attention_heads=4, vocab_size=256, pad_token_id=255,
            decoder_start_token_id=255, eos_token_id=0, activation_function="swish", scale_embedding=True,
            max_position_embeddings=POSITIONS)
        model = randomise(transformers.MarianMTModel(config))
        model.save_pretrained(folder)
        return model, {"bos_id": 255}
    if name == "t5":
        import transformers

        config = transformers.T5Config(vocab_size=256, d_model=64, d_kv=16, num_heads=4, d_ff=256, num_layers=2,
                                       decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)
        model = randomise(transformers.T5ForConditionalGeneration(config))
        model.save_pretrained(folder)
        return model, {"bos_id": 0}
    kind = {"llama-gqa": "llama-gqa", "mistral": "mistral", "qwen2": "qwen2", "mixtral": "mixtral"}[name]
    window = {"sliding_window": 64} if name == "mistral" else {}
    return save_causal(kind, folder, **SHAPE, **window), {}


RESULTS: dict[str, dict] = {}  # training and MFU rows, for the JSON line
FAMILIES = ("gpt2", "llama-gqa", "mistral", "qwen2", "mixtral", "marian", "t5")


def load_text() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def median_pair(ours, theirs, repeats: int) -> tuple[float, float, object, object]:
    """Median seconds of each, alternating after one untimed warm-up of each; and their last outputs."""
    out_ours, out_theirs = ours(), theirs()
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeats):
        for i, action in enumerate((ours, theirs)):
            start = time.perf_counter()
            out = action()
            times[i].append(time.perf_counter() - start)
            out_ours, out_theirs = (out, out_theirs) if i == 0 else (out_ours, out)
    return statistics.median(times[0]), statistics.median(times[1]), out_ours, out_theirs


def generation_row(name: str, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        theirs, extra = save_family(name, Path(tmp))
        ours, _ = load_hf(tmp)
    vocab = ours.config.vocab
    prompt = torch.randint(2, vocab - 1, (1, args.prompt_len), generator=torch.Generator().manual_seed(1))
    eos = theirs.generation_config.eos_token_id
    eos = [eos] if isinstance(eos, int) else list(eos or [])
    banned = tuple(getattr(ours, "banned_ids", ())) + tuple(i for i in eos if i < vocab)
    n = args.new_tokens

    def run_ours():
        return generate(ours, prompt, n, temperature=0.0, banned_ids=banned, **extra)

    def run_theirs():
        with torch.inference_mode():
            return theirs.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=n,
                                   min_new_tokens=n, do_sample=False, num_beams=1, use_cache=True,
                                   forced_eos_token_id=None)

    ours_s, theirs_s, a, b = median_pair(run_ours, run_theirs, args.repeats)
    same = a.shape == b.shape and torch.equal(a, b)
    where = "" if same else f" (first difference at new token {_first_difference(a, b, extra)})"
    ratio = theirs_s / ours_s
    print(f"{name:10s} ours {n / ours_s:7.0f} tok/s  transformers {n / theirs_s:7.0f} tok/s  ratio {ratio:5.2f}x "
          f"{'ok' if ratio >= 2 else 'UNDER 2x'}  identical ids: {same}{where}  (load {load_text()})", flush=True)
    return {"ours_tokens_per_s": n / ours_s, "theirs_tokens_per_s": n / theirs_s, "ratio": ratio, "identical": same,
            "load": os.getloadavg()[0]}


def _first_difference(a: torch.Tensor, b: torch.Tensor, extra: dict) -> int:
    n = min(a.shape[1], b.shape[1])
    diff = (a[0, :n] != b[0, :n]).nonzero()
    skip = 1 if extra else 0  # an encoder-decoder's output starts with the decoder's start token
    return int(diff[0]) - skip if len(diff) else n - skip


def train_row(name: str, args: argparse.Namespace) -> None:
    """One AdamW step each on the same batch, alternately: ours (loaded from the folder) vs transformers."""
    with tempfile.TemporaryDirectory() as tmp:
        theirs, _ = save_family(name, Path(tmp))
        ours, _ = load_hf(tmp)
    ours.train(), theirs.train()
    x = torch.randint(ours.config.vocab, (args.train_batch, args.train_len + 1),
                      generator=torch.Generator().manual_seed(2))
    inputs, targets = x[:, :-1], x[:, 1:]
    opt_ours, opt_theirs = adamw(ours, args.optim), adamw(theirs, args.optim)

    def step(model, opt, logits_of):
        def run():
            opt.zero_grad(set_to_none=True)
            logits = logits_of(model)
            F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)).backward()
            opt.step()
        return run

    run_ours = step(ours, opt_ours, lambda m: m(inputs))
    run_theirs = step(theirs, opt_theirs, lambda m: m(input_ids=inputs).logits)
    ours_s, theirs_s, _, _ = median_pair(run_ours, run_theirs, args.repeats * 3)
    ratio = theirs_s / ours_s
    RESULTS[f"train {name}"] = {"ours_s": ours_s, "theirs_s": theirs_s, "ratio": ratio, "optim": args.optim,
                                "load": os.getloadavg()[0]}
    print(f"train {name:10s} batch {args.train_batch} x {args.train_len}, {args.optim} AdamW: ours "
          f"{ours_s * 1e3:7.1f} ms  transformers {theirs_s * 1e3:7.1f} ms  ratio {ratio:5.2f}x "
          f"{'ok' if ratio >= 1.2 else 'UNDER 1.2x'}  "
          f"(load {load_text()})", flush=True)
    if args.floor:
        floor_row(name, run_ours, run_theirs, ours_s, theirs_s, (args.train_batch * args.train_len,
                                                                 ours.config.vocab), opt_ours)


def kernel_floor(run, logits_shape: tuple[int, ...], optimizer_step, repeats: int = 20) -> float:
    """Seconds of the kernels any implementation of the step calls, each run alone at the shapes the step
    called it with (torch's profiler records them): its matrix products (attention's too, where dropout keeps it
    off the fused kernel; oneDNN's where the model's Linear runs there), attention's fused kernel forward and
    backward, the loss forward and backward over the logits, and the optimizer's update (`optimizer_step`, the
    same AdamW over the same tensors). Everything else a step does (norms, activations, positions, dropout,
    copies, Python) is what an implementation can cut; this is what it cannot, short of other kernels. Alone, a
    kernel finds its operands in cache: in the step it may not, so the time "beside them" holds that too."""
    from torch.profiler import profile

    with profile(record_shapes=True) as prof:
        run()
    calls = [(e.name, [list(s) for s in e.input_shapes]) for e in prof.events()
             if e.name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "mkldnn::_linear_pointwise",
                           "aten::_scaled_dot_product_flash_attention_for_cpu")]
    replays = [_replay(name, shapes) for name, shapes in calls]
    logits = torch.randn(*logits_shape, requires_grad=True)
    target = torch.randint(logits_shape[-1], logits_shape[:-1])
    replays.append(lambda: F.cross_entropy(logits, target).backward())
    replays.append(optimizer_step)
    total = 0.0
    for replay in replays:
        replay()
        times = []
        for _ in range(repeats):
            start = time.thread_time()
            replay()
            times.append(time.thread_time() - start)
        total += statistics.median(times)
    return total


def _replay(name: str, shapes: list[list[int]]):
    if name in ("aten::mm", "aten::bmm"):
        a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1])
        return lambda: torch.matmul(a, b)
    if name == "mkldnn::_linear_pointwise":  # the model's Linear on oneDNN (tui_lab/model/linear.py)
        x, weight = torch.randn(*shapes[0]), torch.randn(*shapes[1])
        bias = torch.randn(*shapes[2]) if shapes[2] else None
        return lambda: torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")
    if name in ("aten::addmm", "aten::baddbmm"):
        bias, a, b = torch.randn(*shapes[0]), torch.randn(*shapes[1]), torch.randn(*shapes[2])
        return lambda: torch.addmm(bias, a, b) if a.dim() == 2 else torch.baddbmm(bias, a, b)
    q, k, v = (torch.randn(*shape, requires_grad=True) for shape in shapes[:3])  # (N, H, L, D), k/v (N, K, S, D)
    return lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=k.shape[1] != q.shape[1]).sum(
        ).backward()


def floor_row(name: str, run_ours, run_theirs, ours_s: float, theirs_s: float, logits_shape, opt_ours) -> None:
    """The ratio ours would reach if its step were its shared kernels and nothing else (`kernel_floor`)."""
    floor = kernel_floor(run_ours, logits_shape, opt_ours.step)
    RESULTS[f"floor {name}"] = {"kernels_s": floor, "ceiling_ratio": theirs_s / floor}
    print(f"  its kernels alone (matmuls, attention, loss, AdamW): {floor * 1e3:.1f} ms; beside them ours spends "
          f"{(ours_s - floor) * 1e3:.1f} ms, transformers {(theirs_s - floor) * 1e3:.1f} ms; with nothing beside "
          f"them ours would be {theirs_s / floor:4.2f}x", flush=True)


def adamw(model: torch.nn.Module, kind: str) -> torch.optim.AdamW:
    """The same AdamW for both sides: fused (each trainer's default) or torch's default (foreach)."""
    return torch.optim.AdamW(model.parameters(), lr=3e-4, fused=kind == "fused")


def matmul_peak(size: int = 1024, repeats: int = 10) -> float:
    """The app's own measure (tui_lab.hardware): a square matmul, the better of torch's BLAS and oneDNN on a CPU
    (the model's Linear trains on oneDNN where it is faster)."""
    from tui_lab.hardware import matmul_peak_flops

    return matmul_peak_flops("cpu", size=size, repeats=repeats)


def mfu_row(args: argparse.Namespace) -> None:
    """A gpt2-small-shaped training step (batch 8 x 256) of ours: FLOPs per second over the matmul peak."""
    config = load_preset("gpt2-small", dropout=0.0)
    model = build_model(config).train()
    opt = adamw(model, args.optim)
    batch, length = 8, 256
    x = torch.randint(config.vocab, (batch, length + 1), generator=torch.Generator().manual_seed(3))
    times = []
    for i in range(args.mfu_steps + 1):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        logits = model(x[:, :-1])
        F.cross_entropy(logits.reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1)).backward()
        opt.step()
        if i:
            times.append(time.perf_counter() - start)
    step_s = statistics.median(times)
    flops = training_flops_per_token(config, length) * batch * length
    peak = matmul_peak()
    RESULTS["mfu"] = {"step_s": step_s, "flops": flops, "peak_flops": peak, "mfu": flops / step_s / peak,
                      "load": os.getloadavg()[0]}
    print(f"MFU gpt2-small step, batch {batch} x {length}: {step_s:.2f} s, {flops / step_s / 1e9:.1f} GFLOP/s of a "
          f"{peak / 1e9:.1f} GFLOP/s matmul peak: {flops / step_s / peak:.1%} (load {load_text()})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--new-tokens", type=int, default=240)
    parser.add_argument("--prompt-len", type=int, default=16)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--train", action="store_true", help="training-step ratio on the GPT-2 and Llama shapes")
    parser.add_argument("--train-batch", type=int, default=8)
    parser.add_argument("--train-len", type=int, default=128)
    parser.add_argument("--optim", choices=("foreach", "fused"), default="foreach",
                        help="the AdamW of both training steps (fused: as both trainers build it)")
    parser.add_argument("--floor", action="store_true",
                        help="with --train: the step's kernels alone, and the ratio ours would reach with nothing else")
    parser.add_argument("--mfu", action="store_true", help="MFU of a gpt2-small-shaped step (slow on a CPU)")
    parser.add_argument("--mfu-steps", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} thread(s), batch 1, prompt {args.prompt_len}, "
          f"{args.new_tokens} new tokens, greedy, median of {args.repeats} interleaved (load {load_text()})")
    results = {name: generation_row(name, args) for name in args.families}
    if args.train:
        for name in ("gpt2", "llama-gqa"):
            train_row(name, args)
    if args.mfu:
        mfu_row(args)
    met = sum(r["identical"] and r["ratio"] >= 2 for r in results.values())
    print(f"generation: {met} of {len(results)} families at >= 2x with identical ids")
    print(json.dumps({"torch": torch.__version__, "threads": args.threads, "generation": results, **RESULTS}))


if __name__ == "__main__":
    main()
