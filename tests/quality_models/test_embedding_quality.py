import numpy as np
import pytest

from pipeline.document import Document
from pipeline.stages import STAGES, ConfigError
from quality_models.embedding_quality import DEFAULT_EMBEDDING_HEAD, EmbeddingQuality, LinearHead

from .conftest import BAD, GOOD

STATIC_HEAD = DEFAULT_EMBEDDING_HEAD.parents[1] / "embedding-quality-static" / "head.safetensors"


def test_registered_with_shipped_heads_that_carry_their_metadata():
    assert STAGES["embedding_quality"] is EmbeddingQuality
    head = LinearHead.load(DEFAULT_EMBEDDING_HEAD)
    assert (head.embedder, head.dim, head.kind) == ("minilm-bf16", 384, "logistic")
    assert head.info["metrics"]["auc"] > 0.9 and head.info["training_data"]["files"]
    static = LinearHead.load(STATIC_HEAD)
    assert (static.embedder, static.dim) == ("static", 256)


def test_static_head_scores_prose_above_spam():
    stage = EmbeddingQuality("emb", model=str(STATIC_HEAD))
    stage.setup()
    docs = [Document("good", " ".join(GOOD)), Document("spam", " ".join(BAD))]
    verdicts = stage.check_batch(docs)
    assert all(v.keep for v in verdicts)
    assert 1.0 >= verdicts[0].doc.scores["emb"] > verdicts[1].doc.scores["emb"] >= 0.0


def test_head_round_trip_and_linear_kind(tmp_path):
    head = LinearHead("static", np.arange(256, dtype=np.float32) / 256, -0.5, "linear", {"note": "x"})
    head.save(tmp_path / "h.safetensors")
    loaded = LinearHead.load(tmp_path / "h.safetensors")
    assert loaded.kind == "linear" and loaded.info == {"note": "x"} and loaded.bias == -0.5
    x = np.ones((1, 256), dtype=np.float32)
    assert loaded.score(x)[0] == pytest.approx(float(np.arange(256).sum() / 256 - 0.5), rel=1e-5)


def test_missing_head_is_a_config_error_naming_the_file(tmp_path):
    with pytest.raises(ConfigError, match="model: .*absent.safetensors"):
        EmbeddingQuality("emb", model=str(tmp_path / "absent.safetensors"))


def test_a_corrupt_head_is_a_config_error_naming_the_file(tmp_path):
    """It passed `validate` and stopped the run in its workers, naming neither stage nor key."""
    path = tmp_path / "head.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage" + b"\x00" * 64)
    with pytest.raises(ConfigError, match=f"heads: embedding head file {path} is corrupt"):
        EmbeddingQuality("emb", model="", heads=[str(path)])

    # A head holding NaN loaded and wrote NaN scores for every document.
    weight = np.zeros(256, dtype=np.float32)
    weight[3] = np.nan
    LinearHead("static", weight, 0.0).save(tmp_path / "nan.safetensors")
    with pytest.raises(ConfigError, match="nan.safetensors: its weight or bias holds NaN"):
        EmbeddingQuality("emb", model="", heads=[str(tmp_path / "nan.safetensors")])


def test_heads_that_would_write_one_score_or_need_two_embedders_are_config_errors(tmp_path):
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        LinearHead("static", np.zeros(256, dtype=np.float32), 0.0).save(tmp_path / folder / "h.safetensors")
    same_name = [str(tmp_path / "a" / "h.safetensors"), str(tmp_path / "b" / "h.safetensors")]
    with pytest.raises(ConfigError, match=r"two heads would both write scores\['emb.h'\]"):
        EmbeddingQuality("emb", model="", heads=same_name)
    with pytest.raises(
        ConfigError, match="the heads name different embedders: \\['minilm-bf16', 'static'\\]"
    ):
        EmbeddingQuality("emb", heads=[same_name[0]])


def test_head_for_other_dims_is_refused_when_the_recipe_loads(tmp_path):
    path = tmp_path / "h384.safetensors"
    LinearHead("static", np.zeros(384, dtype=np.float32), 0.0).save(path)
    with pytest.raises(ConfigError, match="model expects 384 dims .*embedder 'static' gives 256"):
        EmbeddingQuality("emb", model=str(path))
