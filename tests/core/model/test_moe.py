"""Sparse mixture-of-experts: the config's rules, our layer against transformers' Mixtral (same experts
chosen, same outputs, same balancing loss), and the trainer's aux loss and expert load."""

import pytest
import torch

from tui_lab.config import ModelConfig
from tui_lab.model.moe import SparseMoE, load_balancing_loss, record_routing, route
from tui_lab.train.config import train_config_for
from tui_lab.train.trainer import Trainer

transformers = pytest.importorskip("transformers")
from transformers.models.mixtral import modeling_mixtral as hf  # noqa: E402

E, F, X, K = 16, 24, 4, 2


def moe_config(**changes) -> ModelConfig:
    base = dict(d_model=E, heads=4, d_ff=F, vocab=40, max_len=32, ffn="moe", experts=X, experts_per_token=K,
                activation="swiglu", norm="rmsnorm", positions="rope", bias=False, tie_embeddings=False,
                dropout=0.0)
    return ModelConfig(**(base | changes))


def hf_config(**changes):
    base = dict(hidden_size=E, intermediate_size=F, num_local_experts=X, num_experts_per_tok=K, vocab_size=40,
                num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=32,
                rope_parameters={"rope_type": "default", "rope_theta": 10000.0}, tie_word_embeddings=False)
    return transformers.MixtralConfig(**(base | changes))


def copy_moe(ours: SparseMoE, theirs) -> None:
    """Mixtral's experts as 3-D tensors: gate_up_proj (X, 2F, E) gate rows first; down_proj (X, E, F)."""
    with torch.no_grad():
        ours.router.weight.copy_(theirs.gate.weight)
        for i, expert in enumerate(ours.experts):
            gate, up = theirs.experts.gate_up_proj[i].chunk(2, dim=0)
            expert.gate.weight.copy_(gate)
            expert.up.weight.copy_(up)
            expert.down.weight.copy_(theirs.experts.down_proj[i])


@pytest.mark.parametrize("field, value, message", [
    ("experts", 1, r"^experts \(1\) must be at least 2 for ffn 'moe'$"),
    ("experts_per_token", 0, r"^experts_per_token \(0\) must be between 1 and experts \(4\) for ffn 'moe'$"),
    ("experts_per_token", 5, r"^experts_per_token \(5\) must be between 1 and experts \(4\) for ffn 'moe'$"),
])
def test_a_bad_moe_setting_is_one_line_naming_the_field(field, value, message):
    with pytest.raises(ValueError, match=message):
        moe_config(**{field: value})


def test_a_dense_ffn_keeps_experts_at_zero():
    with pytest.raises(ValueError, match=r"^experts \(4\) must be 0 unless ffn is 'moe'$"):
        ModelConfig(experts=4)
    with pytest.raises(ValueError, match=r"^experts_per_token \(2\) must be 0 unless ffn is 'moe'$"):
        ModelConfig(experts_per_token=2)


def test_routing_and_output_equal_mixtrals_sparse_moe_block():
    torch.manual_seed(0)
    theirs = hf.MixtralSparseMoeBlock(hf_config())
    for p in theirs.parameters():
        torch.nn.init.normal_(p, std=0.3)
    ours = SparseMoE(moe_config())
    copy_moe(ours, theirs)
    x = torch.randn(3, 7, E)  # (N, L, E)
    _, their_weights, their_chosen = theirs.gate(x.reshape(-1, E))
    weights, chosen = route(ours.router(x.reshape(-1, E)), K)
    assert torch.equal(chosen, their_chosen)
    assert torch.allclose(weights, their_weights, atol=1e-6)
    assert len(set(chosen.flatten().tolist())) == X  # every expert is exercised somewhere
    assert torch.allclose(ours(x), theirs(x), atol=1e-5)


def test_balancing_loss_equals_transformers_with_and_without_padding():
    torch.manual_seed(1)
    model = SparseMoE(moe_config())
    x, mask = torch.randn(2, 9, E), torch.ones(2, 9, dtype=torch.bool)
    mask[1, 5:] = False
    holder = torch.nn.ModuleDict({"decoder": torch.nn.ModuleList([torch.nn.ModuleDict({"ffn": model})])})
    with record_routing(holder) as routing:
        model(x), model(x * 2)  # two passes through one layer stand for two layers
    assert [r.layer for r in routing] == ["decoder.0", "decoder.0"]
    logits = tuple(r.logits for r in routing)
    ours = load_balancing_loss(routing, X, K)
    assert torch.allclose(ours, hf.load_balancing_loss_func(logits, X, K), atol=1e-6)
    masked = load_balancing_loss(routing, X, K, {"decoder": mask})
    assert torch.allclose(masked, hf.load_balancing_loss_func(logits, X, K, mask), atol=1e-6)
    assert not torch.allclose(masked, ours)


