"""The final answer: extracted from a solution (`\\boxed{}`, `####`, an answer phrase) and normalised."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction

from synthesis.math.latex import DROPPED_COMMANDS, MAX_NUMBER_CHARS, SPACING, NotArithmetic, matching_close
from synthesis.math.parse import evaluate_text
from synthesis.math.steps import ANNOTATION

_BOXED = re.compile(r"\\(?:boxed|fbox)\s*")
_HASHES = re.compile(r"^[ \t]*####(.+)$", re.M)  # the answer: the rest of the line, stripped
# `the answer is`: its whitespace possessive, since backtracking through a run of line ends after it was
# quadratic; `_PHRASE_HEAD` finds where a stated answer starts without reading it to the line's end.
_PHRASE_START = (
    r"(?:final\s+answer|the\s+answer|answer)\s*+(?:is\b|would\s+be|will\s+be|should\s+be|=|:)\s*+:?\s*+"
)
_PHRASE = re.compile(_PHRASE_START + "(.+)", re.I)
_PHRASE_HEAD = re.compile(_PHRASE_START + "(?=.)", re.I)
# `#### Step 2: Total`, `#### Verification`: a Markdown heading, as chat models write them; GSM8K's
# `#### 72`, `#### x = 5`, `#### seventy-two` are answers. A word then a colon, or a heading's word.
_HEADING = re.compile(
    r"\s*(?:[A-Za-z]{2,}\b[^:\n]*:|(?:step|part|verification|verify|check|solution|explanation|summary"
    r"|conclusion|problem|calculations?|approach|reasoning|analysis|method|final\s+answer)\b)",
    re.I,
)
_PHRASE_CUT = re.compile(
    r"\.(?:\s|$)|(?<!\\);|\n|,\s+(?:which|so|since|because|as|and\s+(?:this|that|so)|but|that|not)\b", re.I
)


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` (nested braces), or `\\boxed 5`."""
    matches = list(_BOXED.finditer(text))
    unclosed = len(text)  # a brace there is never closed, so no brace before it closes after it
    for m in reversed(matches):
        i = m.end()
        if i < len(text) and text[i] == "{":
            j = matching_close(text, i, end=unclosed)
            if j >= 0:
                return text[i + 1 : j].strip()
            unclosed = i
            continue
        tail = re.match(r"[^\s$]+", text[i:])
        if tail:
            return tail.group()
    return None


def extract_answer(solution: str) -> str | None:
    """The final answer written in a solution, or None when it states none.

    The last-written of `\\boxed{}`, `#### x` and an answer phrase wins (a solution may box an
    intermediate result and state its answer after it); a Markdown heading (`#### Step 2: Total`,
    `#### Verification`) is no `#### x`, and a phrase stating no math ("this answer is correct")
    does not override one stating math, nor a box or `#### x` before it.
    """
    boxed_at = max((m.start() for m in _BOXED.finditer(solution)), default=-1)
    hashes = [m for m in _HASHES.finditer(solution) if not _HEADING.match(m.group(1))]
    hashes_at = hashes[-1].start() if hashes else -1
    stated_at = max(boxed_at, hashes_at)
    wordy = None  # the last phrase stating no math: the answer only if none states math
    for m in reversed(list(_PHRASE.finditer(solution))):
        if m.start() < stated_at or "\\boxed" in m.group(1):
            break
        answers = [answer for answer in _phrase_answers(m.group(1)) if answer]
        if not answers:
            continue
        if _states_math(answers[-1]):
            return answers[-1]
        if stated_at >= 0:  # after a box or `#### x`, only a phrase stating math overrides it
            continue
        stating = [answer for answer in answers if _states_math(answer)]
        if stating:
            return stating[-1]
        wordy = wordy or answers[-1]
    if wordy:
        return wordy
    return hashes[-1].group(1).strip(" \t") if hashes_at > boxed_at else last_boxed(solution)


