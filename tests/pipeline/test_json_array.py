"""One JSON array read an element at a time (`pipeline.json_array`): elements too large to hold
or nested too deeply to parse are passed over by their brackets and quotes."""

import gzip
import io
import json
import tracemalloc

import pytest

from pipeline import json_array
from tests.pipeline.test_readers import read_all


@pytest.mark.parametrize(
    "large",
    [
        {"id": "b", "text": "x" * (3 << 20)},
        {"id": "b", "text": 'q"uo\\te\\\\' * (1 << 19)},  # escapes across every read boundary
        {"id": "b", "nested": [[{"t": "]}"}] * 50] * 8_000},  # brackets inside strings
        "y" * (3 << 20),  # a string, not an object
    ],
)
def test_a_json_array_element_too_large_to_hold_is_one_failure_and_passed_over(tmp_path, monkeypatch, large):
    """An element was held whole however long: a 1 GiB one took 3.3 GiB of memory. Then it ended
    the file. Now it is passed over a read at a time and the elements after it are read."""
    monkeypatch.setattr(json_array, "MAX_ELEMENT_CHARS", 1 << 20)
    monkeypatch.setattr(json_array, "CHUNK", 1 << 16)
    elements = [{"id": "a", "text": "first"}, large, {"id": "c", "text": "c"}]
    path = tmp_path / "big.json.gz"
    path.write_bytes(gzip.compress(json.dumps(elements).encode()))
    first, failure, last = read_all(path)
    assert first.text == "first" and last.text == "c"
    assert (failure.id, failure.error) == (f"{path}:1", "RecordTooLarge")
    assert failure.message == "array element 1 is over 1 MiB, more than is held; passed over unread"
    unclosed = json.dumps(elements[:2])[:-3]
    path.write_bytes(gzip.compress(unclosed.encode()))
    first, failure = read_all(path)
    assert (failure.id, failure.error) == (f"{path}:1", "MalformedJson")
    assert failure.message.endswith(
        "an element too large to hold is never closed; the rest of the file is not read"
    )


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 8])
def test_an_element_too_large_to_hold_is_passed_over_whatever_the_read_boundaries(monkeypatch, chunk):
    monkeypatch.setattr(json_array, "MAX_ELEMENT_CHARS", 16)
    monkeypatch.setattr(json_array, "CHUNK", chunk)
    large = [
        'a\\"]}\\\\' * 5,  # escaped quotes and backslashes, brackets inside the string
        {"k": ["[", "{", ["]"], {"}": '"'}], "v": "\\\\\\"},
        [[[["x"]]], "]]]]", {"a": [1, 2, {"b": "}"}]}],
    ]
    elements = [1, *[item for value in large for item in (value, {"i": 2})]]
    found = [value for value, _ in json_array.JsonArray(io.BytesIO(json.dumps(elements).encode()))]
    assert found == [1, *[item for _ in large for item in (json_array.TOO_LARGE, {"i": 2})]]


def test_a_long_string_in_an_element_skipped_by_its_brackets_holds_about_its_text():
    """The string pattern kept a backtracking entry a character: a 20 MB string inside an element
    nested too deeply to parse took 1.8 GB and 13 CPU-s to skip."""
    text = ("[" + "[" * 2_000 + '"' + 'ab\\"' * 1_000_000 + '"' + "]" * 2_000 + ', {"id": "z"}]').encode()
    tracemalloc.start()
    try:
        found = [value for value, _ in json_array.JsonArray(io.BytesIO(text))]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert found == [json_array.TOO_DEEP, {"id": "z"}]
    assert peak < 10 * len(text)  # 4 MB of text: 12 MiB now, 365 MiB before
