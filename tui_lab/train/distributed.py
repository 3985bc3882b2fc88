"""Data parallel training under `torchrun`: the same command, N processes, one gradient.

torchrun sets RANK, WORLD_SIZE, LOCAL_RANK and the rendezvous address; without them the run is a single
process and nothing here does anything. gloo on CPU, nccl on CUDA.

How the batch is split: every rank draws the same global batch from the same seeded generator and keeps
only its own rows (`batch_size / world` of them). Each rank therefore reads its own shard of every step,
and the sum of the ranks' gradients is exactly the single-process gradient of the global batch, so the
loss curve of N ranks matches one process (dropout aside, whose masks differ per rank).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import torch
import torch.distributed as dist
from torch import nn


@dataclass(frozen=True)
class DistInfo:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, batch_size: int) -> tuple[int, int]:
        """Rows [start, stop) of the global batch that this rank trains on."""
        per_rank = batch_size // self.world
        return self.rank * per_rank, (self.rank + 1) * per_rank


def env_info() -> DistInfo:
    """What torchrun told this process (a single process when it told nothing)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    return DistInfo(rank, world, int(os.environ.get("LOCAL_RANK", str(rank))))


def setup(device: str, batch_size: int) -> tuple[DistInfo, str]:
    """Join the process group when launched by torchrun; returns the info and this rank's device."""
    info = env_info()
    if not info.enabled:
        return info, device
    if batch_size % info.world:
        raise ValueError(f"batch_size ({batch_size}) must be divisible by the number of processes ({info.world})")
    if device.startswith("cuda"):
        device = f"cuda:{info.local_rank}"
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        dist.init_process_group(backend="nccl" if device.startswith("cuda") else "gloo")
    return info, device


def wrap(model: nn.Module, info: DistInfo, device: str) -> nn.Module:
    if not info.enabled:
        return model
    from torch.nn.parallel import DistributedDataParallel

    from tui_lab.model.moe import SparseMoE

    ids = [torch.device(device).index] if device.startswith("cuda") else None
    # A rank's tokens may leave an expert unchosen: DDP must then not wait for that expert's gradient.
    sparse = any(isinstance(m, SparseMoE) for m in model.modules())
    return DistributedDataParallel(model, device_ids=ids, find_unused_parameters=sparse)


def all_sum(values: torch.Tensor, info: DistInfo) -> torch.Tensor:
    """Element-wise sum over ranks (a no-op for one process)."""
    if info.enabled:
        dist.all_reduce(values, op=dist.ReduceOp.SUM)
    return values


def barrier(info: DistInfo) -> None:
    if info.enabled:
        dist.barrier()


def teardown(info: DistInfo) -> None:
    if info.enabled and dist.is_initialized():
        dist.destroy_process_group()
