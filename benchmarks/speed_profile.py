"""cProfile summaries of the speed-critical paths (saved under benchmarks/results/profiles/).

    .venv/bin/python benchmarks/speed_profile.py chain      # the 4 FineWeb filters, every 4th document
    .venv/bin/python benchmarks/speed_profile.py chain-cold # the same, profiling the first pass of a
                                                            #   fresh process (word-split memo empty)
    .venv/bin/python benchmarks/speed_profile.py chain-run  # one worker's share of a whole run:
                                                            #   every 2nd document twice, from a fresh
                                                            #   word-split memo, unprofiled then profiled
    .venv/bin/python benchmarks/speed_profile.py minhash    # signatures + band keys, 3,000 docs of 3 KB
    .venv/bin/python benchmarks/speed_profile.py language   # for py-spy: py-spy record --native -r 200
                                                            #   -f raw -o OUT -- python THIS language

Prints CPU-seconds per pass (min of 3, warm caches) and the top functions by own time
(chain-cold: the cold pass's CPU-seconds, profiled, and the top functions by cumulative time;
chain-run: the run's CPU-seconds unprofiled and profiled, then the top functions by own time).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import time
from pathlib import Path

from common import DATA, arguments
from filters_corpus import load_corpus
from speed import FILTERS, cpu_seconds, signature_runner, stage_runner


def three_kb(records: list[dict], count: int) -> list[dict]:
    """Documents of 3,000 characters made from the longer real documents (newlines as spaces)."""
    docs = [r for r in records if len(r["text"]) > 1000][:count]
    return [{"id": r["id"], "text": (r["text"].replace("\n", " ") * 3)[:3000]} for r in docs]


def chain_run(docs: list[dict]) -> None:
    """The four filters over `docs` in batches of 64 from a fresh word-split memo, as a worker of
    `filters_speed.py` runs them: once unprofiled, once under cProfile."""
    from filters import text_analysis as ta

    for profiled in (False, True):
        ta._tokenizer.cache_clear()
        runs = [stage_runner(FILTERS, docs[i : i + 64]) for i in range(0, len(docs), 64)]
        profile = cProfile.Profile()
        start = time.process_time()
        if profiled:
            profile.enable()
        for run in runs:
            run()
        profile.disable()
        seconds = time.process_time() - start
        label = "profiled" if profiled else "unprofiled"
        print(f"{label}: {len(docs)} pages, {seconds:.2f} CPU-s, {len(docs) / seconds:,.0f} pages/CPU-s")
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(25)
    print(out.getvalue())


def main() -> None:
    parser = arguments(__doc__)
    parser.add_argument("what", choices=["chain", "chain-cold", "chain-run", "minhash", "language"])
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    records = load_corpus(args.data)
    if not records:
        print(f"no data under {args.data}; nothing to profile")
        return
    if args.what == "chain-run":
        chain_run(records[::2] * 2)
        return
    if args.what in ("chain", "chain-cold"):
        docs = records[::4]
        run = stage_runner(FILTERS, docs)
    elif args.what == "minhash":
        docs = three_kb(records, 3000)
        run = signature_runner(docs)
    else:
        docs = three_kb(records, 1500)
        run = stage_runner(("language",), docs)
    if args.what == "chain-cold":
        profile = cProfile.Profile()
        start = time.process_time()
        profile.runcall(run)
        print(f"cold pass (profiled): {time.process_time() - start:.2f} CPU-s for {len(docs)} docs")
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("cumulative").print_stats("filters", 15)
        print(out.getvalue())
        return
    seconds = cpu_seconds(run, 3)
    print(
        f"{args.what}: {len(docs)} docs, {seconds:.2f} CPU-s per pass, {len(docs) / seconds:,.0f} docs/CPU-s"
    )
    if args.what == "language":
        return
    profile = cProfile.Profile()
    profile.enable()
    run()
    profile.disable()
    out = io.StringIO()
    pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(20)
    print(out.getvalue())


if __name__ == "__main__":
    main()
