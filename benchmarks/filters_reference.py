"""Reference side of the filter benchmarks: datatrove 0.10's filters, run in a throwaway venv.

Never imported by gristmill; `filters_fidelity.py` and `filters_speed.py` run it with the
throwaway venv's python. Create that venv with:

    python3.11 -m venv /tmp/dt-venv-filters
    /tmp/dt-venv-filters/bin/pip install "datatrove[processing]==0.10.*" spacy

Modes:
    decide DOCS.jsonl OUT.jsonl LID_MODEL [WORKERS]   one JSON line of decisions per document
    chain DOCS.jsonl WORKERS LID_MODEL      FineWeb chain timing with WORKERS processes (prints JSON);
                                            LID_MODEL "-": the four filters without language
    urls URLS.txt OUT.jsonl                 URLFilter()'s decision on each URL, one JSON line each
    warc_chain FOLDER OUT.json LID_MODEL    FineWeb's reader, extractor and filters on FOLDER/*.warc.gz
                                            (needs warcio, faust-cchardet, python-magic, lxml_html_clean)
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from multiprocessing import Pool


def _load(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _language_filter(model_path: str):
    """datatrove's LanguageFilter with the local lid.176.ftz instead of a download."""
    import fasttext
    from datatrove.pipeline.filters import LanguageFilter

    language = LanguageFilter(languages=["en"])
    language.model._model = fasttext.load_model(model_path)
    return language


def _result(value) -> list:
    if isinstance(value, tuple):
        return [bool(value[0]), value[1]]
    return [bool(value), None]


def _memoize_word_splits() -> None:
    """Widen datatrove's 5-entry memo of spaCy splits so a document is split once, not per filter.

    Memoization only (split_into_parts is a pure function): the decisions do not change.
    """
    from functools import lru_cache

    import datatrove.utils.text as dt_text

    dt_text.split_into_parts = lru_cache(maxsize=4096)(dt_text.split_into_parts.__wrapped__)


_DECIDE = None


def _init_decide(model_path: str) -> None:
    global _DECIDE
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )
    from datatrove.pipeline.formatters import PIIFormatter

    _memoize_word_splits()
    filters = {
        "gopher_quality": GopherQualityFilter(),
        "gopher_repetition": GopherRepetitionFilter(),
        "c4_quality[terminal_punct=True]": C4QualityFilter(),
        "c4_quality[terminal_punct=False]": C4QualityFilter(filter_no_terminal_punct=False),
        "fineweb_quality": FineWebQualityFilter(),
        "language": _language_filter(model_path),
    }
    _DECIDE = (filters, PIIFormatter())


def _decide_one(record: dict) -> str:
    """Each filter on the original document (not chained), plus spaCy's word split and PII output."""
    from datatrove.data import Document
    from datatrove.utils.text import split_into_words

    filters, pii = _DECIDE
    words = split_into_words(record["text"])
    row = {"id": record["id"], "words": [len(words), hashlib.sha1("\x00".join(words).encode()).hexdigest()]}
    for name, step in filters.items():
        doc = Document(text=record["text"], id=record["id"], metadata={})
        row[name] = _result(step.filter(doc))
        if name.startswith("c4"):
            row[name].append(hashlib.sha1(doc.text.encode()).hexdigest())
    pii.emails_replacer._replace_i = pii.ip_replacer._replace_i = 0
    row["pii"] = hashlib.sha1(pii.format(record["text"]).encode()).hexdigest()
    return json.dumps(row)


def decide(docs_path: str, out_path: str, model_path: str, workers: int = 2) -> None:
    """Decisions for every document, in input order, with `workers` processes."""
    records = _load(docs_path)
    with Pool(workers, initializer=_init_decide, initargs=(model_path,)) as pool:
        with open(out_path, "w", encoding="utf-8") as out:
            for line in pool.imap(_decide_one, records, chunksize=8):
                out.write(line + "\n")


_CHAIN = None


