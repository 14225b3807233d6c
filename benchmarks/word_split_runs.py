"""CPU time of the English word split on long whitespace-free runs (README's known issue).

    .venv/bin/python benchmarks/word_split_runs.py

Each run is split in a fresh process (the splitter remembers runs it has seen, per worker), and
the emoji run goes through the `gopher_repetition` stage whole.
"""

from __future__ import annotations

import subprocess
import sys

from common import ROOT

RUNS = {
    "'=' x 160,000": "'=' * 160_000",
    "'!?' x 80,000": "'!?' * 80_000",
    "'-' x 160,000": "'-' * 160_000",
    "'.' x 160,000": "'.' * 160_000",
    "'“”‘’—–' x 26,667": "'“”‘’—–' * 26_667",
    "random punctuation x 160,000": "''.join(random.Random(0).choices('!?;:,()[]<>{}\\'\"“”‘’—–…#*', k=160_000))",
}
SPLIT = """
import random
import time
from filters.text_analysis import split_words
text = {expression}
split_words("warm up")
start = time.process_time()
split_words(text)
print(time.process_time() - start, len(text))
"""
STAGE = """
import time
from pipeline.document import Document
from pipeline.stages import STAGES, load_builtin_stages
load_builtin_stages()
stage = STAGES["gopher_repetition"]("gopher_repetition")
stage.setup()
text = "\\U0001f600" * 750_000
start = time.process_time()
stage.check(Document(id="x", text=text, source="x"))
print(time.process_time() - start, len(text))
"""


def cpu_seconds(code: str) -> tuple[float, int]:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    seconds, length = done.stdout.split()
    return float(seconds), int(length)


def main() -> None:
    cases = {name: SPLIT.format(expression=expression) for name, expression in RUNS.items()}
    cases["emoji x 750,000 (gopher_repetition)"] = STAGE
    for name, code in cases.items():
        seconds, length = cpu_seconds(code)
        print(f"{name}: {seconds:.2f} CPU-s, {seconds / length * 1e6:.2f} us per character")


if __name__ == "__main__":
    main()
