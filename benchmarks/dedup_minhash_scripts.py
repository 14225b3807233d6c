"""Near-duplicate detection by language: does `minhash_dedup`'s shingling see an edited copy of a
page as a near-duplicate in scripts written without spaces (Chinese, Japanese, Thai) as it does
in English?

Pages are 12 consecutive sentences of one language's Leipzig sentences (`langid/sentences`); a
near-duplicate replaces one of the 12 with another sentence, an unrelated page is the next 12.
Reports, per language, the share of near-duplicates whose exact shingle Jaccard reaches the
stage's default threshold (recall), the share of unrelated pairs that do (false positives), and
the cost of the shingle hashes (best of 3 passes over the pages, microseconds per 1,000 characters).

    .venv/bin/python benchmarks/dedup_minhash_scripts.py --data ../shared/data
"""

from __future__ import annotations

import random
import time

from common import arguments

from dedup.minhash import MinHashDedup
from dedup.signatures import jaccard, shingle_hashes

LANGUAGES = ("en", "de", "ru", "ko", "zh", "ja", "th")
SENTENCES_PER_PAGE = 12


def main() -> None:
    args = arguments(__doc__, data=True).parse_args()
    defaults = MinHashDedup("minhash_dedup")
    ngram, threshold, seed = defaults.ngram, defaults.jaccard_threshold, defaults.seed
    print(f"ngram={ngram} jaccard_threshold={threshold}")
    print(
        "| language | pages | near-duplicates found | unrelated pairs matched "
        "| mean Jaccard (near / unrelated) | shingles, us per 1,000 chars |"
    )
    print("|---|---|---|---|---|---|")
    for language in LANGUAGES:
        path = args.data / "langid" / "sentences" / f"{language}.txt"
        sentences = [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        rng = random.Random(0)
        pages = [
            sentences[start : start + SENTENCES_PER_PAGE]
            for start in range(0, len(sentences) - SENTENCES_PER_PAGE + 1, SENTENCES_PER_PAGE)
        ]
        found = matched = 0
        near_sum = unrelated_sum = 0.0
        for index, page in enumerate(pages):
            edited = list(page)
            edited[rng.randrange(len(edited))] = rng.choice(sentences)
            original = shingle_hashes(" ".join(page), ngram, seed)
            near = jaccard(original, shingle_hashes(" ".join(edited), ngram, seed))
            other = pages[(index + 1) % len(pages)]
            unrelated = jaccard(original, shingle_hashes(" ".join(other), ngram, seed))
            found += near >= threshold
            matched += unrelated >= threshold
            near_sum += near
            unrelated_sum += unrelated
        n = len(pages)
        texts = [" ".join(page) for page in pages]
        passes = []
        for _ in range(3):
            started = time.process_time()
            for text in texts:
                shingle_hashes(text, ngram, seed)
            passes.append(time.process_time() - started)
        cost = min(passes) / sum(map(len, texts)) * 1e9
        print(
            f"| {language} | {n} | {found}/{n} | {matched}/{n} | {near_sum / n:.3f} / {unrelated_sum / n:.3f} "
            f"| {cost:.0f} |"
        )


if __name__ == "__main__":
    main()
