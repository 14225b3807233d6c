"""A small but realistic training fixture.

Tiny, repetitive, perfectly separable files make fastText diverge (NaN), so the fixture uses real
prose with a real vocabulary: positives are docstrings of the Python standard library (technical
English), negatives are the kind of junk quality models must catch in web text: keyword-stuffed
word salad made from the same vocabulary, and prose swamped by spam, chat and boilerplate lines.
"""

import importlib
import inspect
import json
import random

import pytest

MODULES = (
    "argparse", "collections", "csv", "datetime", "decimal", "email.message", "fractions", "json",
    "logging", "pathlib", "re", "shutil", "statistics", "subprocess", "tarfile", "textwrap",
    "threading", "unittest", "urllib.parse", "zipfile",
)  # fmt: skip
GOOD = [
    "The council approved a new budget for the public library after a long debate on Tuesday.",
    "Researchers at the university found that the drug reduced symptoms in most of the patients.",
    "Historians believe the bridge was built in the fourteenth century by local stone masons.",
    "The report explains how rising temperatures affect the yield of wheat and other crops.",
    "Engineers tested the new turbine for several months before it was connected to the grid.",
    "Scientists measured the thickness of the ice sheet using radar mounted on an aircraft.",
]
BAD = [
    "CLICK HERE to win a FREE iPhone!!! limited offer, buy now and save 90% on pills",
    "lol idk wat ur talking about m8 brb",
    "Home | About us | Contact | Login | Register | Cart (0) | Privacy policy | Terms",
    "hot singles in your area want to meet you tonight, text YES to 80085 now",
    "Cheap viagra cialis online pharmacy no prescription best price guaranteed",
    "Copyright 2023 All rights reserved. Powered by WordPress. Back to top",
    "Share on Facebook Share on Twitter Pin it Email Print Subscribe to our newsletter",
    "BEST CASINO BONUS 200% deposit match free spins register today",
]


def stdlib_docstrings() -> list[str]:
    """Distinct docstrings of at least 300 characters from a fixed set of standard modules."""
    docs: list[str] = []
    for name in MODULES:
        module = importlib.import_module(name)
        for attr in sorted(dir(module)):
            doc = None if attr.startswith("_") else inspect.getdoc(getattr(module, attr))
            if doc and len(doc) >= 300 and doc not in docs:
                docs.append(doc)
    return docs


def junk(prose: list[str], rng: random.Random) -> str:
    """Word salad from a real docstring, or prose with spam/boilerplate lines mixed in."""
    words = rng.choice(prose).split()
    if rng.random() < 0.5:
        rng.shuffle(words)
        return " ".join(words[:120]) + " " + rng.choice(BAD)
    lines = [" ".join(words[i : i + 12]) for i in range(0, min(len(words), 48), 12)]
    return "\n".join(line for pair in zip(lines, rng.sample(BAD, len(lines))) for line in pair)


@pytest.fixture(scope="session")
def training_files(tmp_path_factory):
    """(positive.jsonl, negative.jsonl) with 100 documents each."""
    rng = random.Random(7)
    prose = stdlib_docstrings()
    positives = prose[:100]
    negatives = [junk(prose, rng) for _ in range(100)]
    folder = tmp_path_factory.mktemp("quality_fixture")
    paths = []
    for name, texts in (("positive", positives), ("negative", negatives)):
        path = folder / f"{name}.jsonl"
        path.write_text(
            "".join(json.dumps({"id": f"{name}-{i}", "text": t}) + "\n" for i, t in enumerate(texts))
        )
        paths.append(path)
    return tuple(paths)
