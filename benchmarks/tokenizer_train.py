"""Train gristmill's default tokenizer (pipeline/data/gristmill-bpe-32k.json) from ../shared/data.

A byte-level BPE (GPT-2 style pre-tokenization, 32,000 tokens) trained with Hugging Face
`tokenizers` on the prose, web, multilingual, code and math texts of ../shared/data. Byte-level,
so any text round-trips exactly (no unknown token, case kept); small (about 2 MB), so it ships in
the package and the demo shows token counts without a download. Deterministic for the same data.

    .venv/bin/python benchmarks/tokenizer_train.py
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from common import DATA, ROOT, arguments

OUTPUT = ROOT / "pipeline" / "data" / "gristmill-bpe-32k.json"
VOCAB_SIZE = 32000


def _jsonl(path: Path, *fields: str):
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            for field in fields:
                if isinstance(record.get(field), str):
                    yield record[field]


def texts():
    """Every training text, in a fixed order."""
    quality = DATA / "quality"
    for name in ("brown_corpus", "abc_news_transcripts", "state_union", "inaugural", "movie_reviews"):
        yield from _jsonl(quality / f"{name}.jsonl", "text")
    yield from _jsonl(DATA / "web" / "article_extraction" / "full_page_text.jsonl", "text")
    for path in sorted((DATA / "langid" / "sentences").glob("*.txt")):
        yield path.read_text(encoding="utf-8")
    yield from _jsonl(DATA / "code" / "humaneval.jsonl.gz", "prompt", "canonical_solution", "test")
    yield from _jsonl(DATA / "math" / "gsm8k_train.jsonl", "question", "answer")
    yield from _jsonl(DATA / "math" / "math_hendrycks_test.jsonl", "problem", "solution")


def main() -> None:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    parser = arguments(__doc__)
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args()
    if not DATA.is_dir():
        raise SystemExit(f"{DATA} is missing; the default tokenizer is trained on ../shared/data")
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB_SIZE,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(texts(), trainer=trainer)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(args.output))
    print(
        f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB, {tokenizer.get_vocab_size()} tokens)"
    )


if __name__ == "__main__":
    main()
