"""A parsed input record (a JSON object or a Parquet row) as a Document: its fields by name or
by dotted path into nested objects, its id as text, the rest as metadata."""

from __future__ import annotations

import json
import math
import re
from typing import TYPE_CHECKING, Any

from pipeline.document import READ_STAGE, Document, Failure, Record, one_line
from pipeline.urls import normalize_url

if TYPE_CHECKING:
    from pipeline.readers import InputConfig

CANDIDATE_KINDS = ("code", "math")
# The fields of a synthesis candidate that hold text (DESIGN.md), and those it cannot do without.
CANDIDATE_TEXT_FIELDS = {
    "code": ("prompt", "solution", "tests", "entry_point", "language"),
    "math": ("problem", "solution", "answer"),
}
CANDIDATE_NEEDS = {"code": (), "math": ("problem",)}  # a missing solution is verify's to reject
MAX_TEXT_CHARS = 64 << 20  # a longer text is RecordTooLarge, as a JSON Lines line over 64 MiB is
# A record nested deeper is a failure: Python's JSON parser reads about 1,000 levels, but a value
# nested about 500 deep cannot be pickled between Beam steps, which failed the whole run.
MAX_NESTING = 100
DEEPER = f"JSON nested more than {MAX_NESTING} levels deep"
SURROGATE = re.compile(r"[\ud800-\udfff]")  # half of a pair: not valid Unicode, cannot be written as UTF-8


def record_to_document(record: Any, source: str, position: str, config: InputConfig) -> Record:
    """Map one parsed record to a Document using the `[input]` field names. A record the mapping
    raises on (a value no rule foresaw: a score of 10^400) is a failure of its own: before, the
    error ended the reading of its file, and the records after it were never read or counted."""
    try:
        return _mapped(record, source, position, config)
    except Exception as error:
        where = f"{source}:{position}"
        return Failure(
            record_id(record, config.id_field, where),
            source,
            READ_STAGE,
            type(error).__name__,
            one_line(error),
        )


def _mapped(record: Any, source: str, position: str, config: InputConfig) -> Record:
    where = f"{source}:{position}"
    if not isinstance(record, dict):
        return Failure(
            where, source, READ_STAGE, "NotAnObject", f"expected a JSON object, got {type(record).__name__}"
        )
    doc_id = record_id(record, config.id_field, where)
    kind = record.get("kind")
    text_field = config.html_field or config.text_field
    text = field_value(record, text_field)
    own_kind = kind is not None and kind not in CANDIDATE_KINDS
    if own_kind and not isinstance(text, str):
        return Failure(
            doc_id,
            source,
            READ_STAGE,
            "BadKind",
            f"kind={kind!r} and no {text_field!r} text; a synthesis candidate's kind is one of "
            f"{CANDIDATE_KINDS}",
        )
    if own_kind:  # a document's own `kind` field ("news", "blog"): carried in metadata
        kind = None
    if kind is None:
        if text is None:
            fields = ", ".join(sorted(map(str, record))) or "none"
            absent = f"no {text_field!r} field; fields found: {fields}"
            why = f"{text_field!r} is null" if has_field(record, text_field) else absent
            return Failure(doc_id, source, READ_STAGE, "MissingText", why)
        if isinstance(text, bytes) and not config.html_field:  # a Parquet binary column
            try:
                text = text.decode("utf-8")
            except UnicodeDecodeError as error:
                return Failure(doc_id, source, READ_STAGE, "InvalidUtf8", one_line(error))
        if not isinstance(text, (bytes, str) if config.html_field else str):
            return Failure(
                doc_id, source, READ_STAGE, "NonStringText", f"{text_field!r} is {type(text).__name__}"
            )
        if len(text) > MAX_TEXT_CHARS:  # a Parquet value: JSON Lines lines are limited before parsing
            why = f"{text_field!r} holds {len(text):,} characters, more than the {MAX_TEXT_CHARS:,} read as one document"
            return Failure(doc_id, source, READ_STAGE, "RecordTooLarge", why)
    elif not isinstance(text, str):
        text = ""
    url = field_value(record, config.url_field)
    restored = restore_output_columns(record)  # a gristmill output folder read back as input
    used = [text_field, config.id_field]
    if url is None or isinstance(url, str):  # any other value is not a URL: kept in metadata
        used.append(config.url_field)
    skip = set(restored)
    rest = record
    for name in used:
        if name in record or "." not in name:
            skip.add(name)
        else:  # a dotted path: the object holding it loses that field
            rest = without_field(rest, name)
    if not own_kind:
        skip.add("kind")
    if is_output_row(record):  # and its empty output columns are none of the document's metadata
        skip.update(RECOMPUTED_COLUMNS)
        skip.update(column for column in OUTPUT_COLUMNS if record.get(column) is None)
    if isinstance(rest.get("metadata"), dict):  # a record's own metadata object (Dolma's), unpacked
        restored.setdefault("metadata", rest["metadata"])
        skip.add("metadata")
    metadata = {**restored.pop("metadata", {}), **{k: v for k, v in rest.items() if k not in skip}}
    doc = Document(
        id=doc_id,
        text="" if config.html_field and kind is None else text,
        source=source,
        url=normalize_url(url),
        kind=kind,
        metadata=metadata,
        **restored,
    )
    if config.html_field and kind is None:
        from pipeline.warc import page_record

        return page_record(doc, text, "", config.html_extractor)
    return doc


