"""Wall and CPU time of `gristmill run` over many small JSONL objects on a local S3 server (moto_server, a
separate process on loopback): what the driver spends per input file before and beside the
pipeline. Each object holds one 80-word document; the recipe has one `length` stage. With
`--format parquet` the objects are Parquet files, split by byte range from the listing's sizes
(the driver once read each footer to plan splits).

    python benchmarks/s3_planning.py [--files 200] [--format jsonl|parquet] [--quiet]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import boto3
from distributed_runners import _port

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "corpus"


def start_server() -> tuple[subprocess.Popen, str]:
    """moto_server on a free port, and its endpoint once it answers."""
    port = _port()
    server = shutil.which("moto_server", path=str(Path(sys.executable).parent)) or "moto_server"
    process = subprocess.Popen(
        [server, "-H", "127.0.0.1", "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    return process, f"http://127.0.0.1:{port}"


@contextmanager
def s3_server(bucket: str) -> Iterator[tuple[str, object]]:
    """(endpoint, boto3 client) of a moto_server holding `bucket`; the server stops after."""
    process, endpoint = start_server()
    try:
        client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id="t",
            aws_secret_access_key="t",
            region_name="us-east-1",
        )
        for _ in range(100):
            try:
                client.create_bucket(Bucket=bucket)
                break
            except Exception:
                time.sleep(0.3)
        yield endpoint, client
    finally:
        process.terminate()
        process.wait(timeout=20)


def encode(fmt: str, i: int, text: str) -> bytes:
    """One object's bytes: one document as a JSON line or a one-row Parquet file."""
    if fmt == "jsonl":
        return f'{{"id": "{i}", "text": "{text} {i}"}}\n'.encode()
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(pa.table({"id": [str(i)], "text": [f"{text} {i}"]}), sink)
    return sink.getvalue().to_pybytes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--format", choices=("jsonl", "parquet"), default="jsonl")
    parser.add_argument("--quiet", action="store_true", help="run with --quiet (no progress display)")
    args = parser.parse_args()
    with s3_server(BUCKET) as (endpoint, client):
        text = " ".join(f"word{i % 50}" for i in range(80))
        for i in range(args.files):
            client.put_object(
                Bucket=BUCKET, Key=f"in/{i:05d}.{args.format}", Body=encode(args.format, i, text)
            )
        with tempfile.TemporaryDirectory() as folder:
            recipe = Path(folder) / "recipe.toml"
            recipe.write_text(
                f'[input]\npaths = ["s3://{BUCKET}/in/*.{args.format}"]\n\n[[stage]]\nuse = "length"\nmin_words = 5\n'
            )
            command = [sys.executable, "-m", "pipeline.cli", "run", "--recipe", str(recipe)]
            command += ["--output", f"{folder}/out", *(["--quiet"] if args.quiet else [])]
            command += [f"--s3_endpoint_url={endpoint}", "--s3_access_key_id=t", "--s3_secret_access_key=t"]
            command += ["--s3_region_name=us-east-1"]
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run.returncode != 0:
            print(run.stderr[-2000:])
            return 1
        cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        print(
            f"{args.files} {args.format} objects{' (--quiet)' if args.quiet else ''}: gristmill run took {wall:.1f} s wall, "
            f"{cpu:.1f} CPU-s (the run and its workers; not the server)"
        )
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
