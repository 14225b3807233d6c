import random
import tracemalloc
from collections import defaultdict

import apache_beam as beam
import pytest
from apache_beam.testing.util import assert_that, equal_to

from dedup.paragraph import ParagraphDedup, join_paragraphs, split_paragraphs
from dedup.survivor import survivor_key
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.stages import ConfigError

BOILER = "Subscribe to our newsletter for the latest updates and offers."
COOKIE = "This site uses cookies to improve your experience, see our policy."


def body(tag: str, words: int = 40) -> str:
    """A paragraph unique to one document."""
    return " ".join(f"{tag}{i}" for i in range(words))


def run(stage, documents):
    """Yield (kept as (id, text, paragraphs_removed), rejected as tuples) PCollections."""
    with new_pipeline() as pipeline:
        outputs = stage.expand(pipeline | beam.Create(documents))
        kept = outputs.kept | "K" >> beam.Map(lambda d: (d.id, d.text, d.metadata.get("paragraphs_removed")))
        rejected = outputs.rejected | "R" >> beam.Map(
            lambda r: (r.doc.id, r.stage, r.reason, r.detail, r.duplicate_of)
        )
        yield kept, rejected, outputs.failed


def test_split_and_join_keep_original_separators():
    text = "one\r\n\r\ntwo\n\n\nthree\n \nfour"
    paragraphs, separators = split_paragraphs(text, "blank_line")
    assert paragraphs == ["one", "two", "three", "four"]
    assert join_paragraphs(paragraphs, separators, set()) == text
    assert join_paragraphs(paragraphs, separators, {0, 2}) == "two\n \nfour"
    assert split_paragraphs("a\r\nb\nc", "newline")[0] == ["a", "b", "c"]


def test_one_crlf_line_break_is_not_a_blank_line():
    """The pattern could read CR LF as two line breaks (CR, then LF), so every line of a CR LF text
    was a paragraph of its own."""
    text = "line one\r\nline two\r\n\r\nnext paragraph\r\r\nlast"
    assert split_paragraphs(text, "blank_line") == (
        ["line one\r\nline two", "next paragraph", "last"],
        ["\r\n\r\n", "\r\r\n"],
    )


def test_a_long_run_of_blank_lines_is_split_in_memory_about_its_size():
    """The regex engine kept state per line break of a run: 5 million took 983 MB."""
    text = "a" + "\n \r\n" * 500_000 + "b"
    tracemalloc.start()
    try:
        paragraphs, separators = split_paragraphs(text, "blank_line")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert paragraphs == ["a", "b"] and separators == [text[1:-1]]
    assert peak < 10 * len(text)  # about 4 MB; 100 MB before


def test_repeated_paragraph_stays_in_longest_document_only():
    docs = [
        Document("a", f"{body('a')}\n\n{BOILER}"),
        Document("b", f"{body('b', 60)}\n\n{BOILER}\n\n{COOKIE}"),
        Document("c", f"{COOKIE}\n\n{body('c')}"),
        Document("d", body("d")),
    ]
    for kept, rejected, failed in run(ParagraphDedup("paragraph_dedup", min_remaining_chars=50), docs):
        assert_that(
            kept,
            equal_to(
                [
                    ("a", body("a"), 1),
                    ("b", f"{body('b', 60)}\n\n{BOILER}\n\n{COOKIE}", None),
                    ("c", body("c"), 1),
                    ("d", body("d"), None),
                ]
            ),
            label="kept",
        )
        assert_that(rejected, equal_to([]), label="rejected")
        assert_that(failed, equal_to([]), label="failed")


def test_document_left_too_short_is_rejected_with_main_survivor():
    docs = [
        Document("big", f"{body('x', 80)}\n\n{BOILER}\n\n{COOKIE}"),
        Document("small", f"{BOILER}\n\n{COOKIE}\n\nThanks for reading!"),
        Document("cookie-only", f"{COOKIE}\n\n{body('y')}"),
    ]
    stage = ParagraphDedup("para", min_remaining_chars=100)
    for kept, rejected, _ in run(stage, docs):
        assert_that(
            rejected,
            equal_to(
                [
                    (
                        "small",
                        "para",
                        "duplicate_paragraphs",
                        "duplicate_paragraphs=2/2 remaining_chars=19",
                        "big",
                    )
                ]
            ),
            label="rejected",
        )
        assert_that(kept | beam.Map(lambda k: k[0]), equal_to(["big", "cookie-only"]), label="kept")


def test_a_document_keeping_a_paragraph_for_others_is_never_rejected():
    """D loses P to A but keeps Q, which E loses to it: rejecting D as too short left Q in no
    kept document (and E's `duplicate_of` named a removed one)."""
    shared_p = "Paragraph P is a shared paragraph that appears in two documents here."
    shared_q = "Paragraph Q is another shared paragraph that also appears twice in the corpus."
    docs = [
        Document("A", f"{shared_p}\n\n{body('a')}"),
        Document("D", f"{shared_p}\n\n{shared_q}"),
        Document("E", f"{shared_q}\n\n{body('e', 60)}"),
    ]
    stage = ParagraphDedup("para", tie_break="smallest_id")
    for kept, rejected, _ in run(stage, docs):
        assert_that(
            kept,
            equal_to([("A", docs[0].text, None), ("D", shared_q, 1), ("E", body("e", 60), 1)]),
            label="kept",
        )
        assert_that(rejected, equal_to([]), label="rejected")


