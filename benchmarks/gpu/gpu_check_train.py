"""gpu_check's train and mfu sections: every toy learns on the device, in fp32 and bf16; MFU against peaks.

A toy's run learns when the mean loss of its last 10 steps is at most LEARNED x its first 10's. bf16 runs
the forward pass under autocast (`TrainConfig.precision`), only where the device has fast bf16 units, and
its loss at the last step must stay within BF16_NATS of the fp32 run's (same seed, same batches).
"""

from __future__ import annotations

import functools
import statistics
from typing import Any

import torch
from gpu_peaks import published

from tui_lab import load_preset
from tui_lab.hardware import device_name, matmul_peak_flops
from tui_lab.presets import list_presets
from tui_lab.shipped import shipped_names
from tui_lab.train import StepEvent, Trainer, train_config_for
from tui_lab.train.config import model_defaults

LEARNED = 0.9
BF16_NATS = 0.05
TASKS = {"encoder-decoder": "numbers-de"}  # the 2017 toy learns a seq2seq task; the others their family's objective


def toys() -> list[str]:
    return [n for n in list_presets() if "toy" in n and n not in shipped_names()]


def fast_bf16(device: str) -> bool:
    """bf16 units that beat fp32: Ampere or newer on CUDA; elsewhere a measured bf16 matmul at least twice
    fp32's (AMX on a Xeon; an AVX2 CPU runs bf16 ~100x slower than fp32)."""
    if device.startswith("cuda"):
        return torch.cuda.get_device_capability(torch.device(device))[0] >= 8 and torch.cuda.is_bf16_supported()
    if device.startswith("mps"):
        return False
    small = 256  # an explicit size measures now and keeps nothing: cheap even where bf16 is slow
    return matmul_peak_flops(device, torch.bfloat16, size=small) >= 2 * matmul_peak_flops(device, size=small)


def run_toys(recorder, device: str, sizes) -> None:
    fast = fast_bf16(device)
    for name in toys():
        fp32: dict[str, Any] = {}
        recorder.run(f"train {name} fp32", lambda n=name, out=fp32: learned(n, device, sizes, "fp32", out))
        if not fast or (sizes.bf16_only and name not in sizes.bf16_only):
            why = "no fast bf16 on this device" if not fast else f"the smoke runs bf16 on {sizes.bf16_only[0]} only"
            recorder.write({"check": f"train {name} bf16", "ok": None, "skipped": why})
            continue
        recorder.run(f"train {name} bf16", lambda n=name, ref=fp32: against_fp32(n, device, sizes, ref))


def trainer_for(name: str, device: str, sizes, precision: str, **fields: Any) -> Trainer:
    config = load_preset(name, **_shrink(name, sizes))
    task = TASKS.get(config.family)
    settings = (model_defaults(config) if task is None else {}) | dict(
        steps=sizes.train_steps, eval_every=0, sample_every=0, warmup=5, precision=precision)
    if task is None and config.input != "patches":
        settings |= dict(batch_size=sizes.lm_batch, seq_len=sizes.seq_len)
    elif sizes.smoke and task is not None:  # seq2seq pairs: a smaller batch in the smoke (a ViT needs its 64)
        settings["batch_size"] = sizes.lm_batch * 2
    plain_lm = task is None and config.input != "patches" and config.head != "mlm"
    return Trainer(config, train_config_for(task, **settings | fields), device=device,
                   data=corpus_data() if plain_lm else None)


@functools.cache
def corpus_data():
    """The built-in corpus, encoded once for every language-model run (encoding it takes ~1 s a time)."""
    from tui_lab.data.corpus import builtin_corpus
    from tui_lab.data.lm import lm_data
    from tui_lab.data.tokenizers import char_tokenizer

    text = builtin_corpus()
    return lm_data(text, char_tokenizer(text))


def _shrink(name: str, sizes) -> dict[str, int]:
    from gpu_check_models import fitted

    return fitted(name, sizes)


def steps_of(trainer: Trainer, steps: int | None = None) -> list[StepEvent]:
    """`steps` (default: the run's) steps; an error event (non-finite loss, out of memory) fails the check."""
    events = [trainer.step() for _ in range(steps or trainer.train_config.steps)]
    bad = next((e for e in events if not isinstance(e, StepEvent)), None)
    if bad is not None:
        raise ValueError(bad.message)
    return events


