import json

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pipeline.cli import main
from pipeline.inspect import BATCH_ROWS, FORMAT, BoundedSample, _decoded, row_group_batches, summary


def _inspect(capsys, *args) -> tuple[int, str, str]:
    code = main(["inspect", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _rows(out, part):
    return ds.dataset(str(out / part), format="parquet").to_table().to_pylist()


def test_inspect_text_shows_funnel_quantiles_clusters(curated_output, capsys):
    code, out, _ = _inspect(capsys, curated_output)
    assert code == 0
    assert "read 25, kept" in out and "conservation ok" in out
    assert "exact_dedup" in out and "too_few_words" in out
    assert "shards: kept 2 files" in out
    assert "fasttext_quality (kept)" in out and "length (chars):" in out
    assert "duplicate clusters (exact_dedup): size 3: 1" in out


def test_inspect_takes_beams_filesystem_options_and_refuses_others(curated_output, capsys):
    """The options that reach an object store pass through; a misspelt one or a stray argument
    is named for `inspect`, not for `run`."""
    assert _inspect(capsys, curated_output, "--s3_region_name=eu-west-1")[0] == 0
    code, _, err = _inspect(capsys, curated_output, "--s3_region_nam=eu-west-1")
    assert code == 2 and "(did you mean --s3_region_name?); see `gristmill inspect --help`" in err
    code, _, err = _inspect(capsys, curated_output, "other")
    assert code == 2 and "unexpected argument 'other': `gristmill inspect` takes options only\n" in err


def test_inspect_json_has_the_documented_shape(curated_output, capsys):
    code, out, _ = _inspect(capsys, curated_output, "--json")
    summary = json.loads(out)
    assert code == 0 and summary["format"] == FORMAT
    assert set(summary) == {
        "format", "directory", "run", "seconds", "counts", "conservation", "problems", "inputs_changed",
        "funnel", "shards", "scores", "length_chars", "languages", "duplicate_clusters", "synthesis",
    }  # fmt: skip
    assert summary["inputs_changed"] == []
    assert summary["counts"] == {"input": 25, "kept": 17, "rejected": 7, "failed": 1}
    length = next(s for s in summary["funnel"] if s["stage"] == "length")
    assert length["reasons"] == {"too_few_words": 5} and length["in"] == 24
    assert summary["duplicate_clusters"] == {"exact_dedup": {"3": 1}}
    kept_quality = summary["scores"]["kept"]["fasttext_quality"]
    assert kept_quality["count"] == 17 and 0 <= kept_quality["min"] <= kept_quality["p50"] <= 1
    assert summary["scores"]["rejected"]["fasttext_quality"]["count"] == 7  # scores known at removal
    assert summary["length_chars"]["rejected"]["min"] == len("too short")


def test_id_gives_the_fate_of_kept_rejected_and_failed(curated_output, capsys):
    kept = _rows(curated_output, "kept")[0]
    code, out, _ = _inspect(capsys, curated_output, "--id", kept["id"], "--json")
    (found,) = json.loads(out)["found"]
    assert code == 0 and found["fate"] == "kept" and found["file"].startswith("kept/part-")
    assert found["scores"] == kept["scores"]

    duplicate = next(r for r in _rows(curated_output, "rejected") if r["stage"] == "exact_dedup")
    code, out, _ = _inspect(capsys, curated_output, "--id", duplicate["id"], "--json")
    (found,) = json.loads(out)["found"]
    assert found["fate"] == "rejected" and found["reason"] == "exact_duplicate"
    assert found["duplicate_of"] in {"doc06", "doc12", "doc18"} - {duplicate["id"]}

    failed_id = _rows(curated_output, "failed")[0]["id"]
    code, out, _ = _inspect(capsys, curated_output, "--id", failed_id)
    assert code == 0 and out.startswith("failed (failed/part-") and "MalformedJson" in out

    code, out, _ = _inspect(capsys, curated_output, "--id", "doc05")
    assert out.startswith("rejected (rejected/part-") and '"reason": "too_few_words"' in out
    code, out, _ = _inspect(capsys, curated_output, "--id", "nobody")
    assert code == 1 and "no document with id 'nobody'" in out


def test_samples_by_reason_and_kept(curated_output, capsys):
    code, out, _ = _inspect(capsys, curated_output, "--reason", "too_few_words", "--sample", "2")
    assert code == 0 and "5 rejected records match; showing 2:" in out and "words=2<20" in out
    code, out, _ = _inspect(capsys, curated_output, "--kept", "--sample", "1", "--json")
    sample = json.loads(out)
    assert sample["part"] == "kept" and sample["matching"] == 17 and len(sample["rows"]) == 1


@pytest.mark.parametrize(
    "option, value, listed",
    [("--reason", "too_short", "exact_duplicate, too_few_words"), ("--stage", "lenght", "exact_dedup")],
)
def test_unknown_stage_or_reason_lists_the_existing_ones(curated_output, capsys, option, value, listed):
    code, _, err = _inspect(capsys, curated_output, option, value)
    assert code == 2 and repr(value) in err and listed in err


def test_failed_records_are_sampled_by_their_error_and_kept_documents_take_no_reason(curated_output, capsys):
    """`--failed --reason` stopped with a KeyError; `--kept --stage` was ignored."""
    code, out, _ = _inspect(capsys, curated_output, "--failed", "--reason", "MalformedJson", "--json")
    sample = json.loads(out)
    assert code == 0 and sample["matching"] == 1 and sample["rows"][0]["error"] == "MalformedJson"
    code, _, err = _inspect(capsys, curated_output, "--failed", "--reason", "too_few_words")
    assert code == 2 and "no failure error 'too_few_words' in this output (there are: MalformedJson)" in err
    code, _, err = _inspect(capsys, curated_output, "--kept", "--stage", "length")
    assert code == 2 and "--kept lists kept documents: they have no --reason or --stage" in err


def test_a_nan_or_infinite_score_is_shown_as_a_string_in_strict_json():
    row = {"scores": {"q": float("nan"), "r": float("-inf"), "s": 0.5}, "language_score": float("inf")}
    assert _decoded(row) == {"scores": {"q": "nan", "r": "-inf", "s": 0.5}, "language_score": "inf"}


def test_bounded_sample_is_exact_below_capacity_and_bounded_above():
    sample = BoundedSample(capacity=10)
    sample.extend(range(10))
    assert sample.values == list(map(float, range(10)))
    sample.extend(range(10, 1000))
    assert len(sample.values) <= 10 and sample.seen == 1000
    assert sample.quantiles()["count"] == 1000 and sample.quantiles()["max"] >= 896


def test_row_group_batches_give_every_row_in_order_in_bounded_batches(tmp_path):
    table = pa.table({"id": [f"d{i}" for i in range(10_000)], "n": list(range(10_000))})
    pq.write_table(table, tmp_path / "t.parquet", row_group_size=6_000)
    parquet = pq.ParquetFile(tmp_path / "t.parquet")
    batches = list(row_group_batches(parquet, ["n"]))
    assert [b.num_rows for b in batches] == [BATCH_ROWS, 6_000 - BATCH_ROWS, 4_000]
    assert pa.Table.from_batches(batches).column("n").to_pylist() == list(range(10_000))
    assert pa.Table.from_batches(list(row_group_batches(parquet))).equals(table)


def test_the_summary_says_when_a_mixture_group_kept_nothing():
    mixture = {"*web*": {"weight": 0.6, "achieved": 1.0}, "*code*": {"weight": 0.4, "achieved": 0.0}}
    manifest = {
        "run": "r", "counts": {"input": 9, "kept": 5, "rejected": 4, "failed": 0}, "seconds": 1.0,
        "conservation": True, "stages": [], "problems": [], "kept_output": {"mixture": mixture},
    }  # fmt: skip
    lines = summary(manifest, "out").splitlines()
    assert (
        lines[-2] == "mixture: no kept document from '*code*' (weight 0.4); the other groups share the output"
    )
    assert not any("*web*" in line for line in lines)


def test_inspect_and_report_read_parquet_on_the_calling_thread_only(curated_output, capsys, reads_off_thread):
    """Reads of a Python file object on arrow's threads (its `pre_buffer` I/O, row groups decoded
    in parallel): a buffer freed there as the interpreter exited made `gristmill inspect s3://...`
    abort after printing its output (exit 134, 1 run in 12 to 60 under load; core dumps showed
    both threads)."""
    kept_id = _rows(curated_output, "kept")[0]["id"]
    assert _inspect(capsys, curated_output)[0] == 0
    assert _inspect(capsys, curated_output, "--id", kept_id)[0] == 0
    assert main(["report", str(curated_output)]) == 0
    assert reads_off_thread == []


def test_document_text_reaches_the_terminal_without_control_sequences():
    """A crawled text's `ESC ] 0 ; title BEL`, `ESC [ 2 J` set the terminal's title and cleared it."""
    from pipeline.inspect import terminal_safe

    hostile = "page\x1b]0;PWNED\x07\x1b[2J\x9b31m end\n\tnext line é"
    assert terminal_safe(hostile) == "page\\x1b]0;PWNED\\x07\\x1b[2J\\x9b31m end\n\tnext line é"


def test_a_foreign_or_damaged_output_is_one_line_naming_the_file(curated_output, capsys, tmp_path):
    """Before: a KeyError traceback for another tool's manifest.json, and a JSON or Parquet error
    that named no file."""
    import shutil

    copy = tmp_path / "out"
    shutil.copytree(curated_output, copy)
    manifest = copy / "manifest.json"
    original = manifest.read_bytes()
    for content, message in (
        (b'{"name": "my-webapp"}', "not a gristmill manifest (no 'run')"),
        (b"[]", "not a gristmill manifest"),
        (original[:300], "cannot be read as a gristmill manifest"),
    ):
        manifest.write_bytes(content)
        for command in ("inspect", "report"):
            code = main([command, str(copy)])
            err = capsys.readouterr().err
            assert code == 2 and err.startswith(f"gristmill: error: {manifest}: ") and message in err, err
    manifest.write_bytes(original)
    shard = next((copy / "kept").glob("*.parquet"))
    shard.write_bytes(shard.read_bytes()[:100])
    code, _, err = _inspect(capsys, copy)
    assert code == 2 and err.startswith(f"gristmill: error: {shard}: cannot be read as Parquet")


def test_a_shard_the_manifest_lists_that_is_gone_is_an_error(curated_output, capsys, tmp_path):
    """Before, inspect and report gave figures from the shards left, and exited 0."""
    import shutil

    copy = tmp_path / "out"
    shutil.copytree(curated_output, copy)
    gone = sorted((copy / "kept").glob("*.parquet"))[0]
    gone.unlink()
    for command in ("inspect", "report"):
        assert main([command, str(copy)]) == 2
        assert f"{gone}: missing (1 of the" in capsys.readouterr().err


def test_options_that_ask_for_two_things_at_once_are_refused(curated_output, capsys):
    """Before, `--kept --failed` showed failed records and `--id` ignored `--kept`, both silently."""
    with pytest.raises(SystemExit) as usage:
        main(["inspect", str(curated_output), "--kept", "--failed"])
    assert usage.value.code == 2
    assert "argument --failed: not allowed with argument --kept" in capsys.readouterr().err
    code, _, err = _inspect(capsys, curated_output, "--id", "a", "--kept")
    assert code == 2 and "--id looks in kept, rejected and failed: it takes no --kept" in err
