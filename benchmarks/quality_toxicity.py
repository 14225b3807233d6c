"""False-positive rate of the `toxicity` stage on clean prose in ../shared/data (skips cleanly without it).

    python benchmarks/quality_toxicity.py [--data DIR]

Clean prose: Brown corpus, ABC transcripts, State of the Union, inaugural addresses, movie reviews.
Every rejection there is a false positive (read the printed details to check). For contrast, the
rejection rate on NPS chat logs (40 chat posts a document) is printed too. Rules: word lists only,
learned model only (at the default max_learned), and the stage's default (either).
"""

from __future__ import annotations

import json

from common import arguments

from filters.toxicity import Toxicity
from pipeline.document import Document

CLEAN = ("brown_corpus", "abc_news_transcripts", "state_union", "inaugural", "movie_reviews")


def main(argv: list[str] | None = None) -> int:
    parser = arguments(__doc__, data=True)
    args = parser.parse_args(argv)
    folder = args.data / "quality"
    if not folder.is_dir():
        print(f"skipped: {folder} not found")
        return 0
    stages = {
        "lexicon": Toxicity("toxicity", learned=False),
        "learned": Toxicity("toxicity", max_score=1.0),
        "default": Toxicity("toxicity"),
    }
    for stage in stages.values():
        stage.setup()
    totals = {rule: [0, 0] for rule in stages}
    for name in (*CLEAN, "nps_chat_logs"):
        with (folder / f"{name}.jsonl").open(encoding="utf-8") as handle:
            docs = [Document(id=r["id"], text=r["text"]) for r in map(json.loads, handle)]
        line = [f"{name} ({len(docs)} docs):"]
        for rule, stage in stages.items():
            verdicts = stage.check_batch(docs)
            rejected = [(d.id, v.detail) for d, v in zip(docs, verdicts) if not v.keep]
            line.append(f"{rule} {len(rejected) / len(docs):.2%}")
            if name in CLEAN:
                totals[rule][0] += len(rejected)
                totals[rule][1] += len(docs)
                if rule == "default":
                    for doc_id, detail in rejected:
                        print(f"  false positive {doc_id}: {detail}")
        print("  ".join(line))
    print(
        "clean prose, false-positive rate: "
        + "  ".join(f"{r} {a}/{n} = {a / n:.2%}" for r, (a, n) in totals.items())
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
