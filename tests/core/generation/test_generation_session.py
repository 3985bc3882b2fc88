"""The one decoding loop the CLI and the app share (`complete`) and the one settings check."""

from __future__ import annotations

import pytest
import torch
from generate_support import VOCAB, ids, model_for, tiny

from tui_lab.data.byte_codec import ByteCodec
from tui_lab.generation import generate
from tui_lab.generation.session import complete
from tui_lab.generation.settings import GenerationSettings


class Codec:
    def __init__(self, bos_id: int | None = None, eos_id: int | None = None) -> None:
        self.bos_id, self.eos_id = bos_id, eos_id


@pytest.mark.parametrize("kw, field", [
    (dict(max_new_tokens=0), "max_new_tokens .* >= 1"), (dict(temperature=-1), "temperature"),
    (dict(top_k=0), "top_k"), (dict(top_p=1.5), "top_p"), (dict(beam_size=0), "beam_size"),
])
def test_settings_are_checked_once_when_made(kw, field):
    with pytest.raises(ValueError, match=f"^{field}"):
        GenerationSettings(**kw)
    with pytest.raises(ValueError, match=f"^{field}"):  # generate() applies the same rule
        generate(model_for(tiny()), ids(1, 3), **{"max_new_tokens": 3, **kw})


def test_streams_every_token_and_matches_generate():
    model, prompt = model_for(tiny()), ids(1, 5)[0].tolist()
    seen = []
    done = complete(model, Codec(), prompt, GenerationSettings(max_new_tokens=6, temperature=0), on_token=seen.append,
                    need_attention=True)
    expected = generate(model, torch.tensor([prompt]), 6, temperature=0)[0, 5:].tolist()
    assert done.ids == expected and [t.id for t in seen] == expected and seen[-1].ids == expected
    assert [t.index for t in seen] == list(range(6)) and all(0 < t.prob <= 1 for t in seen)
    assert seen[2].attentions[-1].weights.shape[-1] == 5 + 2  # the query that predicted token 2 saw 7 tokens
    assert not done.cancelled and not done.slid and done.seconds > 0
    assert done.summary(GenerationSettings(beam_size=2)).startswith("6 tokens in") and "beam 2" in \
        done.summary(GenerationSettings(beam_size=2))


def test_sampling_is_seeded_and_stop_keeps_what_was_made():
    model, prompt = model_for(tiny()), ids(1, 3)[0].tolist()
    settings = GenerationSettings(max_new_tokens=10, seed=5)
    assert complete(model, Codec(), prompt, settings).ids == complete(model, Codec(), prompt, settings).ids
    made = []
    done = complete(model, Codec(), prompt, settings, on_token=made.append, should_stop=lambda: len(made) >= 4)
    assert done.cancelled and len(done.ids) == 4


def test_beam_search_hands_its_tokens_over_at_the_end_and_encoder_decoders_skip_bos():
    model = model_for(tiny("encoder-decoder"))
    src = ids(1, 4)[0].tolist()
    seen = []
    done = complete(model, Codec(bos_id=1, eos_id=2), src, GenerationSettings(max_new_tokens=5, beam_size=3),
                    on_token=seen.append)
    full = generate(model, torch.tensor([src]), 5, beam_size=3, bos_id=1, eos_id=2)[0].tolist()
    assert done.ids == full[1:] and [t.id for t in seen] == done.ids and seen[0].prob is None


def test_a_long_prompt_past_max_len_is_cropped_and_slides():
    model = model_for(tiny(max_len=8))
    done = complete(model, ByteCodec(VOCAB), ids(1, 10)[0].tolist(), GenerationSettings(max_new_tokens=3))
    assert done.cropped and done.slid and len(done.ids) == 3


def test_tokens_carry_their_top_candidates_when_asked():
    model = model_for(tiny())
    seen = []
    done = complete(model, Codec(), ids(1, 4)[0].tolist(), GenerationSettings(max_new_tokens=5, temperature=0),
                    on_token=seen.append, need_candidates=5)
    assert len(seen) == 5 and all(len(t.candidates) == 5 for t in seen)
    for t in seen:
        assert t.candidates[0] == (t.id, pytest.approx(t.prob, abs=1e-6))  # greedy: the chosen is the likeliest
    assert done.ids == [t.id for t in seen]
    beam = []
    complete(model, Codec(), [1, 2], GenerationSettings(max_new_tokens=3, beam_size=2), on_token=beam.append,
             need_candidates=5)
    assert all(t.candidates is None for t in beam)  # beam search chooses whole sequences, not one token of five
