"""The Llama presets: exact totals as transformers counts them, memory refusal for the big one, and
llama-toy's maths equal to transformers' LlamaForCausalLM with the same weights."""

import pytest
import torch

from tui_lab import build_model, load_preset
from tui_lab.analysis import count_params, memory
from tui_lab.loading import load_model


@pytest.mark.parametrize("name, total", [("llama-2-7b", 6_738_415_616), ("smollm2-135m", 134_515_008)])
def test_llama_presets_count_exactly_as_llama_for_causal_lm(name, total):
    config = load_preset(name)
    assert count_params(config).total == total
    assert sum(p.numel() for p in build_model(config, device="meta").parameters()) == total


def test_kv_cache_per_token_follows_kv_heads():
    smol, llama = load_preset("smollm2-135m"), load_preset("llama-2-7b")
    assert memory(smol).kv_cache_per_token == 2 * 30 * 3 * 64 * 4  # 3 kv heads, not 9: a third of MHA's
    assert memory(smol.replace(kv_heads=0)).kv_cache_per_token == 3 * memory(smol).kv_cache_per_token
    assert memory(llama).kv_cache_per_token == 2 * 32 * 4096 * 4  # 1 MiB a token in fp32


def test_building_llama_2_7b_is_refused_where_it_does_not_fit():
    from tui_lab.devices import free_memory

    free = free_memory("cpu")
    if free is None or memory(load_preset("llama-2-7b")).weights < free:
        pytest.skip("this machine has room for 25 GiB of weights")
    with pytest.raises(ValueError, match="refused: the weights need 25.1 GiB"):
        load_model("preset", "llama-2-7b")


def _rope_rows(w: torch.Tensor, heads: int) -> torch.Tensor:
    """HF rotates the halves (j, j + D/2) of each head, we rotate adjacent pairs (2j, 2j + 1): interleave rows."""
    d = w.shape[0] // heads
    return w.view(heads, 2, d // 2, -1).transpose(1, 2).reshape(heads * d, -1)


def test_llama_toy_equals_transformers_llama_with_copied_weights():
    transformers = pytest.importorskip("transformers")
    config = load_preset("llama-toy", vocab=64, max_len=64)
    hf_config = transformers.LlamaConfig(
        vocab_size=config.vocab, hidden_size=config.d_model, intermediate_size=config.d_ff,
        num_hidden_layers=config.decoder_layers, num_attention_heads=config.heads,
        num_key_value_heads=config.n_kv_heads, max_position_embeddings=config.max_len, rms_norm_eps=config.norm_eps,
        tie_word_embeddings=True, attention_bias=False, mlp_bias=False)
    torch.manual_seed(0)
    theirs = transformers.LlamaForCausalLM(hf_config).eval()
    ours = build_model(config).eval()
    sd = theirs.state_dict()
    mine = {"tok_embed.weight": sd["model.embed_tokens.weight"], "decoder_norm.weight": sd["model.norm.weight"],
            "lm_head.weight": sd["lm_head.weight"]}
    for i in range(config.decoder_layers):
        hf = f"model.layers.{i}."
        q = _rope_rows(sd[hf + "self_attn.q_proj.weight"], config.heads)
        k = _rope_rows(sd[hf + "self_attn.k_proj.weight"], config.n_kv_heads)
        mine |= {f"decoder.{i}.attn.qkv.weight": torch.cat([q, k, sd[hf + "self_attn.v_proj.weight"]]),
                 f"decoder.{i}.attn.out.weight": sd[hf + "self_attn.o_proj.weight"],
                 f"decoder.{i}.attn_norm.weight": sd[hf + "input_layernorm.weight"],
                 f"decoder.{i}.ffn_norm.weight": sd[hf + "post_attention_layernorm.weight"],
                 f"decoder.{i}.ffn.gate.weight": sd[hf + "mlp.gate_proj.weight"],
                 f"decoder.{i}.ffn.up.weight": sd[hf + "mlp.up_proj.weight"],
                 f"decoder.{i}.ffn.down.weight": sd[hf + "mlp.down_proj.weight"]}
    ours.load_state_dict(mine)
    ids = torch.randint(0, config.vocab, (2, 20))
    with torch.no_grad():
        expected = theirs(ids).logits
    assert (ours(ids) - expected).abs().max() < 1e-4
    assert (ours.run(ids, need_weights=True).logits - expected).abs().max() < 1e-4
