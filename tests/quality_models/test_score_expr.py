"""Boolean score expressions: parsing without eval, evaluation, and the checks when a recipe loads."""

import subprocess
import sys

import apache_beam as beam
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.util import assert_that, equal_to

from pipeline.document import Document
from pipeline.recipe import build_recipe
from pipeline.run import new_pipeline
from pipeline.stages import ConfigError
from quality_models import score_expr
from quality_models.score_threshold import ScoreThreshold

DEDUP_STAGES = ("exact_dedup", "minhash_dedup", "paragraph_dedup", "unit_dedup", "semantic_dedup")


def test_parse_names_and_evaluate():
    node = score_expr.parse("quality >= 0.5 and not (embedding_quality.toxic > 0.2 or x-y == 1e-3)")
    assert score_expr.names(node) == ["quality", "embedding_quality.toxic", "x-y"]
    scores = {"quality": 0.7, "embedding_quality.toxic": 0.1, "x-y": 0.0}
    assert score_expr.evaluate(node, scores)
    assert not score_expr.evaluate(node, {**scores, "quality": 0.49})
    assert not score_expr.evaluate(node, {**scores, "x-y": 0.001})
    assert score_expr.evaluate(score_expr.parse("0.2 < a or a != a"), {"a": 0.3})
    assert score_expr.evaluate(
        score_expr.parse("a < 1 or b < 1 and b > 2"), {"a": 0, "b": 5}
    )  # and binds first
    with pytest.raises(score_expr.MissingScore, match="b"):
        score_expr.evaluate(score_expr.parse("a > 0 and b > 0"), {"a": 1.0, "b": float("nan")})


@pytest.mark.parametrize(
    "text, message",
    [
        ("", "empty expression"),
        ("quality >=", "expected a score name or a number, found 'end of expression'"),
        ("quality 0.5", "expected a comparison (< <= > >= == !=), found '0.5'"),
        ("(a > 1", "missing ')'"),
        ("a > 1 b", "unexpected 'b' after a complete expression"),
        ("1 < 2", "comparison of two numbers"),
        # said as "missing ')'" (bracketed) or "unexpected '<' after a complete expression"
        ("(0.2 < q < 0.5)", "chained comparisons are not supported: write `... < q and q < ...`"),
        ("__import__('os') > 1", "unexpected"),
        ("a > 1 and", "expected a score name or a number"),
        ("(" * 2000 + "a > 1" + ")" * 2000, "expression too long: more than 200 tokens"),
    ],
)
def test_syntax_errors(text, message):
    with pytest.raises(score_expr.ExprError, match=message.replace("(", r"\(").replace(")", r"\)")):
        score_expr.parse(text)


def test_the_longest_expression_parses_and_evaluates():
    deepest = "(" * 98 + "a > 1" + ")" * 98  # 199 tokens
    chain = " and ".join(["a > 0"] * 50)  # 199 tokens
    for text in (deepest, chain, "not " * 197 + "a > 0"):
        node = score_expr.parse(text)
        assert score_expr.names(node) == ["a"]
        assert score_expr.evaluate(node, {"a": 2.0}) in (True, False)


def test_threshold_expression_mode_in_a_pipeline():
    stage = ScoreThreshold("thr", expr="q >= 0.5 and t < 0.2")
    docs = [
        Document("keep", "x", scores={"q": 0.9, "t": 0.1}),
        Document("low", "x", scores={"q": 0.1, "t": 0.1}),
        Document("toxic", "x", scores={"q": 0.9, "t": 0.5}),
        Document("missing", "x", scores={"q": 0.9}),
    ]
    pipeline = new_pipeline()
    out = stage.expand(pipeline | beam.Create(docs))
    assert_that(out.kept | "Ids" >> beam.Map(lambda d: d.id), equal_to(["keep"]), label="kept")
    assert_that(
        out.rejected | "Why" >> beam.Map(lambda r: (r.doc.id, r.reason, r.detail)),
        equal_to(
            [
                ("low", "expression_false", "q=0.1 t=0.1: not (q >= 0.5 and t < 0.2)"),
                ("toxic", "expression_false", "q=0.9 t=0.5: not (q >= 0.5 and t < 0.2)"),
                ("missing", "missing_score", "no finite score 't' (got None)"),
            ]
        ),
        label="rejected",
    )
    assert_that(out.failed, equal_to([]), label="failed")
    pipeline.run().wait_until_finish()
    assert stage.manifest_extra()["mode"] == "expr"


def test_expression_excludes_other_modes_and_reports_syntax_with_the_key():
    with pytest.raises(ConfigError, match="expr: cannot be combined"):
        ScoreThreshold("thr", expr="q > 1", min=0.5)
    with pytest.raises(
        ConfigError, match="expr: cannot be combined with score \\('toxic'\\); name it in expr"
    ):
        ScoreThreshold("thr", expr="q > 1", score="toxic")  # it was ignored
    with pytest.raises(ConfigError, match=r"expr: missing '\)' in '\(q > 1'"):
        ScoreThreshold("thr", expr="(q > 1")


def recipe(stages):
    return {"input": {"paths": ["x.jsonl"]}, "stage": stages}


