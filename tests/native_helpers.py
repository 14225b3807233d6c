"""Helpers shared by the native-extension tests: random mixed-script text and the fallback check."""

import importlib
import random
import sys

import pytest


def random_text(
    rng: random.Random, pieces: list[str], spaces: list[str], size: int, odd: float, odd_chars: int
) -> str:
    """`size` pieces, each followed by one of `spaces`; a fraction `odd` of them are 1 to
    `odd_chars` random code points from anywhere in Unicode (surrogates left out)."""
    parts = []
    for _ in range(size):
        if rng.random() < odd:
            parts.append(
                "".join(
                    chr(rng.choice((rng.randrange(1, 0xD800), rng.randrange(0xE000, 0x2FFFF))))
                    for _ in range(rng.randrange(1, odd_chars + 1))
                )
            )
        else:
            parts.append(rng.choice(pieces))
        parts.append(rng.choice(spaces))
    return "".join(parts)


def assert_falls_back_to_reference(monkeypatch, extension: str, load_native, reference) -> None:
    """With the extension `package.module` absent, `load_native()` warns and returns `reference`."""
    package, name = extension.rsplit(".", 1)
    monkeypatch.delattr(importlib.import_module(package), name)
    monkeypatch.setitem(sys.modules, extension, None)
    with pytest.warns(RuntimeWarning, match="not built"):
        assert load_native() is reference
