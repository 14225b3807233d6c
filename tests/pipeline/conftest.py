"""A small finished output folder with kept, rejected (a filter and a dedup) and failed rows; an
S3-compatible server (moto_server) on loopback; a record of Parquet reads made off their thread."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import pytest

from pipeline import fileio
from pipeline.cli import main
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe
from tests.pipeline.test_run import _free_port

BUCKET = "corpus"

CURATED_STAGES = """
[[stage]]
use = "fasttext_quality"

[[stage]]
use = "length"
min_words = 20

[[stage]]
use = "exact_dedup"
prefer_score = "fasttext_quality"
"""


@pytest.fixture
def reads_off_thread(monkeypatch) -> list[str]:
    """Reads that arrow made from a file of `fileio.open_random_access` on a thread other than the
    one that opened it (its thread pools): the list stays empty when every read is the caller's."""
    off_thread, open_random_access = [], fileio.open_random_access

    class Watched:
        def __init__(self, handle, path):
            self._handle, self._path, self._owner = handle, path, threading.get_ident()

        def read(self, *args):
            if threading.get_ident() != self._owner:
                off_thread.append(self._path)
            return self._handle.read(*args)

        def __getattr__(self, name):
            return getattr(self._handle, name)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._handle.close()

    monkeypatch.setattr(fileio, "open_random_access", lambda path: Watched(open_random_access(path), path))
    return off_thread


def curated_records() -> list:
    records = []
    for i in range(24):
        text = f"{LONG_TEXT} unique{i}" if i % 6 else LONG_TEXT  # every 6th is an exact duplicate
        records.append({"id": f"doc{i:02d}", "text": text if i % 5 else "too short", "lang_hint": i})
    return [*records, "{not json"]


@pytest.fixture(scope="session")
def curated_output(tmp_path_factory):
    """(output folder, input file) of one in-process run."""
    folder = tmp_path_factory.mktemp("curated")
    data = write_jsonl(folder / "in.jsonl", curated_records())
    recipe = write_recipe(folder / "r.toml", [str(data)], CURATED_STAGES)
    out = folder / "out"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out), *IN_PROCESS]) == 0
    return out


@pytest.fixture(scope="module")
def s3_server(tmp_path_factory):
    """moto_server on a free loopback port, one per test module (each test has its own prefixes);
    yields a client and the Beam options that point S3 at it."""
    boto3 = pytest.importorskip("boto3")
    tmp_path = tmp_path_factory.mktemp("moto")
    port = _free_port()
    executable = shutil.which("moto_server", path=os.path.dirname(sys.executable)) or shutil.which(
        "moto_server"
    )
    if executable is None:
        pytest.skip("moto_server is not installed (dev extra: moto[server])")
    process = subprocess.Popen(
        [executable, "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / "moto.log", "w"),
    )
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        region_name="us-east-1",
    )
    deadline = time.time() + 60
    while True:
        try:
            client.create_bucket(Bucket=BUCKET)
            break
        except Exception:
            if time.time() > deadline or process.poll() is not None:
                process.kill()
                pytest.fail(f"moto_server did not start: {(tmp_path / 'moto.log').read_text()[-2000:]}")
            time.sleep(0.3)
    options = [
        f"--s3_endpoint_url={endpoint}",
        "--s3_access_key_id=testing",
        "--s3_secret_access_key=testing",
        "--s3_region_name=us-east-1",
    ]
    yield client, options
    process.terminate()
    process.wait(timeout=20)
