"""Scores read from the input may be NaN or infinite (JSON's `NaN`, `Infinity`; Parquet doubles): a
run must finish with its manifest and report, and survivors must not depend on the input order."""

import json
import math

import pyarrow.parquet as pq

from dedup.survivor import survivor_key
from pipeline.cli import main
from pipeline.document import Document
from pipeline.inspect import BoundedSample
from pipeline.report import _histogram
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe

SCORES = {"nan": "NaN", "low": "0.2", "best": "0.9", "minus_inf": "-Infinity", "plus_inf_other": "Infinity"}


def _records() -> list[str]:
    """Output rows (as `gristmill run` writes them, read back): four copies of one text and one other
    text, their `q` written as raw JSON numbers."""
    lines = []
    for name, value in SCORES.items():
        text = LONG_TEXT + (" other" if name == "plus_inf_other" else "")
        row = {"id": name, "text": text, "language": None, "language_score": None, "metadata": "{}"}
        lines.append(json.dumps(row)[:-1] + f', "scores": {{"q": {value}}}}}')
    return lines


def test_a_nan_score_ranks_as_a_missing_one():
    docs = [Document(name, "same", scores={"q": float(value)}) for name, value in SCORES.items()]
    ranked = sorted(docs + [Document("none", "same")], key=lambda doc: survivor_key(doc, "q", "longest"))
    assert [doc.id for doc in ranked] == ["plus_inf_other", "best", "low", "minus_inf", "nan", "none"]


def test_non_finite_values_are_counted_not_sampled_or_drawn():
    sample = BoundedSample()
    sample.extend([0.5, math.nan, math.inf, -math.inf, 1.5])
    assert sample.values == [0.5, 1.5] and sample.seen == 2 and sample.non_finite == 3
    assert sample.quantiles()["max"] == 1.5 and sample.quantiles()["non_finite"] == 3
    only = BoundedSample()
    only.extend([math.nan])
    assert only.quantiles() == {"count": 0, "non_finite": 1}
    assert "<svg" in _histogram({"kept": sample, "rejected": only})
    extreme = BoundedSample()
    extreme.extend([-1e308, 0.0, 1e308])  # their span overflowed to inf: "cannot convert float NaN"
    assert "<svg" in _histogram({"kept": extreme})


def test_a_run_with_non_finite_input_scores_finishes_and_keeps_the_best_copy(tmp_path, capsys):
    """NaN and infinite scores stopped the run after every document was written (the report's
    histogram: "cannot convert float NaN to integer", exit 2, no manifest); a NaN `prefer_score`
    could make a NaN copy survive. The scores come from JSON Lines, then from that run's output
    read back (where a recipe may name them)."""
    (tmp_path / "in").mkdir()
    path = write_jsonl(tmp_path / "in" / "scored.jsonl", _records())
    first, second = tmp_path / "first", tmp_path / "second"
    dedup = '[[stage]]\nuse = "exact_dedup"\nprefer_score = "q"\n'
    for out, inputs, stages in ((first, str(path), ""), (second, f"{first}/kept/*.parquet", dedup)):
        recipe = write_recipe(tmp_path / "recipe.toml", [inputs], stages)
        assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
        assert (out / "report.html").exists() and (out / "manifest.json").exists()
    assert json.loads((second / "manifest.json").read_text())["counts"] == {
        "input": 5, "kept": 2, "rejected": 3, "failed": 0,
    }  # fmt: skip
    kept = pq.read_table(second / "kept", columns=["id"]).column("id").to_pylist()
    assert sorted(kept) == ["best", "plus_inf_other"]
    capsys.readouterr()
    assert main(["inspect", str(second), "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)["scores"]
    assert figures["rejected"]["q"]["non_finite"] == 2 and figures["kept"]["q"]["non_finite"] == 1
