"""Fidelity to datatrove 0.10 on variants of real documents: other line breaks and whitespace.

`filters_fidelity.py` compares the filters on documents as they come; crawled text also arrives
with CRLF or CR line ends, Unicode line separators, tabs, non-breaking or ideographic spaces,
doubled spaces, other bullets and ellipses, boilerplate lines and citation marks, where
`str.split("\\n")`, `str.splitlines()`, `str.split()` and spaCy's tokenizer part ways. Every
`--every`-th document of the filter corpus that has a line break is rewritten each way below
(seeded) and both sides decide every variant (filters one by one, as `filters_fidelity.py`):

    .venv/bin/python benchmarks/filters_fidelity_variants.py [--data ../shared/data] \\
        [--reference-python /tmp/dt-venv-filters/bin/python] [--every 25]
"""

from __future__ import annotations

import random
import re

from common import arguments
from filters_corpus import load_corpus
from filters_fidelity import report, run_ours, run_reference


def _each_newline(text: str, choices: list[str], rng: random.Random) -> str:
    return "".join(rng.choice(choices) if char == "\n" else char for char in text)


VARIANTS = {
    "crlf": lambda t, rng: t.replace("\n", "\r\n"),
    "cr": lambda t, rng: t.replace("\n", "\r"),
    "mixed_crlf": lambda t, rng: _each_newline(t, ["\n", "\r\n"], rng),
    "u2028": lambda t, rng: t.replace("\n", "\u2028"),
    "u2029": lambda t, rng: t.replace("\n\n", "\u2029").replace("\n", "\u2028"),
    "nel": lambda t, rng: t.replace("\n", "\x85"),
    "vt": lambda t, rng: t.replace("\n", "\x0b"),
    "ff": lambda t, rng: t.replace("\n", "\x0c"),
    "fs_gs_rs": lambda t, rng: _each_newline(t, ["\n", "\x1c", "\x1d", "\x1e"], rng),
    "trailing_ws": lambda t, rng: t.replace("\n", " \t \n"),
    "leading_ws": lambda t, rng: t.replace("\n", "\n   "),
    "indent_tabs": lambda t, rng: t.replace("\n", "\n\t"),
    "blank_lines": lambda t, rng: t.replace("\n", "\n \n"),
    "no_final_newline": lambda t, rng: t.rstrip("\n"),
    "many_final_newlines": lambda t, rng: t + "\n\n\n\n",
    "single_line": lambda t, rng: " ".join(t.split()),
    "tabs": lambda t, rng: t.replace(" ", "\t"),
    "double_spaces": lambda t, rng: t.replace(" ", "  "),
    "nbsp_some": lambda t, rng: "".join("\xa0" if c == " " and rng.random() < 0.1 else c for c in t),
    "zwsp": lambda t, rng: t.replace(" ", " \u200b"),
    "ideographic_space": lambda t, rng: t.replace(" ", "\u3000"),
    "space_before_punct": lambda t, rng: re.sub(r"([.!?,;:])", r" \1", t),
    "no_space_after_period": lambda t, rng: t.replace(". ", "."),
    "spaced_ellipsis": lambda t, rng: t.replace(".", ". . ."),
    "ellipsis_ends": lambda t, rng: t.replace(".\n", "...\n"),
    "ellipsis_char": lambda t, rng: t.replace(".\n", "\u2026\n"),
    "cjk_stops": lambda t, rng: t.replace(".\n", "\u3002\n"),
    "fullwidth_punct": lambda t, rng: t.replace(".", "\uff0e").replace("!", "\uff01").replace("?", "\uff1f"),
    "quote_line_ends": lambda t, rng: t.replace(".\n", '."\n'),
    "paren_ends": lambda t, rng: t.replace(".\n", ".)\n"),
    "em_dash_lines": lambda t, rng: t.replace("\n", " \u2014\n"),
    "curly_quotes": lambda t, rng: t.replace('"', "\u201d").replace("'", "\u2019"),
    "bullets": lambda t, rng: t.replace("\n", "\n\u2022 "),
    "dash_bullets": lambda t, rng: t.replace("\n", "\n- "),
    "star_bullets": lambda t, rng: t.replace("\n", "\n* "),
    "hash_lines": lambda t, rng: t.replace("\n", "\n# "),
    "upper": lambda t, rng: t.upper(),
    "combining": lambda t, rng: t.replace("e", "e\u0301"),
    "digits": lambda t, rng: re.sub(r"[a-z]{7,}", "1234567", t),
    "emoji_lines": lambda t, rng: t.replace("\n", " \U0001f600\n"),
    "entities": lambda t, rng: t.replace("&", "&amp;").replace("'", "&#39;"),
    "url_lines": lambda t, rng: t + "".join(f"\nhttp://example.com/page/{i}?q=a.b" for i in range(8)),
    "dup_lines": lambda t, rng: t + "\n" + "\n".join(t.split("\n")[:3]),
    "dup_paragraphs": lambda t, rng: t + "\n\n" + t.split("\n\n")[0],
    "citations": lambda t, rng: t.replace(".", ".[1]", 5).replace(" ", " [citation needed] ", 2),
    "long_word": lambda t, rng: t.replace(" ", " " + "x" * 1200 + " ", 1),
    "lorem": lambda t, rng: t.replace("\n", "\nLorem ipsum dolor sit amet.\n", 1),
    "javascript": lambda t, rng: t.replace("\n", "\nPlease enable JavaScript to view this site.\n", 1),
    "policy": lambda t, rng: t.replace("\n", "\nThis site uses cookies. Read our privacy policy.\n", 1),
    "curly": lambda t, rng: t + "\nfunction() { return 1; }",
}


def variants(records: list[dict], every: int, seed: int = 7) -> list[dict]:
    """Each way of rewriting, applied to every `every`-th document holding a line break."""
    rng = random.Random(seed)
    base = [record for record in records if "\n" in record["text"]][::every]
    return [
        {**record, "id": f"{name}:{record['id']}", "source": name, "text": rewrite(record["text"], rng)}
        for record in base
        for name, rewrite in VARIANTS.items()
    ]


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--reference-python", default="/tmp/dt-venv-filters/bin/python")
    parser.add_argument("--every", type=int, default=25, help="rewrite every N-th document (default 25)")
    parser.add_argument("--examples", type=int, default=4, help="disagreements shown per filter")
    args = parser.parse_args()
    records = variants(load_corpus(args.data), args.every)
    if not records:
        print(f"no data under {args.data}; nothing to measure")
        return
    ref, ref_seconds = run_reference(records, args.reference_python)
    ours, our_seconds = run_ours(records)
    report(records, ours, ref, args.examples)
    print(
        f"\nwall time, all filters one by one on every variant: ours {our_seconds:.1f}s, datatrove {ref_seconds:.1f}s"
    )


if __name__ == "__main__":
    main()
