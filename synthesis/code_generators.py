"""`code`: built-in Python tasks with a reference implementation and tests generated from it.

Each task family draws its parameters from a seeded RNG, so every task differs (divisors, shift,
window, base, step set, bracket pairs...). A task has an idiomatic `solution` and an independent,
simpler `_reference` (brute force or another algorithm). Its tests hold literal assertions whose
expected values were computed from the reference at generation time (edge cases + random inputs)
and a randomized differential test that, inside the sandbox, compares the candidate with the
reference on freshly drawn inputs. Deterministic by `seed` and `count`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass

from pipeline.stages import Param, register_generator
from synthesis.families import FamilyGenerator


@dataclass(frozen=True)
class Task:
    """One generated task: prompt, solution and the pieces its tests are built from."""

    family: str
    entry_point: str
    prompt: str
    solution: str
    reference: str  # defines `_reference`, same signature as the entry point
    random_input: str  # defines `_random_input(rng)` -> tuple of arguments
    edge_cases: tuple[tuple, ...]


def _sum_multiples(rng: random.Random) -> Task:
    a, b = rng.sample(range(2, 10), 2)
    return Task(
        "sum_multiples",
        "sum_multiples",
        f"Write a function `sum_multiples(n)` that returns the sum of all positive integers below `n` "
        f"that are divisible by {a} or by {b}. Return 0 when there are none.",
        "from math import lcm\n\n\n"
        "def sum_multiples(n):\n"
        "    def below(k):\n"
        "        m = (n - 1) // k\n"
        "        return k * m * (m + 1) // 2 if n > 0 else 0\n"
        f"    return below({a}) + below({b}) - below(lcm({a}, {b}))\n",
        f"def _reference(n):\n    return sum(i for i in range(1, max(n, 0)) if i % {a} == 0 or i % {b} == 0)\n",
        "def _random_input(rng):\n    return (rng.randint(-5, 3000),)\n",
        ((0,), (1,), (a,), (a + 1,), (b,), (a * b,), (a * b + 1,), (-3,)),
    )


def _caesar(rng: random.Random) -> Task:
    k = rng.randint(1, 25)
    return Task(
        "caesar",
        "caesar_shift",
        f"Write a function `caesar_shift(text)` that shifts every ASCII letter of `text` forward by {k} "
        "places in the alphabet, wrapping around from z to a and keeping upper and lower case; every "
        "other character is unchanged.",
        "import string\n\n"
        f"_LOWER = string.ascii_lowercase[{k}:] + string.ascii_lowercase[:{k}]\n"
        "_TABLE = str.maketrans(string.ascii_lowercase + string.ascii_uppercase, _LOWER + _LOWER.upper())\n\n\n"
        "def caesar_shift(text):\n"
        "    return text.translate(_TABLE)\n",
        "def _reference(text):\n"
        "    out = []\n"
        "    for ch in text:\n"
        "        if 'a' <= ch <= 'z':\n"
        f"            ch = chr((ord(ch) - 97 + {k}) % 26 + 97)\n"
        "        elif 'A' <= ch <= 'Z':\n"
        f"            ch = chr((ord(ch) - 65 + {k}) % 26 + 65)\n"
        "        out.append(ch)\n"
        "    return ''.join(out)\n",
        "def _random_input(rng):\n"
        "    alphabet = 'abcxyzABCXYZ 019!,.é'\n"
        "    return (''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))),)\n",
        (("",), ("abc",), ("xyz",), ("Hello, World!",), ("ZzAa 09",)),
    )


def _window_sum(rng: random.Random) -> Task:
    w = rng.randint(2, 5)
    return Task(
        "window_sum",
        "max_window_sum",
        f"Write a function `max_window_sum(xs)` that returns the largest sum of {w} consecutive elements "
        f"of the list of integers `xs`, or None when `xs` has fewer than {w} elements.",
        "def max_window_sum(xs):\n"
        f"    if len(xs) < {w}:\n"
        "        return None\n"
        f"    best = current = sum(xs[:{w}])\n"
        f"    for i in range({w}, len(xs)):\n"
        f"        current += xs[i] - xs[i - {w}]\n"
        "        best = max(best, current)\n"
        "    return best\n",
        "def _reference(xs):\n"
        f"    sums = [sum(xs[i:i + {w}]) for i in range(len(xs) - {w} + 1)]\n"
        "    return max(sums) if sums else None\n",
        "def _random_input(rng):\n    return ([rng.randint(-50, 50) for _ in range(rng.randint(0, 30))],)\n",
        (([],), ([1] * (w - 1),), (list(range(w)),), ([-5] * (w + 2),), ([3, -1, 4, -1, 5, -9, 2, 6],)),
    )


def _count_primes(rng: random.Random) -> Task:
    return Task(
        "count_primes",
        "count_primes",
        "Write a function `count_primes(lo, hi)` that returns how many prime numbers p satisfy lo <= p <= hi "
        "(0 when lo > hi).",
        "def count_primes(lo, hi):\n"
        "    if hi < 2 or lo > hi:\n"
        "        return 0\n"
        "    sieve = bytearray([1]) * (hi + 1)\n"
        "    sieve[0:2] = b'\\x00\\x00'\n"
        "    for p in range(2, int(hi**0.5) + 1):\n"
        "        if sieve[p]:\n"
        "            sieve[p * p :: p] = bytearray(len(range(p * p, hi + 1, p)))\n"
        "    return sum(sieve[max(lo, 0) :])\n",
        "def _reference(lo, hi):\n"
        "    def prime(n):\n"
        "        return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))\n"
        "    return sum(1 for n in range(lo, hi + 1) if prime(n))\n",
        "def _random_input(rng):\n"
        "    lo = rng.randint(-10, 500)\n"
        "    return (lo, lo + rng.randint(-5, 400))\n",
        ((0, 1), (2, 2), (-10, 10), (10, 2), (14, 16), (1, rng.randint(100, 1000))),
    )


def _run_length(rng: random.Random) -> Task:
    alphabet = "".join(rng.sample("abcdefgh", rng.randint(2, 4)))
    return Task(
        "run_length",
        "run_length_encode",
        "Write a function `run_length_encode(s)` that returns the run-length encoding of the string `s` as a "
        "list of (character, count) tuples, one per maximal run of equal characters, in order.",
        "from itertools import groupby\n\n\n"
        "def run_length_encode(s):\n"
        "    return [(ch, len(list(run))) for ch, run in groupby(s)]\n",
        "def _reference(s):\n"
        "    out = []\n"
        "    for ch in s:\n"
        "        if out and out[-1][0] == ch:\n"
        "            out[-1] = (ch, out[-1][1] + 1)\n"
        "        else:\n"
        "            out.append((ch, 1))\n"
        "    return out\n",
        "def _random_input(rng):\n"
        f"    return (''.join(rng.choice({alphabet!r}) for _ in range(rng.randint(0, 30))),)\n",
        (("",), ("a",), (alphabet,), (alphabet[0] * 5 + alphabet[-1] * 2,)),
    )


def _stairs(rng: random.Random) -> Task:
    steps = sorted(rng.sample(range(1, 6), rng.randint(2, 3)))
    return Task(
        "stairs",
        "count_ways",
        f"Write a function `count_ways(n)` that returns the number of ordered ways to climb exactly `n` stairs "
        f"when each move climbs one of {steps} stairs, modulo 1_000_000_007 (count_ways(0) is 1).",
        "def count_ways(n):\n"
        "    if n < 0:\n"
        "        return 0\n"
        "    ways = [1] + [0] * n\n"
        "    for i in range(1, n + 1):\n"
        f"        ways[i] = sum(ways[i - s] for s in {steps} if s <= i) % 1_000_000_007\n"
        "    return ways[n]\n",
        "from functools import lru_cache\n\n\n"
        "@lru_cache(maxsize=None)\n"
        "def _reference(n):\n"
        "    if n < 0:\n"
        "        return 0\n"
        "    if n == 0:\n"
        "        return 1\n"
        f"    return sum(_reference(n - s) for s in {steps}) % 1_000_000_007\n",
        "def _random_input(rng):\n    return (rng.randint(0, 300),)\n",
        ((0,), (1,), (2,), (5,), (steps[-1],), (-1,)),
    )


def _digit_sort(rng: random.Random) -> Task:
    base = rng.randint(2, 10)
    return Task(
        "digit_sort",
        "sort_by_digit_sum",
        f"Write a function `sort_by_digit_sum(xs)` that returns the non-negative integers of `xs` sorted by the "
        f"sum of their digits in base {base}, ties broken by the smaller number first.",
        "def sort_by_digit_sum(xs):\n"
        "    def digit_sum(n):\n"
        "        total = 0\n"
        "        while n:\n"
        f"            n, digit = divmod(n, {base})\n"
        "            total += digit\n"
        "        return total\n"
        "    return sorted(xs, key=lambda n: (digit_sum(n), n))\n",
        "def _reference(xs):\n"
        "    def digits(n):\n"
        "        out = []\n"
        "        while n > 0:\n"
        f"            out.append(n % {base})\n"
        f"            n //= {base}\n"
        "        return out\n"
        "    rest = list(xs)\n"
        "    result = []\n"
        "    while rest:\n"
        "        best = rest[0]\n"
        "        for n in rest[1:]:\n"
        "            if (sum(digits(n)), n) < (sum(digits(best)), best):\n"
        "                best = n\n"
        "        rest.remove(best)\n"
        "        result.append(best)\n"
        "    return result\n",
        "def _random_input(rng):\n    return ([rng.randint(0, 5000) for _ in range(rng.randint(0, 25))],)\n",
        (([],), ([0],), ([base, 1, 0],), ([10, 100, 1000, 1],), ([7, 7, 7],)),
    )


def _brackets(rng: random.Random) -> Task:
    pairs = "".join(rng.sample(["()", "[]", "{}", "<>"], rng.randint(2, 3)))
    return Task(
        "brackets",
        "is_balanced",
        f"Write a function `is_balanced(s)` that returns True when the brackets {' '.join(pairs[i : i + 2] for i in range(0, len(pairs), 2))} "
        "in the string `s` are balanced and properly nested, and False otherwise; all other characters are ignored.",
        "def is_balanced(s):\n"
        f"    closing = {{{', '.join(f'{pairs[i + 1]!r}: {pairs[i]!r}' for i in range(0, len(pairs), 2))}}}\n"
        "    opening = set(closing.values())\n"
        "    stack = []\n"
        "    for ch in s:\n"
        "        if ch in opening:\n"
        "            stack.append(ch)\n"
        "        elif ch in closing:\n"
        "            if not stack or stack.pop() != closing[ch]:\n"
        "                return False\n"
        "    return not stack\n",
        "def _reference(s):\n"
        f"    kept = ''.join(ch for ch in s if ch in {pairs!r})\n"
        "    while True:\n"
        "        shorter = kept\n"
        f"        for pair in {[pairs[i : i + 2] for i in range(0, len(pairs), 2)]!r}:\n"
        "            shorter = shorter.replace(pair, '')\n"
        "        if shorter == kept:\n"
        "            return kept == ''\n"
        "        kept = shorter\n",
        "def _random_input(rng):\n"
        f"    return (''.join(rng.choice({pairs + 'ab'!r}) for _ in range(rng.randint(0, 16))),)\n",
        (("",), (pairs,), (pairs[0],), (pairs[1] + pairs[0],), (pairs[0] + pairs[2] + pairs[1] + pairs[3],)),
    )


FAMILIES: dict[str, Callable[[random.Random], Task]] = {
    "sum_multiples": _sum_multiples,
    "caesar": _caesar,
    "window_sum": _window_sum,
    "count_primes": _count_primes,
    "run_length": _run_length,
    "stairs": _stairs,
    "digit_sort": _digit_sort,
    "brackets": _brackets,
}


def _expected(task: Task, cases: list[tuple]) -> list:
    """Reference outputs for the literal assertions (our own code, run here at generation time)."""
    namespace: dict = {}
    exec(task.reference, namespace)
    return [namespace["_reference"](*copy.deepcopy(args)) for args in cases]


def build_tests(task: Task, rng: random.Random, literal_cases: int, differential_cases: int) -> str:
    """Literal assertions from the reference, then a seeded differential test against it."""
    namespace: dict = {}
    exec(task.random_input, namespace)
    cases = list(task.edge_cases) + [namespace["_random_input"](rng) for _ in range(literal_cases)]
    lines = [
        task.reference,
        task.random_input,
        "",
        "def check(candidate):",
        "    import copy",
        "    import random",
        "",
    ]
    for args, want in zip(cases, _expected(task, cases)):
        lines.append(f"    assert candidate(*copy.deepcopy({args!r})) == {want!r}")
    lines += [
        f"    rng = random.Random({rng.randrange(1 << 32)})",
        f"    for _ in range({differential_cases}):",
        "        args = _random_input(rng)",
        "        assert candidate(*copy.deepcopy(args)) == _reference(*args), args",
    ]
    return "\n".join(lines) + "\n"


@register_generator("code")
class CodeGenerator(FamilyGenerator):
    """Built-in Python tasks (8 families) with reference-derived and randomized differential tests."""

    params = {
        "count": Param(int, 100, "number of tasks", min=0),
        "seed": Param(int, 0, "seed; the same seed and count give the same tasks"),
        "families": Param(list[str], sorted(FAMILIES), "task families to draw from (round robin)"),
        "literal_cases": Param(int, 8, "random literal assertions per task, besides the edge cases", min=0),
        "differential_cases": Param(
            int, 50, "random inputs compared with the reference inside the sandbox", min=0
        ),
    }

    FAMILIES = FAMILIES
    kind = "code"

    def metadata(self, family: str, task: Task, rng: random.Random) -> dict:
        return {
            "language": "python",
            "family": family,
            "prompt": task.prompt,
            "solution": task.solution,
            "tests": build_tests(task, rng, self.literal_cases, self.differential_cases),
            "entry_point": task.entry_point,
        }
