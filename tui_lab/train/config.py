"""What a training run does, as one validated dataclass, plus each task's sensible defaults.

The learning rate `lr` is the peak rate for "cosine" and "constant"; for "noam" it is the factor in
front of the 2017 paper's d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (section 5.3).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, fields
from typing import Any

SCHEDULES = ("noam", "cosine", "constant")
TOKENIZERS = ("char", "bpe")
SEQ2SEQ_TASKS = ("copy", "reverse", "numbers-de", "names")
PRECISIONS = ("fp32", "bf16")  # bf16: the forward pass under torch.autocast, weights and optimizer in fp32


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 400
    batch_size: int = 32
    seq_len: int = 128  # language models: window length; seq2seq tasks set their own lengths
    lr: float = 2e-3
    schedule: str = "cosine"
    warmup: int = 40
    min_lr: float = 1e-4  # cosine ends here
    weight_decay: float = 0.1
    betas: tuple[float, float] = (0.9, 0.98)
    eps: float = 1e-9
    grad_clip: float = 1.0  # 0 turns clipping off
    label_smoothing: float = 0.0
    dropout: float | None = None  # None keeps the model's own dropout
    eval_every: int = 100
    eval_batches: int = 8
    eval_examples: int = 500  # seq2seq: held-out examples decoded greedily for exact match
    sample_every: int = 200
    save_every: int = 0  # 0: write a checkpoint only at the end (when `out` is set)
    seed: int = 0
    task: str | None = None  # a seq2seq task; None means language modelling on `data` or the built-in corpus
    data: str | None = None  # a UTF-8 text file for language modelling
    tokenizer: str = "char"
    vocab: int = 512  # BPE vocabulary size to train
    val_fraction: float = 0.1
    out: str | None = None  # checkpoint folder
    # seq2seq training methods of seed 002 section 4 (issue 13): scheduled sampling (Tips 4) and guided
    # attention (Tips 2); tui_lab/train/scheduled_sampling.py and guided_attention.py say how.
    scheduled_sampling: str = "none"  # none | linear | exponential | inverse_sigmoid (Bengio et al. 2015)
    scheduled_sampling_k: float | None = None  # the schedule's rate; None: a default fitted to `steps`
    scheduled_sampling_min: float = 0.0  # linear's floor eps in max(eps, 1 - c i)
    guided_attention: float = 0.0  # weight of the diagonal-prior loss on cross-attention; 0 turns it off
    guided_attention_g: float = 0.2  # the prior's width g (Tachibana et al. 2017 use 0.2)
    # Mixture-of-experts: weight of the router's load-balancing loss (Switch Transformer's alpha = 10^-2,
    # section 2.2; MixtralConfig's router_aux_loss_coef is 0.001). Dense models ignore it.
    router_aux_loss_coef: float = 0.01
    precision: str = "fp32"  # fp32 | bf16 (autocast on the forward pass: fast where the device has bf16 units)

    def __post_init__(self) -> None:
        object.__setattr__(self, "betas", tuple(self.betas))
        _validate(self)

    @property
    def is_seq2seq(self) -> bool:
        return self.task is not None

    def replace(self, **changes: Any) -> TrainConfig:
        unknown = set(changes) - set(train_field_names())
        if unknown:
            raise ValueError(f"unknown training field {sorted(unknown)[0]!r}; known: {', '.join(train_field_names())}")
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["betas"] = list(self.betas)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        known = set(train_field_names())
        return cls(**{k: v for k, v in data.items() if k in known})


# Tuned on 2 shared CPU cores (benchmarks/training/train_numbers_de.py). The post-LN 2017 toy needs the warmup;
# noam at lr 1, warmup 100 (peak 8.8e-3) stalled at exact match 0 for 2 seeds of 3; lr 0.5, warmup 200 ended
# between 0.97 and 0.99; cosine to a low min_lr settled seeds 0-4 at 0.99 by step 200. `--set schedule=noam`
# gives the paper's schedule.
_SEQ2SEQ = dict(batch_size=64, lr=2e-3, schedule="cosine", warmup=100, min_lr=1e-5, label_smoothing=0.1,
                weight_decay=0.0, eval_every=100, sample_every=100)
TASK_DEFAULTS: dict[str, dict[str, Any]] = {
    "numbers-de": _SEQ2SEQ | dict(steps=400),
    "copy": _SEQ2SEQ | dict(steps=300),
    "reverse": _SEQ2SEQ | dict(steps=400),
    # names: label smoothing off, so the loss is the plain NLL of the copy mechanism's mixed distribution
    # (smoothing would spread mass over the temporary ids of words a batch does not have). With copy=true the
    # 2017 toy reached held-out exact match 1.000 by step 100 (seed 0, `tui-lab experiment run copy-names`).
    "names": _SEQ2SEQ | dict(steps=150, label_smoothing=0.0, eval_every=50, sample_every=50),
}
LM_DEFAULTS: dict[str, Any] = dict(steps=400, batch_size=32, seq_len=128, lr=3e-3, schedule="cosine", warmup=40,
                                   min_lr=1e-4, label_smoothing=0.0, weight_decay=0.1)
# BERT's masked language modelling (a model with `head = "mlm"`, e.g. bert-toy), on top of LM_DEFAULTS.
# Measured with bert-toy (rotary positions, post-LN) on the built-in corpus, shared CPU cores: 64-character
# windows (2,048 tokens a step, half the LM's) at lr 2e-3 with a 30-step warmup reach masked accuracy 0.45 /
# 0.58 / 0.64 at steps 100 / 200 / 300 against 0.18 for the most frequent character, in 78 CPU-seconds for 300
# steps at one thread. The 400 default steps (benchmarks/training/encoder_toys.py, 2 threads, load ~9.5): 0.715, curve
# 0.45 / 0.58 / 0.67 / 0.71, 543 CPU-s (inflated by the two threads spin-waiting on a loaded machine). With
# learned positions the same schedule (and lr 1e-3, warmup 50) stayed at 0.25 through step 150, as did post-LN
# at lr 3e-3 before (0.244 at 60 steps).
MLM_DEFAULTS: dict[str, Any] = dict(steps=400, seq_len=64, lr=2e-3, warmup=30)
# A ViT (`input = "patches"`) classifies the built-in shapes (train/images.py). The ViT toy on 2 CPU cores: a
# cosine from 2e-3 with a short warmup and light weight decay on a 12,000-image set; evaluation on the 2,000
# held-out images at the end and every 100 steps. Measured with these defaults (`tui-lab train --preset vit-toy`,
# 2 threads; benchmarks/training/encoder_toys.py runs the same): held-out accuracy 0.365 / 0.685 / 0.851 / 0.923 /
# 0.942 / 0.951 at steps 100-600 (chance 0.10) in 281 CPU-seconds (user + sys; about 2.5 minutes on 2 idle cores, 11 on
# the shared machine at load ~9): 0.9 well inside 5 minutes.
IMAGE_DEFAULTS: dict[str, Any] = dict(steps=600, batch_size=64, lr=2e-3, schedule="cosine", warmup=30, min_lr=1e-4,
                                      weight_decay=0.05, eval_every=100, sample_every=0, eval_batches=8)


def model_defaults(model) -> dict[str, Any]:
    """What a model's own objective brings on top of a task's defaults: a ViT classifies the built-in images,
    a BERT head learns masked language modelling. `tui-lab train` and the app's Train form both apply it.

    `model` is a ModelConfig (read by its `input` and `head` fields only, so this module stays torch-free)."""
    if model.input == "patches":
        return dict(IMAGE_DEFAULTS)
    if model.head == "mlm":
        return dict(MLM_DEFAULTS)
    return {}


def defaults_for(task: str | None) -> dict[str, Any]:
    if task is None:
        return dict(LM_DEFAULTS)
    if task not in TASK_DEFAULTS:
        raise ValueError(f"task ({task!r}) must be one of: {', '.join(SEQ2SEQ_TASKS)}")
    return dict(TASK_DEFAULTS[task])


def train_config_for(task: str | None = None, **overrides: Any) -> TrainConfig:
    """The task's defaults (language modelling when `task` is None) with `overrides` on top."""
    values = defaults_for(task) | {"task": task} | {k: v for k, v in overrides.items() if v is not None}
    return TrainConfig().replace(**values)


