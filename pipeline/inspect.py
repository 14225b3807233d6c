"""`gristmill inspect`: what an output folder holds and why, for people and (with --json) scripts.

The manifest gives the funnel and shards; the Parquet parts are streamed batch by batch (never
whole) for score and length quantiles, languages, duplicate clusters and synthesis pass rates.
Quantiles come from a bounded, deterministic sample (`BoundedSample`), exact up to its capacity.
The JSON shape (`FORMAT`) is documented in docs/inspect.md.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from pipeline import fileio
from pipeline.preflight import UsageError

FORMAT = "gristmill-inspect/1"
PARTS = ("kept", "rejected", "failed")
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
SAMPLE_CAPACITY = 200_000
BATCH_ROWS = 4096
TEXT_PREVIEW = 600


class BoundedSample:
    """Every finite value up to `capacity`; beyond it every 2nd, 4th, ... value (deterministic,
    O(capacity)). NaN and infinities (a score read from the input may be one) are only counted."""

    def __init__(self, capacity: int = SAMPLE_CAPACITY) -> None:
        self.capacity = capacity
        self.values: list[float] = []
        self.stride = 1
        self.seen = 0
        self.non_finite = 0

    def extend(self, values) -> None:
        for value in map(float, values):
            if not math.isfinite(value):
                self.non_finite += 1
                continue
            if self.seen % self.stride == 0:
                self.values.append(value)
                if len(self.values) > self.capacity:
                    self.values = self.values[::2]
                    self.stride *= 2
            self.seen += 1

    def quantiles(self) -> dict[str, float] | None:
        """count, min, mean, p10 ... p90, max of the finite values, and `non_finite` when any."""
        if not self.values and not self.non_finite:
            return None
        import numpy as np

        figures = {"count": self.seen}
        if self.values:
            array = np.asarray(self.values)
            figures |= {"min": float(array.min()), "mean": float(array.mean())}
            for q in QUANTILES:
                figures[f"p{int(q * 100)}"] = float(np.quantile(array, q))
            figures["max"] = float(array.max())
        if self.non_finite:
            figures["non_finite"] = self.non_finite
        return figures


@dataclass
class Scan:
    """Figures streamed from the Parquet parts of one output folder."""

    scores: dict[str, dict[str, BoundedSample]] = field(default_factory=lambda: defaultdict(dict))
    lengths: dict[str, BoundedSample] = field(default_factory=dict)
    languages: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))
    clusters: dict[str, Counter] = field(
        default_factory=lambda: defaultdict(Counter)
    )  # stage → survivor → dups
    synthesis: dict[str, Counter] = field(default_factory=lambda: defaultdict(Counter))  # family → outcome


MANIFEST_KEYS = ("run", "counts", "stages", "shards")  # what inspect and report read


def read_manifest(directory: str) -> dict[str, Any]:
    """The folder's manifest; a folder without one is not a finished output (error naming it)."""
    fileio.check_filesystem(directory, "output folder")
    path = f"{directory.rstrip('/')}/manifest.json"
    if not fileio.exists(path):
        raise UsageError(f"{directory}: no manifest.json (not a finished gristmill output folder)")
    try:
        manifest = json.loads(fileio.read_bytes(path))
    except (OSError, ValueError) as error:  # unreadable, cut short, not JSON
        raise UsageError(f"{path}: cannot be read as a gristmill manifest: {error}") from None
    missing = [key for key in MANIFEST_KEYS if key not in manifest] if isinstance(manifest, dict) else ["all"]
    if missing:  # another tool's manifest.json
        raise UsageError(f"{path}: not a gristmill manifest (no {missing[0]!r})")
    listed = {shard["file"] for shard in manifest["shards"]}
    present = {_short_path(file) for part in PARTS for file in part_files(directory, part)}
    if gone := sorted(listed - present):  # figures read from what is left would be wrong
        raise UsageError(
            f"{directory.rstrip('/')}/{gone[0]}: missing ({len(gone)} of the {len(listed)} shards "
            "manifest.json lists are): the output folder is incomplete"
        )
    return manifest


def part_files(directory: str, part: str) -> list[str]:
    try:
        return fileio.match(f"{fileio.escape(directory.rstrip('/'))}/{part}/*.parquet")
    except Exception:  # no such folder (an output written before every part had a file)
        return []


