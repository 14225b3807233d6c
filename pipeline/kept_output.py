"""The kept documents on their way to the trainer: token counts, source mixture, global shuffle,
and shards balanced by tokens, rows or bytes.

Only compact keys cross a shuffle to decide the layout: each row gets a seeded position u in
[0, 1) (the global shuffle); per-bucket weight totals and the positions where a new shard starts
are computed from (u, id, weight) keys, and each row then finds its shard by bisection. A shard
is a contiguous range of u, so shards differ in weight by at most one document, and rows inside
a shard are written in u order.
"""

from __future__ import annotations

import bisect
import fnmatch
import json
import math
from typing import Any

import apache_beam as beam
import xxhash

from pipeline.decisions import spill_dir
from pipeline.document import Document, Rejection
from pipeline.outcomes import KEPT, REJECTED, SplitByTag
from pipeline.recipe import MIXTURE_STAGE, OutputConfig
from pipeline.spill import SpillGroups
from pipeline.tokenizer import RowTokenizer, tokenizer_path
from pipeline.writers import MB, WriteShards, id_bucket, kept_row, row_sort_key

BUCKETS = 1024


def unit_hash(text: str, seed: int, salt: str) -> float:
    """A seeded, platform-independent number in [0, 1) for `text`."""
    return xxhash.xxh64_intdigest(f"{salt}\0{text}".encode("utf-8", "surrogatepass"), seed=seed) / 2.0**64


def order_key(row: dict[str, Any], seed: int) -> tuple[float, str]:
    """A row's place in the global shuffle (ties, if any, broken by id), which decides its shard."""
    return (unit_hash(row["id"], seed, "shuffle"), row["id"])


def shard_order(row: dict[str, Any], seed: int) -> tuple:
    """The order of rows inside a kept shard: `order_key`, then the rest of `row_sort_key`, so rows
    sharing an id (the same shuffle place) come in the same order whatever order they arrived in."""
    return (unit_hash(row["id"], seed, "shuffle"), *row_sort_key(row))


def row_weight(row: dict[str, Any], unit: str) -> int:
    """What a shard is balanced on: tokens, rows, or text bytes."""
    if unit == "tokens":
        return row["n_tokens"] or 0
    if unit == "rows":
        return 1
    return len((row["text"] or "").encode("utf-8", "surrogatepass")) + 64


def document_of(row: dict[str, Any]) -> Document:
    """The document a kept row was made from (for a mixture rejection)."""
    return Document(
        row["id"],
        row["text"],
        row["source"],
        row["url"],
        row["language"],
        row["language_score"],
        dict(row["scores"] or {}),
        row["kind"],
        json.loads(row["metadata"]),
    )


# --- mixture -------------------------------------------------------------------------------------


def mixture_group(source: str, patterns: list[str]) -> str | None:
    """The first pattern of the mixture that `source` matches."""
    return next((pattern for pattern in patterns if fnmatch.fnmatchcase(source, pattern)), None)


def mixture_rates(weights: dict[str, float], totals: dict[str, int], max_repeat: float) -> dict[str, float]:
    """Sampling rate per group so the kept weight is split as `weights` say.

    The largest output that needs no group repeated more than `max_repeat` times: groups above
    their share are down-sampled, scarce ones repeated up to the cap.
    """
    share = {group: weight / sum(weights.values()) for group, weight in weights.items()}
    present = {group: total for group, total in totals.items() if group in share and total > 0}
    if not present:
        return {}
    scale = min(total * max_repeat / share[group] for group, total in present.items())
    return {group: share[group] * scale / total for group, total in present.items()}


def copies(row_id: str, rate: float, seed: int) -> int:
    """How many times a document of a group with `rate` goes into the output (0: left out)."""
    whole = math.floor(rate)
    return whole + (unit_hash(row_id, seed, "mixture") < rate - whole)


def _mix_bucket(_bucket: int, rows, rates: dict[str, float], patterns: list[str], seed: int):
    for row in rows:
        yield from _mix(row, rates, patterns, seed)


def _mix(row, rates: dict[str, float], patterns: list[str], seed: int):
    group = mixture_group(row["source"], patterns)
    rate = rates.get(group, 0.0) if group is not None else 0.0
    count = copies(row["id"], rate, seed) if group is not None else 0
    if count == 0:
        reason, detail = (
            ("not_in_mixture", f"source {row['source']!r} matches no mixture pattern")
            if group is None
            else ("downsampled", f"group={group} rate={rate:.4f}")
        )
        yield REJECTED, Rejection(document_of(row), MIXTURE_STAGE, reason, detail)
        return
    yield KEPT, row
    for repeat in range(1, count):
        yield KEPT, {**row, "id": f"{row['id']}#repeat{repeat}", "repeat_of": row["id"]}


class Mixture(beam.PTransform):
    """Kept rows → {kept rows (with repeats), rejected}: sources mixed by weight (of `unit`).

    The rows wait for the rates in spill files by id bucket (`spill`), not in the runner's buffers.
    """

    def __init__(
        self, weights: dict[str, float], max_repeat: float, seed: int, unit: str, spill: str
    ) -> None:
        super().__init__()
        self.weights = dict(weights)
        self.max_repeat = max_repeat
        self.seed = seed
        self.unit = unit
        self.spill = spill

    def expand(self, rows):
        patterns = list(self.weights)
        totals = (
            rows
            | "GroupWeights"
            >> beam.Map(
                lambda row: (mixture_group(row["source"], patterns) or "", row_weight(row, self.unit))
            )
            | "SumGroups" >> beam.CombinePerKey(sum)
            | "AllGroups" >> beam.combiners.ToDict()
            | "Rates" >> beam.Map(mixture_rates_of, self.weights, self.max_repeat)
        )
        return (
            rows
            | "ByIdBucket" >> beam.Map(id_bucket)
            | "Mix"
            >> SpillGroups(self.spill, _mix_bucket, beam.pvalue.AsSingleton(totals), patterns, self.seed)
            | SplitByTag((KEPT, REJECTED))
        )


