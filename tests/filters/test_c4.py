import pytest

from filters.c4 import C4BadWords, C4Quality, available_badword_languages
from pipeline.document import Document
from tests.filters.conftest import EDGE_TEXTS, GOOD_TEXT


def c4(text: str, **params) -> tuple:
    doc = Document(id="d", text=text)
    verdict = C4Quality("c4_quality", **params).check(doc)
    return verdict, verdict.doc or doc


def test_good_text_kept_unchanged():
    verdict, doc = c4(GOOD_TEXT)
    assert verdict.keep and doc.text == GOOD_TEXT


def test_boilerplate_lines_dropped_and_edit_visible():
    text = "\n".join(
        [
            "Menu",
            "Please enable JavaScript to view the comments.",
            "This site uses cookies to improve your experience.",
            "x" * 1001 + " too long word line here.",
            GOOD_TEXT.split("\n")[0] + "[1]",
            *GOOD_TEXT.split("\n")[1:],
        ]
    )
    doc = Document(id="d", text=text)
    doc.cached("words", lambda t: ["stale"])
    verdict = C4Quality("c4_quality").check(doc)
    assert verdict.keep
    assert verdict.doc.text == GOOD_TEXT and doc.text == text  # an edited copy; the input is untouched
    assert verdict.doc.cache is None  # the copy has no analysis made for the old text


def test_terminal_punctuation_rule_is_off_by_default_and_switchable():
    text = GOOD_TEXT + "\nA line without a final stop mark here"
    assert c4(text)[1].text == text
    verdict, doc = c4(text, filter_no_terminal_punct=True)
    assert verdict.keep and doc.text == GOOD_TEXT
    verdict, doc = c4(GOOD_TEXT.replace(".", "..."), filter_no_terminal_punct=True)
    assert verdict.reason == "too_few_sentences"


@pytest.mark.parametrize(
    ("text", "keep"),
    [
        ("The end is near. . . . Now we go home.", False),  # sentences=2<5
        ("The end is near. \t. \t. \t. Now we go home.", True),
        ("The end is near.  .  .  . Now we go home.", True),
    ],
)
def test_sentences_are_counted_as_spacys_sentencizer_counts_them_with_whitespace_tokens(text, keep):
    """spaCy makes a token of whitespace that is not one space, and a token that is not punctuation
    starts a sentence after a full stop: datatrove counts 5 sentences in the second and third lines
    (2 with single spaces); gristmill counted 2 in all three."""
    assert c4(text)[0].keep == keep


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (GOOD_TEXT + "\nLorem ipsum dolor sit amet.", "lorem_ipsum"),
        (GOOD_TEXT + "\nfunction f() { return 1; }", "curly_bracket"),
        ("One two three four.\nFive six seven eight.", "too_few_sentences"),
    ],
)
def test_c4_reasons(text, reason):
    verdict, _ = c4(text)
    assert not verdict.keep and verdict.reason == reason


def test_curly_bracket_in_a_dropped_line_does_not_reject():
    assert c4(GOOD_TEXT + "\n{x}")[0].keep


@pytest.mark.parametrize(
    ("edge", "reason"),
    [
        ("empty", "too_few_sentences"),
        ("one_word", "too_few_sentences"),
        ("whitespace", "too_few_sentences"),
        ("punctuation", "too_few_sentences"),
        ("long_line", "too_few_sentences"),
        ("non_latin", "too_few_sentences"),
        ("windows_newlines", None),
    ],
)
def test_c4_edge_cases(edge, reason):
    verdict, doc = c4(EDGE_TEXTS[edge])
    assert verdict.reason == reason
    if edge == "windows_newlines":
        assert doc.text == GOOD_TEXT  # lines are stripped, so \r disappears


def badwords(text: str, language: str | None = None, **params):
    return C4BadWords("c4_badwords", **params).check(Document(id="doc-1", text=text, language=language))


def test_badwords_reason_and_word_boundaries():
    verdict = badwords(GOOD_TEXT + " What a bastard.")
    assert not verdict.keep and verdict.reason == "badwords" and "bastard" in verdict.detail
    assert badwords(GOOD_TEXT + " The assessment was fine.").keep  # "ass" inside a word does not match
    assert badwords(GOOD_TEXT).keep


def test_badwords_languages_and_extra_words():
    assert "en" in available_badword_languages()
    assert "fr" in available_badword_languages()
    assert badwords("quelque chose de zorglub", language="xx").keep  # no list: kept
    assert badwords("quelque chose de zorglub", language="xx", extra_words=["Zorglub"]).reason == "badwords"


def test_badwords_keep_fraction_is_deterministic():
    text = "you bastard"
    kept = [C4BadWords("b", keep_fraction=0.5).check(Document(id=str(i), text=text)).keep for i in range(200)]
    again = [
        C4BadWords("b", keep_fraction=0.5).check(Document(id=str(i), text=text)).keep for i in range(200)
    ]
    assert kept == again and 60 < sum(kept) < 140


@pytest.mark.parametrize("edge", sorted(EDGE_TEXTS))
def test_badwords_edge_cases(edge):
    assert badwords(EDGE_TEXTS[edge]).keep
