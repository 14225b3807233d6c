"""Keep-fraction accuracy of `score_threshold` on 100k documents (gristmill's local runner).

    python benchmarks/quality_threshold.py [--docs 100000] [--targets 0.01 0.1 0.3 0.5 0.9]

Scores imitate a classifier's output: a bimodal mix of Beta distributions plus 15% of exact ties
at 0.0 and 1.0 (clipped probabilities). One pipeline applies one `score_threshold` per target and
reads back its Beam metrics: achieved fraction = kept / in, and the cut value (gauge cut_micro).
Target: achieved fraction within +-1 percentage point of the target.
"""

from __future__ import annotations

import time

import apache_beam as beam
import numpy as np
from apache_beam.metrics.metric import MetricsFilter
from common import arguments

from pipeline.beam_stages import RunCollectionStage
from pipeline.document import Document
from pipeline.run import new_pipeline
from quality_models.score_threshold import ScoreThreshold


def scores(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    values = np.where(rng.random(n) < 0.6, rng.beta(2, 8, n), rng.beta(8, 2, n))
    ties = rng.random(n)
    values[ties < 0.05] = 0.0
    values[ties > 0.90] = 1.0
    return values


def main() -> int:
    parser = arguments(__doc__, docs=100_000)
    parser.add_argument("--targets", type=float, nargs="+", default=[0.01, 0.1, 0.3, 0.5, 0.9])
    args = parser.parse_args()
    values = scores(args.docs)
    docs = [Document(id=f"doc-{i:07d}", text="", scores={"q": float(v)}) for i, v in enumerate(values)]
    stages = [ScoreThreshold(f"keep_{t:g}", score="q", keep_fraction=t) for t in args.targets]
    start = time.perf_counter()
    pipeline = new_pipeline()
    pcoll = pipeline | beam.Create(docs, reshuffle=False)
    for stage in stages:
        _ = pcoll | RunCollectionStage(stage)
    result = pipeline.run()
    result.wait_until_finish()
    elapsed = time.perf_counter() - start
    metrics = result.metrics().query(MetricsFilter())
    counters = {(m.key.metric.namespace, m.key.metric.name): m.result for m in metrics["counters"]}
    gauges = {(m.key.metric.namespace, m.key.metric.name): m.result.value for m in metrics["gauges"]}
    print(f"{args.docs} documents, {len(stages)} thresholds in one local pipeline: {elapsed:.1f} s\n")
    print("| target | kept | achieved | error (pp) | cut value | exact cut (numpy) |")
    print("|---|---|---|---|---|---|")
    worst = 0.0
    for stage, target in zip(stages, args.targets):
        kept, seen = counters[(stage.name, "kept")], counters[(stage.name, "in")]
        achieved = kept / seen
        worst = max(worst, abs(achieved - target) * 100)
        exact = np.sort(values)[::-1][max(round(target * len(values)) - 1, 0)]
        cut = gauges[(stage.name, "cut_micro")] / 1e6
        print(
            f"| {target:g} | {kept} | {achieved:.4f} | {(achieved - target) * 100:+.3f} | {cut:.6f} | {exact:.6f} |"
        )
    print(f"\nworst error: {worst:.3f} pp (limit 1 pp)")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
