"""What a cluster runner (Dataflow, Flink, Spark) needs from the launch machine, checked without one:
the shipped recipes' graphs serialize to Beam's runner API (every DoFn and side input pickled, as
a job submission does), and the package a worker installs carries the models."""

from pathlib import Path

import apache_beam as beam
import pytest
from apache_beam.options.pipeline_options import PipelineOptions

from pipeline.recipe import load_recipe
from pipeline.run import build_pipeline

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("recipe", ["default.toml", "fineweb.toml", "synthesis.toml"])
def test_shipped_recipes_serialize_for_a_cluster_runner(recipe, tmp_path):
    # DataflowRunner itself needs apache-beam[gcp] (not installed here, see docs/distributed.md);
    # its submission serializes this same runner-API proto.
    pipeline = beam.Pipeline(options=PipelineOptions([]))
    build_pipeline(pipeline, load_recipe(str(ROOT / "recipes" / recipe)), "gs://bucket/out/.staging-x")
    proto = pipeline.to_runner_api()
    assert proto.SerializeToString()
    names = {t.unique_name for t in proto.components.transforms.values()}
    assert "AllBranches" in names and "WriteShardList" in names
    again = beam.Pipeline.from_runner_api(proto, pipeline.runner, pipeline.options)
    assert again is not None


def test_models_ship_inside_the_package():
    """Workers install the package (--setup_file / wheel): model files must be package data."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    data = config["tool"]["setuptools"]["package-data"]
    assert "models/**/*" in data["quality_models"]
    models = [p for p in (ROOT / "quality_models" / "models").rglob("*") if p.is_file()]
    assert models, "no shipped model files"