def _rope_rows(d_head: int) -> list[int]:
    """Our RoPE rotates pairs (2i, 2i+1); Llama/Mixtral rotate (i, i + d/2): the row order that maps theirs to ours."""
    return [i // 2 + (d_head // 2 if i % 2 else 0) for i in range(d_head)]


def copy_mixtral(ours, theirs) -> None:
    c = ours.config
    order = torch.tensor([h * c.d_head + j for h in range(c.heads) for j in _rope_rows(c.d_head)])
    m = theirs.model
    with torch.no_grad():
        ours.tok_embed.weight.copy_(m.embed_tokens.weight)
        ours.lm_head.weight.copy_(theirs.lm_head.weight)
        ours.decoder_norm.weight.copy_(m.norm.weight)
        for block, layer in zip(ours.decoder, m.layers, strict=True):
            a = layer.self_attn
            block.attn.qkv.weight.copy_(torch.cat([a.q_proj.weight[order], a.k_proj.weight[order], a.v_proj.weight]))
            block.attn.out.weight.copy_(a.o_proj.weight)
            block.attn_norm.weight.copy_(layer.input_layernorm.weight)
            block.ffn_norm.weight.copy_(layer.post_attention_layernorm.weight)
            copy_moe(block.ffn, layer.mlp)


def test_a_tiny_mixtral_gives_the_same_logits_and_experts_as_ours():
    from tui_lab import build_model

    torch.manual_seed(2)
    theirs = transformers.MixtralForCausalLM(hf_config()).eval()
    for name, p in theirs.named_parameters():
        if "norm" not in name:
            torch.nn.init.normal_(p, std=0.2)
    ours = build_model(moe_config(decoder_layers=2, norm_eps=hf_config().rms_norm_eps)).eval()
    copy_mixtral(ours, theirs)
    ids = torch.randint(0, 40, (2, 11))
    with torch.no_grad(), record_routing(ours) as routing:
        out = theirs(ids, output_router_logits=True)
        logits = ours(ids)
    assert torch.allclose(logits, out.logits, atol=1e-4)
    for record, their_logits in zip(routing, out.router_logits, strict=True):
        assert torch.equal(route(record.logits, K)[1], route(their_logits, K)[1])


def test_training_steps_report_the_aux_loss_and_expert_load():
    config = moe_config(decoder_layers=2, vocab=256)
    events = []
    train = train_config_for(None, steps=2, batch_size=4, seq_len=16, eval_every=0, sample_every=0)
    trainer = Trainer(config, train, on_event=events.append)
    step = trainer.step()
    assert step.aux_loss == pytest.approx(K, rel=0.2)  # near-uniform router at init: about K
    assert len(step.expert_load) == 2 and all(len(row) == X for row in step.expert_load)
    assert all(sum(row) == 4 * 16 * K for row in step.expert_load)  # every token counted in K columns
    assert "aux_loss" in step.to_dict() and "expert_load" in step.to_dict()


def test_the_aux_loss_moves_the_router_and_its_coefficient_matters():
    def router_grad(coef: float) -> torch.Tensor:
        train = train_config_for(None, steps=1, batch_size=4, seq_len=16, router_aux_loss_coef=coef, grad_clip=0.0)
        trainer = Trainer(moe_config(vocab=256), train)
        trainer.optimizer.step = lambda: None  # keep the gradients to look at them
        trainer.optimizer.zero_grad = lambda set_to_none=True: None
        trainer.step()
        return trainer.model.decoder[0].ffn.router.weight.grad.clone()

    assert not torch.allclose(router_grad(0.0), router_grad(1.0))


def test_a_dense_run_reports_no_router_fields():
    train = train_config_for(None, steps=1, batch_size=2, seq_len=8, eval_every=0, sample_every=0)
    step = Trainer(ModelConfig(d_model=16, heads=2, d_ff=32, vocab=256), train).step()
    assert step.aux_loss is None and "expert_load" not in step.to_dict()


def test_active_parameters_are_everything_but_the_unchosen_experts():
    from tui_lab import build_model
    from tui_lab.analysis import count_params

    for config in (moe_config(decoder_layers=3), moe_config(family="encoder-decoder", encoder_layers=2,
                                                           decoder_layers=1, bias=True, tie_embeddings=True)):
        model = build_model(config, device="meta")
        total = sum(p.numel() for p in model.parameters())
        moes = [m for m in model.modules() if isinstance(m, SparseMoE)]
        idle = sum(p.numel() for m in moes for e in m.experts[K:] for p in e.parameters())
        counted = count_params(config)
        assert (counted.total, counted.active) == (total, total - idle)
        assert counted.to_dict()["active_params"] == counted.active


def test_flops_follow_the_active_parameters_and_the_trace_sums_to_the_total():
    from tui_lab.analysis import count_params, flops_per_token, shape_trace

    sparse, dense = moe_config(decoder_layers=2), moe_config(decoder_layers=2, ffn="dense", experts=0,
                                                             experts_per_token=0)
    router = 2 * 2 * E * X  # two layers, a multiply-add each
    assert flops_per_token(sparse, 16) == flops_per_token(dense, 16) + (K - 1) * 2 * 2 * 3 * E * F + router
    leaves = [r for r in shape_trace(sparse, 2, 8) if not r.kind.endswith("block")]
    assert sum(r.params for r in leaves) == count_params(sparse).total
    assert [r.output_shape for r in leaves if r.path == "decoder.0.ffn.router"] == [(2, 8, X)]


def _moe_decoder():
    from tui_lab import build_model

    torch.manual_seed(3)
    model = build_model(moe_config(decoder_layers=2)).eval()
    for block in model.decoder:  # a sharper router than the init's, so that tokens really differ in experts
        torch.nn.init.normal_(block.ffn.router.weight, std=1.0)
    return model


def test_an_moe_decoder_is_causal():
    model = _moe_decoder()
    ids = torch.randint(0, 40, (2, 10))
    changed = ids.clone()
    changed[:, -1] = (ids[:, -1] + 1) % 40
    a, b = model(ids), model(changed)
    assert torch.allclose(a[:, :-1], b[:, :-1], atol=1e-6)
    assert not torch.allclose(a[:, -1], b[:, -1])


def test_moe_padding_and_batch_mates_change_no_real_token():
    """No expert capacity (Mixtral's dropless routing): a token's experts and output depend on it alone."""
    model = _moe_decoder()
    ids = torch.randint(0, 40, (3, 8))
    keep = torch.tensor([[True] * 8, [True] * 5 + [False] * 3, [True] * 2 + [False] * 6])
    with record_routing(model) as routing:
        padded = model(ids, tgt_mask=keep)
    for row, length in ((1, 5), (2, 2)):
        assert torch.allclose(padded[row, :length], model(ids[row:row + 1, :length])[0], atol=1e-5)
    chosen = [route(r.logits, K)[1].view(3, 8, K) for r in routing]
    assert all(len(set(c[..., 0].flatten().tolist())) > 1 for c in chosen)  # the router really splits tokens


def test_moe_cached_logits_and_greedy_equal_uncached():
    from tui_lab.generation import generate

    model = _moe_decoder()
    ids = torch.randint(0, 40, (2, 12))
    full = model(ids)
    cache = model.new_cache(batch=2, capacity=12)
    parts = [model.decode(ids[:, :5], cache=cache)] + [model.decode(ids[:, t:t + 1], cache=cache) for t in range(5, 12)]
    assert torch.allclose(torch.cat(parts, dim=1), full, atol=1e-5)
    prompt = ids[:, :4]
    cached = generate(model, prompt, 16, temperature=0.0, use_cache=True)
    assert torch.equal(cached, generate(model, prompt, 16, temperature=0.0, use_cache=False))


def test_an_moe_run_saved_and_resumed_equals_one_straight_run(tmp_path):
    train = train_config_for(None, steps=4, batch_size=4, seq_len=16, eval_every=0, sample_every=0)
    config = moe_config(vocab=256)
    straight = Trainer(config, train)
    for _ in range(4):
        straight.step()
    first = Trainer(config, train)
    first.step(), first.step()
    first.save(tmp_path / "ckpt")
    resumed = Trainer.from_checkpoint(tmp_path / "ckpt")
    assert resumed.model_config.ffn == "moe" and resumed.train_config.router_aux_loss_coef == 0.01
    resumed.step()
    last = resumed.step()
    assert last.expert_load is not None
    for name, tensor in straight.model.state_dict().items():
        assert torch.equal(tensor, resumed.model.state_dict()[name]), name
