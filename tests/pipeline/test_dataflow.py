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


def test_dataflow_dry_run_builds_the_job_and_packages_the_models(tmp_path):
    """Beam's DataflowRunner with `--dry_run=True` (fake project, bucket): the job is translated as
    for a submission and the `--setup_file` package a worker installs is built; nothing is sent."""
    pytest.importorskip("google.cloud.dataflow", reason="needs the gcp extra: pip install 'gristmill[gcp]'")
    import tarfile

    from apache_beam.portability import common_urns
    from apache_beam.portability.api import beam_runner_api_pb2

    bucket = "gs://gristmill-dry-run-bucket"
    options = PipelineOptions(
        [
            "--runner=DataflowRunner",
            "--dry_run=True",
            "--project=gristmill-dry-run",
            "--region=us-central1",
            f"--temp_location={bucket}/tmp",
            f"--spill_dir={bucket}/out/.staging-x/spill",
            f"--setup_file={ROOT / 'setup.py'}",
        ]
    )
    pipeline = beam.Pipeline(options=options)
    build_pipeline(pipeline, load_recipe(str(ROOT / "recipes" / "default.toml")), f"{bucket}/out/.staging-x")
    job = pipeline.run().job
    assert job.proto.name and job.google_cloud_options.project == "gristmill-dry-run"
    names = {t.unique_name for t in job.proto_pipeline.components.transforms.values()}
    assert "AllBranches" in names and "WriteShardList" in names
    packages = []
    for environment in job.proto_pipeline.components.environments.values():
        for artifact in environment.dependencies:
            if artifact.type_urn == common_urns.artifact_types.FILE.urn:
                payload = beam_runner_api_pb2.ArtifactFilePayload.FromString(artifact.type_payload)
                if payload.path.endswith((".tar.gz", ".tar")):
                    packages.append(payload.path)
    assert packages, "no workflow package built from --setup_file"
    with tarfile.open(packages[0]) as tar:
        members = tar.getnames()
    models = [m for m in members if "/quality_models/models/" in m and not m.endswith("/")]
    shipped = [p for p in (ROOT / "quality_models" / "models").rglob("*") if p.is_file()]
    assert len(models) >= len(shipped) > 0