def candidate_problem(doc: Document) -> str:
    """Why a synthesis candidate cannot be verified or rendered (a text field holding a number, a
    list or null where it needs text: `candidate_dedup` and `verify` read them as text), or ""."""
    fields = doc.metadata
    for name in CANDIDATE_TEXT_FIELDS[doc.kind]:
        value = fields.get(name)
        if value is None or isinstance(value, str):
            continue
        if name == "tests" and isinstance(value, list) and all(isinstance(line, str) for line in value):
            continue  # one test per line
        if name == "answer" and isinstance(value, (int, float)) and not isinstance(value, bool):
            continue  # 72: read as "72"
        return f"{name!r} is {type(value).__name__}, not text"
    for name in CANDIDATE_NEEDS[doc.kind]:
        if not fields.get(name):
            return f"a {doc.kind} candidate needs a {name!r} (its training text begins with it)"
    return ""


def field_value(record: dict[str, Any], name: str) -> Any:
    """A record's field, or where it has no field of that name, the value a dotted path names in
    its nested objects (`metadata.url`); None when there is none."""
    if name in record or "." not in name:
        return record.get(name)
    holder, key = _path_holder(record, name)
    return holder.get(key) if isinstance(holder, dict) else None


def has_field(record: dict[str, Any], name: str) -> bool:
    """Whether the record holds the field `field_value` reads, null or not."""
    if name in record or "." not in name:
        return name in record
    holder, key = _path_holder(record, name)
    return isinstance(holder, dict) and key in holder


def _path_holder(record: dict[str, Any], name: str) -> tuple[Any, str]:
    """The object that a dotted path's last key is looked up in (None where the path breaks off
    earlier), and that key."""
    *path, key = name.split(".")
    holder: Any = record
    for part in path:
        holder = holder.get(part) if isinstance(holder, dict) else None
    return holder, key


def without_field(record: dict[str, Any], name: str) -> dict[str, Any]:
    """The record less the field `field_value` reads (the objects on a dotted path copied, an
    object left empty dropped)."""
    head, _, tail = name.partition(".")
    inner = record.get(head)
    if name in record or not tail or not isinstance(inner, dict):
        return {k: v for k, v in record.items() if k != name}
    inner = without_field(inner, tail)
    return {k: v for k, v in record.items() if k != head} | ({head: inner} if inner else {})


def record_id(record: Any, id_field: str, where: str) -> str:
    """A record's id as text, else `where` (the record has none, or one holding half a surrogate
    pair, which cannot be written): a document's id, and a failure's of a record read but unusable."""
    if isinstance(record, dict):
        raw_id = id_text(field_value(record, id_field))
        if raw_id and (raw_id.isascii() or not SURROGATE.search(raw_id)):  # isascii: 12 ns, the search 100
            return raw_id
    return where


def id_text(raw_id: Any) -> str:
    """A record's id as text: lists and objects as JSON, bytes as UTF-8; "" when it has none
    (missing, null, empty or NaN, as pandas writes a missing number)."""
    if raw_id is None or (isinstance(raw_id, float) and math.isnan(raw_id)):
        return ""
    if isinstance(raw_id, bytes):
        return raw_id.decode("utf-8", "backslashreplace")
    if isinstance(raw_id, (dict, list, tuple)):
        return json.dumps(raw_id, ensure_ascii=False, sort_keys=True, default=str)
    return str(raw_id)


OUTPUT_COLUMNS = ("scores", "language", "language_score", "metadata")
# Kept columns that the run reading an output back computes again (its text may change): not metadata.
RECOMPUTED_COLUMNS = ("n_tokens", "token_ids")


def is_output_row(record: dict[str, Any]) -> bool:
    """Whether a record read as input is a gristmill output row: it has all of `OUTPUT_COLUMNS`
    (a code candidate's own `language` field alone does not make one)."""
    return all(name in record for name in OUTPUT_COLUMNS)


def restore_output_columns(record: dict[str, Any]) -> dict[str, Any]:
    """The document fields of a gristmill output row read back as input (the inverse of
    `pipeline.writers._document_columns`): scores, language and language_score as such, metadata
    unpacked (kept as the string when nested too deep); {} for other records."""
    if not is_output_row(record):
        return {}
    restored: dict[str, Any] = {}
    scores = record.get("scores")
    if isinstance(scores, list) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in scores):
        scores = dict(scores)  # outputs written with a map column
    if isinstance(scores, dict):
        scores = {k: v for k, v in scores.items() if v is not None}  # struct fields a doc lacks
        if all(isinstance(v, (int, float)) for v in scores.values()):
            restored["scores"] = {str(k): float(v) for k, v in scores.items()}
    if isinstance(record.get("language"), str):
        restored["language"] = record["language"]
    if isinstance(record.get("language_score"), (int, float)):
        restored["language_score"] = float(record["language_score"])
    metadata = record.get("metadata")
    if isinstance(metadata, str) and metadata.startswith("{"):
        try:
            unpacked = json.loads(metadata)
        except (ValueError, RecursionError):
            unpacked = None
        if unpacked is not None and not too_deep(metadata, unpacked):  # else kept as the string
            restored["metadata"] = unpacked
    elif isinstance(metadata, dict):
        restored["metadata"] = metadata
    return restored


def too_deep(text: str, value: Any) -> bool:
    """Whether `value`, parsed from `text`, holds lists or objects more than MAX_NESTING deep (the
    brackets of `text` are counted first: only a text with that many is walked)."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return False
    level = [(value, 0)]  # the record itself; each list or object inside it one level down
    while level:
        item, depth = level.pop()
        if depth > MAX_NESTING:
            return True
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        level.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False