def _open_parquet(path: str):
    """The shard's reader; an error naming the file when it cannot be read (cut short, no access)."""
    try:
        return fileio.parquet_reader(fileio.open_random_access(path))
    except (OSError, ValueError) as error:  # pyarrow's ArrowInvalid is a ValueError
        raise UsageError(f"{path}: cannot be read as Parquet: {error}") from None


def _read_group(parquet, group: int, columns: list[str] | None = None):
    """One row group as a Table, decoded on the calling thread (see `fileio.parquet_reader`)."""
    return parquet.read_row_group(group, columns=columns, use_threads=False)


def row_group_batches(parquet, columns: list[str] | None = None) -> Iterator[Any]:
    """RecordBatches of `BATCH_ROWS` rows, read one row group at a time.

    Not `ParquetFile.iter_batches`: with pyarrow 25 the memory it allocates is held until the file
    is done (a 668 MB shard of 500k documents: 0.67 GB of Arrow memory at the end of its text
    column, against 5 MB read by row group), so a scan's memory grew with the shard.
    """
    for group in range(parquet.num_row_groups):
        yield from _read_group(parquet, group, columns).to_batches(max_chunksize=BATCH_ROWS)


def iter_batches(directory: str, part: str, columns: list[str]) -> Iterator[tuple[str, Any]]:
    """(file, RecordBatch) of the wanted columns that the part's files have, streamed."""
    for path in part_files(directory, part):
        parquet = _open_parquet(path)
        present = [c for c in columns if c in parquet.schema_arrow.names]
        for batch in row_group_batches(parquet, present):
            yield path, batch


def scan(directory: str) -> Scan:
    """Stream kept and rejected once: scores, lengths, languages, dedup clusters, synthesis."""
    import pyarrow.compute as pc

    result = Scan()
    columns = ["text", "scores", "language", "kind", "metadata", "stage", "reason", "duplicate_of"]
    for part in ("kept", "rejected"):
        result.lengths[part] = BoundedSample()
        for _, batch in iter_batches(directory, part, columns):
            names = batch.schema.names
            if "text" in names:
                lengths = pc.utf8_length(batch.column("text")).drop_null()
                result.lengths[part].extend(lengths.to_pylist())
            if "scores" in names:
                _add_scores(result.scores[part], batch.column("scores"))
            if "language" in names:
                for entry in pc.value_counts(batch.column("language")).to_pylist():
                    result.languages[part][entry["values"] or "unknown"] += entry["counts"]
            if part == "rejected":
                _add_clusters(result.clusters, batch)
            if "kind" in names:
                _add_synthesis(result.synthesis, part, batch)
    return result