def test_rejection_names_survivor_holding_most_paragraphs():
    para = [f"Shared paragraph number {i} with enough characters to count." for i in range(3)]
    docs = [
        Document("p", f"{para[0]}\n\n{para[1]}\n\n{body('p', 90)}"),
        Document("q", f"{para[2]}\n\n{body('q', 80)}"),
        Document("r", f"{para[0]}\n\n{para[1]}\n\n{para[2]}\n\nshort"),
    ]
    for _, rejected, _ in run(ParagraphDedup("pd"), docs):
        assert_that(
            rejected,
            equal_to(
                [("r", "pd", "duplicate_paragraphs", "duplicate_paragraphs=3/3 remaining_chars=5", "p")]
            ),
        )


def test_prefer_score_picks_the_survivor():
    docs = [
        Document("long", f"{body('l', 90)}\n\n{BOILER}", scores={"q": 0.1}),
        Document("good", f"{body('g', 50)}\n\n{BOILER}", scores={"q": 0.9}),
    ]
    for kept, _, _ in run(ParagraphDedup("pd", prefer_score="q", min_remaining_chars=0), docs):
        assert_that(
            kept,
            equal_to([("long", body("l", 90), 1), ("good", f"{body('g', 50)}\n\n{BOILER}", None)]),
        )


def test_newline_mode_lowercase_and_min_chars():
    footer = "Copyright 2024 Example Corp, all rights reserved."
    docs = [
        Document("a", f"Hi\n{body('a')}\n{footer}"),
        Document("b", f"Hi\n{body('b', 30)}\n{footer.upper()}"),
    ]
    stage = ParagraphDedup("pd", split="newline", lowercase=True, min_remaining_chars=0)
    for kept, _, _ in run(stage, docs):
        # "Hi" repeats but is below min_chars, so it stays in both documents
        assert_that(
            kept, equal_to([("a", f"Hi\n{body('a')}\n{footer}", None), ("b", f"Hi\n{body('b', 30)}", 1)])
        )


def test_repeats_inside_one_document_are_left_alone():
    text = f"{BOILER}\n\n{body('s')}\n\n{BOILER}"
    for kept, rejected, _ in run(ParagraphDedup("pd"), [Document("solo", text)]):
        assert_that(kept, equal_to([("solo", text, None)]), label="kept")
        assert_that(rejected, equal_to([]), label="rejected")


def test_edge_cases_empty_one_word_non_latin_crlf():
    chinese = "这是一个很长的中文段落，用来测试段落去重是否能正确处理非拉丁文字的文本内容。"
    docs = [
        Document("empty", ""),
        Document("word", "word"),
        Document("zh1", f"{chinese}\r\n\r\n{body('z', 60)}"),
        Document("zh2", f"{body('w', 30)}\r\n\r\n{chinese}\r\n\r\n{body('v', 30)}"),
    ]
    stage = ParagraphDedup("pd", min_chars=20, min_remaining_chars=0)
    for kept, _, _ in run(stage, docs):
        assert_that(
            kept,
            equal_to(
                [
                    ("empty", "", None),
                    ("word", "word", None),
                    ("zh1", f"{chinese}\r\n\r\n{body('z', 60)}", None),
                    ("zh2", f"{body('w', 30)}\r\n\r\n{body('v', 30)}", 1),
                ]
            ),
        )


def reference(stage, docs):
    """The same decisions computed in memory, to check the distributed plumbing against."""
    holders = defaultdict(list)
    for doc in docs:
        order = survivor_key(doc, stage.prefer_score, stage.tie_break)
        for index, digest in enumerate(stage.paragraph_hashes(doc.text)):
            if digest is not None:
                holders[digest].append((order, index))
    removed, keepers = defaultdict(set), set()
    for occurrences in holders.values():
        best = min(order for order, _ in occurrences)
        for order, index in occurrences:
            if order != best:
                removed[order[-1]].add((index, best[-1]))
                keepers.add(best[-1])
    outcomes = []
    for doc in docs:
        cut = sorted(removed[doc.id])
        result = stage.edit(doc, cut, keeps_for_others=doc.id in keepers) if cut else doc
        if isinstance(result, Document):
            outcomes.append(("kept", result.id, result.text))
        else:
            outcomes.append(("rejected", result.doc.id, f"{result.detail} {result.duplicate_of}"))
    return outcomes


def test_shuffled_input_gives_the_reference_result():
    rng = random.Random(7)
    shared = [f"Common block {i}: the quick brown fox jumps over the lazy dog again." for i in range(6)]
    docs = []
    for n in range(30):
        paragraphs = [*rng.sample(shared, 3), body(f"d{n}_", rng.randrange(5, 40))]
        rng.shuffle(paragraphs)
        docs.append(Document(f"doc{n:02d}", "\n\n".join(paragraphs)))
    stage = ParagraphDedup("pd", tie_break="smallest_id", min_remaining_chars=150)
    expected = reference(stage, docs)
    kept_texts = [text for outcome, _, text in expected if outcome == "kept"]
    for block in shared:  # each shared block survives in exactly one kept document
        assert sum(block in text.split("\n\n") for text in kept_texts) == 1
    assert any(outcome == "rejected" for outcome, _, _ in expected)
    for seed in range(2):
        shuffled = docs[:]
        random.Random(seed).shuffle(shuffled)
        with new_pipeline() as pipeline:
            outputs = stage.expand(pipeline | beam.Create(shuffled))
            both = (
                outputs.kept | "K" >> beam.Map(lambda d: ("kept", d.id, d.text)),
                outputs.rejected
                | "R" >> beam.Map(lambda r: ("rejected", r.doc.id, f"{r.detail} {r.duplicate_of}")),
            ) | beam.Flatten()
            assert_that(both, equal_to(expected))


def test_bad_parameters_are_config_errors():
    with pytest.raises(ConfigError, match="split"):
        ParagraphDedup("pd", split="sentence")
    with pytest.raises(ConfigError, match="min_chars"):
        ParagraphDedup("pd", min_chars=0)
