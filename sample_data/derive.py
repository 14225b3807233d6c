"""Write sample_data/duplicates.jsonl: the exact and near copies listed in derived.toml, made from
the articles in articles.jsonl. Every other sample file is hand-edited data.

Run `python sample_data/derive.py` from anywhere after editing an original article or
derived.toml; the output is deterministic and tests/test_end_to_end.py checks it is current.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

HERE = Path(__file__).resolve().parent


def _typo(body: str) -> str:
    """Swap two letters in the first long word (a scraped copy's typo)."""
    words = body.split(" ")
    for i, word in enumerate(words):
        if len(word) >= 8 and word.isalpha():
            words[i] = word[:3] + word[4] + word[3] + word[5:]
            return " ".join(words)
    raise ValueError("no word to misspell")


def _copy(of: str, url: str, text: str, category: str, stage: str, reason: str) -> dict:
    return {
        "id": f"article-{of}-{'copy' if stage == 'exact_dedup' else 'near'}",
        "url": url,
        "text": text,
        "category": category,
        "expected": stage,
        "expected_reason": reason,
        "duplicate_of": f"article-{of}",
    }


def derive() -> list[dict]:
    """The derived records, in derived.toml order."""
    spec = tomllib.loads((HERE / "derived.toml").read_text(encoding="utf-8"))
    with open(HERE / "articles.jsonl", encoding="utf-8") as handle:
        articles = {r["id"]: r for r in map(json.loads, handle)}
    records = []
    for copy in spec["exact_copy"]:
        original = articles[f"article-{copy['of']}"]
        assert original["category"] == "good_article", copy["of"]  # not one wrapped in boilerplate
        text = original["text"].replace("\n\n", "\n") if copy["join_paragraphs"] else original["text"]
        records.append(
            _copy(copy["of"], copy["url"], text, "exact_duplicate", "exact_dedup", "exact_duplicate")
        )
    for copy in spec["near_copy"]:
        original = articles[f"article-{copy['of']}"]
        assert original["category"] == "good_article", copy["of"]
        body = original["text"].split("\n\n", 1)[1]  # without the title line
        text = f"{_typo(body) if copy['typo'] else body}\n{spec['near_copy_footer']}"
        assert len(text) < len(original["text"]), copy["of"]  # the original wins on length
        records.append(
            _copy(copy["of"], copy["url"], text, "near_duplicate", "minhash_dedup", "near_duplicate")
        )
    return records


def render() -> str:
    """duplicates.jsonl's content."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in derive())


if __name__ == "__main__":
    (HERE / "duplicates.jsonl").write_text(render(), encoding="utf-8")
    print(f"duplicates.jsonl: {len(derive())} records")
