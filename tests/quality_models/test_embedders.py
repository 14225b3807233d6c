import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from quality_models.embedders import (
    EMBEDDER_NAMES,
    MINILM_MAX_TOKENS,
    StaticEmbedder,
    load_embedder,
    minilm_opening,
    minilm_path,
)

TEXTS = [
    "The committee approved the budget after a long debate about school funding.",
    "Lawmakers passed the spending plan following hours of argument over education money.",
    "click here buy cheap pills now free shipping!!!",
    "",
]


def test_static_embedder_rows_are_unit_float32_and_deterministic():
    embedder = load_embedder("static")
    vectors = embedder.encode(TEXTS)
    assert vectors.shape == (4, embedder.dim) == (4, 256)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors[:3], axis=1), 1.0, rtol=1e-5)
    assert np.array_equal(vectors, embedder.encode(TEXTS))
    assert np.array_equal(vectors[1:2], embedder.encode(TEXTS[1:2]))


TRICKY = [
    "Héllo, wörld!! don't 3.14 naïve café 中文字 e\u0301 \u200bzero\u00a0nb\tx\u2028y \ufffd ﬁ İstanbul",
    "controls join words: a\x0bb c\x1cd e\x85f",
    "x" * 150 + " a word longer than WordPiece's 100 characters becomes [UNK], which is dropped",
    " ".join(f"token{i}, (and) more;" for i in range(400)),  # past 512 word pieces and 3,072 characters
    "   ",
]


def test_static_tokenization_is_model2vecs_word_for_word(monkeypatch):
    embedder = StaticEmbedder()
    model = embedder._model
    texts = TEXTS + TRICKY
    expected = [ids[:512] for ids in model.tokenize([t[: 512 * model.median_token_length] for t in texts])]
    assert [ids.tolist() for ids in embedder.token_ids(texts)] == expected
    assert [ids.tolist() for ids in embedder.token_ids(texts)] == expected  # from the word cache
    monkeypatch.setattr("quality_models.embedders.WORD_CACHE_SIZE", 5)  # the cache is cleared, not grown
    assert [ids.tolist() for ids in embedder.token_ids(texts[::-1])] == expected[::-1]
    reference = model.encode(texts, use_multiprocessing=False).astype(np.float32)
    reference /= np.maximum(np.linalg.norm(reference, axis=1, keepdims=True), 1e-12)
    assert np.array_equal(embedder.encode(texts), reference)


def test_static_embedder_puts_paraphrases_closer_than_spam():
    vectors = load_embedder("static").encode(TEXTS[:3])
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]


def test_embedders_are_loaded_once_per_process():
    assert load_embedder("static") is load_embedder("static")


def test_empty_input_gives_empty_array():
    assert load_embedder("static").encode([]).shape == (0, 256)


def test_unknown_embedder_is_an_error_naming_the_choices():
    with pytest.raises(ValueError, match="minilm-bf16"):
        load_embedder("bert")
    assert EMBEDDER_NAMES == ("minilm", "minilm-bf16", "static")


def test_missing_static_model_names_the_file(tmp_path):
    with pytest.raises(RuntimeError, match="model.safetensors"):
        StaticEmbedder(tmp_path)


def test_default_device_is_cuda_only_when_torch_sees_one():
    import torch

    from quality_models.embedders import default_device

    assert default_device() == ("cuda" if torch.cuda.is_available() else "cpu")


@pytest.mark.parametrize("name", ["minilm", "minilm-bf16"])
def test_a_minilm_embedding_does_not_depend_on_the_texts_beside_it(name):
    """Batches padded to their longest text gave a text other roundings beside other texts (bf16:
    `embedding_quality` scores up to 0.002 apart when the input order changed)."""
    texts = [*TEXTS, " ".join(TEXTS[:3]) * 20, "a" * 300, "short one"]
    embedder = load_embedder(name)
    together = embedder.encode(texts, batch_size=4)
    alone = np.concatenate([embedder.encode([text], batch_size=4) for text in texts])
    reversed_order = embedder.encode(texts[::-1], batch_size=4)[::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, reversed_order)
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)


def test_minilm_on_cuda_runs_bf16_and_agrees_with_cpu():
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA device")
    from quality_models.embedders import MiniLMEmbedder

    from .conftest import BAD, GOOD

    gpu, cpu = MiniLMEmbedder(bf16=False, device="cuda"), MiniLMEmbedder(bf16=False, device="cpu")
    assert gpu.bf16 and gpu.device == "cuda" and not cpu.bf16
    texts = GOOD + BAD
    agreement = (gpu.encode(texts) * cpu.encode(texts)).sum(axis=1)
    assert agreement.min() > 0.98


def minilm_word_pieces(texts: list[str]) -> list[list[int]]:
    """MiniLM's token ids of each text, truncated as sentence-transformers truncates them."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(minilm_path() / "tokenizer.json"))
    tokenizer.enable_truncation(MINILM_MAX_TOKENS)
    tokenizer.no_padding()
    return [encoding.ids for encoding in tokenizer.encode_batch(texts)]


PLAIN_SEPARATORS = [" ", "  ", "\n", "\t", "\u00a0", "\u3000", "\u2028"]
# What the BERT normalizer deletes or strips (NUL, U+FFFD, zero width space, soft hyphen, a combining
# accent, an astral tag), an emoji, and characters that str.split and the normalizer treat apart;
# as words of their own or inside a word.
DOUBTFUL = ["\x00 ", "\ufffd ", "\u200b ", "\u00ad", "\u0301 ", "\u0301", "\U000e0041 ", "😀 "]
DOUBTFUL += ["\x0b", "\x1c", "\x85", "a\x1cb "]


@given(
    st.lists(
        st.tuples(st.text("abcdeé中", min_size=1, max_size=3), st.sampled_from(PLAIN_SEPARATORS)),
        min_size=MINILM_MAX_TOKENS - 20,
        max_size=MINILM_MAX_TOKENS + 40,
    ),
    st.lists(st.tuples(st.integers(0, MINILM_MAX_TOKENS + 40), st.sampled_from(DOUBTFUL)), max_size=3),
)
def test_minilm_opening_has_the_whole_texts_word_pieces(words, insertions):
    pieces = [word + separator for word, separator in words]
    for position, doubtful in insertions:
        pieces.insert(position, doubtful)
    text = "".join(pieces)
    opening = minilm_opening(text)
    assert text.startswith(opening)
    assert minilm_word_pieces([opening]) == minilm_word_pieces([text])


def test_minilm_opening_cuts_long_plain_text_and_keeps_doubtful_ones_whole():
    long = " ".join(TEXTS[0].split() * 100)
    one_piece_words = "a " * 300
    assert minilm_word_pieces([minilm_opening(long), minilm_opening(one_piece_words)]) == (
        minilm_word_pieces([long, one_piece_words])
    )
    assert len(minilm_opening(long)) < len(long) / 4
    for doubtful in ("\u200b " + long, "\x1c" + long, "😀 " + long):
        assert minilm_opening(doubtful) == doubtful
    assert minilm_opening("") == "" and minilm_opening("  ") == "  "
