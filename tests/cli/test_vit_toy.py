"""The encoder toys' training set-up (issue 14): the shapes task the ViT learns, and the tuned defaults the
CLI gives `tui-lab train --preset vit-toy` and `--preset bert-toy` (benchmarks/training/encoder_toys.py measures
them)."""

from __future__ import annotations

import argparse

import torch

from tui_lab import load_preset
from tui_lab.cli.train import _new_trainer
from tui_lab.data.images import SHAPES, shapes_task
from tui_lab.train.config import LM_DEFAULTS, MLM_DEFAULTS
from tui_lab.train.images import IMAGE_DEFAULTS


def test_the_shapes_task_is_balanced_and_its_splits_differ():
    task = shapes_task()
    for split in ("train", "val"):
        images, labels = task.split(split)
        assert images.shape[1:] == (1, 16, 16)
        assert torch.bincount(labels, minlength=len(SHAPES)).tolist() == [len(labels) // len(SHAPES)] * len(SHAPES)
    assert not torch.equal(task.train_images[:100], task.val_images[:100])


def test_the_cli_trains_each_encoder_toy_with_its_own_defaults_and_a_person_can_override_them():
    for preset, table in (("vit-toy", IMAGE_DEFAULTS), ("bert-toy", MLM_DEFAULTS)):
        args = argparse.Namespace(task=None, data=None, device="cpu", preset=preset, yes=False)
        config = _new_trainer(args, {}, {}, printer=None).train_config
        assert {k: getattr(config, k) for k in table} == {k: tuple(v) if k == "betas" else v for k, v in table.items()}
        assert _new_trainer(args, {}, {"lr": 0.5}, printer=None).train_config.lr == 0.5
    args = argparse.Namespace(task=None, data=None, device="cpu", preset="gpt2-toy", yes=False)
    assert _new_trainer(args, {}, {}, printer=None).train_config.lr == LM_DEFAULTS["lr"]  # text LMs unchanged


def test_the_vit_toy_reads_the_shapes_task():
    config = load_preset("vit-toy")
    task = shapes_task()
    assert (config.image_size, config.channels, config.classes) == (task.image_size, task.channels, len(SHAPES))
    assert config.max_len == (config.image_size // config.patch_size) ** 2 + 1  # patches + the class token