def mixture_rates_of(
    totals: dict[str, int], weights: dict[str, float], max_repeat: float
) -> dict[str, float]:
    return mixture_rates(weights, {g: t for g, t in totals.items() if g}, max_repeat)


# --- shard layout --------------------------------------------------------------------------------


def shard_starts(bucket: int, keys, bucket_totals: dict[int, int], shards: int) -> list[tuple]:
    """(u, id, shard) of each key in `bucket` that begins a new shard (and the bucket's first)."""
    total = sum(bucket_totals.values())
    offset = sum(weight for other, weight in bucket_totals.items() if other < bucket)
    starts, previous = [], None
    for u, row_id, weight in sorted(keys):
        shard = min(shards - 1, int(offset * shards // total)) if total else 0
        if shard != previous:
            starts.append((u, row_id, shard))
            previous = shard
        offset += weight
    return starts


def shard_count(total: int, output: OutputConfig) -> int:
    if output.shards:
        return output.shards
    target = output.target_shard_tokens or output.target_shard_rows or (output.target_shard_mb or 256.0) * MB
    return max(1, math.ceil(total / target))


def _bucket_key(row, seed: int, unit: str):
    u, row_id = order_key(row, seed)
    return int(u * BUCKETS), (u, row_id, row_weight(row, unit))


def _shards_of(_bucket: int, rows, starts: list[tuple], seed: int):
    """(shard, row) for the rows of one bucket: the shard whose start is the last at or before it."""
    for row in rows:
        u, row_id = order_key(row, seed)
        index = bisect.bisect_right(starts, (u, row_id, math.inf)) - 1
        yield starts[index][2], row


class AssignShards(beam.PTransform):
    """Rows → ((shard, row) pairs, shard count as a singleton PCollection)."""

    def __init__(self, output: OutputConfig, unit: str, spill: str) -> None:
        super().__init__()
        self.output = output
        self.unit = unit
        self.spill = spill

    def expand(self, rows):
        seed = self.output.shuffle_seed
        keys = rows | "OrderKeys" >> beam.Map(_bucket_key, seed, self.unit)
        bucket_totals = (
            keys
            | "BucketWeights" >> beam.Map(lambda kv: (kv[0], kv[1][2]))
            | "SumBuckets" >> beam.CombinePerKey(sum)
        )
        count = (
            bucket_totals
            | "Weights" >> beam.Values()
            | "Total" >> beam.CombineGlobally(sum)
            | "ShardCount" >> beam.Map(shard_count, self.output)
        )
        starts = (
            keys
            # the keys of a bucket meet in spill files (not in a shuffle: the runner would hold them all)
            | "ShardStarts"
            >> SpillGroups(
                f"{self.spill}/keys",
                shard_starts,
                beam.pvalue.AsDict(bucket_totals),
                beam.pvalue.AsSingleton(count),
            )
            | "AllStarts" >> beam.combiners.ToList()
            | "Sorted" >> beam.Map(sorted)
        )
        # Rows wait in spill files by bucket until the starts are known (no row crosses a shuffle).
        keyed = (
            rows
            | "ByBucket" >> beam.Map(lambda row: (int(order_key(row, seed)[0] * BUCKETS), row))
            | "ShardOf"
            >> SpillGroups(f"{self.spill}/rows", _shards_of, beam.pvalue.AsSingleton(starts), seed)
        )
        return keyed, count


class WriteKept(beam.PTransform):
    """Kept documents → (shard infos, mixture rejections): tokenized, mixed, shuffled, sharded."""

    def __init__(self, directory: str, output: OutputConfig, score_names) -> None:
        super().__init__()
        self.directory = directory
        self.output = output
        self.score_names = score_names

    def expand(self, docs):
        output = self.output
        path = tokenizer_path(output.tokenizer)
        unit = "tokens" if path else "bytes"
        if output.target_shard_rows:
            unit = "rows"
        elif output.target_shard_mb:
            unit = "bytes"
        rows = (
            docs
            | "KeptRows" >> beam.Map(kept_row)
            | "BatchRows" >> beam.BatchElements(min_batch_size=16, max_batch_size=256)
            | "Tokenize" >> beam.FlatMap(RowTokenizer(path, output.token_ids))
        )
        if output.mixture:
            mixture_unit = "tokens" if path else "rows"
            mixed = rows | Mixture(
                output.mixture,
                output.mixture_max_repeat,
                output.shuffle_seed,
                mixture_unit,
                spill_dir(docs.pipeline, "mixture"),
            )
            rows, rejected = mixed[KEPT], mixed[REJECTED]
        else:
            rejected = docs.pipeline | "NoMixtureRejections" >> beam.Create([])
        spill = spill_dir(docs.pipeline, "kept-buckets")
        keyed, count = rows | AssignShards(output, unit, spill)
        infos = keyed | WriteShards(
            self.directory,
            "kept",
            0,
            0,
            output.compression,
            output.row_group_mb,
            self.score_names,
            keyed=True,
            shard_count=count,
            sort_key=lambda row: shard_order(row, output.shuffle_seed),
            token_ids=output.token_ids,
        )
        return infos, rejected
