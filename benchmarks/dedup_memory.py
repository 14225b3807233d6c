"""Peak memory of a whole `gristmill run` (main process and every worker together).

    # fineweb recipe (filters + minhash_dedup) on N documents of the minhash benchmark corpus
    .venv/bin/python benchmarks/dedup_memory.py --docs 100000 [--workers 2] [--recipe recipes/fineweb.toml]

The run is the CLI in a child process; the resident memory of its whole process tree is summed
every `--interval` seconds and the peak is reported with wall and CPU seconds (the run's, from
getrusage of the finished children), disk used by the output (peak, and against the disk-space
estimate `gristmill run` checks before it starts) and the manifest's counts (which must conserve:
read = kept + rejected + failed). Corpus: `dedup_minhash_speed.make_corpus`
(~3 KB documents of real text, 20% near-duplicates), written once under /tmp and reused with
`--corpus`.
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import DATA, ROOT, arguments


def tree_rss(pid: int) -> int:
    """Resident bytes of `pid` and all its descendants together."""
    return sum(process_rss(pid).values())


def process_rss(pid: int) -> dict[int, int]:
    """Resident bytes of `pid` and of each of its descendants, by pid (from /proc)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = {}, [pid]
    page = os.sysconf("SC_PAGE_SIZE")
    while todo:
        current = todo.pop()
        todo.extend(parents.get(current, ()))
        try:
            with open(f"/proc/{current}/statm") as handle:
                resident = int(handle.read().split()[1]) * page
        except OSError:
            continue
        found[current] = resident
    return found


def disk_bytes(path: Path) -> int:
    total = 0
    for file in path.rglob("*"):
        try:
            total += file.stat().st_size if file.is_file() else 0
        except OSError:  # removed while walking (spill and staging files come and go)
            pass
    return total


def shard_shas(out: Path) -> str:
    """`sha256  path` of every kept/rejected/failed shard under `out`, sorted by path."""
    lines = []
    for shard in sorted(p for kind in ("kept", "rejected", "failed") for p in (out / kind).glob("*.parquet")):
        with shard.open("rb") as handle:
            lines.append(f"{hashlib.file_digest(handle, 'sha256').hexdigest()}  {shard.relative_to(out)}\n")
    return "".join(lines)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(
    command: list[str],
    interval: float,
    disk: Path | None = None,
    kill_after: float = 0.0,
    log: Path | None = None,
) -> dict:
    """Run `command`; sample its tree's RSS every `interval` s (and the bytes under `disk` every
    10 samples); wall, CPU, peak memory and peak disk. `kill_after` > 0: kill -9 the whole run
    after that many seconds. `log`: append every sample, one line per process (seconds since
    the start, pid, resident bytes; pid 0 = the run's own process), to tell which one peaks when."""
    start, cpu = time.perf_counter(), children_cpu()
    process = subprocess.Popen(command, cwd=ROOT, start_new_session=True)
    peak = peak_one = peak_disk = samples = 0
    samples_log = open(log, "a", buffering=1) if log is not None else None  # noqa: SIM115 (closed below)
    while process.poll() is None:
        each = process_rss(process.pid)
        peak, peak_one = max(peak, sum(each.values())), max(peak_one, max(each.values(), default=0))
        if samples_log is not None:
            at = time.perf_counter() - start
            samples_log.writelines(
                f"{at:.1f} {0 if p == process.pid else p} {rss}\n" for p, rss in each.items()
            )
        if disk is not None and samples % 10 == 0 and disk.exists():
            peak_disk = max(peak_disk, disk_bytes(disk))
        samples += 1
        if kill_after and time.perf_counter() - start >= kill_after:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            break
        time.sleep(interval)
    if samples_log is not None:
        samples_log.close()
    return {
        "rc": process.returncode,
        "wall": time.perf_counter() - start,
        "cpu": children_cpu() - cpu,
        "peak": peak,
        "peak_one": peak_one,
        "peak_disk": max(peak_disk, disk_bytes(disk) if disk is not None and disk.exists() else 0),
    }


def main() -> None:
    parser = arguments(__doc__, docs=100_000, workers=2)
    parser.add_argument("--size", type=int, default=3000, help="characters per document")
    parser.add_argument("--recipe", default="recipes/fineweb.toml")
    parser.add_argument("--corpus", type=Path, help="reuse this JSONL (written by an earlier run)")
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()), help="where output goes")
    parser.add_argument(
        "--output", type=Path, help="keep the run's output here (a rerun with the same path resumes it)"
    )
    parser.add_argument("--interval", type=float, default=1.0)
    parser.add_argument("--checkpoints", default="auto", choices=("auto", "on", "off"))
    parser.add_argument("--log", type=Path, help="append every process's RSS per sample to this file")
    parser.add_argument("--shas", type=Path, help="write the sha256 of every output shard to this file")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = args.corpus
    if corpus is None or not corpus.exists():
        from benchmarks.dedup_minhash_speed import make_corpus

        if not (DATA / "quality").is_dir():
            print(f"skipped: no data at {DATA}")
            return
        corpus = corpus or args.work / f"memory-corpus-{args.docs}-{args.size}.jsonl"
        dups = make_corpus(corpus, args.docs, size=args.size)
        print(f"corpus: {corpus} ({corpus.stat().st_size / 1e9:.2f} GB, {args.docs} docs, {dups} near-dups)")
    with tempfile.TemporaryDirectory(dir=args.work) as tmp:
        out = args.output or Path(tmp) / "out"
        command = [
            sys.executable,
            "-m",
            "pipeline.cli",
            "run",
            "--quiet",
            "--recipe",
            args.recipe,
            "--input",
            str(corpus),
            "--output",
            str(out),
            f"--direct_num_workers={args.workers}",
            f"--checkpoints={args.checkpoints}",
        ]
        figures = measure(command, args.interval, disk=out, log=args.log)
        manifest = json.loads((out / "manifest.json").read_text()) if figures["rc"] == 0 else {}
        disk = disk_bytes(out) if out.exists() else 0
        if args.shas is not None and figures["rc"] == 0:
            args.shas.write_text(shard_shas(out))
    counts = manifest.get("counts", {})
    print(
        f"{args.recipe}, {args.docs} docs, {args.workers} workers: rc {figures['rc']}, "
        f"{figures['wall']:.0f}s wall, {figures['cpu']:.0f} CPU-s, peak RSS (all processes) "
        f"{figures['peak'] / 1e9:.2f} GB (largest process {figures['peak_one'] / 1e9:.2f} GB), peak disk {figures['peak_disk'] / 1e9:.2f} GB, "
        f"output {disk / 1e9:.2f} GB"
    )
    print(f"counts: {json.dumps(counts)}; conservation: {manifest.get('conservation')}")
    print(
        f"peak disk / input size: {figures['peak_disk'] / corpus.stat().st_size:.2f}; {disk_estimate(args.recipe, corpus)}"
    )


def disk_estimate(recipe_path: str, corpus: Path) -> str:
    """What `gristmill run`'s disk-space note estimates the run writes, against the input's size."""
    from pipeline.fileio import FileInfo
    from pipeline.preflight import written_bytes
    from pipeline.recipe import load_recipe

    recipe = load_recipe(recipe_path, [str(corpus)])
    stat = corpus.stat()
    estimate = written_bytes(recipe, {str(corpus): FileInfo(stat.st_size, stat.st_mtime)})
    return f"the preflight's estimate {estimate / 1e9:.2f} GB ({estimate / stat.st_size:.2f}x the input)"


if __name__ == "__main__":
    main()
