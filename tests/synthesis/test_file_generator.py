"""`file` generator: candidates from JSONL/JSON files, field renaming, strict on bad records."""

from __future__ import annotations

import json

import pytest

from pipeline.document import Document, Failure
from pipeline.stages import GENERATORS, ConfigError, load_builtin_stages
from synthesis.file_generator import FileGenerator


def test_reads_candidates_that_carry_their_kind(tmp_path):
    records = [
        {"id": "c1", "kind": "code", "prompt": "p", "solution": "x = 1", "tests": "assert x == 1"},
        {"id": "m1", "kind": "math", "problem": "1+1?", "solution": "#### 2", "answer": "2"},
    ]
    path = tmp_path / "cands.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    load_builtin_stages()
    assert GENERATORS["file"] is FileGenerator
    docs = list(FileGenerator("mine", paths=[str(path)]).generate())
    assert [(d.id, d.kind, d.text, d.source) for d in docs] == [
        ("c1", "code", "", "synthetic:mine"),
        ("m1", "math", "", "synthetic:mine"),
    ]
    assert docs[0].metadata["tests"] == "assert x == 1" and docs[1].metadata["answer"] == "2"


def humaneval_style(path, fields: dict) -> FileGenerator:
    """A file generator reading HumanEval's columns: the solution continues the prompt."""
    return FileGenerator(
        "he", paths=[str(path)], kind="code", id_field="task_id", prepend_prompt=True, fields=fields
    )


def test_dataset_columns_are_renamed_and_kind_supplied(tmp_path):
    path = tmp_path / "he.json"
    row = {
        "task_id": "HE/0",
        "prompt": "def f():\n",
        "canonical_solution": "    return 1\n",
        "test": "assert f() == 1",
    }
    path.write_text(json.dumps([row]))
    (doc,) = humaneval_style(path, {"solution": "canonical_solution", "tests": "test"}).generate()
    assert doc.id == "HE/0" and doc.kind == "code"
    assert doc.metadata["solution"] == "def f():\n    return 1\n"
    assert doc.metadata["tests"] == "assert f() == 1" and doc.metadata["prompt"] == "def f():\n"


def test_a_list_of_fields_is_joined_line_by_line(tmp_path):
    """MBPP keeps the imports its asserts need apart from them (`test_imports`, `test_list`)."""
    path = tmp_path / "mbpp.json"
    row = {
        "task_id": 7,
        "prompt": "Write a function to find the square root.",
        "code": "import math\ndef root(x):\n    return math.sqrt(x)",
        "test_imports": ["import math"],
        "test_list": ["assert math.isclose(root(4), 2)", "assert root(9) == 3"],
    }
    path.write_text(json.dumps([row]))
    fields = {"solution": "code", "tests": ["test_imports", "test_list", "absent"]}
    generator = FileGenerator("mbpp", paths=[str(path)], kind="code", id_field="task_id", fields=fields)
    (doc,) = generator.generate()
    assert doc.metadata["tests"] == "import math\nassert math.isclose(root(4), 2)\nassert root(9) == 3"
    assert "test_imports" not in doc.metadata and "test_list" not in doc.metadata
    absent = {"solution": "code", "tests": ["absent", "missing"]}
    (doc,) = FileGenerator(
        "mbpp", paths=[str(path)], kind="code", id_field="task_id", fields=absent
    ).generate()
    assert "tests" not in doc.metadata  # as when a single named field is absent
    for bad in ({"tests": []}, {"tests": ["a", 3]}, {"tests": 5}, {"prompt": ["a", "b"]}):
        with pytest.raises(ConfigError, match="fields"):
            FileGenerator("mbpp", paths=[str(path)], kind="code", fields=bad)


def test_a_bad_record_is_one_failure_and_the_records_after_it_are_read(tmp_path):
    """The first bad record stopped the generator: every record after it, in that file and the
    next, was in no output and not counted."""
    good = {"kind": "math", "problem": "What is 2+2?", "solution": "2+2 = 4\n#### 4", "answer": "4"}
    lines = [json.dumps(good | {"id": "a"}), "{not json", json.dumps({"id": "x", "solution": "x = 1"}),
             json.dumps(good | {"id": "b", "kind": "Math"}), json.dumps(good | {"id": "c"})]  # fmt: skip
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    more = tmp_path / "more.jsonl"
    more.write_text(json.dumps(good | {"id": "d"}) + "\n")
    records = list(FileGenerator("cands", paths=[str(path), str(more)]).generate())
    assert [r.id for r in records if isinstance(r, Document)] == ["a", "c", "d"]
    failures = [(r.id, r.source, r.error) for r in records if isinstance(r, Failure)]
    assert failures == [
        (f"{path}:2", "synthetic:cands", "MalformedJson"),
        ("x", "synthetic:cands", "MissingKind"),
        ("b", "synthetic:cands", "BadKind"),
    ]
    with pytest.raises(ConfigError, match="kind"):
        FileGenerator("file", paths=[str(path)], kind="poetry")
    with pytest.raises(ConfigError, match="paths"):
        FileGenerator("file")
    # before, these loaded and the run ended with one failed record
    with pytest.raises(ConfigError, match="paths: .*no input file matches"):
        FileGenerator("file", paths=[str(tmp_path / "none" / "*.jsonl")])
    with pytest.raises(ConfigError, match="format: 'nope' is not one of"):
        FileGenerator("file", paths=[str(path)], format="nope")


def test_a_record_with_its_own_kind_keeps_its_prompt_when_the_generator_has_a_kind(tmp_path):
    """With `kind` set, the prompt (code) or problem (math) of a record carrying its own `kind`
    was read as its text and dropped: code kept without its prompt, math failed 'needs a problem'."""
    code_path, math_path = tmp_path / "code.jsonl", tmp_path / "math.jsonl"
    code = {"id": "c1", "kind": "code", "question": "Add.", "solution": "x = 1", "tests": "assert x == 1"}
    math = {"id": "m1", "kind": "math", "problem": "1+1?", "solution": "#### 2", "answer": "2"}
    code_path.write_text(json.dumps(code) + "\n")
    math_path.write_text(json.dumps(math) + "\n")
    (code_doc,) = FileGenerator(
        "c", paths=[str(code_path)], kind="code", fields={"prompt": "question"}
    ).generate()
    (math_doc,) = FileGenerator("m", paths=[str(math_path)], kind="math").generate()
    assert code_doc.metadata["prompt"] == "Add." and "question" not in code_doc.metadata
    assert math_doc.metadata["problem"] == "1+1?"


def test_prepend_prompt_leaves_a_missing_solution_missing(tmp_path):
    """A null solution became the prompt + "None", a missing one the prompt alone: both were run
    as programs, not rejected `no_solution`."""
    path = tmp_path / "he.jsonl"
    rows = [
        {"task_id": "null", "prompt": "def f():\n", "canonical_solution": None},
        {"task_id": "none", "prompt": "def f():\n"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    null, missing = humaneval_style(path, {"solution": "canonical_solution"}).generate()
    assert null.metadata["solution"] is None and "solution" not in missing.metadata
