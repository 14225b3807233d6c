"""The command line never guesses: every input read, unknown options, empty globs and missing
text fields are errors that name the culprit, Ctrl-C is one line."""

import gzip
import html
import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import stages as stage_registry
from pipeline.cli import main
from pipeline.document import KEEP
from pipeline.stages import DocumentStage, Param
from tests.conftest import IN_PROCESS, LONG_TEXT, write_jsonl, write_recipe

STAGES = '[[stage]]\nuse = "length"\nmin_words = 20\n'


@pytest.fixture
def three_files(tmp_path):
    paths = [write_jsonl(tmp_path / f"{n}.jsonl", [{"id": n, "text": LONG_TEXT}]) for n in "abc"]
    recipe = write_recipe(tmp_path / "r.toml", ["unused/*.jsonl"], STAGES)
    return recipe, [str(p) for p in paths]


def test_every_input_is_read(tmp_path, capsys, three_files):
    recipe, (a, b, c) = three_files
    inputs = ["--input", a, "--input", b, c]  # the option repeated, and several globs after one
    code = main(
        ["run", "--quiet", "--recipe", str(recipe), *inputs, "--output", str(tmp_path / "o"), *IN_PROCESS]
    )
    assert code == 0 and "read 3, kept 3" in capsys.readouterr().out


def test_a_file_given_under_several_names_is_read_once(tmp_path, capsys, monkeypatch, three_files):
    recipe, (a, b, _) = three_files
    monkeypatch.chdir(tmp_path)
    (tmp_path / "link.jsonl").symlink_to(a)
    os.link(b, tmp_path / "hard.jsonl")
    # the same two files as given, relative, with ./, through a glob, a symbolic and a hard link
    names = [a, "a.jsonl", "./a.jsonl", "[ab].jsonl", "link.jsonl", "hard.jsonl", b]
    args = ["run", "--quiet", "--recipe", str(recipe), "--input", *names, "--output", "o", *IN_PROCESS]
    assert main(args) == 0 and "read 2, kept 2" in capsys.readouterr().out
    sources = {row["source"] for row in pq.read_table(tmp_path / "o" / "kept").to_pylist()}
    assert sources == {a, "b.jsonl"}  # each under the first of its names (b's: through the glob)


