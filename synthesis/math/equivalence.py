"""Answer equivalence: strings, exact numbers, structures, closed forms, then sympy in a worker process."""

from __future__ import annotations

import io
import json
import keyword
import math
import os
import re
import resource
import select
import subprocess
import sys
import threading
import tokenize
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

from synthesis.math.answers import Answer, normalize_answer
from synthesis.math.latex import MAX_NUMBER_CHARS, NotArithmetic, delatex, functions_as_calls, matching_close
from synthesis.math.parse import evaluate_text
from synthesis.own_time import OwnClock

_CHOICE = re.compile(r"^\(?([A-Ea-e])\)?$")


def _split_top_level(s: str, sep: str = ",") -> list[str]:
    parts, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == sep and depth == 0:
            parts.append(s[start:i])
            start = i + 1
    parts.append(s[start:])
    return [p.strip() for p in parts]


@dataclass(frozen=True, slots=True)
class _Structure:
    """A compound answer: an ordered tuple/interval (with its brackets) or an unordered list."""

    open: str
    items: tuple[str, ...]
    close: str
    ordered: bool


def _structure(s: str) -> _Structure | None:
    s = s.strip()
    matrix = re.fullmatch(r"\\begin\{[pbvB]?matrix\}(.*)\\end\{[pbvB]?matrix\}", s, re.S)
    if matrix:
        rows = [r for r in re.split(r"\\\\", matrix.group(1)) if r.strip()]
        return _Structure("M", tuple(c.strip() for r in rows for c in r.split("&")), str(len(rows)), True)
    if re.fullmatch(r"[\d.\s]+(?::[\d.\s]+)+", s):  # a ratio `3:1`
        return _Structure(":", tuple(p.strip() for p in s.split(":")), ":", True)
    if "\\cup" in s:  # a union of intervals: a set of them
        return _Structure("U", tuple(p.strip() for p in s.split("\\cup")), "U", False)
    set_braces = re.fullmatch(r"\\\{(.*)\\\}", s)
    if set_braces:
        return _Structure("{", _both_signs(_split_top_level(set_braces.group(1))), "}", False)
    if s[:1] in "([" and s[-1:] in ")]" and matching_close(s, 0, "([{", ")]}") in (len(s) - 1, -1):
        items = _split_top_level(s[1:-1])
        if len(items) > 1:
            return _Structure(s[0], tuple(items), s[-1], True)
    items = _both_signs(_split_top_level(s))
    if len(items) > 1 and all(items):
        return _Structure("", items, "", False)
    return None


def _both_signs(items: list[str]) -> tuple[str, ...]:
    """List items with one `\\pm` written as both solutions: `1 \\pm \\sqrt{19}` is `1+\\sqrt{19}`
    and `1-\\sqrt{19}`, in any order."""
    out: list[str] = []
    for item in items:
        out += [item.replace("\\pm", sign) for sign in "+-"] if item.count("\\pm") == 1 else [item]
    return tuple(out)


_LABEL = re.compile(r"([A-Za-z](?:_\{?\w+\}?)?)\s*=\s*(.+)")


def _labelled(items: tuple[str, ...]) -> dict[str, str] | None:
    """`x=2, y=3` as `{"x": "2", "y": "3"}` when every item names a different unknown, else None."""
    matches = [_LABEL.fullmatch(item) for item in items]
    if not all(matches):
        return None
    values = {m.group(1).replace("{", "").replace("}", ""): m.group(2) for m in matches}
    return values if len(values) == len(items) else None


def _text_key(s: str) -> str:
    """`s` compared as text: spaces kept only between two letters or digits (`\\pi r`), braces dropped
    only around one character (`e^{2}x` is `e^2x`, not `e^{2x}`), lower case."""
    m = _CHOICE.match(s.strip())
    if m:
        return m.group(1).lower()
    s = re.sub(r"(?<!\w) | (?!\w)", "", " ".join(s.split()))
    return re.sub(r"\{(\w)\}", r"\1", s).lower()