def test_recipe_rejects_scores_no_earlier_stage_writes():
    heads = {"use": "embedding_quality", "model": "", "heads": ["informative", "toxic"]}
    ok = {"use": "score_threshold", "expr": "embedding_quality.informative >= 0.5 and toxicity.learned < 0.9"}
    build_recipe(recipe([heads, {"use": "toxicity"}, ok]), "r.toml")
    bad = {
        "use": "score_threshold",
        "expr": "embedding_quality.informative >= 0.5 and embedding_quality.depth > 1",
    }
    with pytest.raises(ConfigError) as error:
        build_recipe(recipe([heads, bad]), "r.toml")
    assert str(error.value).startswith(
        "r.toml: stage 2 (score_threshold): expr: unknown score 'embedding_quality.depth'"
    )
    assert str(error.value).endswith("; add 'depth' to the heads of stage 'embedding_quality')")
    misspelt = {"use": "score_threshold", "expr": "embedding_quality.informativ >= 0.5"}
    with pytest.raises(ConfigError, match="did you mean 'embedding_quality.informative'\\? known: "):
        build_recipe(recipe([heads, misspelt]), "r.toml")
    with pytest.raises(ConfigError, match="stage 1 \\(score_threshold\\): expr: unknown score 'q'"):
        build_recipe(recipe([{"use": "score_threshold", "expr": "q > 0.5"}, heads]), "r.toml")


def test_a_stage_that_writes_no_score_is_no_score_a_recipe_can_read():
    """Before, every earlier stage's name counted as a score: a threshold on `gopher_quality`
    passed `validate`, then rejected every document as `missing_score`."""
    for reads in ({"score": "gopher_quality", "min": 0.5}, {"expr": "length > 0.5 or exact_dedup > 0"}):
        stages = [{"use": "gopher_quality"}, {"use": "length"}, {"use": "exact_dedup"}]
        with pytest.raises(ConfigError, match="unknown score '(gopher_quality|length)'.*known: none"):
            build_recipe(recipe([*stages, {"use": "score_threshold", **reads}]), "r.toml")
    gate = {"use": "verify", "min_mutation_score": 0.5}
    build_recipe(recipe([gate, {"use": "score_threshold", "score": "mutation_score", "min": 0.5}]), "r.toml")
    with pytest.raises(ConfigError, match="stage 1 \\(quality\\): model: unknown score 'fasttext_quality'"):
        build_recipe(recipe([{"use": "quality"}]), "r.toml")
    with pytest.raises(
        ConfigError, match="stage 1 \\(score_threshold\\): expr: expected a score name or a number, found"
    ):
        build_recipe(recipe([{"use": "score_threshold", "expr": "q >> 1"}]), "r.toml")


@pytest.mark.parametrize(
    "stage, key",
    [
        ({"use": "score_threshold", "score": "fasttext_qualty", "min": 0.5}, "score"),
        ({"use": "score_threshold", "keep_fraction": 0.5}, "score"),  # the default score, never written
        *[({"use": use, "prefer_score": "fasttext_qualty"}, "prefer_score") for use in DEDUP_STAGES],
    ],
)
def test_a_score_named_by_score_or_prefer_score_must_be_written_earlier(stage, key):
    wanted = stage.get("prefer_score", stage.get("score", "fasttext_quality"))
    with pytest.raises(ConfigError, match=f"stage 2 \\({stage['use']}\\): {key}: unknown score '{wanted}'"):
        build_recipe(recipe([{"use": "length"}, stage]), "r.toml")
    fixed = {**stage, key: "fasttext_quality"} if key in stage else stage
    build_recipe(recipe([{"use": "fasttext_quality"}, fixed]), "r.toml")


def test_scores_carried_by_an_output_read_back_as_input_are_known(tmp_path):
    rows = {"id": ["a"], "text": ["t"], "language": ["en"], "language_score": [0.9], "metadata": ["{}"]}
    scores = pa.array([{"quality": 0.7, "embedding_quality.toxic": 0.1}])
    pq.write_table(pa.table({**rows, "scores": scores}), tmp_path / "part-0.parquet")
    pq.write_table(pa.table({"id": ["b"], "text": ["t"], "quality": [0.5]}), tmp_path / "plain.parquet")
    expr = {"use": "score_threshold", "expr": "quality >= 0.5 and embedding_quality.toxic < 0.2"}
    data = {"input": {"paths": [str(tmp_path / "part-*.parquet")]}, "stage": [expr]}
    build_recipe({**data, "stage": [expr, {"use": "exact_dedup", "prefer_score": "quality"}]}, "r.toml")
    with pytest.raises(ConfigError, match="expr: unknown score 'depth'"):
        build_recipe({**data, "stage": [{"use": "score_threshold", "expr": "depth > 1"}]}, "r.toml")
    with pytest.raises(ConfigError, match="expr: unknown score 'quality'"):  # not a gristmill output
        build_recipe({**data, "input": {"paths": [str(tmp_path / "plain.parquet")]}}, "r.toml")


def test_cli_exits_2_naming_recipe_stage_and_key(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('[input]\npaths = ["x.jsonl"]\n[[stage]]\nuse = "score_threshold"\nexpr = "nope < 1"\n')
    done = subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "validate", str(path)], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert f"{path}: stage 1 (score_threshold): expr: unknown score 'nope'" in done.stderr


def test_a_long_expression_is_refused_at_its_201st_token():
    """Tokens are counted as they are read, so the rest (here, a bad character) is never read.
    Before, the whole text was tokenized first, copying its rest per token: a 1.76 MB expression
    took 197 s to be refused."""
    with pytest.raises(score_expr.ExprError, match="more than 200 tokens"):
        score_expr.parse(" or ".join(["a > 0.5"] * 200_000) + " $")


def test_a_document_lacking_any_score_the_expression_reads_is_missing_score_in_any_order():
    """Before, `a > 0.5 or b > 0.5` kept a document without `b` that `b > 0.5 or a > 0.5` rejected."""
    doc = Document("d", "x", scores={"a": 0.9, "c": float("nan")})
    for expr in ("a > 0.5 or b > 0.5", "b > 0.5 or a > 0.5", "a > 0.5 or c > 0.5", "a < 0.5 and b > 0.5"):
        assert ScoreThreshold("thr", expr=expr).decide(doc, None)[0] == "missing_score", expr
