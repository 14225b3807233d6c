"""The C extensions against their Python references on every real document of ../shared/data.

For each document: the word split, each n-gram statistic, the verdict, reason and edited text of
gopher_repetition, gopher_quality, c4_quality (FineWeb's settings, and with the terminal-punctuation
rule on) and fineweb_quality (each on the original document),
and the MinHash shingle hashes must be identical with `filters._text_native` / `dedup._minhash_native`
and with the Python references (which `filters_fidelity.py` compares with datatrove and spaCy).

    .venv/bin/python benchmarks/text_analysis_parity.py [--data ../shared/data]
"""

from __future__ import annotations

from common import arguments
from filters_corpus import load_corpus
from speed import FILTERS, use_python_references


def outcomes(records: list[dict]) -> list[tuple]:
    """Per document: words, n-gram statistics, each filter's (keep, reason, text), shingle hashes."""
    from dedup.signatures import shingle_hashes
    from filters import text_analysis as ta
    from pipeline.document import Document
    from pipeline.stages import STAGES, load_builtin_stages

    load_builtin_stages()
    ta._tokenizer.cache_clear()  # a fresh word-split memo: every chunk is split anew in this pass
    stages = [STAGES[name](name) for name in FILTERS]
    stages.append(STAGES["c4_quality"]("c4_terminal_punct", filter_no_terminal_punct=True))
    out = []
    for r in records:
        doc = Document(id=r["id"], text=r["text"])
        stats = (
            ta.words(doc),
            ta.word_classes(doc),
            ta.line_marks(doc),
            ta.line_duplicates(doc),
            ta.paragraph_duplicates(doc),
            ta.fineweb_lines(doc, 30),
            ta.top_ngram_chars(doc, (2, 3, 4)),
            ta.duplicated_ngram_chars(doc, (5, 6, 7, 8, 9, 10)),
            shingle_hashes(r["text"], 5, 1).tobytes(),
        )
        verdicts = []
        for stage in stages:
            copy = Document(id=r["id"], text=r["text"])
            verdict = stage.check(copy)
            edited = verdict.doc or copy
            verdicts.append((verdict.keep, verdict.reason, verdict.detail, edited.text))
        out.append((stats, verdicts))
    return out


def main() -> None:
    parser = arguments(__doc__, data=True)
    args = parser.parse_args()
    records = load_corpus(args.data)
    if not records:
        print(f"no data under {args.data}; nothing to compare")
        return
    use_python_references(True)
    reference = outcomes(records)
    use_python_references(False)
    native = outcomes(records)
    words = sum(len(stats[0]) for stats, _ in reference)
    same_stats = sum(a[0] == b[0] for a, b in zip(reference, native))
    same_verdicts = sum(a[1] == b[1] for a, b in zip(reference, native))
    print(f"{len(records)} documents, {words:,} words")
    print(f"analysis identical (words, n-grams, line statistics, shingles): {same_stats}/{len(records)}")
    print(f"5 filters' verdicts, reasons, details and edited texts identical: {same_verdicts}/{len(records)}")
    for i, (a, b) in enumerate(zip(reference, native)):
        if a != b:
            print("first difference:", records[i]["id"])
            break


if __name__ == "__main__":
    main()