def to_sympy_source(s: str) -> str:
    """A string `sympy.parse_expr` understands, from a normalised LaTeX answer (not a number too
    long to convert: `MAX_NUMBER_CHARS`)."""
    if max(map(len, re.findall(r"\d+", s)), default=0) > MAX_NUMBER_CHARS:
        raise NotArithmetic("number too long to read")
    s = delatex(functions_as_calls(s))
    s = re.sub(r"\\(?:pi)\b", " pi ", s)
    s = re.sub(r"\\infty\b|∞", " oo ", s)
    s = re.sub(r"\\ln\b", " log ", s)
    s = re.sub(r"\\(sin|cos|tan|cot|sec|csc|log|exp)\b", r" \1 ", s)
    s = re.sub(r"\\arc(sin|cos|tan)\b", r" a\1 ", s)  # sympy's names (`arcsin` is six letters to it)
    s = s.replace("π", " pi ").replace("√", " sqrt ")
    if "\\" in s:
        raise NotArithmetic(f"unknown command in {s!r}")
    return s.replace("^", "**")


class AnswerUnparseable(Exception):
    """An answer that cannot be read as math (detail in the message)."""


class _SympyWorker:
    """sympy equivalence in a child process that is killed (and restarted) when it overruns.

    The time limit counts the worker's own time (see `synthesis.own_time`), not time it waited for
    a CPU on a loaded machine; a wall-clock backstop that runs out is an error, not a verdict.
    The worker's address space is capped at `memory_mb`: an answer such as `(x+1)^{1000000}`
    grows sympy by gigabytes in seconds, and a comparison that runs out is a verdict too.

    A plain `python -c` child speaking JSON lines: no dependence on multiprocessing start methods
    or on the caller's `__main__`, and it exits when its stdin closes (the parent went away).
    """

    def __init__(self, timeout_s: float, memory_mb: int) -> None:
        self.timeout_s = timeout_s
        self.memory_mb = memory_mb
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None

    def _start(self) -> None:
        root = str(Path(__file__).resolve().parents[2])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-c",
                f"from synthesis.math.equivalence import sympy_worker_loop; sympy_worker_loop({self.memory_mb})",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            text=True,
            bufsize=1,
        )
        if not _readable(proc.stdout, 120) or proc.stdout.readline().strip() != '"ready"':
            proc.kill()
            proc.wait()
            raise RuntimeError("sympy worker did not start")
        self._proc = proc

    def stop(self) -> None:
        if self._proc is not None:
            self._proc.kill()
            self._proc.wait()
            self._proc.stdin.close()
            self._proc.stdout.close()
        self._proc = None

    def equal(self, a: str, b: str) -> bool | str:
        """True/False, or a string saying why it could not be decided (timeout, parse error)."""
        with self._lock:
            if self._proc is None or self._proc.poll() is not None:
                self._start()
            self._proc.stdin.write(json.dumps([a, b]) + "\n")
            self._proc.stdin.flush()
            clock = OwnClock(self._proc.pid)
            backstop = max(60.0, 10 * self.timeout_s)
            while (left := min(self.timeout_s - clock.own(), backstop - clock.wall())) > 0:
                if _readable(self._proc.stdout, min(left, 0.05)):
                    line = self._proc.stdout.readline()
                    if not line:
                        self.stop()
                        raise RuntimeError("the sympy worker died mid-comparison")
                    return json.loads(line)
            self.stop()
            if clock.wall() >= backstop:  # the machine, not the comparison, was too slow
                raise RuntimeError(
                    f"sympy worker did not answer within the {backstop:g}s wall-clock backstop"
                )
            return f"sympy timed out after {self.timeout_s}s"


def _readable(stream, timeout_s: float) -> bool:
    return bool(select.select([stream], [], [], timeout_s)[0])


def sympy_worker_loop(memory_mb: int) -> None:  # pragma: no cover - runs in the child process
    """The worker's main loop: one JSON `[a, b]` per line in, one JSON result per line out."""
    import sympy  # noqa: F401  (paid once, before "ready")

    limit, hard = memory_mb * 1024 * 1024, resource.getrlimit(resource.RLIMIT_AS)[1]
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    print('"ready"', flush=True)
    for line in sys.stdin:
        a, b = json.loads(line)
        try:
            result = sympy_equal(a, b)
        except MemoryError:
            result = f"sympy ran out of its {memory_mb} MiB memory limit"
        except Exception as exc:  # noqa: BLE001 - any sympy failure is an undecidable comparison
            result = f"sympy could not compare: {type(exc).__name__}"
        print(json.dumps(result), flush=True)


# The names an answer may use in sympy: math functions and constants (any other name is a symbol).
# sympy's parse_expr evaluates its input as Python with every builtin (`__import__`) and all of
# sympy (`preview` runs LaTeX) in reach; answers come from generated solutions.
SYMPY_NAMES = (
    "Abs acos acosh acot acsc asec asin asinh atan atanh binomial cbrt ceiling conjugate cos cosh "
    "cot coth csc factorial floor gcd im lcm ln log Max Min re root sec sign sin sinh sqrt tan tanh "
    "E I oo pi zoo factorial2 Float Function Integer Number Rational Symbol"  # the last: parse_expr's own
).split()


