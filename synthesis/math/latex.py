"""LaTeX arithmetic rewritten in plain syntax, and the one bracket scanner every reader uses."""

from __future__ import annotations

import re

# A number written with more characters is not read as a quantity: Python converts at most 4,300
# digits between int and str by default (a ValueError past that), and converting is quadratic.
MAX_NUMBER_CHARS = 4_000


class NotArithmetic(ValueError):
    """The text is not a (safely evaluable) arithmetic expression."""


_FRAC_COMMANDS = ("\\dfrac", "\\tfrac", "\\cfrac", "\\frac")
_BINOM_COMMANDS = ("\\dbinom", "\\tbinom", "\\binom")
_MAX_NESTING = 40  # deeper LaTeX or parentheses are not read (no real step nests this deep)
DROPPED_COMMANDS = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg|displaystyle|limits)(?![A-Za-z])")
SPACING = re.compile(r"(?<!\\)\\[,;: ]|~|\\quad|\\qquad")


def matching_close(s: str, start: int, opens: str = "{", closes: str = "}", end: int | None = None) -> int:
    """Index of the bracket that closes the one at `s[start]` (nesting counted), looking no further
    than `end` (default: the end of `s`); -1 if it is not closed by then."""
    depth = 0
    for j in range(start, len(s) if end is None else end):
        if s[j] in opens:
            depth += 1
        elif s[j] in closes:
            depth -= 1
            if depth == 0:
                return j
    return -1


def _read_arg(s: str, i: int) -> tuple[str, int]:
    """One LaTeX argument at `s[i:]`: a `{...}` group (nested), a command, or one character."""
    while i < len(s) and s[i] == " ":
        i += 1
    if i >= len(s):
        raise NotArithmetic("missing argument")
    if s[i] == "{":
        j = matching_close(s, i)
        if j < 0:
            raise NotArithmetic("unbalanced braces")
        return s[i + 1 : j], j + 1
    if s[i] == "\\":
        m = re.match(r"\\[A-Za-z]+", s[i:])
        if m:
            return m.group(), i + m.end()
    return s[i], i + 1


def delatex(s: str, mixed: bool = True, _depth: int = 0) -> str:
    """Rewrite LaTeX arithmetic (`\\frac`, `\\sqrt`, `\\binom`, `\\cdot`, `^{}`, groups) in plain syntax.

    `2\\frac{1}{2}` becomes the mixed number `(2+1/2)` if `mixed`, else an ambiguous `\\juxt`
    (it is a product in `80\\frac{1}{2}\\frac{1}{5}`). Unknown commands are left in place.
    """
    if "\\" not in s and "{" not in s:
        return s
    if _depth > _MAX_NESTING:
        raise NotArithmetic("nesting too deep")
    s = DROPPED_COMMANDS.sub("", s)
    s = SPACING.sub(" ", s.replace("\\!", "")).replace("{,}", ",")
    out: list[str] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == "\\":
            frac = next((f for f in _FRAC_COMMANDS if s.startswith(f, i)), None)
            if frac and not s[i + len(frac) : i + len(frac) + 1].isalpha():
                num, i = _read_arg(s, i + len(frac))
                den, i = _read_arg(s, i)
                whole = re.search(r"(?<![\d.^_])(\d+)$", "".join(out[-12:]))
                if whole and not mixed:
                    out.append(" \\juxt ")
                if whole and mixed and num.strip().isdigit() and den.strip().isdigit():
                    digits = whole.group(1)
                    del out[len(out) - len(digits) :]
                    out.append(f"({digits}+{num.strip()}/{den.strip()})")
                else:
                    out.append(f"(({delatex(num, mixed, _depth + 1)})/({delatex(den, mixed, _depth + 1)}))")
                continue
            binom = next((b for b in _BINOM_COMMANDS if s.startswith(b, i)), None)
            if binom and not s[i + len(binom) : i + len(binom) + 1].isalpha():
                top, i = _read_arg(s, i + len(binom))
                bottom, i = _read_arg(s, i)
                top, bottom = delatex(top, mixed, _depth + 1), delatex(bottom, mixed, _depth + 1)
                out.append(_call(out, f"binomial({top},{bottom})"))
                continue
            if s.startswith("\\sqrt", i) and not s[i + 5 : i + 6].isalpha():
                i += 5
                index = None
                if s[i : i + 1] == "[":
                    close = s.find("]", i)
                    if close < 0:
                        raise NotArithmetic("unbalanced \\sqrt[")
                    index, i = s[i + 1 : close], close + 1
                arg, i = _read_arg(s, i)
                if index is None:
                    out.append(_call(out, f"sqrt({delatex(arg, mixed, _depth + 1)})"))
                else:
                    out.append(
                        f"(({delatex(arg, mixed, _depth + 1)})^(1/({delatex(index, mixed, _depth + 1)})))"
                    )
                continue
            m = re.match(r"\\([A-Za-z]+)", s[i:])
            if m:
                name = m.group(1)
                out.append({"cdot": "*", "times": "*", "div": "/", "ast": "*"}.get(name, m.group()))
                if name not in ("cdot", "times", "div", "ast"):
                    out.append(" ")  # a command never glues to what follows
                i += m.end()
                continue
            if s[i + 1 : i + 2] in ("{", "}"):  # set braces are not grouping
                out.append(" \\set ")
                i += 2
                continue
            out.append(s[i : i + 2])
            i += 2
            continue
        out.append({"{": "(", "}": ")"}.get(c, c))
        i += 1
    return "".join(out)


