"""Live progress of a run: counts from the workers while the pipeline runs, shown by the driver.

Beam's local runner reports metrics only when the run ends, so the pipeline carries its own
small progress channel: tap steps on the read records and on each stage group's kept, rejected
and failed outputs (never after a Flatten, whose output the local runner holds back) count
elements and, at most every `FLUSH_SECONDS`, overwrite one small JSON file per DoFn instance
in `<staging>/progress/` through `pipeline.fileio` (so it works wherever the output folder
lives). The driver polls that folder every `POLL_SECONDS` and sums the files. The same counts
also go to Beam counters (namespace `gristmill.progress`) for runners whose own UI shows metrics.
"""

from __future__ import annotations

import json
import sys
import threading
import time
import uuid
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field

import apache_beam as beam

from pipeline import fileio
from pipeline.recipe import MIXTURE_STAGE

FLUSH_SECONDS = 0.5
POLL_SECONDS = 1.0
PLAIN_INTERVAL = 30.0
NAMESPACE = "gristmill.progress"


class Tally:
    """Cumulative counts of one DoFn instance, flushed to its own file in the channel."""

    def __init__(self, channel: str) -> None:
        self.channel = channel
        self.counts: Counter = Counter()
        self.reported: Counter = Counter()
        self.name = f"{channel}/{uuid.uuid4().hex}.json"
        self.flushed = time.monotonic()

    def add(self, key: str, value: int = 1) -> None:
        self.counts[key] += value
        if time.monotonic() - self.flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        from apache_beam.metrics import Metrics

        self.flushed = time.monotonic()
        if self.counts == self.reported:
            return
        for key, value in self.counts.items():
            if value != self.reported[key]:
                Metrics.counter(NAMESPACE, key).inc(value - self.reported[key])
        self.reported = Counter(self.counts)
        fileio.write_whole(self.name, json.dumps(self.counts).encode())


def record_key(prefix: str, record) -> str:
    """`prefix.<stage>` for rejections and failures (they carry their stage), else `prefix`."""
    stage = getattr(record, "stage", None)
    return f"{prefix}.{stage}" if stage and prefix in ("rejected", "failed") else prefix


class _TallyFn(beam.DoFn):
    """A DoFn with its own tally in the channel, flushed at the end of every bundle."""

    def __init__(self, channel: str) -> None:
        self.channel = channel

    def setup(self) -> None:
        self.tally = Tally(self.channel)

    def finish_bundle(self) -> None:
        self.tally.flush()


class _TapFn(_TallyFn):
    """Counts the elements of a PCollection under `prefix` (per stage for removals); outputs nothing."""

    def __init__(self, channel: str, prefix: str) -> None:
        super().__init__(channel)
        self.prefix = prefix

    def process(self, record):
        self.tally.add(record_key(self.prefix, record))
        return ()


def split_bytes(split) -> int:
    """Bytes of input a split covers: its byte range, to the end of the file when it has no end
    (a Parquet file's splits were all credited to its first: "100 %, all read" after one)."""
    end = split.end if split.end >= 0 else fileio.size(split.path)
    return end - split.start


@dataclass
class Channel:
    """Where the workers of one run write their counts, and what the driver knows up front."""

    directory: str
    stages: list[str]
    tapped: set[str] = field(default_factory=set)  # stages whose kept output has its own tap
    total_bytes: int = 0

    def tap(self, pcoll, prefix: str, label: str) -> None:
        _ = pcoll | label >> beam.ParDo(_TapFn(self.directory, prefix))

    def tap_stage_outputs(self, outputs, stage: str) -> None:
        """Count a stage group's outputs (ApplyStages calls this with its last stage's name)."""
        self.tapped.add(stage)
        self.tap(outputs.kept, f"kept.{stage}", f"Progress_{stage}_kept")
        self.tap(outputs.rejected, "rejected", f"Progress_{stage}_rejected")
        self.tap(outputs.failed, "failed", f"Progress_{stage}_failed")

    def all_bytes_read(self) -> None:
        """Say, from the driver, that the input was read (a run resumed after its reading phase)."""
        fileio.write_whole(
            f"{self.directory}/restored.json", json.dumps({"bytes": self.total_bytes}).encode()
        )

    @classmethod
    def for_recipe(cls, recipe, staging: str, total_bytes: int) -> Channel:
        """A channel for `recipe`'s stages and its mixture, whose inputs hold `total_bytes`."""
        stages = [s.name for s in recipe.stages] + ([MIXTURE_STAGE] if recipe.output.mixture else [])
        return cls(f"{staging}/progress", stages, total_bytes=total_bytes)

    def read(self) -> Counter:
        totals: Counter = Counter()
        try:
            files = fileio.match(f"{fileio.escape(self.directory)}/*.json")
        except Exception:  # the folder appears with the first flush
            return totals
        for file in files:
            try:
                totals.update(json.loads(fileio.read_bytes(file)))
            except (OSError, ValueError):  # replaced while reading: the next poll sees it
                continue
        return totals