ARITHMETIC_OPERATORS = frozenset("+ - * / // % ** ^ ( ) [ ] , < > <= >= == !=".split())
ARITHMETIC_TOKENS = frozenset({tokenize.NUMBER, tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER})


def code_in_answer(src: str) -> str:
    """What in `src` is Python rather than arithmetic (a string, an attribute, a name with an
    underscore, a keyword, a number with `_` or a `j` suffix, any operator but arithmetic's), or ""
    when nothing is: parse_expr would evaluate it. `!` (factorial) is arithmetic."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(src).readline))
    except (tokenize.TokenError, SyntaxError) as exc:
        return f"no tokens ({type(exc).__name__})"
    for kind, text, *_ in tokens:
        if kind == tokenize.NAME:
            arithmetic = "_" not in text and not keyword.iskeyword(text)
        elif kind == tokenize.NUMBER:  # Python's, not math's: `2j` is imaginary, `101_2` is 1012
            arithmetic = "_" not in text and text[-1] not in "jJ"
        elif kind == tokenize.OP:
            arithmetic = text in ARITHMETIC_OPERATORS
        else:
            arithmetic = kind in ARITHMETIC_TOKENS or text.strip() in ("", "!")
        if not arithmetic:
            return repr(text)
    return ""


def sympy_equal(a: str, b: str) -> bool | str:
    """Symbolic equivalence of two sympy-source strings (runs inside the worker process)."""
    import sympy
    from sympy.parsing.sympy_parser import (
        convert_xor,
        implicit_multiplication_application,
        parse_expr,
        standard_transformations,
    )

    transformations = standard_transformations + (implicit_multiplication_application, convert_xor)
    names = {"e": sympy.E, "i": sympy.I, "pi": sympy.pi, "oo": sympy.oo}
    allowed = {"__builtins__": {}, **{name: getattr(sympy, name) for name in SYMPY_NAMES}}
    not_finite = (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)

    def parse(src: str):
        if "=" in src:
            lhs, rhs = src.split("=", 1)
            return parse(lhs) - parse(rhs)
        code = code_in_answer(src)
        if code:
            raise ValueError(f"not arithmetic: {code}")
        return parse_expr(
            src,
            local_dict=dict(names),
            global_dict=dict(allowed),
            transformations=transformations,
            evaluate=True,
        )

    try:
        y = parse(b)
    except MemoryError:
        raise  # the worker's limit, not an unreadable reference
    except Exception:  # noqa: BLE001 - a reference sympy cannot read was already compared as text
        return False
    try:
        x = parse(a)
    except MemoryError:
        raise
    except Exception as exc:  # noqa: BLE001
        return f"unparseable: {type(exc).__name__}"
    if ("=" in a) != ("=" in b):
        return False  # an equation is not an expression: `x^2=4` is not `x^2-4`
    if x == y:
        return True
    diff = sympy.simplify(x - y)
    if diff == 0:
        return True
    if "=" in a and y != 0:  # one equation with its sides swapped or scaled: 4=x^2+y^2, 2y=4x+2
        ratio = sympy.simplify(x / y)
        if ratio.is_number and ratio.is_finite and ratio != 0:
            return True
    if diff.free_symbols or y.free_symbols or diff.has(*not_finite) or y.has(*not_finite):
        return False  # not a small difference: oo - 5 is oo, and -oo - oo is -oo
    if not x.has(sympy.Float) and not y.has(sympy.Float):
        # Exact answers: only an exact zero (`equals` evaluates the difference itself to significant
        # digits), never a tolerance: 10^{12}+sqrt(3) is not 10^{12}+sqrt(2).
        return diff.equals(0) is True
    written = x.replace(lambda part: part.is_Float, lambda part: sympy.Rational(str(part)))
    if y.is_rational and written.is_rational:  # a decimal for a rational: exactly it (`1e-10` is not 0)
        return sympy.simplify(written - y) == 0
    # A decimal against an irrational value, relative to the reference (absolute only against 0).
    scale = sympy.Abs(sympy.N(y, 30)) or 1
    return bool(sympy.Abs(sympy.N(diff, 30)) <= scale / 10**9)


class Equivalence:
    """Compares final answers: normalised strings, exact numbers, structures, closed forms, sympy."""

    def __init__(self, sympy_timeout_s: float, sympy_memory_mb: int) -> None:
        self._worker = _SympyWorker(sympy_timeout_s, sympy_memory_mb)

    def close(self) -> None:
        """Stop the sympy worker process (it is restarted on demand)."""
        self._worker.stop()

    def equivalent(self, predicted: str, reference: str) -> bool:
        """Whether two final answers are the same up to presentation and symbolic equivalence."""
        return self._equivalent(normalize_answer(predicted), normalize_answer(reference))

    def _equivalent(self, a: Answer, b: Answer) -> bool:
        if a.time_of_day and b.time_of_day and a.time_of_day != b.time_of_day:
            return False  # `9 p.m.` is not `9 a.m.`; `5 pm` is `5`
        if a.text == b.text:
            return True
        if a.value is not None and b.value is not None:
            return _same_number(a, b)
        sa, sb = _structure(a.text), _structure(b.text)
        if sa is not None or sb is not None:
            return sa is not None and sb is not None and self._same_structure(sa, sb)
        if _text_key(a.text) == _text_key(b.text):
            return True
        textual = [bool(re.fullmatch(r"[A-Za-z][A-Za-z ,.'\-]*", x.text)) for x in (a, b)]
        if any(textual):
            return False
        numeric = _numeric_equal(a, b)
        if numeric is not None:
            return numeric
        try:
            sb_src = to_sympy_source(b.text)
        except NotArithmetic:
            return False  # a reference that is not math (`\overline{CD}`) was compared as text
        try:
            sa_src = to_sympy_source(a.text)
        except NotArithmetic as exc:
            raise AnswerUnparseable(str(exc)) from None
        pairs = [(sa_src, sb_src)]
        if a.percent != b.percent:  # `25%` against `0.25`
            pct_a, pct_b = (f"({sa_src})/100", sb_src) if a.percent else (sa_src, f"({sb_src})/100")
            pairs.append((pct_a, pct_b))
        for x, y in pairs:
            result = self._worker.equal(x, y)
            if result is True:
                return True
            if isinstance(result, str):
                raise AnswerUnparseable(result)
        return False

    def _same_structure(self, a: _Structure, b: _Structure) -> bool:
        if len(a.items) != len(b.items):
            return False
        if (a.ordered or b.ordered or "U" in (a.open, b.open)) and (a.open, a.close) != (b.open, b.close):
            return False  # a list and a set compare alike; a tuple, an interval or a union only as such
        if a.ordered:
            return all(self.equivalent(x, y) for x, y in zip(a.items, b.items))
        labels_a, labels_b = _labelled(a.items), _labelled(b.items)
        if labels_a is not None and labels_b is not None:  # `x=2, y=3`: each value with its name
            return labels_a.keys() == labels_b.keys() and all(
                self.equivalent(value, labels_b[name]) for name, value in labels_a.items()
            )
        remaining = list(b.items)
        for x in a.items:
            match = next((k for k, y in enumerate(remaining) if self.equivalent(x, y)), None)
            if match is None:
                return False
            remaining.pop(match)
        return True


def _numeric_equal(a: Answer, b: Answer) -> bool | None:
    """Compare two closed-form numbers (`\\frac{\\sqrt{3}}{2}`, `2^{10}`) without sympy; None if
    either is not plain arithmetic. A decimal agrees with an irrational value to 1e-12 relative; two
    exact values that agree so far are left to sympy (None): floats cannot tell `10^{12}+\\sqrt{3}`
    from `10^{12}+\\sqrt{2}`."""
    try:
        x, y = evaluate_text(a.text), evaluate_text(b.text)
    except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
        return None
    candidates = [(x, y)]
    if a.percent != b.percent:
        candidates.append((x / 100, y) if a.percent else (x, y / 100))
    for u, v in candidates:
        if isinstance(u, Fraction) and isinstance(v, Fraction):
            if u == v:
                return True
        elif math.isclose(float(u), float(v), rel_tol=1e-12, abs_tol=1e-15):
            decimal = any(isinstance(w, Fraction) and "." in t.text for w, t in ((u, a), (v, b)))
            return True if decimal else None
    return False


def _same_number(a: Answer, b: Answer) -> bool:
    """Exact comparison; a percentage also matches its fraction (`25%` vs `0.25`)."""
    if a.value == b.value:
        return True
    if a.percent != b.percent:
        pct, other = (a, b) if a.percent else (b, a)
        return pct.value / 100 == other.value
    return False
