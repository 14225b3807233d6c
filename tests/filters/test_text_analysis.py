import json
import random
import re
import time

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


def test_overlapping_special_cases_of_one_length_merge_the_earliest_as_spacy_does():
    """spaCy's `len_start_cmp`: longest first, then earliest; the latest was merged (`' '' a`): a
    text ending `(:-(((._.)` lost the sentence spaCy's `. _ .` makes, and c4_quality rejected it."""
    assert ta.split_words("'''a") == ["''", "'", "a"]
    assert ta.split_words("(:)x") == ["(:", ")", "x"]


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


class _SpacyAsWritten(ta._SpacyEnglishTokenizer):
    """spaCy's `_split_affixes` as spaCy writes it (slices, whole-string searches) and its whole URL
    pattern: the reference for the linear-time version."""

    def __init__(self) -> None:
        super().__init__()
        spec = json.loads((ta.DATA_DIR / "spacy_en_tokenizer.json").read_text(encoding="utf-8"))
        self.url_match = self.url_match_without_userinfo = re.compile(spec["url"]).match

    def _split_affixes(self, string, prefixes, suffixes, specials):
        last_size = 0
        while string and len(string) != last_size:
            if string in specials:
                break
            last_size = len(string)
            match = self.prefix_search(string)
            pre_len = match.end() - match.start() if match else 0
            if pre_len:
                prefix, minus_pre = string[:pre_len], string[pre_len:]
                if minus_pre and minus_pre in specials:
                    prefixes.append(prefix)
                    return minus_pre
            match = self.suffix_search(string[pre_len:])
            suf_len = match.end() - match.start() if match else 0
            if suf_len:
                suffix, minus_suf = string[-suf_len:], string[:-suf_len]
                if minus_suf and minus_suf in specials:
                    suffixes.append(suffix)
                    return minus_suf
            if pre_len and suf_len and pre_len + suf_len <= len(string):
                string = string[pre_len:-suf_len]
                prefixes.append(prefix)
                suffixes.append(suffix)
            elif pre_len:
                string = minus_pre
                prefixes.append(prefix)
            elif suf_len:
                string = minus_suf
                suffixes.append(suffix)
        return string


def test_chunks_split_as_spacy_splits_them():
    ours, reference = ta._SpacyEnglishTokenizer(), _SpacyAsWritten()
    rng = random.Random(11)
    pieces = list("<>{}()[].,;:!?'\"-_/\\*+=%$€#@&|~^`…“”’") + ["a", "B", "1", "km", "'s", "n't", "..."]
    pieces += ["U.S.", "e.g.", ":)", "http://x.org", "www.", ".com", "0.5", "a@b.co", "u:p@", "@x.org"]
    for trial in range(20_000):
        chunk = "".join(rng.choice(pieces) for _ in range(rng.randrange(1, 300 if trial % 10 == 0 else 40)))
        assert ours._tokenize(chunk, ours.specials) == reference._tokenize(chunk, reference.specials), chunk


def test_every_bounded_suffix_rule_fits_in_the_suffix_window():
    """`_suffix_length` searches the last SUFFIX_WINDOW characters: only an unbounded rule may match
    from the window's first character (then the whole piece is searched)."""
    import re._parser as sre_parse  # noqa: PLC0415 - the pattern's alternatives and their widths

    spec = json.loads((ta.DATA_DIR / "spacy_en_tokenizer.json").read_text(encoding="utf-8"))
    (kind, (_, alternatives)), *rest = sre_parse.parse(spec["suffix"]).data
    assert str(kind) == "BRANCH" and not rest and len(alternatives) == 82
    widths = [alternative.getwidth()[1] for alternative in alternatives]
    unbounded = [width for width in widths if width >= ta.SUFFIX_WINDOW]
    assert max(width for width in widths if width < ta.SUFFIX_WINDOW) == 5
    assert len(unbounded) == 1 and unbounded[0] > 10**9  # `\.\.+`


def test_long_chunks_of_suffixes_split_as_spacy_splits_them():
    """Chunks far longer than the suffix window, made of what suffix rules match (units after digits,
    currency, `'s`, runs of dots, closing quotes and brackets), split as spaCy's own loop splits them."""
    ours, reference = ta._SpacyEnglishTokenizer(), _SpacyAsWritten()
    reference.run_check = 10**9
    rng = random.Random(5)
    pieces = ["km²", "mph", "°F.", "US$", "%", "+", "'s", "’S", "..", "...", "……", "…", ")", "]", "”"]
    pieces += ["»", "!?", "1", "2", "a", "x.", "—", "–", "'", '"', ",", ";", "。", "_", "#", "*"]
    for _ in range(2_000):
        chunk = "".join(rng.choice(pieces) for _ in range(rng.randrange(20, 120)))
        assert ours.tokens(chunk) == reference.tokens(chunk), chunk


def test_a_long_run_of_punctuation_is_split_in_linear_time():
    """spaCy's affix loop searched the whole remaining chunk at every step: 40,000 '<' took 115 s,
    and its URL pattern backtracked over 40,000 mixed punctuation marks for 1.2 s (80,000: 4.8 s)."""
    rng = random.Random(2)
    text = " ".join(["<" * 40_000, "".join(rng.choice("!?;:,.-") for _ in range(80_000)), "{" * 40_000])
    text += " " + "http://" * 20_000 + "@x"  # its user-info part before an "@": 8,000 took 6 s, quadratic
    started = time.process_time()
    words = ta.split_words(text)
    assert time.process_time() - started < 10  # ~1 s; quadratic: minutes
    assert words[:2] == ["<", "<"] and len(words) > 80_000


def test_a_long_run_of_one_character_splits_as_spacy_splits_it():
    """Past `run_check` characters a run of one character takes a shortcut (20,000 underscores took
    0.23 s through the affix rules, 4 MB of them 51 s in gopher_repetition)."""
    ours, reference = ta._SpacyEnglishTokenizer(), _SpacyAsWritten()
    reference.run_check = 10**9  # no shortcut: every step of spaCy's own loop
    lengths = (ours.run_check + 1, ours.run_check + 2, ours.run_check + 9, 1_001)
    for char in "_=*!#+<>\"'?-~./|…—•":
        for n in lengths:
            assert ours.tokens(char * n) == reference.tokens(char * n), (char, n)
    assert ours.run_steps["_"] == (1, 1) and ours.run_steps["="] == (1, 0) and ours.run_steps["."] == (0, 0)
    assert ta.split_words("_" * 20_000) == ["_"] * 20_000


def test_long_chunks_are_memoized_within_a_budget(monkeypatch):
    """Every distinct chunk was kept for the process's life, whatever its length: 4,000 documents
    with a 50 KB inline image each held 560 MB after they were gone."""
    import base64
    import gc
    import tracemalloc

    monkeypatch.setattr(ta, "LONG_CHUNK_BUDGET", 100_000)
    ta.words(Document("warm", "warm the tokenizer up: x.y (z)"))
    rng = random.Random(7)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(100):
            blob = base64.b64encode(rng.randbytes(15_000)).decode()
            doc = Document(str(i), f"An image: data:image/png;base64,{blob} and (a-b.c) after it.")
            assert len(ta.words(doc)) > 5 and ta.word_classes(doc)
            del doc
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert held < 500_000  # 100 blobs of 20,000 characters: 2 MB and more when all were memoized
