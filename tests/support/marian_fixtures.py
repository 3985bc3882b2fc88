"""Tiny trained Marian folders (sentencepiece source and target), one with banned ids, for the Marian tests."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest
from hf_family_fixtures import save_marian

spm = pytest.importorskip("sentencepiece")


transformers = pytest.importorskip("transformers")


ENGLISH = [
    "I have seen the film today",
    "we have seen the house",
    "the cat sat on the mat",
    "today the film was good",
    "I have seen a cat on the mat",
    "the house is old and the cat is young",
]


GERMAN = [
    "ich habe heute den Film gesehen",
    "wir haben das Haus gesehen",
    "die Katze sass auf der Matte",
    "heute war der Film gut",
    "ich habe eine Katze auf der Matte gesehen",
    "das Haus ist alt und die Katze jung",
]


# Covered by source.spm's pieces; the last two hold characters no training sentence has (<unk> pieces).
SENTENCES = [
    "I have seen the film today",
    "the cat sat on the mat",
    "we have seen a good film",
    "the old house",
    "I have seen the zebra",
    "Quokka? 7 films!",
]


def _train(lines: list[str], size: int) -> bytes:
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(lines * 20),
        model_writer=model,
        vocab_size=size,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
        model_type="bpe",
    )  # on six sentences the unigram trainer stops at ~34 pieces
    return model.getvalue()


def save_marian_folder(folder: Path) -> tuple[object, int]:
    """A Marian folder with tokenizer files and random weights; (the transformers model, vocab size)."""
    folder.mkdir(parents=True, exist_ok=True)
    protos = {"source.spm": _train(ENGLISH, 50), "target.spm": _train(GERMAN, 50)}
    pieces: list[str] = []
    for name, proto in protos.items():
        (folder / name).write_bytes(proto)
        model = spm.SentencePieceProcessor(model_proto=proto)
        pieces += [model.id_to_piece(i) for i in range(model.get_piece_size())]
    pieces = [p for p in dict.fromkeys(pieces) if p not in ("<unk>", "<s>", "</s>")]
    vocab = {piece: i for i, piece in enumerate(["</s>", "<unk>", *pieces, "<pad>"])}
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    return save_marian(folder, vocab=len(vocab)), len(vocab)


def trained_marian(tmp_path_factory) -> Path:
    """A Marian folder whose model translates ENGLISH into GERMAN (memorised: 100 Adam steps, a few s of CPU).

    Random weights repeat one token whatever the source; a trained model gives a real translation to
    compare token for token and real cross-attention to draw. Made once per session (the app tests use it)."""
    folder = tmp_path_factory.getbasetemp() / "marian-trained"
    if (folder / "config.json").is_file():
        return folder
    import torch

    building = tmp_path_factory.mktemp("marian-training")
    model, _ = save_marian_folder(building)
    tokenizer = transformers.MarianTokenizer.from_pretrained(str(building))
    batch = tokenizer(ENGLISH, text_target=GERMAN, return_tensors="pt", padding=True)
    labels = batch["labels"].masked_fill(batch["labels"] == tokenizer.pad_token_id, -100)
    with torch.random.fork_rng():
        torch.manual_seed(0)
        with torch.no_grad():  # small weights and plain norms: the fixture's N(0, 0.2) everywhere trains slowly
            for name, param in model.named_parameters():
                if "layer_norm" in name:
                    param.fill_(1.0) if name.endswith("weight") else param.zero_()
                elif "embed_positions" not in name:
                    param.normal_(0.0, 0.05)
        for module in model.modules():
            if isinstance(module, torch.nn.Dropout):
                module.p = 0.0
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
        model.train()
        for _ in range(100):
            loss = model(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], labels=labels).loss
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    model.eval().save_pretrained(building)
    building.rename(folder)
    return folder


TOKENIZER_FILES = ("source.spm", "target.spm", "vocab.json")


def banned_marian(tmp_path_factory, name: str, bans: list[list[int]] | None, pad_bias: float = 0.0) -> Path:
    """The trained folder saved again with `bans` in generation_config.json and `pad_bias` added to pad's
    final_logits_bias (the layout of a hub folder: save_pretrained writes the file transformers reads back)."""
    import torch

    trained = trained_marian(tmp_path_factory)
    folder = tmp_path_factory.getbasetemp() / name
    if (folder / "config.json").is_file():
        return folder
    model = transformers.MarianMTModel.from_pretrained(str(trained)).eval()
    with torch.no_grad():
        model.final_logits_bias[0, model.config.pad_token_id] += pad_bias
    model.generation_config.bad_words_ids = bans
    building = tmp_path_factory.mktemp(name)
    model.save_pretrained(building)
    for file in TOKENIZER_FILES:
        shutil.copy(trained / file, building / file)
    building.rename(folder)
    return folder