def _phrase_answers(text: str) -> list[str]:
    """What each answer phrase of one line states, in order (`text` follows the first): up to
    the next phrase or the end of its sentence or clause. `Final Answer: The final answer is 72.`
    states "The" then "72"; `72. I checked, and this answer is correct.` states "72" then "correct"."""
    tail = text.strip()
    starts, ends = [0], []
    for inner in _PHRASE_HEAD.finditer(tail):
        ends.append(inner.start())
        starts.append(inner.end())
    answers = []
    for start, end in zip(starts, [*ends, len(tail)]):
        part = tail[start:end].strip()
        cut = _PHRASE_CUT.search(part)
        answers.append((part[: cut.start()] if cut else part).strip().strip("*").strip())
    return answers


def _states_math(answer: str) -> bool:
    return re.search(r"[\d$\\]", answer) is not None


# A negation right before a number says what the number is not (`isn't 5`, `is never 5`, `no 5`;
# not `12 because she can't buy more`, `6 bags with no remainder`).
_NEGATION = r"(?:never|cannot\s+be|(?:is|are|was|were|does|do|did)n['’]t|no)"
_NEGATED = re.compile(rf"\b(?:not|{_NEGATION})\s+$", re.I)  # ends a text before its last number


def last_number(solution: str) -> str | None:
    """The last number written in the solution (a fallback when it states no answer explicitly): a
    minus sign (`-` or `−`) is its sign, and `3/4` is one fraction. None when it ends a hedge or a
    list ("48 or 72", "5 and 7") or follows a negation ("The answer isn't 5."): no one answer was given."""
    text = ANNOTATION.sub("", solution)
    numbers = list(re.finditer(r"[-−]?(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?:/\d+(?:\.\d+)?)?", text))
    if not numbers or re.search(r"\d\s+(?:or|and)\s+$", text[: numbers[-1].start()], re.I):
        return None
    if _NEGATED.search(text[: numbers[-1].start()]):
        return None
    return numbers[-1].group().rstrip(",").replace("−", "-")


# ---------------------------------------------------------------------------------------------
# Answer normalisation and equivalence
# ---------------------------------------------------------------------------------------------

