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


def _ask(rng: random.Random, signature: str) -> str:
    """The opening of a prompt, in one of a few phrasings."""
    return (
        rng.choice(("Write a function", "Implement a function", "Define a Python function"))
        + f" `{signature}`"
    )


def _sum_multiples(rng: random.Random) -> Task:
    a, b = rng.sample(range(2, 13), 2)
    name = rng.choice(("sum_multiples", "sum_of_multiples", "multiples_total"))
    return Task(
        "sum_multiples",
        name,
        f"{_ask(rng, f'{name}(n)')} that returns the sum of all positive integers below `n` "
        f"that are divisible by {a} or by {b}. Return 0 when there are none.",
        "from math import lcm\n\n\n"
        f"def {name}(n):\n"
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
    forward = rng.random() < 0.5
    shift = k if forward else 26 - k
    name = rng.choice(("caesar_shift", "rotate_letters", "shift_letters"))
    direction = "forward" if forward else "backward"
    wrap = "from z to a" if forward else "from a to z"
    return Task(
        "caesar",
        name,
        f"{_ask(rng, f'{name}(text)')} that shifts every ASCII letter of `text` {direction} by {k} "
        f"places in the alphabet, wrapping around {wrap} and keeping upper and lower case; every "
        "other character is unchanged.",
        "import string\n\n"
        f"_LOWER = string.ascii_lowercase[{shift}:] + string.ascii_lowercase[:{shift}]\n"
        "_TABLE = str.maketrans(string.ascii_lowercase + string.ascii_uppercase, _LOWER + _LOWER.upper())\n\n\n"
        f"def {name}(text):\n"
        "    return text.translate(_TABLE)\n",
        "def _reference(text):\n"
        "    out = []\n"
        "    for ch in text:\n"
        "        if 'a' <= ch <= 'z':\n"
        f"            ch = chr((ord(ch) - 97 {'+' if forward else '-'} {k}) % 26 + 97)\n"
        "        elif 'A' <= ch <= 'Z':\n"
        f"            ch = chr((ord(ch) - 65 {'+' if forward else '-'} {k}) % 26 + 65)\n"
        "        out.append(ch)\n"
        "    return ''.join(out)\n",
        "def _random_input(rng):\n"
        "    alphabet = 'abcxyzABCXYZ 019!,.é'\n"
        "    return (''.join(rng.choice(alphabet) for _ in range(rng.randint(0, 40))),)\n",
        (("",), ("abc",), ("xyz",), ("Hello, World!",), ("ZzAa 09",)),
    )


def _window_sum(rng: random.Random) -> Task:
    w = rng.randint(2, 8)
    best, word = rng.choice((("max", "largest"), ("min", "smallest")))
    name = rng.choice((f"{best}_window_sum", f"{best}_run_sum", f"{best}_consecutive_sum"))
    return Task(
        "window_sum",
        name,
        f"{_ask(rng, f'{name}(xs)')} that returns the {word} sum of {w} consecutive elements "
        f"of the list of integers `xs`, or None when `xs` has fewer than {w} elements.",
        f"def {name}(xs):\n"
        f"    if len(xs) < {w}:\n"
        "        return None\n"
        f"    best = current = sum(xs[:{w}])\n"
        f"    for i in range({w}, len(xs)):\n"
        f"        current += xs[i] - xs[i - {w}]\n"
        f"        best = {best}(best, current)\n"
        "    return best\n",
        "def _reference(xs):\n"
        f"    sums = [sum(xs[i:i + {w}]) for i in range(len(xs) - {w} + 1)]\n"
        f"    return {best}(sums) if sums else None\n",
        "def _random_input(rng):\n    return ([rng.randint(-50, 50) for _ in range(rng.randint(0, 30))],)\n",
        (([],), ([1] * (w - 1),), (list(range(w)),), ([-5] * (w + 2),), ([3, -1, 4, -1, 5, -9, 2, 6],)),
    )


def _count_primes(rng: random.Random) -> Task:
    gap = rng.choice((0, 2, 4, 6))  # 0: plain primes; else primes p with p + gap prime (twin, cousin, sexy)
    name = rng.choice(("count_primes", "prime_count", "primes_between"))
    if gap:
        name = rng.choice((f"count_prime_pairs_{gap}", f"prime_pairs_gap_{gap}"))
        what = f"how many primes p with lo <= p <= hi have p + {gap} prime as well"
        test = f"sieve[p] and sieve[p + {gap}]"
    else:
        what = "how many prime numbers p satisfy lo <= p <= hi"
        test = "sieve[p]"
    return Task(
        "count_primes",
        name,
        f"{_ask(rng, f'{name}(lo, hi)')} that returns {what} (0 when lo > hi).",
        f"def {name}(lo, hi):\n"
        "    if hi < 2 or lo > hi:\n"
        "        return 0\n"
        f"    top = hi + {gap}\n"
        "    sieve = bytearray([1]) * (top + 1)\n"
        "    sieve[0:2] = b'\\x00\\x00'\n"
        "    for p in range(2, int(top**0.5) + 1):\n"
        "        if sieve[p]:\n"
        "            sieve[p * p :: p] = bytearray(len(range(p * p, top + 1, p)))\n"
        f"    return sum(1 for p in range(max(lo, 2), hi + 1) if {test})\n",
        "def _reference(lo, hi):\n"
        "    def prime(n):\n"
        "        return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))\n"
        f"    return sum(1 for n in range(lo, hi + 1) if prime(n) and prime(n + {gap}))\n",
        "def _random_input(rng):\n"
        "    lo = rng.randint(-10, 500)\n"
        "    return (lo, lo + rng.randint(-5, 400))\n",
        ((0, 1), (2, 2), (-10, 10), (10, 2), (14, 16), (1, rng.randint(100, 1000))),
    )


# Output shapes of run-length encoding: how a solution and the reference build their result.
RUN_LENGTH_SHAPES = {
    "pairs": (
        "a list of (character, count) tuples",
        "[(ch, len(list(run))) for ch, run in groupby(s)]",
        "out",
    ),
    "counts_first": (
        "a list of (count, character) tuples",
        "[(len(list(run)), ch) for ch, run in groupby(s)]",
        "[(n, ch) for ch, n in out]",
    ),
    "string": (
        "a string of each character followed by its count (`'aaab'` gives `'a3b1'`)",
        "''.join(f'{ch}{len(list(run))}' for ch, run in groupby(s))",
        "''.join(ch + str(n) for ch, n in out)",
    ),
}


def _run_length(rng: random.Random) -> Task:
    alphabet = "".join(rng.sample("abcdefgh", rng.randint(2, 4)))
    shape, solution, reference = RUN_LENGTH_SHAPES[rng.choice(sorted(RUN_LENGTH_SHAPES))]
    name = rng.choice(("run_length_encode", "rle", "encode_runs"))
    return Task(
        "run_length",
        name,
        f"{_ask(rng, f'{name}(s)')} that returns the run-length encoding of the string `s` as {shape}, "
        f"one entry per maximal run of equal characters, in order. The strings use the letters {alphabet!r}.",
        f"from itertools import groupby\n\n\ndef {name}(s):\n    return {solution}\n",
        "def _reference(s):\n"
        "    out = []\n"
        "    for ch in s:\n"
        "        if out and out[-1][0] == ch:\n"
        "            out[-1] = (ch, out[-1][1] + 1)\n"
        "        else:\n"
        "            out.append((ch, 1))\n"
        f"    return {reference}\n",
        "def _random_input(rng):\n"
        f"    return (''.join(rng.choice({alphabet!r}) for _ in range(rng.randint(0, 30))),)\n",
        (("",), ("a",), (alphabet,), (alphabet[0] * 5 + alphabet[-1] * 2,)),
    )


def _stairs(rng: random.Random) -> Task:
    steps = sorted(rng.sample(range(1, 7), rng.randint(2, 3)))
    modulus = rng.choice(("1_000_000_007", "998_244_353"))
    name = rng.choice(("count_ways", "climb_ways", "stair_paths"))
    return Task(
        "stairs",
        name,
        f"{_ask(rng, f'{name}(n)')} that returns the number of ordered ways to climb exactly `n` stairs "
        f"when each move climbs one of {steps} stairs, modulo {modulus} ({name}(0) is 1).",
        f"def {name}(n):\n"
        "    if n < 0:\n"
        "        return 0\n"
        "    ways = [1] + [0] * n\n"
        "    for i in range(1, n + 1):\n"
        f"        ways[i] = sum(ways[i - s] for s in {steps} if s <= i) % {modulus}\n"
        "    return ways[n]\n",
        "from functools import lru_cache\n\n\n"
        "@lru_cache(maxsize=None)\n"
        "def _reference(n):\n"
        "    if n < 0:\n"
        "        return 0\n"
        "    if n == 0:\n"
        "        return 1\n"
        f"    return sum(_reference(n - s) for s in {steps}) % {modulus}\n",
        "def _random_input(rng):\n    return (rng.randint(0, 300),)\n",
        ((0,), (1,), (2,), (5,), (steps[-1],), (-1,)),
    )


def _digit_sort(rng: random.Random) -> Task:
    base = rng.randint(2, 10)
    descending = rng.random() < 0.5
    sign = "-" if descending else ""
    order = "largest digit sum first" if descending else "smallest digit sum first"
    name = rng.choice(("sort_by_digit_sum", "order_by_digit_sum", "digit_sum_sort"))
    return Task(
        "digit_sort",
        name,
        f"{_ask(rng, f'{name}(xs)')} that returns the non-negative integers of `xs` sorted by the "
        f"sum of their digits in base {base}, {order}, ties broken by the smaller number first.",
        f"def {name}(xs):\n"
        "    def digit_sum(n):\n"
        "        total = 0\n"
        "        while n:\n"
        f"            n, digit = divmod(n, {base})\n"
        "            total += digit\n"
        "        return total\n"
        f"    return sorted(xs, key=lambda n: ({sign}digit_sum(n), n))\n",
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
        f"            if ({sign}sum(digits(n)), n) < ({sign}sum(digits(best)), best):\n"
        "                best = n\n"
        "        rest.remove(best)\n"
        "        result.append(best)\n"
        "    return result\n",
        "def _random_input(rng):\n    return ([rng.randint(0, 5000) for _ in range(rng.randint(0, 25))],)\n",
        (([],), ([0],), ([base, 1, 0],), ([10, 100, 1000, 1],), ([7, 7, 7],)),
    )


def _brackets(rng: random.Random) -> Task:
    pairs = "".join(rng.sample(["()", "[]", "{}", "<>"], rng.randint(2, 3)))
    name = rng.choice(("is_balanced", "balanced", "brackets_match"))
    return Task(
        "brackets",
        name,
        f"{_ask(rng, f'{name}(s)')} that returns True when the brackets {' '.join(pairs[i : i + 2] for i in range(0, len(pairs), 2))} "
        "in the string `s` are balanced and properly nested, and False otherwise; all other characters are ignored.",
        f"def {name}(s):\n"
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

    def identity(self, task: Task) -> str:
        return task.prompt + "\n" + task.solution

    def metadata(self, family: str, task: Task, rng: random.Random) -> dict:
        return {
            "language": "python",
            "family": family,
            "prompt": task.prompt,
            "solution": task.solution,
            "tests": build_tests(task, rng, self.literal_cases, self.differential_cases),
            "entry_point": task.entry_point,
        }