def learned(name: str, device: str, sizes, precision: str, keep: dict[str, Any]) -> dict[str, Any]:
    events = steps_of(trainer_for(name, device, sizes, precision))
    losses, last = [e.train_loss for e in events], events[-1]
    first, final = statistics.mean(losses[:10]), statistics.mean(losses[-10:])
    keep.update(losses=losses, tokens_per_s=last.tokens_per_s)
    return {"ok": final <= LEARNED * first, "first10": first, "last10": final, "ratio": final / first,
            "loss_at_end": losses[-1], "steps": len(losses), "tokens_per_s": last.tokens_per_s, "mfu": last.mfu}


def against_fp32(name: str, device: str, sizes, fp32: dict[str, Any]) -> dict[str, Any]:
    line = learned(name, device, sizes, "bf16", bf16 := {})
    if not fp32:
        return line | {"ok": False, "error": "the fp32 run failed: nothing to compare with"}
    gap = abs(bf16["losses"][-1] - fp32["losses"][-1])
    return line | {"ok": line["ok"] and gap <= BF16_NATS, "fp32_loss_at_end": fp32["losses"][-1], "gap_nats": gap,
                   "fp32_tokens_per_s": fp32["tokens_per_s"], "speedup_vs_fp32": bf16["tokens_per_s"] /
                   fp32["tokens_per_s"]}


def run_mfu(recorder, device: str, sizes) -> None:
    dtypes = ["float32"] + (["bfloat16"] if fast_bf16(device) else [])
    vendor = published(device_name(device)) if device.startswith("cuda") else None
    for dtype in dtypes:
        recorder.run(f"peak {dtype}", lambda d=dtype: peak_line(device, d, vendor))
        recorder.run(f"mfu {dtype}", lambda d=dtype: mfu_line(device, sizes, d, vendor))


def peak_line(device: str, dtype: str, vendor) -> dict[str, Any]:
    """The lab's kept (or now measured) matmul peak beside the datasheet's; above the datasheet is a bug."""
    measured = matmul_peak_flops(device, getattr(torch, dtype))
    line = {"measured_tflops": measured / 1e12, **_vendor_fields(vendor, dtype)}
    published_flops = vendor.flops(dtype) if vendor else None
    if published_flops:
        line["measured_over_published"] = measured / published_flops
    return line | {"ok": measured > 0 and (not published_flops or measured <= 1.1 * published_flops)}


def mfu_line(device: str, sizes, dtype: str, vendor) -> dict[str, Any]:
    """A language-model run of `sizes.mfu_preset`: MFU against the measured peak (the lab's) and the vendor's."""
    precision = "bf16" if dtype == "bfloat16" else "fp32"
    trainer = Trainer(load_preset(sizes.mfu_preset), train_config_for(
        None, steps=sizes.mfu_steps, batch_size=sizes.mfu_batch, seq_len=sizes.mfu_seq, eval_every=0,
        sample_every=0, warmup=2, precision=precision), device=device, data=corpus_data())
    events = steps_of(trainer)
    # The trainer's MFU (docs/CONTRACTS.md) over every step but the first, which pays for allocation and
    # kernel selection: a 10-step window would carry it along.
    timed = events[1:] or events
    achieved = trainer.flops_per_token * sum(e.tokens for e in timed) / sum(e.step_s for e in timed)
    mfu = achieved / trainer.peak_flops
    line = {"preset": sizes.mfu_preset, "batch": sizes.mfu_batch, "seq_len": sizes.mfu_seq, "mfu": mfu,
            "mfu_with_first_step": events[-1].mfu, "achieved_tflops": achieved / 1e12,
            "peak_tflops": trainer.peak_flops / 1e12, "tokens_per_s": sum(e.tokens for e in timed) /
            sum(e.step_s for e in timed), **_vendor_fields(vendor, dtype)}
    published_flops = vendor.flops(dtype) if vendor else None
    if published_flops:
        line["mfu_vs_published"] = achieved / published_flops
    return line | {"ok": 0 < mfu <= 1.0}


def _vendor_fields(vendor, dtype: str) -> dict[str, Any]:
    if vendor is None:
        return {"published_tflops": None, "published": "no published figure for this device in gpu_peaks.py"}
    tflops = vendor.fp32 if dtype == "float32" else vendor.bf16
    return {"published_tflops": tflops, "published": f"{vendor.name}: {vendor.source}"}
