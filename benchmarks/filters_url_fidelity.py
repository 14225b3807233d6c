"""url_filter against datatrove 0.10's URLFilter (FineWeb's, with its integrated UT1 lists).

URLs of every kind the filter decides on, seeded: listed domains written four ways (bare, `www.`,
a sub-domain with a port, upper case), listed URLs with and without a scheme, unlisted hosts built
from Brown corpus words under several top-level domains, the shipped banned, soft-banned and
sub-words placed in paths in lower, title and upper case, and the target URIs of the shared WARC
files. Both sides decide each URL; gristmill as `recipes/fineweb.toml` sets it up
(`datatrove_matching = true`), with its default (lower-cased host and words, parent domains),
and without the UT1 lists (as before they were read from the datatrove wheel). The datatrove side runs
in the throwaway venv of `filters_reference.py`:

    .venv/bin/python benchmarks/filters_url_fidelity.py [--data ../shared/data] \\
        [--reference-python /tmp/dt-venv-filters/bin/python]
"""

from __future__ import annotations

import gzip
import json
import random
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from common import ROOT, arguments

from filters import ut1
from filters.url import URL_LISTS, URLFilter, _read_list
from pipeline.document import Document

# our reason -> datatrove's
REASONS = {
    "blocked_domain": ("domain", "subdomain"),
    "blocked_url": ("url",),
    "banned_word": ("hard_blacklisted",),
    "soft_banned_words": ("soft_blacklisted",),
    "banned_subword": ("blacklisted_subword",),
}
TLDS = ("com", "org", "net", "co.uk", "de", "com.au", "io")


def url_cases(data: Path, rng: random.Random) -> list[tuple[str, str]]:
    """(kind, URL) pairs."""
    asset = ut1.asset_path()
    domains = rng.sample(list(ut1.member_lines(asset, "domains")), 2000)
    listed_urls = rng.sample(list(ut1.member_lines(asset, "urls")), 500)
    cases = [
        (kind, url)
        for domain in domains
        for kind, url in (
            ("listed domain", f"http://{domain}/"),
            ("listed domain, www.", f"https://www.{domain}/index.html"),
            ("listed domain, sub-domain and port", f"https://m.{domain}:8443/a/b?c=d"),
            ("listed domain, upper case", f"HTTPS://{domain.upper()}/PAGE"),
        )
    ]
    cases += [("listed URL, no scheme", url) for url in listed_urls]
    cases += [("listed URL, http://", f"http://{url}") for url in listed_urls]
    words = [w for w in re.findall(r"[a-z]{3,10}", _brown_text(data)) if w.isascii()] or [
        "alpha",
        "beta",
        "gamma",
    ]
    cases += [
        (
            "unlisted host",
            f"https://{rng.choice(words)}{rng.choice(words)}.{rng.choice(TLDS)}/{rng.choice(words)}/{rng.choice(words)}-{rng.choice(words)}.html",
        )
        for _ in range(4000)
    ]
    for name in ("banned_words.txt", "soft_banned_words.txt", "banned_subwords.txt"):
        listed = _read_list(URL_LISTS / name)
        for word in rng.sample(listed, min(150, len(listed))):
            other = rng.choice(listed)
            cases += [
                (f"{name[:-4]}, lower", f"https://news.{rng.choice(words)}.com/{word}/story"),
                (f"{name[:-4]}, title", f"https://news.{rng.choice(words)}.com/{word.title()}-story"),
                (f"{name[:-4]}, upper", f"https://news.{rng.choice(words)}.com/{word.upper()}"),
                (f"{name[:-4]}, inside a word", f"https://news.{rng.choice(words)}.com/x{word}y"),
                (f"{name[:-4]}, with another", f"https://{word}-{other}.com/{other}"),
            ]
    cases += [("WARC target URI", url) for url in _warc_urls(data)]
    return cases


def _brown_text(data: Path) -> str:
    path = data / "quality/brown_corpus.jsonl"
    if not path.exists():
        return ""
    return " ".join(json.loads(line)["text"] for line in path.open(encoding="utf-8")).lower()


def _warc_urls(data: Path) -> list[str]:
    found = []
    for path in sorted((data / "web/warc").glob("*.warc.gz")):
        try:
            text = gzip.decompress(path.read_bytes()).decode("latin-1")
        except (OSError, EOFError):
            continue
        found += re.findall(r"^WARC-Target-URI: (\S+)", text, flags=re.M)
    return found


def reference(urls: list[str], python: str) -> list[list]:
    with tempfile.TemporaryDirectory() as tmp:
        given, out = Path(tmp) / "urls.txt", Path(tmp) / "out.jsonl"
        given.write_text("\n".join(urls) + "\n", encoding="utf-8")
        script = str(ROOT / "benchmarks" / "filters_reference.py")
        subprocess.run([python, script, "urls", str(given), str(out)], check=True, stderr=subprocess.DEVNULL)
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


def agree(verdict, theirs: list) -> bool:
    if verdict.keep != theirs[0]:
        return False
    return verdict.keep or theirs[1] in REASONS[verdict.reason]


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--reference-python", default="/tmp/dt-venv-filters/bin/python")
    args = parser.parse_args()
    cases = url_cases(args.data, random.Random(0))
    theirs = reference([url for _, url in cases], args.reference_python)
    for label, params in (
        ("as recipes/fineweb.toml (datatrove_matching = true)", {"datatrove_matching": True}),
        ("default", {}),
        ("without the UT1 lists (before 2026-12-05)", {"ut1_lists": False}),
    ):
        stage = URLFilter("url_filter", **params)
        stage.setup()
        totals: Counter = Counter()
        same: Counter = Counter()
        differ = []
        for (kind, url), ref in zip(cases, theirs):
            verdict = stage.check(Document(id=url, text="", url=url))
            totals[kind] += 1
            if agree(verdict, ref):
                same[kind] += 1
            else:
                differ.append((kind, url, verdict.reason, ref))
        print(
            f"\n{label}: {sum(same.values())}/{len(cases)} URLs decided alike (same reason when both block)"
        )
        for kind in totals:
            print(f"  {kind}: {same[kind]}/{totals[kind]}")
        for kind, url, ours, ref in differ[:6]:
            print(f"  differs: {kind}: {url[:90]}: ours={ours} datatrove={ref}")


if __name__ == "__main__":
    main()
