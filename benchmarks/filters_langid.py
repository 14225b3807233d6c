"""Language-ID accuracy of the `language` stage (lid.176.ftz) on ../shared/data/langid/sentences.

One sentence per line, 500 per language, 75 languages (lingua's test data). Each sentence goes
through the `language` stage with every language wanted and no threshold, so `doc.language` is
the model's top label; accuracy is the share equal to the file's ISO 639-1 code (lid.176 says
"no" for Norwegian Bokmål, which lingua calls "nb"). Prints per-language accuracy, the count of
languages at or above 0.95, the main confusion pairs, and the share kept at the default threshold.

    .venv/bin/python benchmarks/filters_langid.py [--data ../shared/data]
"""

from __future__ import annotations

import time
from collections import Counter

from common import arguments

from filters.language import LanguageFilter
from pipeline.document import Document

MODEL_CODE = {"nb": "no"}


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--target", type=float, default=0.95)
    args = parser.parse_args()
    folder = args.data / "langid" / "sentences"
    files = sorted(folder.glob("*.txt"))
    if not files:
        print(f"no sentences under {folder}; nothing to measure")
        return
    stage = LanguageFilter("language", languages=[], threshold=0.0)
    stage.setup()
    labels = {label[9:] for label in stage._model.labels}
    results = []
    confusions: Counter = Counter()
    total = seconds = 0.0
    for path in files:
        code = path.stem
        expected = MODEL_CODE.get(code, code)
        sentences = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        docs = [Document(id=f"{code}-{i}", text=s) for i, s in enumerate(sentences)]
        start = time.perf_counter()
        docs = [verdict.doc or doc for doc, verdict in zip(docs, stage.check_batch(docs))]
        seconds += time.perf_counter() - start
        total += len(docs)
        predicted = Counter(doc.language for doc in docs)
        correct = predicted[expected]
        kept = sum(doc.language == expected and doc.language_score > 0.65 for doc in docs)
        for language, count in predicted.items():
            if language != expected:
                confusions[(code, language)] += count
        results.append((code, correct / len(docs), kept / len(docs), expected in labels, predicted))
    passing = [r for r in results if r[1] >= args.target]
    print(f"{len(passing)}/{len(results)} languages with accuracy >= {args.target}")
    print(f"{total:.0f} sentences in {seconds:.2f}s ({total / seconds:,.0f} sentences/s, one process)")
    print("\nlang  accuracy  kept@0.65  in-model  top wrong predictions")
    for code, accuracy, kept, known, predicted in sorted(results, key=lambda r: -r[1]):
        wrong = ", ".join(
            f"{lang}:{n}" for lang, n in predicted.most_common() if lang != MODEL_CODE.get(code, code)
        )
        print(f"{code:4}  {accuracy:8.3f}  {kept:9.3f}  {'yes' if known else 'NO':8}  {wrong[:70]}")
    print("\nmost frequent confusions (true -> predicted: sentences)")
    for (true, predicted), count in confusions.most_common(20):
        print(f"  {true} -> {predicted}: {count}")


if __name__ == "__main__":
    main()
