import gzip
import io
import json
import random
from collections import Counter

from pipeline import members
from pipeline.cli import main
from pipeline.progress import Channel, Figures, Tally, plain_line, size_text, snapshot
from pipeline.read_phase import ReadPhaseFn
from pipeline.readers import InputConfig, Split
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe
from tests.pipeline.conftest import CURATED_STAGES, curated_records


def test_workers_tallies_add_up_in_the_channel(tmp_path):
    channel = Channel(str(tmp_path / "progress"), ["length"])
    (tmp_path / "progress").mkdir()
    first, second = Tally(channel.directory), Tally(channel.directory)
    for _ in range(3):
        first.add("read")
    second.add("read", 4)
    second.add("rejected.length")
    assert channel.read() == Counter()  # nothing flushed yet (flushes at most every 0.5 s)
    first.flush()
    second.flush()
    assert channel.read() == Counter({"read": 7, "rejected.length": 1})


def test_a_run_resumed_after_its_reading_says_everything_was_read(tmp_path):
    """It showed `0 B of 291.7 KB (0%), ETA ?` to the end: restored documents credit no bytes."""
    channel = Channel(str(tmp_path / "progress"), ["length"], total_bytes=1000)
    channel.all_bytes_read()
    assert "1000 B of 1000 B (100%), all read" in plain_line(snapshot(channel, channel.read(), 1.0))


def test_snapshot_derives_kept_per_stage_and_eta():
    channel = Channel("unused", ["a", "b", "dedup"], tapped={"b"}, total_bytes=1000)
    counts = Counter(
        {"read": 100, "failed.read": 2, "rejected.a": 8, "kept.b": 80, "rejected.b": 9, "bytes": 250}
    )
    figures = snapshot(channel, counts, elapsed=10.0)
    assert [s["kept"] for s in figures["stages"]] == [98, 90, 80, 80]  # dedup has not removed anything yet
    assert figures["rate"] == 10.0 and figures["eta"] == 30.0
    line = plain_line(figures)
    assert "read 100 docs (10/s), 250 B of 1000 B (25%), ETA 0m30s" in line
    assert line.endswith("removed: read -2, a -8, b -9")  # the reader's failures were left out
    counts["bytes"] = 1000  # then the collection stages and the writers work: no ETA to give ("?" before)
    assert "1000 B of 1000 B (100%), all read, kept" in plain_line(snapshot(channel, counts, elapsed=40.0))
    generators_only = Channel("unused", ["a"], total_bytes=0)  # no input file: no bytes, no ETA
    line = plain_line(snapshot(generators_only, Counter({"read": 30, "kept": 12}), elapsed=6.0))
    assert line == "progress 0m06s: read 30 docs (5/s), kept 12"


def test_the_rate_stays_the_readings_own_once_everything_is_read(tmp_path):
    channel = Channel(str(tmp_path / "progress"), ["length"], total_bytes=1000)
    (tmp_path / "progress").mkdir()
    tally = Tally(channel.directory)
    tally.add("read", 100)
    tally.add("bytes", 1000)
    tally.flush()
    figures = Figures(channel)
    assert figures.at(10.0)["rate"] == 10.0
    # the dedup stages and the writers at work for 30 s more: still 10 documents read a second
    assert "read 100 docs (10/s), 1000 B of 1000 B (100%), all read" in plain_line(figures.at(40.0))
    tally.add("read", 50)
    tally.flush()
    assert figures.at(50.0)["rate"] == 3.0  # read again (a generator, say): counted to now


def test_plain_progress_lines_when_not_a_terminal(tmp_path, capsys):
    data = write_jsonl(tmp_path / "in.jsonl", curated_records())
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], CURATED_STAGES)
    args = ["run", "--recipe", str(recipe), "--output", str(tmp_path / "o"), *IN_PROCESS]
    assert main([*args, "--progress-interval", "0.2"]) == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("progress ")]
    assert lines, "no progress line"
    size = size_text((tmp_path / "in.jsonl").stat().st_size)
    assert "read 25 docs" in lines[-1] and f"{size} of {size} (100%)" in lines[-1]
    assert "kept 17; removed: read -1, length -5, exact_dedup -2" in lines[-1]
    assert main([*args, "--quiet"]) == 0
    assert "progress" not in capsys.readouterr().err