def _call(out: list[str], call: str) -> str:
    """`call` spaced from a letter before it: `x\\sqrt{6}` is `x sqrt(6)`, not a name `xsqrt`."""
    return f" {call}" if out and out[-1][-1:].isalpha() else call


_LOG_BASE = re.compile(r"\\log_\s*(\{[^{}]*\}|[A-Za-z0-9])\s*")
_ATOM = re.compile(r"\d+(?:\.\d+)?|[A-Za-z]")  # a number or one letter
_FUNCTION_ATOM = re.compile(
    rf"\\(ln|log|exp|sin|cos|tan|cot|sec|csc)\s+((?:{_ATOM.pattern})\^(?:\{{[^{{}}]*\}}|[A-Za-z0-9]))"
)
# Tried only where a run of digits starts: from each of its digits, the scan was quadratic.
_REPEATING = re.compile(r"(?<!\d)(\d*)\.(\d*)\\overline\s*\{(\d+)\}")
_BARS = {
    "lvert": "|",
    "rvert": "|",
    "vert": "|",
    "lfloor": " floor(",
    "rfloor": ")",
    "lceil": " ceiling(",
    "rceil": ")",
}
_BAR_COMMAND = re.compile(r"\\(" + "|".join(_BARS) + r")(?![A-Za-z])")


def functions_as_calls(s: str) -> str:
    """LaTeX function notation as calls a parser reads: `\\log_2 8` as `log((8),(2))`, `\\ln e^2`
    as `\\ln(e^2)` (a power of an atom is the argument; `\\sin 2x` is left to sympy),
    `\\lfloor x\\rfloor` as `floor(x)`, `|x|` as `Abs(x)` (a call spaced from a letter before it),
    and the repeating decimal `0.\\overline{3}` as the fraction `(3/9)`."""
    s = _REPEATING.sub(_repeating_fraction, s)
    s = _BAR_COMMAND.sub(lambda match: _BARS[match.group(1)], s)
    s = re.sub(r"(?<!\\)\|([^|]+)\|", r" Abs(\1)", s)
    out, i = [], 0
    for match in _LOG_BASE.finditer(s):
        if match.start() < i:
            continue
        argument, end = _log_argument(s, match.end())
        if argument is None:
            continue
        base = match.group(1).strip("{}")
        out += [s[i : match.start()], f" log(({argument}),({base}))"]
        i = end
    s = "".join(out) + s[i:]
    return _FUNCTION_ATOM.sub(r"\\\1(\2)", s)


def _log_argument(s: str, i: int) -> tuple[str | None, int]:
    """The argument of `\\log_b` at `s[i:]`: a `{}` or `()` group, a number or one letter."""
    if s[i : i + 1] in ("{", "("):
        close = matching_close(s, i, "{(", "})")
        return (s[i + 1 : close], close + 1) if close > 0 else (None, i)
    atom = _ATOM.match(s, i)
    return (atom.group(), atom.end()) if atom else (None, i)


def _repeating_fraction(match: re.Match) -> str:
    whole, fixed, repeating = match.group(1) or "0", match.group(2), match.group(3)
    if len(whole) + len(fixed) + len(repeating) > MAX_NUMBER_CHARS:
        raise NotArithmetic("number too long to read")
    numerator = int(fixed + repeating) - int(fixed or "0")
    denominator = 10 ** len(fixed) * (10 ** len(repeating) - 1)
    return f"({int(whole) * denominator + numerator}/{denominator})"
