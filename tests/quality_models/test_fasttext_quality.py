import pytest

from pipeline.document import Document
from pipeline.stages import STAGES, ConfigError
from quality_models.fasttext_quality import DEFAULT_FASTTEXT_MODEL, FastTextQuality, normalize_for_fasttext

from .conftest import BAD, GOOD


def test_registered_with_a_shipped_default_model():
    assert STAGES["fasttext_quality"] is FastTextQuality
    assert DEFAULT_FASTTEXT_MODEL.is_file() and DEFAULT_FASTTEXT_MODEL.stat().st_size < 20_000_000
    assert FastTextQuality.reasons == ()


def test_relative_model_paths_resolve_against_the_project_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    stage = FastTextQuality("ft", model="quality_models/models/fasttext-quality/model.bin")
    assert stage.model == FastTextQuality.params["model"].default
    stage.setup()


def test_normalization_is_one_lowercased_line():
    assert normalize_for_fasttext("Hello, World!\nIt's 2024.\r\n") == "hello, world! it's 2024.  "


def test_words_joined_by_unicode_spaces_score_as_with_plain_spaces():
    """Text whose words are joined by no-break spaces (`&nbsp;`) scored 0: fastText saw one token."""
    stage = FastTextQuality("ft")
    stage.setup()
    plain = " ".join(GOOD)
    docs = [Document(str(i), plain.replace(" ", space)) for i, space in enumerate(" \u00a0\u2009\u3000")]
    scores = [v.doc.scores["ft"] for v in stage.check_batch(docs)]
    assert scores[0] > 0.5 and scores == [scores[0]] * 4


def test_scores_prose_above_spam_and_chat_and_never_rejects():
    stage = FastTextQuality("ft")
    stage.setup()
    docs = [Document("good", " ".join(GOOD)), Document("spam", " ".join(BAD[::2])), Document("empty", "")]
    verdicts = stage.check_batch(docs)
    assert all(v.keep for v in verdicts)
    good, spam, empty = (v.doc.scores["ft"] for v in verdicts)
    assert all(0.0 <= s <= 1.0 for s in (good, spam, empty))
    assert good > 0.5 > spam
    single = Document("good", " ".join(GOOD))
    verdict = stage.check(single)
    assert verdict.keep and verdict.doc.scores["ft"] == good


def test_missing_model_is_a_config_error_naming_the_file(tmp_path):
    with pytest.raises(ConfigError, match="model: .*nope.bin"):
        FastTextQuality("ft", model=str(tmp_path / "nope.bin"))


def test_a_corrupt_model_or_one_without_the_quality_label_is_a_config_error(tmp_path):
    """Both passed `validate` and stopped the run in its workers, naming neither stage nor key."""
    from filters.language import lid176_path

    path = tmp_path / "model.bin"
    path.write_bytes(b"not a fasttext model" * 100)
    with pytest.raises(ConfigError, match=f"model: fastText model file {path} is corrupt"):
        FastTextQuality("ft", model=str(path))
    with pytest.raises(ConfigError, match="model: fastText model .*lid.176.ftz has no __label__hq label"):
        FastTextQuality("ft", model=str(lid176_path()))


def test_stage_pickles_without_its_model():
    import pickle

    stage = FastTextQuality("ft")
    stage.setup()
    clone = pickle.loads(pickle.dumps(stage))
    assert clone._model is None and clone.model == stage.model
    with pytest.raises(RuntimeError, match="used before setup"):
        clone.check(Document("d", "text"))
