"""What one damaged gzip member of a real WARC file costs: each member corrupted in turn.

For every `.warc.gz` in web/warc/, each gzip member in turn gets 64 bytes flipped in its middle;
the file is read as a run reads it, and the documents are compared with the clean file's:
documents lost (worst run and all runs), runs whose failures name the damage, failures by error.

    .venv/bin/python benchmarks/readers_warc_damage.py [--data ../shared/data]
"""

from __future__ import annotations

import tempfile
import zlib
from collections import Counter
from pathlib import Path

from common import arguments

from pipeline.document import Document, Failure
from pipeline.readers import InputConfig, plan_splits, read_split


def read(path: str) -> list:
    config = InputConfig((path,))
    return [record for split in plan_splits(path, config) for record in read_split(split, config)]


def member_starts(data: bytes) -> list[int]:
    starts, position = [], 0
    while position < len(data):
        decompressor = zlib.decompressobj(31)
        decompressor.decompress(data[position:])
        starts.append(position)
        position = len(data) - len(decompressor.unused_data)
    return starts


def main() -> None:
    args = arguments(__doc__, data=True).parse_args()
    files = sorted((args.data / "web" / "warc").glob("*.warc.gz"))
    if not files:
        raise SystemExit(f"no .warc.gz under {args.data / 'web' / 'warc'}; pass --data")
    print("| file | members | documents | lost, worst run | lost, all runs | damage named | failures |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as scratch:
        damaged_path = str(Path(scratch) / "damaged.warc.gz")
        for source in files:
            data = source.read_bytes()
            clean = {r.id for r in read(str(source)) if isinstance(r, Document)}
            starts = member_starts(data)
            lost, named, failures = [], 0, Counter()
            for start, end in zip(starts, [*starts[1:], len(data)]):
                damaged = bytearray(data)
                middle = start + (end - start) // 2
                for k in range(middle, min(end, middle + 64)):
                    damaged[k] ^= 0x5A
                Path(damaged_path).write_bytes(damaged)
                records = read(damaged_path)
                lost.append(len(clean - {r.id for r in records if isinstance(r, Document)}))
                errors = Counter(r.error for r in records if isinstance(r, Failure))
                named += errors["CorruptGzipMember"] > 0
                failures.update(errors)
            print(
                f"| {source.name} | {len(starts)} | {len(clean)} | {max(lost)} | {sum(lost)} of "
                f"{len(clean) * len(starts)} | {named}/{len(starts)} | {dict(failures)} |"
            )


if __name__ == "__main__":
    main()
