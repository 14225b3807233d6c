"""Wall time, CPU-seconds and peak memory of `gristmill run` writing to a local S3 server
(moto_server, a separate process on loopback): spill files on S3 (`--spill_dir=s3://...`, what a
Dask run over an S3 output does by default), an output of many shards published into S3, and
that output again from checkpoints on S3 (a run resumed after its read: `--checkpoints=on`).
The input is the first `--docs` documents of quality/brown_corpus.jsonl, the recipe one `length`
stage; the kept shards are checked against a run with everything on local disk.

    python benchmarks/s3_writes.py --data ../shared/data [--docs 500] [--shards 64]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from distributed_runners import ENV
from s3_planning import s3_server

ROOT = Path(__file__).resolve().parents[1]
BUCKET = "writes"


def run(recipe: Path, output: str, extra: list[str], env: dict, folder: str) -> tuple[float, float, float]:
    """One `gristmill run` under /usr/bin/time: (wall s, CPU-s, peak MiB of its largest process,
    workers included)."""
    timing = Path(folder) / "time.txt"
    command = ["/usr/bin/time", "-o", str(timing), "-f", "%e %U %S %M", sys.executable, "-m", "pipeline.cli"]
    command += ["run", "--recipe", str(recipe), "--output", output, "-q", *extra]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    wall, user, system, peak_kib = timing.read_text().split()[-4:]
    return float(wall), float(user) + float(system), int(peak_kib) / 1024


def kept_digests(shards: dict[str, bytes]) -> list[str]:
    return sorted(hashlib.sha256(data).hexdigest() for data in shards.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, help="the shared data folder")
    parser.add_argument("--docs", type=int, default=500)
    parser.add_argument("--shards", type=int, default=64)
    args = parser.parse_args()
    with s3_server(BUCKET) as (endpoint, client):
        env = {**ENV, "AWS_ENDPOINT_URL": endpoint, "AWS_DEFAULT_REGION": "us-east-1"}
        env.update(AWS_ACCESS_KEY_ID="t", AWS_SECRET_ACCESS_KEY="t")
        with tempfile.TemporaryDirectory() as folder:
            corpus = Path(folder) / "in.jsonl"
            with open(Path(args.data) / "quality" / "brown_corpus.jsonl") as source, open(corpus, "w") as out:
                for number, line in zip(range(args.docs), source, strict=False):
                    out.write(json.dumps({"id": str(number), "text": json.loads(line)["text"]}) + "\n")
            recipe = Path(folder) / "recipe.toml"
            recipe.write_text(
                f'[input]\npaths = ["{corpus}"]\n\n[output]\nshards = {args.shards}\n\n'
                '[[stage]]\nuse = "length"\nmin_words = 5\n'
            )

            def local_kept(output: str) -> list[str]:
                return kept_digests({p.name: p.read_bytes() for p in Path(output, "kept").glob("*.parquet")})

            def s3_kept(prefix: str) -> list[str]:
                listing = client.list_objects_v2(Bucket=BUCKET, Prefix=f"{prefix}/kept/")
                keys = [item["Key"] for item in listing.get("Contents", [])]
                return kept_digests({k: client.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in keys})

            run(recipe, f"{folder}/local", [], env, folder)
            reference = local_kept(f"{folder}/local")
            print(f"{args.docs} documents, {args.shards} shards, moto_server at {endpoint}")
            print("| run | wall s | CPU-s | peak MiB | kept shards as a local run |")
            print("|---|---|---|---|---|")
            spill = run(recipe, f"{folder}/spilled", [f"--spill_dir=s3://{BUCKET}/spill"], env, folder)
            same = local_kept(f"{folder}/spilled") == reference
            print(
                f"| spill files on S3, output local | {spill[0]:.1f} | {spill[1]:.1f} | {spill[2]:,.0f} | {same} |"
            )
            published = run(recipe, f"s3://{BUCKET}/out", [], env, folder)
            same = s3_kept("out") == reference
            print(
                f"| output on S3 (spill local) | {published[0]:.1f} | {published[1]:.1f} | {published[2]:,.0f} | {same} |"
            )
            work = [f"--work-dir=s3://{BUCKET}/work", "--checkpoints=on"]
            run(recipe, f"s3://{BUCKET}/checkpointed", [*work, "--keep-work"], env, folder)
            resumed = run(recipe, f"s3://{BUCKET}/resumed", work, env, folder)
            same = s3_kept("resumed") == reference
            print(
                f"| output on S3, resumed from checkpoints on S3 | {resumed[0]:.1f} | {resumed[1]:.1f} "
                f"| {resumed[2]:,.0f} | {same} |"
            )
            left = client.list_objects_v2(Bucket=BUCKET, Prefix="spill/").get("KeyCount", 0)
            print(f"spill objects left: {left}")
        return 0


if __name__ == "__main__":
    raise SystemExit(main())
