"""recipes/fineweb.toml against FineWeb's own steps (datatrove 0.10) on WARC files, before MinHash.

datatrove's WarcReader, its Trafilatura extractor and its filters in FineWeb's order run in the
throwaway venv of `filters_reference.py` (plus `pip install warcio faust-cchardet python-magic
lxml_html_clean` there); gristmill runs the fineweb recipe on the same files. Each record's fate is
compared by WARC-Record-ID (a record MinHash removed counts as kept: datatrove's side stops
before MinHash), and the records only one side reads are listed with their fates:

    .venv/bin/python benchmarks/fineweb_warc_fidelity.py [--data ../shared/data] \\
        [--reference-python /tmp/dt-venv-filters/bin/python]
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
from common import ROOT, arguments

from filters.language import lid176_path


def record_id(value: str) -> str:
    """A WARC-Record-ID without its angle brackets and `urn:uuid:`, lower-cased."""
    return value.strip("<>").removeprefix("urn:uuid:").lower()


def our_fates(folder: Path, work: Path) -> dict[str, str]:
    output = work / "out"
    subprocess.run(
        [sys.executable, "-m", "pipeline.cli", "run", "--quiet", "--recipe", str(ROOT / "recipes/fineweb.toml"),
         "--input", str(folder / "*.warc.gz"), "--output", str(output)],
        check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    fates = {}
    for part in ("kept", "rejected", "failed"):
        for path in sorted((output / part).glob("*.parquet")):
            columns = {"kept": ["id"], "rejected": ["id", "stage", "reason"], "failed": ["id", "error"]}[part]
            for row in pq.read_table(path, columns=columns).to_pylist():
                fate = {"kept": "kept", "rejected": row.get("stage"), "failed": f"failed {row.get('error')}"}[
                    part
                ]
                if fate == "read":  # datatrove's side says `no_text` for a page without text
                    fate = "no_text" if row["reason"] == "no_text_extracted" else f"read {row['reason']}"
                fates[record_id(row["id"])] = "kept" if fate == "minhash_dedup" else fate
    return fates


def main() -> None:
    parser = arguments(__doc__, data=True)
    parser.add_argument("--reference-python", default="/tmp/dt-venv-filters/bin/python")
    args = parser.parse_args()
    folder = args.data / "web/warc"
    if not any(folder.glob("*.warc.gz")):
        print(f"no WARC files under {folder}; nothing to measure")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        script = str(ROOT / "benchmarks" / "filters_reference.py")
        reference = work / "reference.json"
        subprocess.run(
            [args.reference_python, script, "warc_chain", str(folder), str(reference), str(lid176_path())],
            check=True, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        theirs = {record_id(key): fate for key, fate in json.loads(reference.read_text()).items()}
        ours = our_fates(folder, work)
    both = sorted(set(ours) & set(theirs))
    same = [key for key in both if ours[key] == theirs[key]]
    print(
        f"records both read: {len(both)}; same fate: {len(same)}; kept by both: {sum(ours[k] == 'kept' for k in same)}"
    )
    for key in both:
        if ours[key] != theirs[key]:
            print(f"  differs: {key}: gristmill {ours[key]}, datatrove {theirs[key]}")
    print(f"read by gristmill only: {len(set(ours) - set(theirs))}, their fates in gristmill: "
          f"{dict(Counter(ours[key] for key in set(ours) - set(theirs)))}")  # fmt: skip
    print(f"read by datatrove only: {len(set(theirs) - set(ours))}, their fates in datatrove: "
          f"{dict(Counter(theirs[key] for key in set(theirs) - set(ours)))}")  # fmt: skip


if __name__ == "__main__":
    main()
