import pickle

import pytest

from filters.decontaminate import Decontaminate, ngram_hashes, tokens
from pipeline.document import Document
from pipeline.stages import ConfigError
from tests.conftest import write_jsonl

QUESTION = (
    "Natalia sold clips to 48 of her friends in April, and then she sold half as many clips in May. "
    "How many clips did Natalia sell altogether in April and May?"
)
ANSWER = (
    "Natalia sold 48/2 = 24 clips in May. Natalia sold 48+24 = 72 clips altogether in April and May. #### 72"
)
CHINESE = "小明有五个苹果，他给了小红两个苹果，然后又买了三个苹果，请问小明现在一共有几个苹果？"
PROSE = " ".join(f"filler{i}" for i in range(60))


@pytest.fixture
def eval_file(tmp_path):
    return write_jsonl(
        tmp_path / "eval.jsonl",
        [
            {"id": "gsm-1", "question": QUESTION, "answer": ANSWER},
            {"id": "zh-1", "question": CHINESE, "answer": "6"},
            {"id": "tiny", "question": "What is two plus two?", "answer": "4"},
        ],
    )


def stage(eval_file, **params):
    built = Decontaminate("decontaminate", paths=[str(eval_file)], text_fields=["question"], **params)
    built.setup()
    return built


def test_tokens_normalize_case_punctuation_and_width():
    assert tokens("Hello, WORLD! ｆｕｌｌ-width\r\nline") == ["hello", "world", "full", "width", "line"]
    assert tokens("苹果 apple") == ["苹", "果", "apple"]


def test_combining_marks_stay_in_their_word_and_underscores_split():
    """Vowel signs and viramas are no `\\w`: Hindi words fell apart into consonants, so 13
    "words" were 3 real ones and unrelated Gujarati pages matched an eval set."""
    assert tokens("हिन्दी भाषा का इतिहास") == ["हिन्दी", "भाषा", "का", "इतिहास"]
    assert tokens("தமிழ் மொழி עִבְרִית") == ["தமிழ்", "மொழி", "עִבְרִית"]
    assert tokens("an _emphasized_ snake_case word") == ["an", "emphasized", "snake", "case", "word"]
    assert tokens("an _émphasized_ word") == ["an", "émphasized", "word"]
    # Thai has no spaces: split at its vowel signs and tone marks, not one token per phrase
    assert tokens("ภาษาไทย ข่าววันนี้") == ["ภาษาไทย", "ข", "าวว", "นน"]


def test_ngram_hash_depends_only_on_the_window():
    words = "a b c d e f g".split()
    hashes = ngram_hashes(words, 3)
    assert len(hashes) == 5
    assert ngram_hashes(["x", *words[2:5]], 3)[1] == hashes[2]
    assert len(set(hashes.tolist())) == 5
    assert len(ngram_hashes(words[:2], 3)) == 0


def test_embedded_eval_question_is_rejected_with_its_id(eval_file):
    doc = Document("web", f"{PROSE}\n{QUESTION.upper().replace(',', ' ;')}\n{PROSE}")
    verdict = stage(eval_file).check(doc)
    assert verdict.reason == "contaminated"
    assert verdict.detail == f"ngrams={len(tokens(QUESTION)) - 12} eval=gsm-1"


def test_twelve_shared_words_are_not_a_13_gram(eval_file):
    twelve = " ".join(tokens(QUESTION)[:12])
    assert stage(eval_file).check(Document("web", f"{PROSE} {twelve} {PROSE}")).keep
    assert (
        stage(eval_file, ngram=8).check(Document("web", f"{PROSE} {twelve} {PROSE}")).reason == "contaminated"
    )


def test_min_matches(eval_file):
    fourteen = " ".join(tokens(QUESTION)[:14])  # two 13-grams
    doc = Document("web", f"{PROSE} {fourteen} {PROSE}")
    assert stage(eval_file, min_matches=2).check(doc).detail == "ngrams=2 eval=gsm-1"
    assert stage(eval_file, min_matches=3).check(doc).keep


def test_answer_field_is_used_only_when_listed(eval_file):
    doc = Document("web", f"{PROSE} {ANSWER} {PROSE}")
    assert stage(eval_file).check(doc).keep
    both = Decontaminate("d", paths=[str(eval_file)], text_fields=["question", "answer"])
    both.setup()
    assert both.check(doc).reason == "contaminated"


def test_edge_cases_empty_one_word_non_latin_crlf(eval_file):
    built = stage(eval_file)
    assert built.check(Document("empty", "")).keep
    assert built.check(Document("one", "Natalia")).keep
    assert built.check(Document("zh", f"前言。{CHINESE}后记。")).detail.endswith("eval=zh-1")
    assert built.check(Document("ru", "Привет мир " * 20)).keep
    crlf = QUESTION.replace(" ", "\r\n")
    assert built.check(Document("crlf", crlf)).reason == "contaminated"


