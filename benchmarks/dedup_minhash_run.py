"""Run the `minhash_dedup` stage on in-memory documents with Beam, for the dedup benchmarks.

Uses gristmill's local runner (Beam's FnApiRunner; `workers > 1` runs it in multi-processing
mode) and wraps the stage as a recipe run does, with its in-graph conservation check. Outcomes
come back through files.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import apache_beam as beam
from common import cpu_seconds

from dedup.minhash import MinHashDedup
from pipeline.beam_stages import RunCollectionStage
from pipeline.document import Document
from pipeline.run import new_pipeline, pipeline_options


def _parse(line: str) -> Document:
    record = json.loads(line)
    return Document(record["id"], record["text"])


def run_minhash(docs: list[Document] | Path, workers: int = 1, **params) -> dict:
    """Dedup `docs` (a list, or a JSONL file of {id, text} read by Beam); return kept ids,
    {rejected id: duplicate_of}, details, counters, the pipeline's wall and CPU seconds."""
    stage = MinHashDedup("minhash_dedup", **params)
    options = pipeline_options(
        ["--direct_running_mode=multi_processing", f"--direct_num_workers={workers}"]
        if workers > 1
        else ["--direct_running_mode=in_memory"]
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        pipeline = new_pipeline(options)
        if isinstance(docs, Path):
            source = pipeline | "Read" >> beam.io.ReadFromText(str(docs)) | "Parse" >> beam.Map(_parse)
        else:
            source = pipeline | beam.Create(docs, reshuffle=False)
        result = source | RunCollectionStage(stage)
        (
            result.kept
            | "KeptIds" >> beam.Map(lambda d: d.id)
            | "WriteKept" >> beam.io.WriteToText(str(out / "kept"))
        )
        (
            result.rejected
            | "RejectedRows" >> beam.Map(lambda r: json.dumps([r.doc.id, r.duplicate_of, r.reason, r.detail]))
            | "WriteRejected" >> beam.io.WriteToText(str(out / "rejected"))
        )
        start, cpu = time.perf_counter(), cpu_seconds()
        run = pipeline.run()
        run.wait_until_finish()
        seconds, cpu = time.perf_counter() - start, cpu_seconds() - cpu
        kept = sorted(line for f in out.glob("kept*") for line in f.read_text().splitlines())
        rows = [json.loads(line) for f in out.glob("rejected*") for line in f.read_text().splitlines()]
    counters: dict[str, int] = {}
    for c in run.metrics().query()["counters"]:  # a counter is reported per step: summed over steps
        counters[c.key.metric.name] = counters.get(c.key.metric.name, 0) + c.committed
    return {
        "kept": kept,
        "duplicate_of": {doc_id: survivor for doc_id, survivor, _, _ in rows},
        "reasons": sorted({reason for _, _, reason, _ in rows}),
        "details": {doc_id: detail for doc_id, _, _, detail in rows},
        "counters": counters,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "settings": stage.manifest_extra(),
    }
