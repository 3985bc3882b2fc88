"""GPT-2 tensors: read them without running code, and map them onto our modules and back.

HF's GPT-2 stores its projections as `Conv1D`, whose weight is (in, out): the transpose of an
`nn.Linear` weight (out, in). `c_attn` is the fused q|k|v projection, columns q then k then v, which
is exactly our `attn.qkv` (rows q|k|v) once transposed. Dimension legend: V vocab, P positions,
E d_model, F d_ff.
"""

from __future__ import annotations

import json
import pickle
import re
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import torch
from safetensors import SafetensorError, safe_open
from torch import Tensor

from tui_lab.config import ModelConfig
from tui_lab.errors import one_line
from tui_lab.hf.slots import Slot

# Non-parameter buffers old checkpoints carry (the causal mask and its fill value): not weights.
IGNORED = re.compile(r"^h\.\d+\.attn\.(bias|masked_bias)$")
PREFIX = "transformer."
HEAD = "lm_head.weight"


def gpt2_slots(c: ModelConfig) -> dict[str, Slot]:
    """HF name (without 'transformer.') -> Slot, for every tensor a GPT-2 of config `c` has."""
    e, f, v = c.d_model, c.d_ff, c.vocab
    slots = {"wte.weight": Slot("tok_embed.weight", (v, e)), "wpe.weight": Slot("pos_embed.weight", (c.max_len, e))}
    for i in range(c.decoder_layers):
        h, d = f"h.{i}.", f"decoder.{i}."
        slots |= _norm(h + "ln_1", d + "attn_norm", e) | _norm(h + "ln_2", d + "ffn_norm", e)
        slots |= _conv(h + "attn.c_attn", d + "attn.qkv", e, 3 * e) | _conv(h + "attn.c_proj", d + "attn.out", e, e)
        slots |= _conv(h + "mlp.c_fc", d + "ffn.up", e, f) | _conv(h + "mlp.c_proj", d + "ffn.down", f, e)
    slots |= _norm("ln_f", "decoder_norm", e)
    if not c.tie_embeddings:
        slots["lm_head.weight"] = Slot("lm_head.weight", (v, e))
    return slots


def _norm(hf: str, ours: str, e: int) -> dict[str, Slot]:
    return {f"{hf}.weight": Slot(f"{ours}.weight", (e,)), f"{hf}.bias": Slot(f"{ours}.bias", (e,))}


def _conv(hf: str, ours: str, n_in: int, n_out: int) -> dict[str, Slot]:
    return {f"{hf}.weight": Slot(f"{ours}.weight", (n_in, n_out), True), f"{hf}.bias": Slot(f"{ours}.bias", (n_out,))}


# -- reading ---------------------------------------------------------------------------------------

@dataclass
class TensorFile:
    """Names and shapes of a checkpoint's tensors, each read only when asked for (peak memory ~ model)."""

    shapes: dict[str, tuple[int, ...]]
    read: Callable[[str], Tensor]


def open_weights(path: Path) -> TensorFile:
    """model.safetensors, pytorch_model.bin, or a sharded index of either; ValueError for anything unsafe."""
    if path.name.endswith(".index.json"):
        return _open_index(path)
    if path.suffix == ".safetensors":
        return _open_safetensors(path)
    return _open_pickle(path)


def _open_safetensors(path: Path) -> TensorFile:
    try:
        handle = safe_open(str(path), framework="pt", device="cpu")
        shapes = {name: tuple(handle.get_slice(name).get_shape()) for name in handle.keys()}
    except (SafetensorError, OSError, ValueError) as err:
        raise ValueError(f"{path.name}: not a readable safetensors file ({one_line(err)})") from None

    def read(name: str) -> Tensor:
        try:
            return handle.get_tensor(name)
        except (SafetensorError, OSError, ValueError) as err:
            raise ValueError(f"{path.name}: cannot read tensor {name} ({one_line(err)})") from None

    return TensorFile(shapes, read)


