"""The default recipe on clean news in seven languages, with and without `only_languages`.

Documents: 25 consecutive sentences of `langid/sentences/<lang>.txt` (shared data) each, in
paragraphs of 5, for de, fr, es, en, ru, zh and ja. Three runs of `recipes/default.toml` with the
`language` stage keeping those seven languages:

1. as shipped (Gopher's English stop words and the English quality models apply to every language);
2. `gopher_quality` with `min_stop_words = 0`: the combined `quality` score per language;
3. `gopher_quality`, the scorers and `score_threshold` limited to English (`only_languages`).

Then `gopher_quality` with a German stop-word list on the German and English documents.
Prints kept counts, reasons and the `note:` lines `gristmill validate` prints.

    .venv/bin/python benchmarks/filters_languages.py [--data ../shared/data]
"""

from __future__ import annotations

import json
import tempfile
import tomllib
from collections import Counter, defaultdict
from pathlib import Path

import pyarrow.parquet as pq
from common import ROOT, arguments

from filters.gopher import GopherQuality
from pipeline.document import Document
from pipeline.recipe import build_recipe, language_notes
from pipeline.run import run_recipe

LANGUAGES = ["de", "fr", "es", "en", "zh", "ja", "ru"]
SENTENCES_PER_DOC, SENTENCES_PER_PARAGRAPH = 25, 5
ENGLISH_ONLY = ("gopher_quality", "fasttext_quality", "embedding_quality", "quality", "score_threshold")
GERMAN_STOP_WORDS = ["der", "die", "und", "in", "den", "von", "zu", "das"]


def write_corpus(sentences: Path, path: Path) -> list[dict]:
    records = []
    for language in LANGUAGES:
        lines = [
            line.strip() for line in (sentences / f"{language}.txt").read_text().splitlines() if line.strip()
        ]
        for start in range(0, len(lines), SENTENCES_PER_DOC):
            chunk = lines[start : start + SENTENCES_PER_DOC]
            paragraphs = [
                " ".join(chunk[i : i + SENTENCES_PER_PARAGRAPH])
                for i in range(0, len(chunk), SENTENCES_PER_PARAGRAPH)
            ]
            records.append(
                {"id": f"{language}-{start // SENTENCES_PER_DOC}", "text": "\n\n".join(paragraphs)}
            )
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return records


def recipe_data(corpus: Path, variant: str) -> dict:
    data = tomllib.loads((ROOT / "recipes" / "default.toml").read_text())
    data["input"]["paths"] = [str(corpus)]
    for table in data["stage"]:
        if table["use"] == "language":
            table["languages"] = LANGUAGES
        if variant == "no_stop_words" and table["use"] == "gopher_quality":
            table["min_stop_words"] = 0
        if variant == "english_only" and table["use"] in ENGLISH_ONLY:
            table["only_languages"] = ["en"]
    return data


def outcomes(output: Path) -> tuple[Counter, dict[str, list[float]]]:
    """Kept documents per language, and the `quality` scores per language of every document."""
    kept, quality = Counter(), defaultdict(list)
    for part in ("kept", "rejected"):
        for path in sorted(output.glob(f"{part}/**/*.parquet")):
            for row in pq.read_table(path, columns=["id", "scores"]).to_pylist():
                language = row["id"].split("-")[0]
                kept[language] += part == "kept"
                if (row["scores"] or {}).get("quality") is not None:
                    quality[language].append(row["scores"]["quality"])
    return kept, quality


def main() -> None:
    args = arguments(__doc__, data=True).parse_args()
    with tempfile.TemporaryDirectory(prefix="gristmill-languages-") as work:
        work = Path(work)
        records = write_corpus(args.data / "langid" / "sentences", work / "news.jsonl")
        print(f"documents: {dict(Counter(r['id'].split('-')[0] for r in records))}")
        for variant in ("as_shipped", "no_stop_words", "english_only"):
            recipe = build_recipe(recipe_data(work / "news.jsonl", variant), f"default.toml ({variant})")
            manifest = run_recipe(recipe, str(work / variant)).manifest
            kept, quality = outcomes(work / variant)
            print(
                f"\n{variant}: kept {manifest['counts']['kept']} of {manifest['counts']['input']}: {dict(kept)}"
            )
            for stage in manifest["stages"]:
                if stage["rejected"] or stage.get("metrics", {}).get("other_language"):
                    other = stage.get("metrics", {}).get("other_language", 0)
                    print(f"  {stage['name']}: rejected {stage['rejected']}, other_language {other}")
            for language, scores in quality.items():
                print(f"  quality {language}: {min(scores):.2f}-{max(scores):.2f} ({len(scores)} documents)")
            for note in language_notes(recipe):
                print(f"  {note}")
        german = GopherQuality("gopher_quality_de", stop_words=GERMAN_STOP_WORDS)
        for language in ("de", "en"):
            verdicts = [
                german.check(Document(r["id"], r["text"])) for r in records if r["id"].startswith(language)
            ]
            reasons = Counter("kept" if v.keep else v.reason for v in verdicts)
            print(f"\ngopher_quality with German stop words, {language}: {dict(reasons)}")


if __name__ == "__main__":
    main()