def train_field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(TrainConfig))


def parse_train_value(name: str, text: str) -> Any:
    """A person's text for training field `name`, in the field's type (for `--set warmup=200`)."""
    current = getattr(TrainConfig(), name)
    text = text.strip()
    if name == "betas":
        parts = text.strip("()[]").split(",")
        return tuple(_number(name, p) for p in parts)
    if name in ("task", "data", "out", "dropout", "scheduled_sampling_k"):
        if text.lower() in ("none", ""):
            return None
        return _number(name, text) if name in ("dropout", "scheduled_sampling_k") else text
    if isinstance(current, bool) or isinstance(current, str):
        return text
    if isinstance(current, int):
        try:
            return int(text)
        except ValueError:
            raise ValueError(f"{name} must be an integer, got {text!r}") from None
    return _number(name, text)


def _number(name: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {text!r}") from None


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


SEED_LIMIT = 2**63  # torch's generators take a signed 64-bit seed


def _validate(c: TrainConfig) -> None:
    _validate_finite(c)
    _check(c.seed < SEED_LIMIT, f"seed ({c.seed!r}) must be below 2**63")
    for name in ("steps", "batch_size", "seq_len", "eval_batches", "vocab"):
        value = getattr(c, name)
        _check(isinstance(value, int) and not isinstance(value, bool) and value > 0,
               f"{name} ({value!r}) must be a positive integer")
    for name in ("warmup", "eval_every", "sample_every", "save_every", "eval_examples", "seed"):
        value = getattr(c, name)
        _check(isinstance(value, int) and not isinstance(value, bool) and value >= 0,
               f"{name} ({value!r}) must be an integer, 0 or more")
    _check(_is_number(c.lr) and c.lr > 0, f"lr ({c.lr!r}) must be a positive number")
    _check(_is_number(c.min_lr) and c.min_lr >= 0, f"min_lr ({c.min_lr!r}) must be 0 or more")
    _check(_is_number(c.weight_decay) and c.weight_decay >= 0, f"weight_decay ({c.weight_decay!r}) must be 0 or more")
    _check(_is_number(c.eps) and c.eps > 0, f"eps ({c.eps!r}) must be a positive number")
    _check(_is_number(c.grad_clip) and c.grad_clip >= 0, f"grad_clip ({c.grad_clip!r}) must be 0 (off) or more")
    _check(_is_number(c.label_smoothing) and 0 <= c.label_smoothing < 1,
           f"label_smoothing ({c.label_smoothing!r}) must be in [0, 1)")
    _check(c.dropout is None or (_is_number(c.dropout) and 0 <= c.dropout < 1),
           f"dropout ({c.dropout!r}) must be in [0, 1) or None to keep the model's")
    _check(len(c.betas) == 2 and all(_is_number(b) and 0 <= b < 1 for b in c.betas),
           f"betas ({c.betas!r}) must be two numbers in [0, 1)")
    _check(_is_number(c.val_fraction) and 0 < c.val_fraction < 1,
           f"val_fraction ({c.val_fraction!r}) must be in (0, 1)")
    _check(_is_number(c.router_aux_loss_coef) and c.router_aux_loss_coef >= 0,
           f"router_aux_loss_coef ({c.router_aux_loss_coef!r}) must be 0 or more")
    _check(c.schedule in SCHEDULES, f"schedule ({c.schedule!r}) must be one of: {', '.join(SCHEDULES)}")
    _check(c.precision in PRECISIONS, f"precision ({c.precision!r}) must be one of: {', '.join(PRECISIONS)}")
    _check(c.tokenizer in TOKENIZERS, f"tokenizer ({c.tokenizer!r}) must be one of: {', '.join(TOKENIZERS)}")
    _check(c.task is None or c.task in SEQ2SEQ_TASKS, f"task ({c.task!r}) must be one of: {', '.join(SEQ2SEQ_TASKS)}")
    _check(c.task is None or c.data is None, "give either task or data, not both")
    _check(c.schedule != "noam" or c.warmup > 0, "warmup must be at least 1 for the noam schedule")
    _validate_seq2seq_methods(c)


def _validate_finite(c: TrainConfig) -> None:
    """nan passes no comparison and inf passes "positive" (lr inf ran a step, then died): refuse both first."""
    for f in fields(c):
        values = getattr(c, f.name)
        for value in values if isinstance(values, tuple) else (values,):
            _check(not isinstance(value, float) or math.isfinite(value),
                   f"{f.name} ({value!r}) must be a finite number")


def _validate_seq2seq_methods(c: TrainConfig) -> None:
    """Scheduled sampling and guided attention (issue 13): one line naming the field and the rule."""
    from tui_lab.train.scheduled_sampling import SCHEDULED_SAMPLING, check_rate

    _check(c.scheduled_sampling in SCHEDULED_SAMPLING,
           f"scheduled_sampling ({c.scheduled_sampling!r}) must be one of: {', '.join(SCHEDULED_SAMPLING)}")
    _check(c.scheduled_sampling_k is None or _is_number(c.scheduled_sampling_k),
           f"scheduled_sampling_k ({c.scheduled_sampling_k!r}) must be a number or None for the default")
    problem = check_rate(c.scheduled_sampling, c.scheduled_sampling_k)
    _check(problem is None, problem or "")
    _check(_is_number(c.scheduled_sampling_min) and 0 <= c.scheduled_sampling_min <= 1,
           f"scheduled_sampling_min ({c.scheduled_sampling_min!r}) must be in [0, 1]")
    _check(_is_number(c.guided_attention) and c.guided_attention >= 0,
           f"guided_attention ({c.guided_attention!r}) must be 0 (off) or more")
    _check(_is_number(c.guided_attention_g) and c.guided_attention_g > 0,
           f"guided_attention_g ({c.guided_attention_g!r}) must be a positive number")
    for name, off in (("scheduled_sampling", "none"), ("guided_attention", 0.0)):
        _check(c.data is None or getattr(c, name) == off, seq2seq_only(name))


def seq2seq_only(name: str) -> str:
    return f"{name} applies to seq2seq tasks only (it acts on a decoder's inputs or its cross-attention)"


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