def _open_pickle(path: Path) -> TensorFile:
    """torch.load with weights_only=True: the unpickler only builds tensors and plain containers."""
    try:
        with warnings.catch_warnings():  # torch warns about pickle protocols on stderr; we say it in one line
            warnings.simplefilter("ignore")
            data = torch.load(path, map_location="cpu", weights_only=True, mmap=zipfile.is_zipfile(path))
    except pickle.UnpicklingError as err:
        found = re.search(r"GLOBAL ([\w.]+)", str(err))  # torch names the callable it blocked
        asks = f"it asks for {found.group(1)}" if found else "it is not a plain pickle of tensors"
        raise ValueError(f"{path.name}: refused, the pickle would run code, not just hold tensors ({asks}); "
                         "nothing was executed; convert it to model.safetensors") from None
    except Exception as err:  # torch raises RuntimeError, EOFError, zipfile errors... for a damaged file
        raise ValueError(f"{path.name}: cannot read it ({type(err).__name__}: {one_line(err)})") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(t, Tensor) for k, t in data.items()):
        raise ValueError(f"{path.name}: expected a flat dict of named tensors, got {type(data).__name__}")
    return TensorFile({k: tuple(t.shape) for k, t in data.items()}, data.__getitem__)


def _open_index(path: Path) -> TensorFile:
    """`*.index.json` maps each tensor to a shard file in the same folder (never a path elsewhere)."""
    try:
        weight_map = json.loads(path.read_text(encoding="utf-8"))["weight_map"]
        shard_names = sorted(set(weight_map.values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
        raise ValueError(f"{path.name}: not a valid shard index ({one_line(err)})") from None
    shards = {}
    for name in shard_names:
        if not isinstance(name, str) or Path(name).name != name or name.startswith("."):
            raise ValueError(f"{path.name}: shard {name!r} must be a plain file name in the same folder")
        shards[name] = open_weights(path.parent / name)
    shapes = {k: shards[s].shapes[k] for s in shards for k in shards[s].shapes}
    return TensorFile(shapes, lambda key: shards[weight_map[key]].read(key))



# -- mapping ---------------------------------------------------------------------------------------

def match_names(weights: TensorFile, slots: dict[str, Slot], strip: str = PREFIX, ignored: re.Pattern = IGNORED,
                what: str = "GPT-2") -> dict[str, str]:
    """HF name in our slot table -> name in the file, after checking nothing is missing or extra."""
    aliases = {alias: name for name, slot in slots.items() for alias in slot.aliases}
    found: dict[str, str] = {}
    head = None
    for stored in weights.shapes:
        name = stored.removeprefix(strip) if strip else stored
        if ignored.match(name):
            continue
        if name == HEAD and name not in slots:
            head = stored  # tied, and equal to the embedding (`untie_stored_head` kept a different one)
            continue
        if name in aliases:
            found.setdefault(aliases[name], stored)  # a tied copy: used only when the main name is absent
            continue
        if name not in slots:
            raise ValueError(f"unexpected tensor {stored} {list(weights.shapes[stored])}: not part of a {what}")
        found[name] = stored
    embedding = next((name for name, slot in slots.items() if slot.ours == "tok_embed.weight"), None)
    if head is not None and embedding is not None and embedding not in found:
        found[embedding] = head  # transformers ties the other way round when only the head is stored
    missing = [name for name in slots if name not in found]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise ValueError(f"checkpoint lacks tensor {missing[0]}{more}")
    for name, slot in slots.items():
        shape = weights.shapes[found[name]]
        if shape != slot.hf_shape:
            raise ValueError(f"tensor {found[name]} has shape {list(shape)}; config.json implies {list(slot.hf_shape)}")
    return found


def untie_stored_head(weights: TensorFile, config: ModelConfig, family=None,
                      dtype: torch.dtype = torch.float32) -> tuple[ModelConfig, str]:
    """(config, "") or, when config.json ties the output layer to the embedding but the weights store a head that
    differs from it, (the config untied, one line for people saying so).

    transformers 5.24's `tie_weights` at load: a tied pair whose two tensors are both stored and not equal (at the
    dtype the model loads in) is left untied, with a warning; equal or absent, the head is the embedding."""
    if not config.tie_embeddings or not config.vocab:
        return config, ""
    slots = gpt2_slots(replace(config, tie_embeddings=False)) if family is None else \
        family.slots(replace(config, tie_embeddings=False))
    strip = PREFIX if family is None else family.strip
    stored = {(name.removeprefix(strip) if strip else name): name for name in weights.shapes}
    head = next((name for name, slot in slots.items() if slot.ours == "lm_head.weight"), None)
    embedding = next((name for name, slot in slots.items() if slot.ours == "tok_embed.weight"), None)
    if head not in stored or embedding is None:
        return config, ""
    embedding = next((stored[n] for n in (embedding, *slots[embedding].aliases) if n in stored), None)
    if embedding is None:
        return config, ""
    ours, theirs = weights.read(stored[head]), weights.read(embedding)
    if ours.shape == theirs.shape and torch.equal(ours.to(dtype), theirs.to(dtype)):
        return config, ""
    return replace(config, tie_embeddings=False), (
        f"config.json ties the output layer to the embedding, but the weights store {stored[head]} and it differs "
        f"from {embedding}: both kept, as transformers does")


def our_state_dict(weights: TensorFile, config: ModelConfig, device, dtype: torch.dtype,
                   family=None) -> dict[str, Tensor]:
    """Our parameter names -> tensors in our layout, on `device` as `dtype` (GPT-2 unless `family` says)."""
    slots = gpt2_slots(config) if family is None else family.slots(config)
    strip, ignored = (PREFIX, IGNORED) if family is None else (family.strip, family.ignored)
    stored = match_names(weights, slots, strip, ignored, "GPT-2" if family is None else family.label)
    parts: dict[str, list[Tensor]] = {}
    for name, slot in slots.items():
        tensor = weights.read(stored[name])
        if not tensor.is_floating_point():
            raise ValueError(f"tensor {stored[name]} is {tensor.dtype}; weights must be floating point")
        if slot.zero_only:
            if tensor.any():
                raise ValueError(f"tensor {stored[name]} is not all zeros; our model has no {slot.zero_only}")
            continue
        parts.setdefault(slot.ours, []).append(_our_layout(tensor, slot))
    state = {}
    for ours, tensors in parts.items():  # q, k and v stack into one fused projection, in table order
        tensor = tensors[0] if len(tensors) == 1 else torch.cat(tensors)
        state[ours] = tensor.to(device=device, dtype=dtype, copy=True, memory_format=torch.contiguous_format)
    if config.tie_embeddings:
        state["lm_head.weight"] = state["tok_embed.weight"]
    return state


def _our_layout(tensor: Tensor, slot: Slot) -> Tensor:
    if slot.conv1d:
        tensor = tensor.t()
    if slot.flatten:  # a leading unit dimension ours lacks: (1, V) -> (V,), (1, P, E) -> (P, E)
        tensor = tensor.flatten(0, 1)
    if slot.rope_heads:
        # (heads * D, ...) rows per head [first halves | second halves] -> pairs (2i, 2i+1) interleaved
        tensor = tensor.unflatten(0, (slot.rope_heads, 2, -1)).transpose(1, 2).flatten(0, 2)
    return tensor


def hf_state_dict(model: torch.nn.Module) -> dict[str, Tensor]:
    """HF GPT2LMHeadModel names -> CPU tensors in HF's layout; a tied lm_head is left out, as HF does."""
    ours = model.state_dict()
    out = {}
    for name, slot in gpt2_slots(model.config).items():
        tensor = ours[slot.ours].detach()
        tensor = tensor.t() if slot.conv1d else tensor
        key = name if name == "lm_head.weight" else PREFIX + name
        out[key] = tensor.to(device="cpu", copy=True, memory_format=torch.contiguous_format)
    return out
