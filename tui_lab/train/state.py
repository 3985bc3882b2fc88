"""Saving a Trainer to a checkpoint folder and building one back from it, to continue the same run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tui_lab.checkpoint import decode_bytes, encode_bytes, load_checkpoint, save_checkpoint
from tui_lab.train.config import TrainConfig


def train_state(trainer) -> dict[str, Any]:
    """Everything beyond the weights that the next step depends on."""
    rng = {"cpu": encode_bytes(trainer._cpu_rng), "data": encode_bytes(trainer.data_gen.get_state())}
    if trainer._device_rng is not None:
        rng["device"] = encode_bytes(trainer._device_rng)
    c = trainer.train_config
    return {
        "step": trainer.step_count,
        "scheduler": {"name": c.schedule, "step": trainer.step_count, "lr": trainer.optimizer.param_groups[0]["lr"]},
        "rng": rng,
        "train_config": c.to_dict(),
        "optimizer": trainer.optimizer.state_dict(),
        "tokens_seen": trainer._tokens_seen,
        "train_seconds": trainer._train_seconds,
    }


def save_trainer(trainer, folder: Path, extra: dict[str, Any] | None = None) -> Path:
    """The run's resumable checkpoint; `extra`: more meta.json entries (a kept run's time)."""
    last = trainer.last_eval
    meta = (extra or {}) | {"step": trainer.step_count, "train_loss": trainer.last_loss, "notes": trainer.notes,
            "val_loss": last.val_loss if last else None, "exact_match": last.exact_match if last else None,
            "task": trainer.train_config.task}
    return save_checkpoint(folder, trainer.model, trainer.tokenizer, train_state(trainer), meta)


def resume_trainer(cls, folder: Path, device: str | None, on_event, data, changes: dict[str, Any]):
    """A Trainer in the state the checkpoint at `folder` was saved in, with TrainConfig `changes`."""
    ckpt = load_checkpoint(folder, device="cpu")
    state = ckpt.train_state
    if state is None or "optimizer" not in state:
        raise ValueError(f"{folder} holds weights but no training state (train_state.json); it cannot be resumed")
    config = TrainConfig.from_dict(state["train_config"]).replace(**changes)
    # The saved weights start the run (model=): their vocab stays even where the tokenizer is smaller (GPT-2).
    trainer = cls(ckpt.config, config, device=device, on_event=on_event, data=data,
                  tokenizer=ckpt.tokenizer, model=ckpt.model)
    trainer.optimizer.load_state_dict(state["optimizer"])
    trainer.step_count = int(state["step"])
    trainer.data_gen.set_state(decode_bytes(state["rng"]["data"]))
    if trainer.dist.is_main:
        trainer._cpu_rng = decode_bytes(state["rng"]["cpu"])
        if trainer._device_rng is not None and "device" in state["rng"]:
            trainer._device_rng = decode_bytes(state["rng"]["device"])
    trainer._tokens_seen = int(state.get("tokens_seen", 0))
    trainer._train_seconds = float(state.get("train_seconds", 0.0))
    trainer.last_loss = (ckpt.meta or {}).get("train_loss")
    return trainer
