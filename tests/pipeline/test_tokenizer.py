"""Token counts and ids of kept rows: long texts are encoded in pieces with the same ids as whole."""

import functools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

from pipeline import tokenizer as tokenization
from pipeline.tokenizer import BUNDLED_TOKENIZER, RowTokenizer, load_tokenizer, text_pieces

WORDS = "the river farm valley über naïve 東京 です。 ünïcödé 123 4.5 don't ( ) -- ... \t 🙂 ok".split(" ")


@functools.cache
def shipped() -> Tokenizer:
    return load_tokenizer(str(BUNDLED_TOKENIZER))


def random_text(rng: random.Random, words: int) -> str:
    spaces = [" ", " ", " ", "\n", "\n\n", "  ", "\t", "。", ""]
    return "".join(rng.choice(WORDS) + rng.choice(spaces) for _ in range(words))


def trained(model, pre_tokenizer, normalizer=None, decoder=None) -> Tokenizer:
    """A small tokenizer of another family than the shipped byte-level BPE, trained here."""
    tok = Tokenizer(model)
    tok.pre_tokenizer = pre_tokenizer
    if normalizer is not None:
        tok.normalizer = normalizer
    if decoder is not None:
        tok.decoder = decoder
    rng = random.Random(1)
    corpus = [random_text(rng, 50) for _ in range(200)]
    if isinstance(model, models.WordPiece):
        trainer = trainers.WordPieceTrainer(vocab_size=300, special_tokens=["[UNK]"])
    else:
        trainer = trainers.BpeTrainer(vocab_size=300, special_tokens=["<unk>"])
    tok.train_from_iterator(corpus, trainer)
    return tok


TOKENIZERS = {
    "shipped byte-level BPE": lambda: shipped(),
    "sentencepiece-style metaspace": lambda: trained(
        models.BPE(unk_token="<unk>"),
        pre_tokenizers.Metaspace(prepend_scheme="first"),
        decoder=decoders.Metaspace(prepend_scheme="first"),
    ),
    "bert wordpiece, lower-cased": lambda: trained(
        models.WordPiece(unk_token="[UNK]"),
        pre_tokenizers.BertPreTokenizer(),
        normalizers.BertNormalizer(lowercase=True),
    ),
    "llama-2 style: prepended space, no pre-tokenizer": lambda: trained(
        models.BPE(unk_token="<unk>"),
        None,
        normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")]),
    ),
    "metaspace without splitting (newer llama-2 conversions)": lambda: trained(
        models.BPE(unk_token="<unk>"),
        pre_tokenizers.Metaspace(prepend_scheme="first", split=False),
        decoder=decoders.Metaspace(prepend_scheme="first", split=False),
    ),
}


@pytest.fixture(params=TOKENIZERS, scope="module")
def tokenizer(request):
    return TOKENIZERS[request.param]()


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(tokenization, "PIECE_CHARS", 2_000)
    monkeypatch.setattr(tokenization, "ENCODE_BATCH_CHARS", 5_000)


def test_a_long_text_in_pieces_has_the_ids_of_the_whole(tokenizer, small_pieces):
    rng = random.Random(7)
    rows = [{"text": random_text(rng, n)} for n in (3_000, 10, 0, 1_500, 6_000)]
    out = RowTokenizer(None, token_ids=True)
    out._tokenizer, out.path = tokenizer, "given"
    for row, result in zip(rows, out(rows)):
        whole = tokenizer.encode(row["text"], add_special_tokens=False).ids
        assert result["token_ids"] == whole and result["n_tokens"] == len(whole)
    assert len(text_pieces(tokenizer, rows[0]["text"])) > 1


def test_a_long_run_without_spaces_is_cut_after_it(small_pieces):
    rng = random.Random(5)
    text = random_text(rng, 500) + "x" * 5_000 + random_text(rng, 2_000)
    pieces = text_pieces(shipped(), text)
    assert "".join(pieces) == text and len(pieces) >= 4 and max(map(len, pieces)) >= 5_000
    ids = [t for piece in pieces for t in shipped().encode(piece, add_special_tokens=False).ids]
    assert ids == shipped().encode(text, add_special_tokens=False).ids


@functools.cache
def llama_style() -> Tokenizer:
    return TOKENIZERS["llama-2 style: prepended space, no pre-tokenizer"]()


@pytest.mark.parametrize("make", [shipped, llama_style], ids=["shipped", "llama-2 style"])
@given(text=st.text(st.sampled_from("ab é東。 \n\t🙂-"), max_size=3_000))
def test_pieces_never_change_the_ids(make, text):
    tok = make()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tokenization, "PIECE_CHARS", 300)
        pieces = text_pieces(tok, text)
    if make is shipped:
        assert "".join(pieces) == text
    assert [t for piece in pieces for t in tok.encode(piece, add_special_tokens=False).ids] == tok.encode(
        text, add_special_tokens=False
    ).ids


def test_a_batch_is_encoded_a_few_mb_at_a_time_whatever_its_rows(small_pieces):
    calls = []

    class Recording:
        def __init__(self, tok):
            self.tok = tok

        def encode_batch_fast(self, texts, add_special_tokens):
            calls.append(sum(map(len, texts)))
            return self.tok.encode_batch_fast(texts, add_special_tokens=add_special_tokens)

    rng = random.Random(3)
    rows = [{"text": random_text(rng, 2_000)} for _ in range(4)] + [{"text": "short"}] * 50
    counted = RowTokenizer(None, token_ids=False)
    counted._tokenizer, counted.path = Recording(shipped()), "given"
    result = counted(rows)
    assert [r["n_tokens"] for r in result] == [len(shipped().encode(r["text"]).ids) for r in rows]
    encoded = [size for size in calls if size > 3 * tokenization.CUT_CONTEXT]  # not the cut checks
    assert max(encoded) <= tokenization.ENCODE_BATCH_CHARS and len(encoded) > 2