def snapshot(channel: Channel, counts: Counter, elapsed: float, reading: float | None = None) -> dict:
    """Figures to show: read, rate, bytes and ETA, and per stage kept/rejected/failed so far.
    The rate is per second of `reading` (default: all `elapsed` seconds)."""
    read = counts["read"]
    reading = elapsed if reading is None else reading
    reaching = read - counts["rejected.read"] - counts["failed.read"]
    # the reader's own failures first, as the summary table lists them (bad lines, cut-off files)
    stages = [
        {
            "stage": "read",
            "kept": reaching,
            "rejected": counts["rejected.read"],
            "failed": counts["failed.read"],
        }
    ]
    for name in channel.stages:
        rejected, failed = counts[f"rejected.{name}"], counts[f"failed.{name}"]
        kept = counts[f"kept.{name}"] if name in channel.tapped else max(0, reaching - rejected - failed)
        stages.append({"stage": name, "kept": kept, "rejected": rejected, "failed": failed})
        reaching = kept
    done, total = counts["bytes"], channel.total_bytes
    eta = elapsed * (total - done) / done if total and 0 < done < total else None
    return {
        "elapsed": elapsed,
        "read": read,
        "rate": read / reading if reading > 0 else 0.0,
        "bytes": done,
        "total_bytes": total,
        "eta": eta,
        "kept": counts["kept"] - counts[f"rejected.{MIXTURE_STAGE}"],  # tapped before the mixture
        "stages": stages,
    }


class Figures:
    """A channel's snapshots through a run. The rate counts the seconds until the read count last
    grew, so once everything is read it stays the reading's own while the dedup stages and the
    writers finish (it fell with every second of theirs)."""

    def __init__(self, channel: Channel) -> None:
        self.channel, self.read, self.reading = channel, 0, 0.0

    def at(self, elapsed: float) -> dict:
        counts = self.channel.read()
        if counts["read"] > self.read:
            self.read, self.reading = counts["read"], elapsed
        return snapshot(self.channel, counts, elapsed, self.reading)


def size_text(value: float) -> str:
    """Bytes as people read them: `7.2 MB`."""
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return ""


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(seconds)
    return (
        f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
        if seconds >= 3600
        else f"{seconds // 60}m{seconds % 60:02d}s"
    )


def plain_line(figures: dict) -> str:
    """One progress line for logs: read, rate, bytes of total, ETA, kept, removals per stage."""
    total = figures["total_bytes"]
    # Only generators (no input files): no bytes to count, no ETA to give.
    share = (
        f"{size_text(figures['bytes'])} of {size_text(total)} ({figures['bytes'] / total:.0%}), "
        if total
        else ""
    )
    # Once every byte is read, the collection stages (dedup) and the writers finish the run.
    all_read = total and figures["bytes"] >= total
    eta = "" if not total else "all read, " if all_read else f"ETA {_duration(figures['eta'])}, "
    removed = ", ".join(
        f"{s['stage']} -{s['rejected'] + s['failed']}"
        for s in figures["stages"]
        if s["rejected"] or s["failed"]
    )
    return (
        f"progress {_duration(figures['elapsed'])}: read {figures['read']:,} docs "
        f"({figures['rate']:,.0f}/s), {share}{eta}kept {figures['kept']:,}"
        + (f"; removed: {removed}" if removed else "")
    )


def rich_view(figures: dict):
    """The terminal display: a header line and one row per stage."""
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, padding=(0, 2))
    for column in ("stage", "kept so far", "rejected", "failed"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for stage in figures["stages"]:
        name = Text(stage["stage"])  # as written: `len[bold]x` is no markup
        table.add_row(name, f"{stage['kept']:,}", f"{stage['rejected']:,}", f"{stage['failed']:,}")
    return Group(Text(plain_line(figures).split("; removed")[0]), table)


class ConsoleProgress:
    """Shows a channel's figures: `rich` live display on a terminal, a plain line otherwise."""

    def __init__(self, interval: float | None = None, stream=None) -> None:
        self.stream = stream or sys.stderr
        self.terminal = self.stream.isatty()
        self.interval = PLAIN_INTERVAL if interval is None else interval

    def note(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    @contextmanager
    def running(self, channel: Channel):
        started = time.monotonic()
        stop = threading.Event()
        show, close = self._display()
        figures = Figures(channel)

        def poll() -> None:
            last = started
            while not stop.wait(POLL_SECONDS if self.terminal else min(POLL_SECONDS, self.interval)):
                now = time.monotonic()
                if self.terminal or now - last >= self.interval:
                    show(figures.at(now - started))
                    last = now

        thread = threading.Thread(target=poll, name="gristmill-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()
            close(figures.at(time.monotonic() - started))

    def _display(self):
        if not self.terminal:  # a last line with the final figures when the pipeline stops

            def line(figures: dict) -> None:
                print(plain_line(figures), file=self.stream, flush=True)

            return line, line
        from rich.console import Console
        from rich.live import Live

        live = Live(console=Console(file=self.stream), refresh_per_second=2, transient=True)
        live.start()
        return (lambda figures: live.update(rich_view(figures))), (lambda figures: live.stop())


def console_progress(interval: float | None = None) -> ConsoleProgress:
    return ConsoleProgress(interval)
