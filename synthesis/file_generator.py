"""`file`: synthesis candidates read from any supported input (JSONL, JSON, Parquet, compressed...).

A record the reader cannot turn into a candidate (bad JSON, no `kind` and no `kind` parameter,
missing prompt) is a failure naming the record, and the records after it are read on, as an
`[input]` file's are: a broken candidate file is never half-read silently.
"""

from __future__ import annotations

from collections.abc import Iterator

from pipeline.document import Document, Failure, Record
from pipeline.readers import FORMATS, InputConfig, InputError, expand_paths, plan_splits, read_split
from pipeline.stages import ConfigError, Generator, Param, register_generator

KINDS = ("code", "math")
PROMPT_FIELD = {"code": "prompt", "math": "problem"}


def read_records(
    paths: list[str], source: str, text_field: str, id_field: str, fmt: str = "", need_kind: bool = False
) -> Iterator[Document | Failure]:
    """Every record of the files: a Document, or a Failure from `source` (the generator) for one
    that cannot be read."""
    config = InputConfig(tuple(paths), text_field=text_field, id_field=id_field, format=fmt)
    for path in expand_paths(config.paths):
        for split in plan_splits(path, config):
            for record in read_split(split, config):
                if not isinstance(record, Failure):
                    yield record
                elif record.error == "MissingText" and need_kind:
                    why = (
                        'the record has no kind; give it one, or set the generator\'s kind = "code" or "math"'
                    )
                    yield Failure(record.id, source, record.stage, "MissingKind", why)
                else:
                    yield Failure(record.id, source, record.stage, record.error, record.message)


def check_paths(param: str, paths: list[str]) -> None:
    """ConfigError unless every glob names a file: a missing file stops the recipe at load, not the
    run after its other inputs were read."""
    try:
        expand_paths(paths)
    except InputError as error:
        raise ConfigError(f"{param}: {error}") from None


@register_generator("file")
class FileGenerator(Generator):
    """Candidates from files; `fields` renames dataset columns to candidate fields (e.g. HumanEval's `test`)."""

    params = {
        "paths": Param(list[str], [], "globs of candidate files (any format the readers support)"),
        "kind": Param(
            str, "", "kind for records without one (`code` or `math`); empty: every record has `kind`"
        ),
        "id_field": Param(str, "id", "record field holding the id"),
        "format": Param(
            str,
            "",
            "input format when the extension does not say (`jsonl`, `json`, `parquet`)",
            choices=("", *FORMATS),
        ),
        "prepend_prompt": Param(
            bool, False, "the solution continues the prompt (HumanEval): run prompt + solution"
        ),
        "fields": Param(
            dict,
            {},
            'candidate field <- record field, e.g. {tests = "test", solution = "code"}; a list of '
            'fields is joined line by line (MBPP: tests = ["test_imports", "test_list"])',
        ),
    }

    def data_files(self) -> list[str]:
        return list(self.paths)

    def configure(self) -> None:
        if not self.paths:
            raise ConfigError("paths: the file generator needs at least one path")
        if self.kind not in ("",) + KINDS:
            raise ConfigError(f"kind: {self.kind!r} is not one of {list(KINDS)}")
        check_paths("paths", self.paths)
        for target, field in self.fields.items():
            names = field if isinstance(field, list) else [field]
            if not names or not all(isinstance(name, str) and name for name in names):
                raise ConfigError(
                    f"fields.{target}: give a record field name or a list of them, not {field!r}"
                )
            if isinstance(field, list) and target in PROMPT_FIELD.values():
                raise ConfigError(f"fields.{target}: the {target} comes from one record field, not a list")

    def generate(self) -> Iterator[Record]:
        # The reader needs a text field for records without `kind`: use the one that becomes the
        # prompt (code) or problem (math), and put its value back among the candidate's fields.
        lead = PROMPT_FIELD.get(self.kind, "")
        text_field = self.fields.get(lead, lead) or "\0"
        source = f"synthetic:{self.name}"
        records = read_records(self.paths, source, text_field, self.id_field, self.format, not self.kind)
        for record in records:
            yield record if isinstance(record, Failure) else self._candidate(record, text_field)

    def _candidate(self, doc: Document, text_field: str) -> Document:
        kind = doc.kind or self.kind
        metadata = dict(doc.metadata)
        if doc.kind is None or doc.text:  # the reader read the lead field as the record's text
            metadata[text_field] = doc.text
        for target, field in self.fields.items():
            if isinstance(field, list):
                parts = [metadata.pop(name) for name in field if name in metadata]
                if parts:  # as for one field: a record without any of them leaves the target unset
                    metadata[target] = "\n".join(_lines(parts))
            elif field in metadata:
                metadata[target] = metadata.pop(field)
        solution, prompt = metadata.get("solution"), metadata.get("prompt")
        if self.prepend_prompt and isinstance(solution, str) and solution.strip() and isinstance(prompt, str):
            metadata["solution"] = prompt + solution  # none: `no_solution` (or a wrong type) at verify
        metadata["origin"] = doc.source
        return Document(doc.id, "", source=f"synthetic:{self.name}", kind=kind, metadata=metadata)


def _lines(values: list) -> list[str]:
    """The values as lines: a list gives one line per item (MBPP's `test_list`), anything else one."""
    lines: list[str] = []
    for value in values:
        lines.extend(map(str, value) if isinstance(value, list) else [str(value)])
    return lines
