import contextlib
import io
import json
import subprocess
import sys

import pytest

from pipeline.cli import main
from tests.conftest import LONG_TEXT, write_jsonl, write_recipe

STAGES = '[[stage]]\nuse = "length"\nmin_words = 20\n\n[[stage]]\nuse = "exact_dedup"\n'


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """One `gristmill run` (in memory) of a recipe whose own paths match nothing, given two records
    (one too short) with `--input`: (output folder, what it printed)."""
    folder = tmp_path_factory.mktemp("cli-run")
    data = write_jsonl(
        folder / "other.jsonl", [{"id": "a", "text": LONG_TEXT}, {"id": "b", "text": "short one"}]
    )
    recipe = write_recipe(folder / "r.toml", ["nowhere/*.jsonl"], STAGES)
    out = folder / "out"
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        code = main(
            [
                "run",
                "--recipe",
                str(recipe),
                "--input",
                str(data),
                "--output",
                str(out),
                "--direct_num_workers=1",
                "--direct_running_mode=in_memory",
            ]
        )
    assert code == 0
    return out, printed.getvalue()


def test_run_inspect_report(cli_run, capsys):
    out, printed = cli_run
    assert "read 2, kept 1, rejected 1, failed 0" in printed and "report:" in printed
    assert main(["inspect", str(out), "--reason", "too_few_words"]) == 0
    printed = capsys.readouterr().out
    assert "1 rejected records match" in printed and "short one" in printed
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "report.html").exists()


def test_input_option_overrides_recipe_paths(cli_run):
    _, printed = cli_run
    assert "read 2, kept 1" in printed  # the recipe's own paths would have been an input error


def test_errors_are_one_clear_line_and_non_zero(tmp_path, capsys):
    recipe = write_recipe(tmp_path / "r.toml", [str(tmp_path / "missing*.jsonl")], STAGES)
    assert main(["run", "--recipe", str(recipe), "--output", str(tmp_path / "o")]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert error[-1].startswith("gristmill: error: ") and "missing*.jsonl" in error[-1]
    bad = write_recipe(tmp_path / "bad.toml", ["x"], '[[stage]]\nuse = "length"\nmin_words = -3\n')
    assert main(["validate", str(bad)]) == 2
    assert "stage 1 (length): min_words" in capsys.readouterr().err
    assert main(["inspect", str(tmp_path)]) == 2


@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_tokenizer_that_does_not_load_stops_the_run_before_it_starts(tmp_path, capsys, command):
    """It was loaded by the workers only: the run read and filtered everything, then failed."""
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "text": "some text"}])
    not_one = tmp_path / "not_a_tokenizer.json"
    not_one.write_text('{"a": 1}')
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], STAGES)
    recipe.write_text(recipe.read_text().replace("[output]", f'[output]\ntokenizer = "{not_one}"'))
    args = ["--recipe", str(recipe), "--output", str(tmp_path / "o")] if command == "run" else [str(recipe)]
    assert main([command, *args]) == 2
    assert f"error: {recipe}: [output] tokenizer: cannot load '{not_one}'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["run", "--progress-interval", "0"], "--progress-interval: must be a number of seconds above 0"),
        (["run", "--progress-interval", "-5"], "--progress-interval: must be a number of seconds above 0"),
        (["run", "--progress-interval", "nan"], "--progress-interval: must be a number of seconds above 0"),
        (["inspect", "out", "--sample", "-1"], "--sample: must be a whole number, 0 or more, not '-1'"),
    ],
)
def test_numeric_options_out_of_range_exit_2_before_anything_runs(argv, message, capsys):
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize("naming", [[], ["--recipe"]], ids=["positional", "as-run-names-it"])
def test_validate_prints_the_resolved_recipe(naming, tmp_path, capsys):
    recipe = write_recipe(tmp_path / "r.toml", ["x.jsonl"], STAGES)
    assert main(["validate", *naming, str(recipe)]) == 0
    resolved = json.loads(capsys.readouterr().out.split("\n\n")[0])
    assert resolved["stages"][0] == {
        "use": "length",
        "name": "length",
        "min_words": 20,
        "max_words": 100000,
        "min_chars": 0,
        "max_chars": 10000000,
    }


