"""Make the trained toys that ship inside the package, each with one `tui-lab train` command and a fixed seed.

    python benchmarks/tools/make_shipped_toys.py                                       # both toys
    python benchmarks/tools/make_shipped_toys.py --only transformer-2017-toy-numbers-de

For each toy it runs the command below (printed first) into a scratch folder, copies the weights, config and
tokenizer into `tui_lab/shipped/<name>/` (not the optimizer state, which would triple the size), measures the
result and records command, timing and measurements in that folder's meta.json. The last line is JSON.
`--only NAME --trained DIR SECONDS` installs a folder already trained by NAME's command instead.
Run from the repository root. Measured on the shared 2-core machine they were made on: numbers-de 2 min 15 s
wall at load ~4 (1 min 44 s CPU), but 34 min 40 s at load 8-13 (7 min 30 s CPU); gpt2-toy-english 38 min 30 s
wall at load 7-13 (8 min 13 s CPU; its 300 steps ran at 550 tokens/s). On an idle machine expect minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "tui_lab" / "shipped"
# The train command of each toy (arguments to `tui-lab`), its base preset and what it learned from.
TOYS = {
    "transformer-2017-toy-numbers-de": {
        "args": ["train", "--task", "numbers-de", "--seed", "0"],
        "source": "transformer-2017-toy trained on numbers-de (English number words -> German), shipped",
    },
    "gpt2-toy-english": {
        "args": ["train", "--preset", "gpt2-toy", "--tokenizer", "bpe", "--vocab", "1024", "--steps", "300",
                 "--seed", "0"],
        "source": "gpt2-toy trained on the built-in English corpus (byte-level BPE, 1024 tokens), shipped",
    },
}
KEEP = ("config.json", "model.safetensors", "tokenizer", "meta.json")  # a loadable checkpoint, no optimizer


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", choices=sorted(TOYS), help="make one toy")
    parser.add_argument("--trained", nargs=2, metavar=("DIR", "SECONDS"),
                        help="with --only: install DIR, already trained by the toy's command in SECONDS, "
                             "instead of training again")
    args = parser.parse_args()
    if args.trained:
        if not args.only:
            parser.error("--trained needs --only NAME")
        print(json.dumps({args.only: make(args.only, Path(args.trained[0]), float(args.trained[1]))}))
        return
    results = {name: make(name) for name in ([args.only] if args.only else TOYS)}
    print(json.dumps(results))


def make(name: str, trained: Path | None = None, seconds: float = 0.0) -> dict:
    toy = TOYS[name]
    command = ["tui-lab", *toy["args"]]
    print(f"{name}: {' '.join(command)} --out DIR --json", flush=True)
    with tempfile.TemporaryDirectory() as scratch:
        out = trained or Path(scratch) / name
        if trained is None:
            done, seconds = train(toy["args"] + ["--out", str(out), "--json"])
        else:
            done = json.loads((out / "meta.json").read_text()) | {"event": "done", "installed_from": "--trained"}
        folder = install(name, out, toy, command, done, seconds)
    report = measure(name, folder)
    meta = json.loads((folder / "meta.json").read_text())
    meta["shipped"]["measured"] = report
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))
    sizes = {p.name: p.stat().st_size for p in folder.rglob("*") if p.is_file()}
    print(f"{name}: {seconds:.0f} s wall, load {os.getloadavg()[0]:.1f}; {json.dumps(report)}", flush=True)
    return {"seconds": seconds, "bytes": sum(sizes.values()), **report}


def train(args: list[str]) -> tuple[dict, float]:
    """Run `tui-lab train` (this checkout's) and return its done event and the wall time."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "tui_lab.cli", *args], env=env, cwd=ROOT, text=True,
                         capture_output=True, check=False)
    seconds = time.perf_counter() - start
    events = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    if run.returncode != 0 or not events or events[-1]["event"] != "done":
        sys.exit(f"training failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    return events[-1], seconds


def install(name: str, out: Path, toy: dict, command: list[str], done: dict, seconds: float) -> Path:
    """Copy the loadable part of checkpoint `out` to tui_lab/shipped/<name>/, labelled and with provenance."""
    train_state = json.loads((out / "train_state.json").read_text())
    config = json.loads((out / "config.json").read_text())
    base = config["name"]
    config.update(name=name, source=toy["source"])  # labels only: the weights are as trained
    meta = json.loads((out / "meta.json").read_text())
    train_config = train_state["train_config"] | {"out": None}  # the scratch folder is no one else's path
    meta["shipped"] = {"name": name, "base_preset": base, "command": " ".join(command), "train_config": train_config,
                       "train_seconds_wall": round(seconds, 1), "done": done,
                       "made_by": "benchmarks/tools/make_shipped_toys.py"}
    folder = SHIPPED / name
    tmp = SHIPPED / f".{name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    for item in KEEP:
        (shutil.copytree if (out / item).is_dir() else shutil.copy2)(out / item, tmp / item)
    (tmp / "config.json").write_text(json.dumps(config, indent=1))
    (tmp / "meta.json").write_text(json.dumps(meta, indent=1))
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)
    return folder


def measure(name: str, folder: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    from tui_lab.checkpoint import load_checkpoint

    ckpt = load_checkpoint(folder)
    if ckpt.config.family == "encoder-decoder":
        return measure_numbers(ckpt)
    return measure_english(ckpt)


def measure_numbers(ckpt) -> dict:
    """Exact match on every held-out number, and the greedy translation of 342."""
    import torch

    from tui_lab.data.tasks import load_task
    from tui_lab.generation import generate
    from tui_lab.train.sources import Seq2SeqSource

    source = Seq2SeqSource(load_task("numbers-de"))
    exact = source.exact_match(ckpt.model, "cpu", limit=0)
    tok = ckpt.tokenizer
    src = torch.tensor([tok.encode("three hundred forty two")])
    out = generate(ckpt.model, src, 12, temperature=0.0, bos_id=tok.bos_id, eos_id=tok.eos_id)
    return {"exact_match_held_out": exact, "held_out": len(source.task.val),
            "three hundred forty two": tok.decode(out[0].tolist())}


def measure_english(ckpt) -> dict:
    """Greedy continuations of the shared prompts, their word and loop checks, and the previous-token head."""
    from tui_lab.data.corpus import builtin_corpus
    from tui_lab.toy_checks.checks import (
        PROMPTS,
        greedy_text,
        known_word_share,
        most_repeated_ngram,
        repeated_ngram_share,
        words,
    )
    from tui_lab.toy_checks.patterns import previous_token_head, reading_windows

    vocabulary = set(words(builtin_corpus()))
    samples = {prompt: greedy_text(ckpt.model, ckpt.tokenizer, prompt) for prompt in PROMPTS}
    head = previous_token_head(ckpt.model, reading_windows(ckpt.tokenizer))
    return {"samples": samples,
            "known_word_share": min(known_word_share(s, vocabulary) for s in samples.values()),
            "repeated_6gram_share": max(repeated_ngram_share(s) for s in samples.values()),
            "most_repeated_8gram": max(most_repeated_ngram(s) for s in samples.values()),
            "previous_token_head": head.to_dict()}


if __name__ == "__main__":
    main()