_WORD_NUMBERS = {
    w: i
    for i, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen"
        " sixteen seventeen eighteen nineteen".split()
    )
}
_WORD_NUMBERS.update(
    {w: 10 * (i + 2) for i, w in enumerate("twenty thirty forty fifty sixty seventy eighty ninety".split())}
)
_WORD_SCALES = {
    "dozen": 12,
    "hundred": 100,
    "thousand": 1000,
    "million": 10**6,
    "billion": 10**9,
    "trillion": 10**12,
}
# Words that change the value of a number next to them: never dropped as prose or a unit around it
# (`less than 5`, `5 squared`, `half of 10`). A sign or a scale is read instead (`_read_value_words`).
_SCALE_WORD = "|".join(_WORD_SCALES)
_VALUE_WORD = re.compile(
    rf"\b(?:negative|minus|(?:{_SCALE_WORD})s?|squared|cubed|roots?"
    r"|sqrt|factorial|reciprocal|inverse|log|ln|exp|sin|cos|tan|not|than|least|most|half|halves|twice"
    r"|double|triple|thrice|(?:third|quarter|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh"
    r"|twelfth|sixteenth|twentieth|hundredth|thousandth|millionth|billionth)s?|percent(?:age)?"
    # exclusion and scaling: `all integers except 5`, `5 doubled`
    r"|except|excluding|opposite|doubled|halved|tripled|quadrupled|exceed\w*|beyond)\b"
    # a negation right before the number (`_NEGATION`), and phrases (`all but 5`, `multiples of 5`)
    rf"|\b{_NEGATION}\s+(?=[-+]?\.?\d)"
    r"|\bmultiples?\s+of\b|\ball\s+but\b|\bup\s+to\b"
    r"|\b(?:under|over|above|below)\s+[-+]?\.?\d",
    re.I,
)
_LIST_OR_VALUE_WORD = re.compile(rf"\b(?:or|and)\b|{_VALUE_WORD.pattern}", re.I)
_SIGN_WORD = re.compile(r"\b(?:negative|minus)\s+(?=\.?\d)", re.I)
_BELOW_ZERO = re.compile(r"(?<![\d.\-])(\d+(?:\.\d+)?)((?:\s+[A-Za-z]+)?)\s+below\s+zero\b", re.I)
# a.m. or p.m. after a time (`9 a.m.`, `9 am`, `9AM`, `1:03 PM`; not `2am`, algebra): kept aside,
# never a unit to drop; a `\text{}` holding one is unwrapped first (its content read possessively).
_TIME_MARKER = re.compile(r"(?<=\d)(?:\s*([AaPp])\.\s?[Mm]\.?|\s*([AP])M\b|\s+([ap])m\b)")
_TEXT_BRACES = re.compile(r"\\(?:text|mbox|mathrm|textrm)\s*\{([^{}]*+)\}")
_MARKER_WORD = re.compile(r"\b[AaPp]\.?\s?[Mm]\b")
_SCALED = re.compile(rf"(?<![\d.])(\d+(?:\.\d+)?)((?:\s+(?:{_SCALE_WORD})\b)+)", re.I)
# Unit words after a number (`12 cm^2`, `5 square feet`), maybe a power: `^2`, or a digit written
# onto the last word (one after a space is another number; `3 or 4` is a list by then). Each word
# is matched possessively (`*+`) and words are separated by spaces, so a long run of letters is
# split one way only (the former pattern backtracked exponentially: 24 letters then `!` took 1 s).
_UNIT_TAIL = re.compile(
    r"^(.*?\d\)?)\s+[A-Za-z]{2}[A-Za-z.'’]*+(?:\s+[A-Za-z]{2}[A-Za-z.'’]*+)*(?:\s*\^\d|\d)?$"
)
# A unit written as text at the end, after any expression: `\frac{68}{3}\text{ pounds}`, `144 \mbox{ m}^3`.
_TEXT_UNIT = re.compile(
    r"(?<=[\d}\s])\\(?:text|mbox|mathrm|textrm)\s*\{\s*([A-Za-z][A-Za-z.' ]*)\}(?:\s*\^\s*\{?[23]\}?)?$"
)
_VARIABLE = re.compile(r"(?<![A-Za-z\\])[A-Za-z](?![A-Za-z])")  # a lone letter: `x^2`, `2y`, not `cm`
_PLAIN_NUMBER = re.compile(r"^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$")
_SIMPLE_FRACTION = re.compile(r"^([+-]?)\(*([+-]?\d+(?:\.\d+)?)\)*/\(*(\d+(?:\.\d+)?)\)*$")
_SPACED_NUMBERS = re.compile(r"-?\d+(?:\.\d+)?(?: -?\d+(?:\.\d+)?)+")
_MIXED_NUMBER = re.compile(r"([+-]?)(\d+) (\d+)/(\d+)")
_SPACED_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?: \d{3})+(?:\.\d+)?")  # `1 000 000`, as SI writes it
_BASE_SUBSCRIPT = re.compile(r"([+-]?[0-9][0-9A-Z]*)_\{?(\d+)\}?")  # `101_2`, `-2112_{6}`: digits in a base


def words_to_number(text: str) -> int | None:
    """`twenty-one` → 21, `one hundred five` → 105; None if `text` is not a number in words."""
    words = text.lower().replace("-", " ").replace(" and ", " ").split()
    if not words:
        return None
    total = current = 0
    for w in words:
        if w in _WORD_NUMBERS:
            current += _WORD_NUMBERS[w]
        elif w in _WORD_SCALES:
            current = max(current, 1) * _WORD_SCALES[w]
            if _WORD_SCALES[w] >= 1000:
                total, current = total + current, 0
        else:
            return None
    return total + current