def test_validate_notes_a_stage_that_misjudges_the_languages_kept(tmp_path, capsys):
    stages = '[[stage]]\nuse = "language"\nlanguages = ["en", "de"]\n\n[[stage]]\nuse = "gopher_quality"\n'
    recipe = write_recipe(tmp_path / "r.toml", ["x.jsonl"], stages)
    assert main(["validate", str(recipe)]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1 and "stage 2 (gopher_quality): its stop_words are Gopher's English" in notes[0]


def test_validate_checks_a_mixture_against_the_recipes_local_inputs(tmp_path, capsys):
    (tmp_path / "web.jsonl").write_text('{"text": "x"}\n')

    def recipe(mixture: str, inputs: list[str]) -> str:
        path = write_recipe(tmp_path / "r.toml", inputs, STAGES)
        path.write_text(path.read_text().replace("[output]\n", f"[output]\nmixture = {mixture}\n"))
        return str(path)

    typo = '{ "*/wbe.jsonl" = 0.5, "*/web.jsonl" = 0.5 }'
    assert main(["validate", recipe(typo, [str(tmp_path / "*.jsonl")])]) == 2
    said = capsys.readouterr()
    assert "mixture: '*/wbe.jsonl' matches no input file" in said.err
    assert said.out == ""  # `validate r.toml > resolved.json` left a valid-looking JSON file
    assert main(["validate", recipe('{ "*/web.jsonl" = 1.0 }', [str(tmp_path / "*.jsonl")])]) == 0
    assert main(["validate", recipe(typo, [str(tmp_path / "elsewhere/*.jsonl")])]) == 0
    assert "note: [output] mixture not checked: " in capsys.readouterr().err
    assert main(["validate", recipe(typo, ["s3://bucket/*.jsonl"])]) == 0
    assert "not checked: the inputs are not local" in capsys.readouterr().err


def test_list_shows_docs_params_and_reasons(capsys):
    assert main(["list"]) == 0
    listing = capsys.readouterr().out
    assert "length  (document stage)" in listing
    assert "min_words (int, default 50)" in listing
    assert "reasons: too_few_words, too_many_words" in listing
    assert "exact_dedup  (collection stage)" in listing
    assert "Every stage also takes only_languages" in listing


def test_output_piped_into_a_reader_that_stops_ends_quietly(cli_run):
    """`gristmill inspect OUT | head -1`: no traceback when the reader closes the pipe."""
    out, _ = cli_run
    for argv in (["list"], ["inspect", str(out)]):
        proc = subprocess.Popen(
            [sys.executable, "-m", "pipeline.cli", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        proc.stdout.close()  # before the command writes anything
        assert proc.stderr.read() == b"" and proc.wait() == 141


def test_run_stops_with_exit_1_and_publishes_nothing_when_a_stage_loses_documents(
    tmp_path, capsys, monkeypatch
):
    import apache_beam as beam

    from dedup.exact import ExactDedup
    from pipeline.stages import StageOutputs

    def lossy_expand(self, docs, passthrough=None):  # a broken stage: drops document "b"
        nothing = docs.pipeline | "Nothing" >> beam.Create([])
        return StageOutputs(docs | "Drop" >> beam.Filter(lambda d: d.id != "b"), nothing, nothing)

    monkeypatch.setattr(ExactDedup, "expand", lossy_expand)
    data = write_jsonl(tmp_path / "in.jsonl", [{"id": i, "text": f"{LONG_TEXT} {i}"} for i in "abc"])
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], STAGES)
    out = tmp_path / "out"
    args = ["run", "--recipe", str(recipe), "--output", str(out)]
    assert main([*args, "--direct_num_workers=1", "--direct_running_mode=in_memory"]) == 1
    error = capsys.readouterr().err
    assert "run failed, nothing published: stage exact_dedup: 3 documents in, but 2 kept" in error
    assert not (out / "manifest.json").exists()
    work = out / ".gristmill-work"  # what finished before the failure is kept for a rerun
    assert f"1 finished input splits and 0 finished later phases are checkpointed in {work} (a rerun" in error


def test_inspect_or_report_that_cannot_read_or_write_a_file_is_one_line(cli_run, capsys, monkeypatch):
    """Before, a PermissionError (an unreadable shard, a read-only output for report.html) was a traceback."""
    import pipeline.report

    out, _ = cli_run

    def refused(directory, *args, **kwargs):
        raise PermissionError(13, "Permission denied", f"{directory}/report.html")

    monkeypatch.setattr(pipeline.report, "write_report", refused)
    assert main(["report", str(out)]) == 1
    assert capsys.readouterr().err == f"gristmill: error: [Errno 13] Permission denied: '{out}/report.html'\n"