def _init_chain(model_path: str) -> None:
    global _CHAIN
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
    )

    _CHAIN = [
        *([_language_filter(model_path)] if model_path != "-" else []),
        GopherRepetitionFilter(),
        GopherQualityFilter(),
        C4QualityFilter(filter_no_terminal_punct=False),
        FineWebQualityFilter(),
    ]


def _run_chain(records: list[dict]) -> tuple[int, float]:
    """(documents kept, CPU seconds this worker spent on them)."""
    from datatrove.data import Document

    start = time.process_time()
    kept = 0
    for record in records:
        doc = Document(text=record["text"], id=record["id"], metadata={})
        for step in _CHAIN:
            if not _result(step.filter(doc))[0]:
                break
        else:
            kept += 1
    return kept, time.process_time() - start


def chain(docs_path: str, workers: int, model_path: str) -> None:
    """Time the FineWeb filter chain over the documents with `workers` processes."""
    records = _load(docs_path)
    batches = [records[i : i + 64] for i in range(0, len(records), 64)]
    with Pool(workers, initializer=_init_chain, initargs=(model_path,)) as pool:
        pool.map(_run_chain, batches[:2])  # warm-up: spaCy and fastText loaded in every worker
        start = time.perf_counter()
        results = pool.map(_run_chain, batches, chunksize=1)
        seconds = time.perf_counter() - start
    kept, cpu_seconds = sum(k for k, _ in results), sum(c for _, c in results)
    print(json.dumps({"docs": len(records), "kept": kept, "seconds": seconds, "cpu_seconds": cpu_seconds}))


def warc_chain(folder: str, out_path: str, model_path: str) -> None:
    """FineWeb's steps before MinHash on every `.warc.gz` of a folder: datatrove's WarcReader and
    Trafilatura(favour_precision=True), then its filters in FineWeb's order; each record's fate
    (the first filter that removes it, `no_text`, or `kept`) by WARC-Record-ID, as JSON."""
    from pathlib import Path

    from datatrove.pipeline.extractors import Trafilatura
    from datatrove.pipeline.filters import (
        C4QualityFilter,
        FineWebQualityFilter,
        GopherQualityFilter,
        GopherRepetitionFilter,
        URLFilter,
    )
    from datatrove.pipeline.readers import WarcReader

    steps = [
        ("url_filter", URLFilter()),
        ("language", _language_filter(model_path)),
        ("gopher_repetition", GopherRepetitionFilter()),
        ("gopher_quality", GopherQualityFilter()),
        ("c4_quality", C4QualityFilter(filter_no_terminal_punct=False)),
        ("fineweb_quality", FineWebQualityFilter()),
    ]
    extractor = Trafilatura(favour_precision=True, timeout=60)
    fates = {}
    for path in sorted(Path(folder).glob("*.warc.gz")):
        for doc in WarcReader(data_folder=folder, glob_pattern=path.name).read_file(path.name):
            doc.text = extractor.extract(doc.text)
            fate = "kept" if doc.text else "no_text"
            for name, step in steps if doc.text else ():
                if not _result(step.filter(doc))[0]:
                    fate = name
                    break
            fates[doc.id] = fate
    Path(out_path).write_text(json.dumps(fates), encoding="utf-8")


def urls(urls_path: str, out_path: str) -> None:
    """datatrove's URLFilter() (its integrated lists) on each URL of a file, one per line."""
    from datatrove.data import Document
    from datatrove.pipeline.filters import URLFilter

    step = URLFilter()
    with open(urls_path, encoding="utf-8") as lines, open(out_path, "w", encoding="utf-8") as out:
        for url in lines.read().splitlines():
            out.write(
                json.dumps(_result(step.filter(Document(text="", id=url, metadata={"url": url})))) + "\n"
            )


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "urls":
        urls(sys.argv[2], sys.argv[3])
    elif mode == "warc_chain":
        warc_chain(sys.argv[2], sys.argv[3], sys.argv[4])
    elif mode == "decide":
        decide(sys.argv[2], sys.argv[3], sys.argv[4], *map(int, sys.argv[5:6]))
    elif mode == "chain":
        chain(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    else:
        raise SystemExit(f"unknown mode {mode!r}")
