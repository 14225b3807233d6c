import pytest

from filters import text_analysis as ta
from pipeline.document import Document


def test_split_words_follows_spacy_english_rules():
    assert ta.split_words("don't stop, it's well-known (really).") == [
        "do", "n't", "stop", ",", "it", "'s", "well", "-", "known", "(", "really", ")", ".",
    ]  # fmt: skip
    assert ta.split_words("covid-19 3-day U.S. e.g. Mr. Smith end.Next") == [
        "covid-19", "3", "-", "day", "U.S.", "e.g.", "Mr.", "Smith", "end", ".", "Next",
    ]  # fmt: skip
    assert ta.split_words("see http://example.com/a?b=c now!!! 5km $5 :)") == [
        "see", "http://example.com/a?b=c", "now", "!", "!", "!", "5", "km", "$", "5", ":)",
    ]  # fmt: skip


def test_split_words_merges_special_cases_split_by_affixes():
    # spaCy re-joins special cases such as "):" and "''" after affix splitting
    assert ta.split_words("(see):") == ["(", "see", "):"]
    assert ta.split_words("''quoted''") == ["''", "quoted", "''"]


def test_split_words_edge_cases():
    assert ta.split_words("") == []
    assert ta.split_words(" \n\t\r\n ") == []
    assert ta.split_words("a\r\nb") == ["a", "b"]
    assert ta.split_words("这是 中文") == ["这是", "中文"]


@pytest.mark.parametrize(
    ("text", "count"),
    [("One. Two! Three? Four", 4), ('He said "hi." Then left.', 2), ("Mr. Smith went home.", 1), ("", 0)],
)
def test_sentences_counted_like_spacy_sentencizer(text, count):
    assert ta.Reference.sentence_count(ta.split_words(text)) == count
    rules = (0, False, False, 0, False, False, False, False, 100)  # every line kept, every sentence counted
    assert ta.c4_lines(Document(id="d", text=text), rules)[1] == count


def test_ngram_measures():
    doc = Document(id="d", text="a b a b a b c")
    assert ta.top_ngram_chars(doc, (2, 7, 8)) == (3 * 3, 13, 0)  # "a b" three times; the whole text once
    doc = Document(id="d", text="x y z w v x y z w v")
    assert ta.duplicated_ngram_chars(doc, (5,)) == (5,)
    assert ta.duplicated_ngram_chars(Document(id="d", text="x y"), (5, 1)) == (0, 0)


def test_analysis_is_shared_and_reset_on_edit():
    doc = Document(id="d", text="one two")
    first = ta.words(doc)
    assert ta.words(doc) is first
    assert ta.words(doc.with_text("three")) == ["three"]
    assert ta.words(doc.replace(id="e")) is first  # same text: the analysis carries over


def test_duplicates_counts_repeats_after_first():
    assert ta.duplicates(["a", "bb", "a", "bb", "a"]) == (3, 4)


def test_consecutive_filters_split_words_once(monkeypatch):
    from filters.fineweb import FineWebQuality
    from filters.gopher import GopherQuality, GopherRepetition
    from tests.filters.conftest import GOOD_TEXT

    calls = []
    real = ta.split_words
    monkeypatch.setattr(ta, "split_words", lambda text: calls.append(text) or real(text))
    doc = Document(id="d", text=GOOD_TEXT)
    for stage in (GopherRepetition("r"), GopherQuality("q"), FineWebQuality("f")):
        assert stage.check(doc).keep
    assert calls == [GOOD_TEXT]