@dataclass(frozen=True, slots=True)
class Answer:
    """A normalised final answer: its string, its exact value when it is a plain number, and the
    a.m./p.m. written after its times ("ap" for `9 a.m. to 5 p.m.`)."""

    text: str
    percent: bool = False
    value: Fraction | None = None
    time_of_day: str = ""


def normalize_answer(raw: str) -> Answer:
    """Strip presentation (math delimiters, `\\text` units, currency, degrees, separators, `x =`)."""
    s = " ".join(raw.split()).replace("−", "-")  # one space between words: no regex below backtracks on runs
    s = _strip_delimiters(s).strip()
    s = s.replace("\\$", "").replace("$", "")
    if "**" in s:  # a power between operands (`4**2`: it was read as 42), else markdown bold
        s = re.sub(r"\*\*", "", re.sub(r"(?<=[\d)])\*\*(?=[\d(])", "^", s))
    s = DROPPED_COMMANDS.sub("", s)
    s = SPACING.sub(" ", s)
    s = re.sub(r"\\[dtc]frac", r"\\frac", s)
    s = re.sub(r"\^\s*\{?\s*\\circ\s*\}?|\\degree|°|\\circ", "", s)
    s = _TEXT_BRACES.sub(lambda m: f" {m.group(1)} " if _MARKER_WORD.search(m.group(1)) else m.group(), s)
    time_of_day = "".join(("".join(m.groups(""))).lower() for m in _TIME_MARKER.finditer(s))
    s = _TIME_MARKER.sub("", s)
    unit = _TEXT_UNIT.search(s)
    if unit and re.search(r"\d", s[: unit.start()]) and not _LIST_OR_VALUE_WORD.search(unit.group(1)):
        s = s[: unit.start()]
    s = re.sub(r"\\(?:text|textbf|textit|mbox|mathrm|textrm)\s*\{([^{}]*)\}", r" \1 ", s)
    s = s.replace("{,}", ",").replace("\\!", "").strip()
    s = re.sub(r"(?<![\d.])(\d+)\s+(?=\\frac\{?\d+\}?\{?\d+\}?$)", r"\1", s)  # `3 \frac{3}{8}`: mixed
    s = re.sub(r"(?<=\d)\\?,(?=\d{3}\b)", ",", s)
    percent = False
    if re.search(r"\\?%|\bpercent\b", s):
        percent = True
        s = re.sub(r"\\?%|\bpercent(age)?\b", "", s).strip()
    s = s.rstrip(".").strip()
    m = re.match(r"^[A-Za-z](?:_\{?\w+\}?)?\s*(?:=|\\in\b)\s*([^=]+)$", s)
    left, _, right = s.partition("=")
    if m:
        s = m.group(1).strip()
    elif s.count("=") == 1 and _is_arithmetic(left) and not _VARIABLE.search(right):
        s = right.strip()  # `2+3=5`: the computed value (`4=x^2+y^2` is an equation)
    if ", " not in s and not re.search(r"[(\[]", s):  # `5,525` (not a list or interval): thousands
        s = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", s)
    if re.search(r"\d", s):  # `19 and 43`, `2 or 3`: a list (spaces made one first: linear time)
        s = re.sub(r"(?: ?,)? ?\b(?:and|or)\b ?", ", ", " ".join(s.split()))
    s = _read_value_words(s)
    value_words = _VALUE_WORD.search(s) is not None
    m = _UNIT_TAIL.match(s)
    if m and re.search(r"\d", m.group(1)) and not re.search(r"[A-Za-z\\]", m.group(1)) and not value_words:
        s = m.group(1).strip()
    s = re.sub(r"^(?:USD|Rs\.?|€|£|¥)\s*", "", s).strip()
    s = re.sub(r"\s+", " ", s).strip()
    words = s.split(" ")
    numbers = [w for w in words if re.fullmatch(r"-?\d+(?:\.\d+)?", w)]
    if (
        len(numbers) == 1
        and len(words) > 1
        and not value_words
        and all(w in numbers or re.fullmatch(r"[A-Za-z][A-Za-z'’]+", w) for w in words)
    ):
        s = numbers[0]  # `She sold 72 clips`: prose around one number
    if _SPACED_NUMBERS.fullmatch(s) and not (_SPACED_THOUSANDS.fullmatch(s) or _MIXED_NUMBER.fullmatch(s)):
        s = ", ".join(s.split(" "))  # `4 2`: two numbers, not 42 nor 4 × 2
    if re.fullmatch(r"[A-Za-z][A-Za-z \-]*", s):
        n = words_to_number(s)
        if n is not None:
            return Answer(str(n), percent, Fraction(n), time_of_day)
    return Answer(s, percent, _plain_value(s), time_of_day)