def test_a_glob_matching_nothing_names_it_and_leaves_no_folder(tmp_path, capsys, three_files):
    recipe, (a, _, _) = three_files
    out = tmp_path / "o"
    code = main(
        [
            "run",
            "--recipe",
            str(recipe),
            "--input",
            a,
            "--input",
            str(tmp_path / "nope*.jsonl"),
            "--output",
            str(out),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "nope*.jsonl: no input file matches" in err[-1]
    assert not out.exists()


@pytest.mark.parametrize(
    "mixture, said",
    [
        ('{ "*/a.jsonl" = 0.7, "*/code/*" = 0.3 }', "'*/code/*' matches no input file and no generator"),
        ('{ "*.jsonl" = 0.7, "*/b.jsonl" = 0.3 }', "'*/b.jsonl' gets no document: an earlier pattern"),
    ],
)
def test_a_mixture_pattern_no_document_can_match_is_an_error_before_the_run(
    tmp_path, capsys, three_files, mixture, said
):
    _, inputs = three_files
    recipe = write_recipe(tmp_path / "m.toml", inputs, STAGES, extra=f"[output]\nmixture = {mixture}")
    recipe.write_text(recipe.read_text().replace("[output]\nshards = 2\n", ""))
    out = tmp_path / "o"
    code = main(["run", "--quiet", "--recipe", str(recipe), "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and not out.exists()
    assert err[0].startswith(f"gristmill: error: {recipe}: [output] mixture: {said}")


def test_standard_input_is_refused_saying_to_save_it_to_a_file(tmp_path, capsys, three_files):
    recipe, _ = three_files
    code = main(["run", "--recipe", str(recipe), "--input", "-", "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [
        "gristmill: error: --input -: gristmill reads files, not standard input (workers read parts "
        "of each file in parallel): save the stream to a file and give its path"
    ]


def test_a_pipe_as_input_is_refused_saying_to_save_it_to_a_file(tmp_path, capsys, three_files):
    """`--input /dev/stdin` or `<(zcat ...)`: Beam lists no such file, and the error said the
    path matched nothing."""
    recipe, _ = three_files
    pipe = tmp_path / "stream"
    os.mkfifo(pipe)
    code = main(["run", "--recipe", str(recipe), "--input", str(pipe), "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [
        f"gristmill: error: {pipe}: not a file but a pipe or a device: gristmill reads files (workers "
        "read parts of each file in parallel): save the stream to a file and give its path"
    ]


@pytest.mark.parametrize("slash", ["", "/"])
def test_a_folder_as_input_says_to_give_a_glob(tmp_path, capsys, three_files, slash):
    """With a slash, Beam listed the folder's own files (its README too), not those below it."""
    recipe, _ = three_files
    folder = tmp_path / "data"
    folder.mkdir()
    write_jsonl(folder / "a.jsonl", [{"id": "a", "text": LONG_TEXT}])
    (folder / "README.txt").write_text("what these files are")
    given = f"{folder}{slash}"
    code = main(["run", "--recipe", str(recipe), "--input", given, "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and f"{given}: is a folder; give a glob of its files, e.g. '{folder}/*.jsonl'" in err


def test_an_empty_input_path_is_an_error_not_the_working_folder(tmp_path, capsys, monkeypatch, three_files):
    """`--input "$UNSET"`: before, Beam listed the working folder and every file there was read."""
    recipe, _ = three_files
    monkeypatch.chdir(tmp_path)
    code = main(["run", "--recipe", str(recipe), "--input", " ", "--output", str(tmp_path / "o")])
    assert code == 2 and "--input: an empty path (an unset variable?)" in capsys.readouterr().err
    write_recipe(tmp_path / "empty.toml", [""], STAGES)
    code = main(["validate", str(tmp_path / "empty.toml")])
    assert code == 2 and "[input] paths: an empty path" in capsys.readouterr().err


def test_an_output_that_cannot_be_a_folder_is_an_error_before_the_run(tmp_path, capsys, three_files):
    recipe, (a, _, _) = three_files
    code = main(["run", "--recipe", str(recipe), "--input", a, "--output", a])  # a file
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == [f"gristmill: error: --output {a}: cannot create the folder: File exists"]
    code = main(["run", "--recipe", str(recipe), "--input", a, "--output", f"{a}/sub"])
    err = capsys.readouterr().err
    assert code == 2 and f"--output {a}/sub: cannot create the folder: Not a directory" in err
    for option in ("--spill_dir", "--work-dir"):  # the spill folder failed the run after it started
        code = main(
            ["run", "--recipe", str(recipe), "--input", a, "--output", str(tmp_path / "o"), option, f"{a}/x"]
        )
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and err == [f"gristmill: error: {option} {a}/x: {a} is a file, not a folder"]
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "option, scheme",
    [("--input", "hdfs"), ("--output", "nosuchfs"), ("--work-dir", "hdfs"), ("--spill_dir", "nosuchfs")],
)
def test_a_path_no_installed_filesystem_serves_is_one_line(tmp_path, capsys, three_files, option, scheme):
    """An hdfs:// path (Beam's hadoop extra not installed) ended in a traceback; an unknown
    scheme's error suggested installing apache-beam[gcp]."""
    if scheme == "hdfs" and __import__("importlib.util").util.find_spec("hdfs"):
        pytest.skip("the hdfs package is installed")
    recipe, paths = three_files
    path = f"{scheme}://bucket/place"
    given = {"--input": paths[0], "--output": str(tmp_path / "o"), option: path}
    args = [arg for pair in given.items() for arg in pair]
    assert main(["run", "--quiet", "--recipe", str(recipe), *args, "--checkpoints", "on"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(
        f"gristmill: error: {option} {path}: cannot use {scheme}:// paths ("
    )
    assert not (tmp_path / "o").exists()
    assert main(["inspect", path]) == 2
    assert f"output folder {path}: cannot use" in capsys.readouterr().err


def test_home_folders_and_file_uris_are_local_paths(tmp_path, capsys, three_files, monkeypatch):
    """A quoted '~/data/*.jsonl', `--output=~/out` (no shell expands either) and a file:// URI."""
    recipe, (a, b, _) = three_files
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    args = ["--input", "~/a.jsonl", f"file://{b}", "--output=~/o"]
    assert main(["run", "--quiet", "--recipe", str(recipe), *args, *IN_PROCESS]) == 0
    assert "read 2, kept 2" in capsys.readouterr().out
    assert (tmp_path / "o" / "manifest.json").exists() and not (tmp_path / "~").exists()
    assert main(["inspect", "~/o"]) == 0 and "read 2, kept 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    "path, hint",
    [
        ("https://data.commoncrawl.org/x.warc.gz", "download the files first"),
        ("s3a://b/x.jsonl", "write s3://"),
    ],
)
def test_a_web_or_hadoop_path_says_what_to_do_instead(capsys, three_files, path, hint):
    recipe, _ = three_files
    assert main(["run", "--quiet", "--recipe", str(recipe), "--input", path]) == 2
    assert hint in capsys.readouterr().err


def test_a_misspelled_option_is_an_error_naming_it(tmp_path, capsys, caplog, three_files):
    recipe, (a, _, _) = three_files
    code = main(["run", "--recipe", str(recipe), "--input", a, "--ouptut", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and "unknown option --ouptut (did you mean --output?)" in err
    assert "Discarding unparseable args" not in caplog.text  # Beam's warning came first
    assert not (tmp_path / "o").exists() and not (tmp_path / "out").exists()
    code = main(["run", "--recipe", str(recipe), "-q", "--input", a, "--direct_num_worker=2"])
    assert code == 2 and "did you mean --direct_num_workers?" in capsys.readouterr().err


def test_a_positional_argument_is_an_error_not_dropped(tmp_path, capsys, three_files):
    """Beam dropped unknown positional arguments with a warning: `run other.toml` ran the default recipe."""
    recipe, (a, _, _) = three_files
    code = main(["run", str(recipe), "--input", a, "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert (
        code == 2 and f"unexpected argument '{recipe}'" in err and f"did you mean --recipe {recipe}?" in err
    )
    code = main(["run", "--recipe", str(recipe), "--output", str(tmp_path / "o"), a])
    assert code == 2 and f"did you mean --input {a}?" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_missing_text_field_stops_early_listing_the_fields(tmp_path, capsys):
    gsm8k_like = [
        {"question": f"What is {i}+{i}?", "answer": f"{i}+{i}=<<{i}+{i}={2 * i}>>{2 * i}\n#### {2 * i}"}
        for i in range(30)
    ]
    data = write_jsonl(tmp_path / "gsm8k.jsonl", gsm8k_like)
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    out = tmp_path / "o"
    code = main(["run", "--recipe", str(recipe), "--output", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and "gsm8k.jsonl: none of the first 20 records has a text field" in err[-1]
    assert "fields found: answer, question" in err[-1] and "--text-field" in err[-1]
    assert not out.exists()
    code = main(
        [
            "run",
            "--quiet",
            "--recipe",
            str(recipe),
            "--text-field",
            "question",
            "--output",
            str(out),
            *IN_PROCESS,
        ]
    )
    assert code == 0 and "read 30, kept 30" in capsys.readouterr().out


@pytest.mark.parametrize("option, field", [("--id-field", "doc_id"), ("--url-field", "link")])
def test_an_id_or_url_field_in_none_of_the_first_records_stops_early(tmp_path, capsys, option, field):
    """A misspelt field name gave every document a file:position id, or no URL, without a word."""
    records = [{"id": str(i), "url": f"https://example.org/{i}", "text": LONG_TEXT} for i in range(30)]
    data = write_jsonl(tmp_path / "docs.jsonl", records)
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    out = tmp_path / "o"
    code = main(["run", "--recipe", str(recipe), option, field, "--output", str(out)])
    key = option[2:].replace("-", "_")
    assert code == 2 and capsys.readouterr().err.strip().splitlines()[-1] == (
        f"gristmill: error: {data}: none of the first 20 documents has a value in {field!r} "
        f"({option} / [input] {key}); name a field they hold, or leave {key} out"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    "name, line, said",
    [  # `jq '.[]'` without -c prints pretty objects one after another; rows as arrays, not objects
        ("pretty.json", lambda i: json.dumps({"id": i, "text": LONG_TEXT}, indent=2), "MalformedJson: "),
        ("rows.jsonl", lambda i: json.dumps([i, LONG_TEXT]), "NotAnObject: expected a JSON object, got list"),
    ],
)
def test_a_file_whose_first_records_all_fail_alike_stops_early(tmp_path, capsys, name, line, said):
    data = tmp_path / name
    data.write_text("".join(line(str(i)) + "\n" for i in range(30)))
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    code = main(["run", "--recipe", str(recipe), "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1].startswith(
        f"gristmill: error: {data}: none of the first 20 records could be read: {said}"
    )
    assert err[-1].endswith("`jq -c` writes them so)") == (name == "pretty.json")
    assert not (tmp_path / "o").exists()


def test_html_pages_in_the_text_field_are_noted_and_read_with_html_field(tmp_path, capsys):
    page = f"<!DOCTYPE html><html><body><nav>Home | News</nav><article><p>{LONG_TEXT}</p></article></body></html>"
    data = write_jsonl(tmp_path / "pages.jsonl", [{"id": str(i), "html": page} for i in range(3)])
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    run = ["run", "--quiet", "--recipe", str(recipe), *IN_PROCESS]
    assert main([*run, "--text-field", "html", "--output", str(tmp_path / "o")]) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note: ")]
    assert notes == [
        f"note: {data}: 3 of the first 3 texts in 'html' are HTML pages, which the filters would judge "
        "as text, markup included; to read each page's main text, name the field with --html-field html "
        "(or [input] html_field)"
    ]
    assert main([*run, "--html-field", "html", "--output", str(tmp_path / "p")]) == 0
    assert "note: " not in capsys.readouterr().err
    texts = pq.read_table(tmp_path / "p" / "kept").column("text").to_pylist()
    assert texts == [LONG_TEXT] * 3


def test_a_text_field_holding_no_strings_stops_early(tmp_path, capsys):
    paragraphs = [{"id": str(i), "text": [LONG_TEXT, LONG_TEXT], "title": "t"} for i in range(30)]
    data = write_jsonl(tmp_path / "paragraphs.jsonl", paragraphs)
    recipe = write_recipe(tmp_path / "r.toml", [str(data)], "")
    code = main(["run", "--recipe", str(recipe), "--output", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err[-1] == (
        f"gristmill: error: {data}: none of the first 20 records has a string in 'text': 'text' is list; "
        "choose one with --text-field or [input] text_field"
    )


@pytest.mark.parametrize(
    "name, encode, said",
    [
        (
            "crawl.jsonl",
            gzip.compress,
            ["crawl.jsonl: the file is gzip-compressed", "rename it to crawl.jsonl.gz"],
        ),
        # Windows PowerShell's `>` writes UTF-16: each line failed as invalid UTF-8 or malformed JSON.
        (
            "export.jsonl",
            lambda data: data.decode().encode("utf-16"),
            [
                "export.jsonl: the file is UTF-16 text (its byte-order mark says so)",
                "iconv -f UTF-16 -t UTF-8",
            ],
        ),
        # Text, HTML and WARC files were not looked at before the run: it went on, and failed them.
        (
            "notes.txt",
            lambda data: data.decode().encode("utf-16"),
            ["notes.txt: the file is UTF-16", "iconv"],
        ),
        (  # a UTF-16 page is read: its charset is detected, as a WARC page's is
            "page.html.gz",
            lambda data: data,
            [
                "page.html.gz: the file's name says gzip but its first bytes say it is not compressed",
                "rename it to page.html",
            ],
        ),
        (
            "crawl.warc",
            gzip.compress,
            ["crawl.warc: the file is gzip-compressed", "rename it to crawl.warc.gz"],
        ),
    ],
)
def test_a_file_none_of_which_can_be_read_stops_early_saying_what_to_do(tmp_path, capsys, name, encode, said):
    data = tmp_path / name
    data.write_bytes(encode(b'{"id": "a", "text": "aa"}\n'))
    out = tmp_path / "o"
    code = main(
        ["run", "--recipe", str(write_recipe(tmp_path / "r.toml", [str(data)], STAGES)), "--output", str(out)]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and said[0] in err[-1]
    assert said[1] in err[-1] and not out.exists()


def test_input_format_reads_files_whatever_their_names_say(tmp_path, capsys):
    plain = write_jsonl(tmp_path / "a.jsonl", [{"id": "a", "text": LONG_TEXT}])
    named = tmp_path / "export.dat"
    named.write_bytes(plain.read_bytes())
    packed = tmp_path / "export2.dat.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes().replace(b'"a"', b'"b"')))
    recipe = str(write_recipe(tmp_path / "r.toml", ["unused/*.jsonl"], STAGES))
    code = main(["run", "--recipe", recipe, "--input", str(named), "--output", str(tmp_path / "o")])
    assert code == 2 and "cannot tell the format from the extension" in capsys.readouterr().err
    args = [
        "run",
        "--quiet",
        "--recipe",
        recipe,
        "--input",
        str(named),
        str(packed),
        "--input-format",
        "jsonl",
    ]
    code = main([*args, "--output", str(tmp_path / "o"), *IN_PROCESS])
    assert code == 0 and "read 2, kept 2" in capsys.readouterr().out


def test_ctrl_c_is_one_line(tmp_path, capsys, three_files, monkeypatch):
    import pipeline.run

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(pipeline.run, "run_recipe", interrupted)
    recipe, (a, _, _) = three_files
    out = tmp_path / "o"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--input", a, "--output", str(out)]) == 130
    assert capsys.readouterr().err == "gristmill: interrupted\n"


def test_list_one_stage(capsys):
    assert main(["list", "length"]) == 0
    listing = capsys.readouterr().out
    assert listing.startswith("length  (document stage)") and "exact_dedup" not in listing
    assert listing.endswith("documents whose language is not listed pass it untouched.\n")
    assert main(["list", "lenght"]) == 2
    assert "unknown stage or generator 'lenght' (did you mean 'length'? known: " in capsys.readouterr().err


def test_paths_with_glob_characters_work_as_named(tmp_path, capsys, monkeypatch):
    """Folders and files whose names hold `[`, `*` or `?`: Beam reads every path it lists or
    deletes as a glob, so an output folder `out[2]` failed the run when its spill files were
    deleted, and a file `data[1].jsonl` named exactly matched nothing. Relative paths whose first
    folder holds one are the hardest case (Beam lists nothing above the pattern's fixed part)."""
    from pipeline.dataset import GristmillDataset
    from pipeline.inspect import part_files

    monkeypatch.chdir(tmp_path)
    os.makedirs("runs[1]")
    texts = [LONG_TEXT, LONG_TEXT, LONG_TEXT.replace("here", "there")]
    write_jsonl(
        tmp_path / "runs[1]" / "data[1].jsonl", [{"id": str(i), "text": t} for i, t in enumerate(texts)]
    )
    write_jsonl(tmp_path / "runs[1]" / "data1.jsonl", [{"id": "other", "text": LONG_TEXT}])
    recipe = write_recipe(
        tmp_path / "r.toml", ["unused/*.jsonl"], STAGES + '[[stage]]\nuse = "exact_dedup"\n'
    )
    os.makedirs("runs[1]/spill?")
    args = ["run", "--quiet", "--recipe", str(recipe), "--input", "runs[1]/data[1].jsonl"]
    args += ["--output", "runs[1]/out*", "--checkpoints=on", "--work-dir", "runs[1]/work[3]"]
    args += ["--spill_dir", "runs[1]/spill?", *IN_PROCESS]
    for _ in range(2):  # the second run is told what the first left and replaces its output
        assert main(args) == 0
        assert "read 3, kept 2, rejected 1" in capsys.readouterr().out
    assert sorted(os.listdir("runs[1]/out*")) == sorted(
        [".gristmill-output", "README.md", "failed", "kept", "manifest.json", "rejected", "report.html"]
    )
    assert os.listdir("runs[1]/spill?") == [] and not os.path.exists("runs[1]/work[3]")
    assert part_files("runs[1]/out*", "kept") and part_files("runs[1]/out*", "rejected")
    dataset = GristmillDataset("runs[1]/out*", rank=0, world_size=1, seed=0, batch_size=1)
    assert sorted(record["id"] for record in dataset) == ["0", "2"]


def test_dolma_files_keep_their_urls_through_a_dotted_url_field(tmp_path, capsys):
    import pyarrow.parquet as pq

    dolma = [
        {"id": f"d{i}", "text": LONG_TEXT, "source": "cc", "metadata": {"url": f"https://example.com/{i}"}}
        for i in range(3)
    ]
    recipe = write_recipe(tmp_path / "r.toml", [str(write_jsonl(tmp_path / "dolma.jsonl", dolma))], STAGES)
    out = tmp_path / "o"
    args = ["run", "--quiet", "--recipe", str(recipe), "--url-field", "metadata.url", "--output", str(out)]
    assert main([*args, *IN_PROCESS]) == 0 and "read 3, kept 3" in capsys.readouterr().out
    rows = pq.read_table(out / "kept").to_pylist()
    assert sorted(r["url"] for r in rows) == [f"https://example.com/{i}" for i in range(3)]
    assert {json.loads(r["metadata"])["source"] for r in rows} == {"cc"}


class ChangeInputs(DocumentStage):
    """Test stage: on the first document it sees, appends a record to `append_to`, creates
    `create` and deletes `delete`, as a crawler still writing the input folder would."""

    registry_name = "change_inputs"
    params = {name: Param(str, "", f"file to {name}") for name in ("append_to", "create", "delete")}

    def check(self, doc):
        if not os.path.exists(self.create):
            with open(self.append_to, "a") as handle:
                handle.write(json.dumps({"id": "appended", "text": LONG_TEXT}) + "\n")
            write_jsonl(Path(self.create), [{"id": "new", "text": LONG_TEXT}])
            os.unlink(self.delete)
        return KEEP


def test_inputs_changed_during_the_run_are_named_after_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(stage_registry.STAGES, "change_inputs", ChangeInputs)
    a, gone = (write_jsonl(tmp_path / f"{n}.jsonl", [{"id": n, "text": LONG_TEXT}]) for n in ("a", "gone"))
    new = tmp_path / "new.jsonl"
    stage = f'[[stage]]\nuse = "change_inputs"\nappend_to = "{a}"\ncreate = "{new}"\ndelete = "{gone}"\n'
    recipe = write_recipe(tmp_path / "r.toml", [str(tmp_path / "*.jsonl")], stage)
    output = tmp_path / "o"
    assert main(["run", "--quiet", "--recipe", str(recipe), "--output", str(output), *IN_PROCESS]) == 0
    changes = json.loads((output / "manifest.json").read_text())["inputs_changed"]
    assert [line.split(": ", 1)[0] for line in changes] == [str(a), str(gone), str(new)]
    assert "changed during the run" in changes[0] and "appeared during the run" in changes[2]
    printed = capsys.readouterr().out
    assert all(f"input changed: {line}" in printed for line in changes)
    assert main(["inspect", "--json", str(output)]) == 0
    assert json.loads(capsys.readouterr().out)["inputs_changed"] == changes
    report = (output / "report.html").read_text()
    assert all(f"input changed: {html.escape(line)}" in report for line in changes)
    # Nothing changes in a second run (its inputs are now a, new): nothing is said.
    assert (
        main(
            [
                "run",
                "--quiet",
                "--recipe",
                str(write_recipe(tmp_path / "r2.toml", [str(a), str(new)])),
                "--output",
                str(tmp_path / "o2"),
                *IN_PROCESS,
            ]
        )
        == 0
    )
    assert json.loads((tmp_path / "o2" / "manifest.json").read_text())["inputs_changed"] == []
    assert "input changed" not in capsys.readouterr().out


def test_a_glob_over_the_output_folder_reads_neither_the_runs_own_files_nor_an_earlier_outputs(
    tmp_path, capsys, monkeypatch
):
    """`--input 'data/**' --output data/o1`: the run's own staging files were named as inputs that
    appeared during the run; a second run read the first one's manifest, report and marker."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "data").mkdir()
    write_jsonl(tmp_path / "data" / "a.jsonl", [{"id": "a", "text": LONG_TEXT}])
    recipe = str(write_recipe(tmp_path / "r.toml", ["data/**"], STAGES))
    run = ["run", "--quiet", "--recipe", recipe, *IN_PROCESS]
    assert main([*run, "--output", "data/o1"]) == 0
    assert json.loads((tmp_path / "data" / "o1" / "manifest.json").read_text())["inputs_changed"] == []
    assert "input changed" not in capsys.readouterr().out
    assert main([*run, "--output", "data/o2"]) == 2
    assert capsys.readouterr().err.startswith(
        "gristmill: error: data/o1/.gristmill-output: --input matches the files of an earlier "
        "gristmill output (data/o1: its manifest, report and marker are not input); narrow the glob"
    )
    assert not (tmp_path / "data" / "o2").exists()
    shards = ["--input", "data/**/*.parquet", "data/*.jsonl", "--output", "data/o2"]
    assert main([*run, *shards]) == 0
    said = capsys.readouterr()
    assert "gristmill: note: 6 input files are shards of an earlier gristmill output (data/o1: " in said.err
    assert "read 2, kept 2" in said.out  # a.jsonl, and its copy in data/o1/kept