def _add_scores(samples: dict[str, BoundedSample], column) -> None:
    """Scores from a struct column (one field per score), or a map column (older outputs)."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_struct(column.type):
        for index in range(column.type.num_fields):
            values = column.field(index).drop_null()
            if len(values):
                name = column.type.field(index).name
                samples.setdefault(name, BoundedSample()).extend(values.to_numpy(zero_copy_only=False))
    elif pa.types.is_map(column.type):
        keys = np.asarray(column.keys.to_pylist(), dtype=object)
        values = column.items.to_numpy(zero_copy_only=False)
        for name in sorted(set(keys)):
            samples.setdefault(name, BoundedSample()).extend(values[keys == name])


def _add_clusters(clusters: dict[str, Counter], batch) -> None:
    if "duplicate_of" not in batch.schema.names:
        return
    for stage, survivor in zip(batch.column("stage").to_pylist(), batch.column("duplicate_of").to_pylist()):
        if survivor is not None:
            clusters[stage][survivor] += 1


def _family(kind: str, metadata: str | None) -> str:
    try:
        family = json.loads(metadata or "{}").get("family")
    except (ValueError, AttributeError):
        family = None
    return f"{kind}/{family}" if family else kind


def _add_synthesis(synthesis: dict[str, Counter], part: str, batch) -> None:
    names = batch.schema.names
    if batch.column("kind").null_count == batch.num_rows:  # no candidates: skip decoding metadata
        return
    kinds = batch.column("kind").to_pylist()
    metadata = batch.column("metadata").to_pylist() if "metadata" in names else [None] * len(kinds)
    reasons = batch.column("reason").to_pylist() if "reason" in names else [None] * len(kinds)
    for kind, meta, reason in zip(kinds, metadata, reasons):
        if kind:
            synthesis[_family(kind, meta)]["kept" if part == "kept" else reason or "rejected"] += 1


def cluster_sizes(clusters: dict[str, Counter]) -> dict[str, dict[str, int]]:
    """Per dedup stage: cluster size (survivor + removed copies) → number of clusters."""
    out = {}
    for stage, survivors in sorted(clusters.items()):
        sizes = Counter(1 + removed for removed in survivors.values())
        out[stage] = {str(size): sizes[size] for size in sorted(sizes)}
    return out


def collect(directory: str, manifest: dict[str, Any] | None = None) -> dict[str, Any]:
    """The `--json` summary of an output folder (shape `FORMAT`, see docs/inspect.md)."""
    manifest = manifest or read_manifest(directory)
    figures = scan(directory)
    return {
        "format": FORMAT,
        "directory": directory,
        "run": manifest["run"],
        "seconds": manifest["seconds"],
        "counts": manifest["counts"],
        "conservation": manifest["conservation"],
        "problems": manifest["problems"],
        "inputs_changed": manifest.get("inputs_changed", []),  # absent from earlier manifests
        "funnel": [
            {
                "stage": s["name"],
                "use": s["use"],
                "in": s.get("in"),
                "kept": s.get("kept"),
                "rejected": sum(s["rejected"].values()),
                "reasons": dict(sorted(s["rejected"].items(), key=lambda kv: (-kv[1], kv[0]))),
                "failed": s.get("failed") or 0,
                "seconds": s.get("seconds"),
            }
            for s in manifest["stages"]
        ],
        "shards": [{k: s[k] for k in ("kind", "file", "rows", "bytes")} for s in manifest["shards"]],
        "scores": {
            part: {name: sample.quantiles() for name, sample in sorted(figures.scores[part].items())}
            for part in ("kept", "rejected")
        },
        "length_chars": {part: figures.lengths[part].quantiles() for part in ("kept", "rejected")},
        "languages": {part: dict(figures.languages[part].most_common()) for part in ("kept", "rejected")},
        "duplicate_clusters": cluster_sizes(figures.clusters),
        "synthesis": {family: dict(sorted(c.items())) for family, c in sorted(figures.synthesis.items())},
    }


def reuse_line(summary: dict | None) -> str | None:
    """One line saying what a run took from an earlier one (`ResumePlan.summary`), or None."""
    if not summary or not summary["units_reused"]:
        return None
    reused = [f"{summary['units_reused']} of {summary['units']} input units"]
    if summary["phases_reused"]:
        last = summary["phases_reused"][-1]
        phases = f"phases 0-{last['phase']}" if last["phase"] else "phase 0"
        reused.append(f"{phases} (through {last['stages'][-1]})")
    reused.append(f"{summary['records_reused']} records")
    return f"reused from an earlier run ({summary['work_dir']}): {', '.join(reused)}"


def summary(manifest: dict, directory: str) -> str:
    """The funnel table printed after a run and by `inspect`."""
    counts = manifest["counts"]
    lines = [
        f"run {manifest['run']}: read {counts['input']}, kept {counts['kept']}, "
        f"rejected {counts['rejected']}, failed {counts['failed']} in {manifest['seconds']} s "
        f"(conservation {'ok' if manifest['conservation'] else 'BROKEN'})",
        f"{'stage':<22}{'in':>9}{'kept':>9}{'rejected':>10}{'failed':>8}{'sec':>8}  reasons",
    ]
    if reused := reuse_line(manifest.get("checkpoints")):
        lines.insert(1, reused)
    for stage in manifest["stages"]:
        rejected = sum(stage["rejected"].values())
        reasons = ", ".join(f"{k}={v}" for k, v in sorted(stage["rejected"].items(), key=lambda kv: -kv[1]))
        fmt = lambda v: "-" if v is None else str(v)  # noqa: E731
        lines.append(
            f"{stage['name'][:21]:<22}{fmt(stage.get('in')):>9}{fmt(stage.get('kept')):>9}{rejected:>10}"
            f"{stage.get('failed') or 0:>8}{fmt(stage.get('seconds')):>8}  {reasons}"
        )
    for problem in manifest["problems"]:
        lines.append(f"PROBLEM: {problem}")
    for change in manifest.get("inputs_changed", []):  # absent from earlier versions' manifests
        lines.append(f"input changed: {change}")
    for group, share in manifest.get("kept_output", {}).get("mixture", {}).items():
        if share["achieved"] == 0:  # every document of the group was removed by the stages
            lines.append(
                f"mixture: no kept document from {group!r} (weight {share['weight']:g}); the other groups share the output"
            )
    lines.append(f"report: {directory.rstrip('/')}/report.html")
    return "\n".join(lines)


def _number(value: float) -> str:
    return f"{value:.0f}" if abs(value) >= 100 else f"{value:.3g}"


def _quantile_line(label: str, figures: dict | None) -> str:
    if not figures:
        return f"  {label:<28} -"
    cells = "  ".join(
        f"{k}={_number(figures[k])}" for k in ("min", "p10", "p50", "p90", "max") if k in figures
    )
    if "non_finite" in figures:
        cells += f"  non_finite={figures['non_finite']}"
    return f"  {label:<28} n={figures['count']:<8} {cells}"


def details_text(summary_json: dict[str, Any]) -> str:
    """Shards, quantiles, languages, clusters and synthesis as text (after the funnel)."""
    lines = []
    shards = Counter(s["kind"] for s in summary_json["shards"])
    rows = Counter()
    for s in summary_json["shards"]:
        rows[s["kind"]] += s["rows"]
    lines.append(
        "shards: " + ", ".join(f"{k} {shards[k]} files / {rows[k]} rows" for k in PARTS if k in shards)
    )
    lines.append("length (chars):")
    for part in ("kept", "rejected"):
        lines.append(_quantile_line(part, summary_json["length_chars"][part]))
    names = sorted({n for part in ("kept", "rejected") for n in summary_json["scores"][part]})
    if names:
        lines.append("scores:")
        for name in names:
            for part in ("kept", "rejected"):
                lines.append(_quantile_line(f"{name} ({part})", summary_json["scores"][part].get(name)))
    for part in ("kept", "rejected"):
        languages = summary_json["languages"][part]
        if languages:
            lines.append(
                f"languages ({part}): " + ", ".join(f"{k}={v}" for k, v in list(languages.items())[:12])
            )
    for stage, sizes in summary_json["duplicate_clusters"].items():
        lines.append(
            f"duplicate clusters ({stage}): " + ", ".join(f"size {k}: {v}" for k, v in sizes.items())
        )
    for family, outcomes in summary_json["synthesis"].items():
        total = sum(outcomes.values())
        passed = outcomes.get("kept", 0)
        others = ", ".join(f"{k}={v}" for k, v in outcomes.items() if k != "kept")
        lines.append(f"synthesis {family}: {passed}/{total} admitted" + (f" ({others})" if others else ""))
    return "\n".join(lines)


def _short_path(path: str) -> str:
    return "/".join(path.rsplit("/", 2)[-2:])


def _decoded(row: dict[str, Any]) -> dict[str, Any]:
    """A Parquet row for display: scores as a dict, metadata parsed, a NaN or infinite score as
    the string "nan", "inf" or "-inf" (strict JSON has no such number)."""
    scores = row.get("scores")
    if isinstance(scores, list):  # a map column (older outputs)
        scores = dict(scores)
    if isinstance(scores, dict):
        row["scores"] = {k: _json_number(v) for k, v in scores.items() if v is not None}
    if isinstance(row.get("language_score"), float):
        row["language_score"] = _json_number(row["language_score"])
    if isinstance(row.get("metadata"), str):
        try:
            row["metadata"] = json.loads(row["metadata"])
        except ValueError:
            pass
    return row


def _json_number(value: float) -> float | str:
    return value if math.isfinite(value) else repr(value)


def _rows_with_id(parquet, doc_id: str) -> list[dict[str, Any]]:
    """Rows whose id matches, reading only row groups whose id statistics can hold it."""
    import pyarrow.compute as pc

    column = parquet.schema_arrow.get_field_index("id")
    rows = []
    for group in range(parquet.num_row_groups):
        metadata = parquet.metadata.row_group(group)
        stats = metadata.column(column).statistics
        if not metadata.num_rows:  # (pyarrow 25 crashes comparing an empty chunked array)
            continue
        if stats is not None and stats.has_min_max and not (stats.min <= doc_id <= stats.max):
            continue
        ids = _read_group(parquet, group, ["id"]).column("id")
        hits = pc.indices_nonzero(pc.equal(ids, doc_id))
        if len(hits):
            rows.extend(_read_group(parquet, group).take(hits).to_pylist())
    return rows


def find_document(directory: str, doc_id: str) -> list[dict[str, Any]]:
    """Every row with this id in kept, rejected and failed: its fate, file and fields (no text)."""
    found = []
    for part in PARTS:
        for path in part_files(directory, part):
            for row in _rows_with_id(_open_parquet(path), doc_id):
                row.pop("text", None)
                found.append({"fate": part, "file": _short_path(path), **_decoded(row)})
    return found


def sample_rows(directory: str, part: str, limit: int, **equal: str) -> tuple[int, list[dict[str, Any]]]:
    """(matching rows, the first `limit` of them), streaming the part; `equal` filters columns."""
    import pyarrow.compute as pc

    total, rows = 0, []
    for path in part_files(directory, part):
        parquet = _open_parquet(path)
        for batch in row_group_batches(parquet):
            mask = None
            for name, value in equal.items():
                test = pc.equal(batch.column(name), value)
                mask = test if mask is None else pc.and_(mask, test)
            selected = batch if mask is None else batch.filter(mask)
            total += selected.num_rows
            if len(rows) < limit and selected.num_rows:
                for row in selected.slice(0, limit - len(rows)).to_pylist():
                    rows.append({"file": _short_path(path), **_decoded(row)})
    return total, rows


def _check_choice(kind: str, value: str | None, known: set[str]) -> None:
    if value is not None and value not in known:
        raise UsageError(
            f"no {kind} {value!r} in this output (there are: {', '.join(sorted(known)) or 'none'})"
        )


# Control characters a terminal acts on (ESC sequences set its title, clear it, colour it; C1's
# CSI is one byte), shown escaped: document text is untrusted. Line ends and tabs are kept.
_TERMINAL_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_safe(text: str) -> str:
    """`text` with the control characters a terminal would act on written as `\\x1b`."""
    return _TERMINAL_CONTROLS.sub(lambda found: repr(found.group())[1:-1], text)


def _print_rows(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        text = row.pop("text", None)
        print("-" * 80)
        print(terminal_safe(json.dumps(row, ensure_ascii=False, default=str)))
        if text:
            print(terminal_safe(text[:TEXT_PREVIEW]) + (" …" if len(text) > TEXT_PREVIEW else ""))


def inspect_command(args) -> int:
    """`gristmill inspect DIR [--reason R] [--stage S] [--failed | --kept] [--id ID] [--sample N] [--json]`."""
    directory = args.directory.rstrip("/") or "."
    manifest = read_manifest(directory)
    if args.kept and (args.reason or args.stage):
        raise UsageError("--kept lists kept documents: they have no --reason or --stage")
    if args.doc_id is not None and (args.kept or args.failed or args.reason or args.stage):
        raise UsageError(
            "--id looks in kept, rejected and failed: it takes no --kept, --failed, --reason or --stage"
        )
    _check_choice("stage", args.stage, {s["name"] for s in manifest["stages"]})
    # a failed record's reason is its error (`--failed --reason MalformedJson`)
    by_reason = manifest["failed_by_error" if args.failed else "rejected_by_reason"]
    reasons = {key.split("/", 1)[1] for key in by_reason}
    _check_choice("failure error" if args.failed else "rejection reason", args.reason, reasons)
    if args.doc_id is not None:
        found = find_document(directory, args.doc_id)
        if args.json:
            print(
                json.dumps(
                    {"format": FORMAT, "id": args.doc_id, "found": found}, ensure_ascii=False, default=str
                )
            )
        elif not found:
            print(f"no document with id {args.doc_id!r} in {directory}")
        for row in [] if args.json else found:
            shown = (
                f"{row.pop('fate')} ({row.pop('file')}): {json.dumps(row, ensure_ascii=False, default=str)}"
            )
            print(terminal_safe(shown))
        return 0 if found else 1
    if args.reason or args.stage or args.failed or args.kept:
        part = "failed" if args.failed else "kept" if args.kept else "rejected"
        reason_column = "error" if part == "failed" else "reason"
        equal = {k: v for k, v in ((reason_column, args.reason), ("stage", args.stage)) if v}
        total, rows = sample_rows(directory, part, args.sample, **equal)
        if args.json:
            print(
                json.dumps(
                    {"format": FORMAT, "part": part, "filter": equal, "matching": total, "rows": rows},
                    ensure_ascii=False,
                    default=str,
                )
            )
            return 0
        print(terminal_safe(summary(manifest, directory)))
        print(f"\n{total} {part} records match; showing {len(rows)}:")
        _print_rows(rows)
        return 0
    figures = collect(directory, manifest)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False))
    else:
        print(terminal_safe(summary(manifest, directory)))
        print(terminal_safe(details_text(figures)))
    return 0