def test_the_last_progress_line_counts_the_mixture_s_removals(tmp_path, capsys):
    """The mixture was not tapped: the last line said `kept 170` above a summary of kept 37."""
    records = [r for r in curated_records() if isinstance(r, dict)]
    web = write_jsonl(tmp_path / "web.jsonl", records)
    math = write_jsonl(
        tmp_path / "math.jsonl", [{"id": f"m{i}", "text": f"{LONG_TEXT} math{i}"} for i in range(6)]
    )
    recipe = tmp_path / "r.toml"
    recipe.write_text(
        f"[input]\npaths = {json.dumps([str(web), str(math)])}\n"
        '[output]\nshards = 1\nmixture = { "*web*" = 0.2, "*math*" = 0.8 }\n' + CURATED_STAGES
    )
    args = ["run", "--recipe", str(recipe), "--output", str(tmp_path / "o"), "--progress-interval", "0.2"]
    assert main([*args, *IN_PROCESS]) == 0
    last = [line for line in capsys.readouterr().err.splitlines() if line.startswith("progress ")][-1]
    kept = json.loads((tmp_path / "o" / "manifest.json").read_text())["counts"]["kept"]
    assert f"kept {kept}; removed: " in last and ", mixture -" in last


def test_terminal_display_uses_rich(monkeypatch):
    from pipeline.progress import ConsoleProgress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    stream = Terminal()
    channel = Channel("unused-folder", ["length"])
    with ConsoleProgress(stream=stream).running(channel):
        pass
    assert ConsoleProgress(stream=stream).terminal and "\x1b[" in stream.getvalue()


def test_the_terminal_table_shows_stage_names_as_written():
    """A stage named `len[bold]x` was shown as `lenx`: rich read its name as markup."""
    from rich.console import Console

    from pipeline.progress import rich_view

    channel = Channel("unused", ["len[bold]x"])
    console = Console(file=io.StringIO(), width=100)
    console.print(rich_view(snapshot(channel, Counter({"read": 3}), elapsed=1.0)))
    assert "len[bold]x" in console.file.getvalue()


def test_a_long_compressed_split_shows_its_bytes_as_it_is_read(tmp_path, monkeypatch):
    """A `.jsonl.gz` (or `.warc.gz`) is one split; its bytes count while it is read, not only at its end."""
    monkeypatch.setattr(members, "HELD_BYTES", 1 << 16)  # a member streams past this (4 MiB)
    path = tmp_path / "big.jsonl.gz"
    rng = random.Random(7)
    with gzip.open(path, "wt") as handle:  # random words: the file stays large after compression
        for i in range(3000):
            handle.write(
                json.dumps({"id": str(i), "text": " ".join(f"{rng.random():.6f}" for _ in range(40))}) + "\n"
            )
    (tmp_path / "progress").mkdir()
    read = ReadPhaseFn(
        [],
        InputConfig((str(path),)),
        64,
        None,
        {},
        str(tmp_path / "progress"),
        None,
        verifies_candidates=False,
    )
    read.setup()
    seen = [read.tally.counts["bytes"] for _ in read.process(("unit", Split(str(path))))]
    size = path.stat().st_size
    assert seen == sorted(seen) and 0 < seen[len(seen) // 2] < size  # halfway: part of the file
    assert read.tally.counts["bytes"] == size and len(seen) == 3000


def test_every_split_of_a_parquet_file_counts_its_own_bytes(tmp_path):
    """The whole file was credited to its first split: "100 %, all read" after 21 of 200 rows."""
    from pipeline.progress import split_bytes
    from pipeline.readers import plan_splits

    path = tmp_path / "rows.parquet"
    path.write_bytes(b"x" * 1000)  # only the size is read
    splits = plan_splits(str(path), InputConfig((str(path),), split_bytes=300))
    assert [split_bytes(split) for split in splits] == [300, 300, 300, 100]


def test_a_generator_s_records_are_counted_as_it_yields_them_and_kept_when_it_breaks(tmp_path):
    """An LLM generator may sample for hours: its records flow on as they come, not at its end."""
    from pipeline.document import Document, Failure
    from pipeline.stages import Generator

    counted = []

    class Sampler(Generator):
        def generate(self):
            for i in range(3):
                counted.append(read.tally.counts["read"])  # what progress had when sample i came
                yield Document(f"s{i}", "", kind="math", metadata={"problem": "1+1", "solution": "2"})
            raise ConnectionError("the server went away")

    (tmp_path / "progress").mkdir()
    read = ReadPhaseFn(
        [], InputConfig(()), 1, None, {}, str(tmp_path / "progress"), None, verifies_candidates=True
    )
    read.setup()
    pairs = list(read.process(("unit", Sampler("llm"))))
    assert counted == [0, 1, 2]
    assert [record.id for _, record in pairs] == ["s0", "s1", "s2", "synthetic:llm:generate"]
    assert isinstance(pairs[-1][1], Failure) and pairs[-1][1].message == "the server went away"
