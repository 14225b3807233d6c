"""The fields of a parsed input record (a JSON object or a Parquet row): by name or by dotted
path into nested objects, and ids as text."""

from __future__ import annotations

import json
import math
from typing import Any


def field_value(record: dict[str, Any], name: str) -> Any:
    """A record's field, or where it has no field of that name, the value a dotted path names in
    its nested objects (`metadata.url`); None when there is none."""
    value: Any = record
    for part in [name] if name in record else name.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def without_field(record: dict[str, Any], name: str) -> dict[str, Any]:
    """The record less the field `field_value` reads (the objects on a dotted path copied, an
    object left empty dropped)."""
    head, _, tail = name.partition(".")
    inner = record.get(head)
    if name in record or not tail or not isinstance(inner, dict):
        return {k: v for k, v in record.items() if k != name}
    inner = without_field(inner, tail)
    return {k: v for k, v in record.items() if k != head} | ({head: inner} if inner else {})


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
