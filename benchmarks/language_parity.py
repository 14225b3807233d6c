"""The native lid.176 model (`filters._lid_native`) against fastText's binding on real text.

1. Every sentence of ../shared/data/langid/sentences (37,404 lines in 75 languages): labels and
   probabilities with k=1 and with every label (k=-1), compared exactly.
2. Every document of `filters_corpus.py` (11,700): the `language` stage's verdict (keep, reason,
   detail, language, score) with each model, at the default settings (en, 0.65) and with every
   language wanted at threshold 0.3 (every label scored).
3. CPU-seconds of the stage with each model on documents of 3,000 characters (min of 3 passes).

    .venv/bin/python benchmarks/language_parity.py [--data ../shared/data]
"""

from __future__ import annotations

from common import arguments
from filters_corpus import load_corpus
from speed import cpu_seconds, stage_runner
from speed_profile import three_kb

from filters import language
from filters.language import LanguageFilter, load_lid176
from pipeline.document import Document

SETTINGS = {"default (en, 0.65)": {}, "any language, 0.3": {"languages": [], "threshold": 0.3}}


def compare_sentences(folder) -> None:
    texts = [
        line.strip()
        for path in sorted(folder.glob("*.txt"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]
    ours, reference = load_lid176(), load_lid176(reference=True)
    for k in (1, -1):
        a, b = ours.predict(texts, k), reference.predict(texts, k)
        same_labels = sum(x[0] == y[0] for x, y in zip(a, b))
        same = sum(x == y for x, y in zip(a, b))
        worst = max(
            (abs(p - q) for x, y in zip(a, b) if x[0] == y[0] for p, q in zip(x[1], y[1])), default=0.0
        )
        scored = sum(len(x[0]) for x in a)
        print(
            f"sentences, k={k:2}: {len(texts)} texts, {scored} (label, probability) pairs; labels identical "
            f"{same_labels}/{len(texts)}, labels and probabilities bit-identical {same}/{len(texts)}, "
            f"max |difference| {worst:.3g}"
        )


def verdicts(records: list[dict], params: dict, reference: bool) -> list[tuple]:
    language.REFERENCE = reference
    stage = LanguageFilter("language", **params)
    stage.setup()
    language.REFERENCE = False
    docs = [Document(id=r["id"], text=r["text"]) for r in records]
    out = []
    for verdict in stage.check_batch(docs):
        found = verdict.doc
        out.append((verdict.keep, verdict.reason, verdict.detail, found.language, found.language_score))
    return out


def main() -> None:
    parser = arguments(__doc__, data=True)
    args = parser.parse_args()
    folder = args.data / "langid" / "sentences"
    if any(folder.glob("*.txt")):
        compare_sentences(folder)
    else:
        print(f"no sentences under {folder}; skipped")
    records = load_corpus(args.data)
    if not records:
        print(f"no data under {args.data}; nothing more to compare")
        return
    for name, params in SETTINGS.items():
        ours, reference = verdicts(records, params, False), verdicts(records, params, True)
        same = sum(a == b for a, b in zip(ours, reference))
        kept = sum(a[0] for a in ours)
        print(f"documents, {name}: verdicts identical {same}/{len(records)} (kept {kept})")
    docs = three_kb(records, 1500)
    seconds = {}
    for mode in ("fasttext", "native"):
        language.REFERENCE = mode == "fasttext"
        seconds[mode] = cpu_seconds(stage_runner(("language",), docs), 3)
    language.REFERENCE = False
    print(
        f"language on {len(docs)} documents of 3,000 characters, docs per CPU-second: "
        + ", ".join(f"{mode} {len(docs) / s:,.0f} ({s:.3f} CPU-s)" for mode, s in seconds.items())
        + f"; {seconds['fasttext'] / seconds['native']:.2f}x"
    )


if __name__ == "__main__":
    main()