def test_admitted_synthesis_samples_are_checked(eval_file):
    built = stage(eval_file)
    assert built.handles_candidates
    assert built.check(Document("c1", "", kind="math")).keep  # nothing in it
    rendered = Document("c2", f"Problem: {QUESTION}\nSolution: 72", kind="math")
    assert built.check(rendered).reason == "contaminated"
    # before `verify`, by the text it would give: an exact copy of an eval problem passed
    unrendered = Document("c3", "", kind="math", metadata={"problem": QUESTION, "solution": "#### 72"})
    assert built.check(unrendered).reason == "contaminated"


def test_short_eval_items_are_counted_not_matched(eval_file):
    built = stage(eval_file)
    assert built.manifest_extra() == {
        "eval_files": 1,
        "eval_items": 2,
        "eval_items_too_short": 1,
        "eval_records_skipped": 0,
        "eval_ngrams": len(tokens(QUESTION)) - 12 + len(tokens(CHINESE)) - 12,
    }
    assert built.check(Document("web", "What is two plus two? " * 5)).keep


def test_unusable_records_are_skipped_and_counted(tmp_path):
    path = write_jsonl(tmp_path / "mixed.jsonl", [{"question": QUESTION}, "{not json", {"prompt": "x"}])
    built = Decontaminate("d", paths=[str(path)], text_fields=["question"])
    built.setup()
    assert built.manifest_extra()["eval_records_skipped"] == 2
    assert built.manifest_extra()["eval_items"] == 1
    assert built.check(Document("web", QUESTION)).detail.endswith(f"eval={path}:1")


def test_index_is_not_pickled_and_reloads(eval_file):
    copy = pickle.loads(pickle.dumps(stage(eval_file)))
    assert copy.index is None
    copy.setup()
    assert copy.check(Document("web", QUESTION)).reason == "contaminated"


def test_missing_or_unusable_eval_files_name_the_file(tmp_path, eval_file):
    with pytest.raises(ConfigError, match="paths"):
        Decontaminate("d")
    with pytest.raises(ConfigError, match="nowhere"):
        Decontaminate("d", paths=[str(tmp_path / "nowhere*.jsonl")])
    wrong = write_jsonl(tmp_path / "wrong.jsonl", [{"prompt": QUESTION}])
    with pytest.raises(ConfigError, match="wrong.jsonl.*no 'question' field"):  # at load, not mid-run
        Decontaminate("d", paths=[str(eval_file), str(wrong)], text_fields=["question"])
    short = write_jsonl(tmp_path / "short.jsonl", [{"question": "What is two plus two?"}] * 2)
    with pytest.raises(ConfigError, match=r"short.jsonl has no item of at least 13 words \(2 shorter\)"):
        Decontaminate("d", paths=[str(short)], text_fields=["question"])
    gone = pickle.loads(pickle.dumps(Decontaminate("d", paths=[str(eval_file)], text_fields=["question"])))
    eval_file.unlink()
    with pytest.raises(RuntimeError, match="eval.jsonl"):  # on a worker
        gone.setup()
    with pytest.raises(ConfigError, match="ngram"):
        Decontaminate("d", paths=[str(wrong)], ngram=2)


def test_the_detail_names_the_eval_item_sharing_the_most_not_the_first_holding_an_ngram(tmp_path):
    """Each n-gram kept one owner, the first item holding it: a document holding item B whole was
    reported as item A, which shares B's first 30 words."""
    words = [f"w{i}" for i in range(80)]
    shared = " ".join(words[:30])
    items = [
        {"id": "A", "q": f"{shared} " + " ".join(words[30:60])},
        {"id": "B", "q": f"{shared} " + " ".join(words[60:65])},
    ]
    built = Decontaminate("d", paths=[str(write_jsonl(tmp_path / "eval.jsonl", items))], text_fields=["q"])
    built.setup()
    verdict = built.check(Document("doc", f"Some page. {items[1]['q']} end."))
    assert verdict.reason == "contaminated" and verdict.detail == "ngrams=23 eval=B"
    assert built.manifest_extra()["eval_ngrams"] == 48 + 23 - 18  # distinct n-grams: A's, and B's own


def test_invisible_characters_inside_words_do_not_hide_a_copy(eval_file):
    """Soft hyphens (`&shy;` hyphenation) split words in two: 43 % of MATH problems so hyphenated
    were missed."""
    hyphenated = " ".join(w[:2] + "\u00ad" + w[2:] if len(w) > 3 else w for w in QUESTION.split())
    assert stage(eval_file).check(Document("web", hyphenated)).reason == "contaminated"
