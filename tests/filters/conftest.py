"""Shared texts for the filter tests."""

import pytest

GOOD_TEXT = (
    "The history of the city begins with a small fishing village on the northern bank of the river.\n"
    "Over the following centuries, traders from distant lands arrived with spices, cloth and new ideas.\n"
    "Merchants built warehouses near the harbour, and the population grew quickly as work became plentiful.\n"
    "During the industrial period, factories replaced many of the old workshops that had lined the streets.\n"
    "Today the old town attracts visitors who come to see its markets, museums and narrow stone bridges.\n"
    "Local historians continue to study the archives in order to understand how ordinary families lived."
)

EDGE_TEXTS = {
    "empty": "",
    "one_word": "hello",
    "whitespace": " \n\t \r\n  ",
    "punctuation": "!!! ... ??? --- ;;; ,,, ###",
    "long_line": "word " * 30_000,
    "non_latin": "这是一个关于城市历史的长篇文章。" * 40,
    "windows_newlines": GOOD_TEXT.replace("\n", "\r\n"),
}


@pytest.fixture
def good_text() -> str:
    return GOOD_TEXT
