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


def test_corrupt_head_fails_at_setup_naming_the_file(tmp_path):
    path = tmp_path / "head.safetensors"
    path.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{garbage" + b"\x00" * 64)
    stage = EmbeddingQuality("emb", model=str(path))
    with pytest.raises(RuntimeError, match=str(path)):
        stage.setup()


def test_head_for_other_dims_fails_at_setup(tmp_path):
    path = tmp_path / "h384.safetensors"
    LinearHead("static", np.zeros(384, dtype=np.float32), 0.0).save(path)
    with pytest.raises(RuntimeError, match="384 dims, embedder static gives 256"):
        EmbeddingQuality("emb", model=str(path)).setup()