def _read_value_words(s: str) -> str:
    """A sign or scale word read into the number it applies to: `negative 5` and `5 degrees below
    zero` are `-5`, `2.5 million` is `2500000`, `2 dozen` is `24` (a number too long to convert is
    left as written)."""
    s = _BELOW_ZERO.sub(r"-\1\2", _SIGN_WORD.sub("-", s))
    return _SCALED.sub(_scaled, s)


def _scaled(match: re.Match) -> str:
    number = match.group(1)
    whole, _, decimals = number.partition(".")
    scale = math.prod(_WORD_SCALES[word.lower()] for word in match.group(2).split())
    if len(number) + scale.bit_length() // 3 > MAX_NUMBER_CHARS:
        return match.group()
    digits = str(int(whole + decimals) * scale).rjust(len(decimals) + 1, "0")
    return f"{digits[: -len(decimals)]}.{digits[-len(decimals) :]}" if decimals else digits


def _strip_delimiters(s: str) -> str:
    """`s` without its opening `$`s or `\\(`/`\\[` and its closing `$`s or `\\)`/`\\]` (string
    methods: a pattern for the closing `$`s backtracked quadratically over a run of `$`)."""
    if s.startswith("$"):
        s = s.lstrip("$")
    elif s.startswith(("\\(", "\\[")):
        s = s[2:]
    if s.endswith("$"):
        return s.rstrip("$")
    return s[:-2] if s.endswith(("\\)", "\\]")) else s


def _is_arithmetic(text: str) -> bool:
    try:
        evaluate_text(text)
    except (NotArithmetic, ZeroDivisionError, OverflowError, RecursionError):
        return False
    return True


def _plain_value(s: str) -> Fraction | None:
    """Exact value of a plain number, `a/b`, `\\frac{a}{b}`, a mixed number, or digits in a base from 2 to
    36 (`101_2` is 5); else None (cheap)."""
    compact = s.replace(" ", "")
    if len(compact) > MAX_NUMBER_CHARS:
        return None
    mixed = _MIXED_NUMBER.fullmatch(s)
    if mixed:  # `3 1/2`: 7/2, not 31/2
        if int(mixed.group(4)) == 0:
            return None
        whole = Fraction(mixed.group(2)) + Fraction(int(mixed.group(3)), int(mixed.group(4)))
        return -whole if mixed.group(1) == "-" else whole
    if re.search(r"\d\s+\.?\d", s) and not _SPACED_THOUSANDS.fullmatch(s):
        return None  # `4 2` is no 42
    if _PLAIN_NUMBER.match(compact):
        return Fraction(compact)
    m = _BASE_SUBSCRIPT.fullmatch(compact)
    if m and 2 <= int(m.group(2)) <= 36:
        try:
            return Fraction(int(m.group(1), int(m.group(2))))
        except ValueError:  # a digit too large for the base
            return None
    m = _SIMPLE_FRACTION.match(compact)
    if m:
        den = Fraction(m.group(3))
        if den == 0:
            return None
        value = Fraction(m.group(2)) / den
        return -value if m.group(1) == "-" else value
    if "\\frac" in compact and re.fullmatch(r"[-+]?\d*\\frac\{?\d+\}?\{?\d+\}?", compact):
        try:
            value = evaluate_text(compact)
        except NotArithmetic:
            return None
        return value if isinstance(value, Fraction) else None
    return None
