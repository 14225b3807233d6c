"""Verify code candidates by running solution then tests in the sandbox, and render admitted ones.

A candidate (DESIGN.md, "Synthesis candidates") carries `prompt`, `solution`, `tests` and an
optional `entry_point` in `doc.metadata`; `tests` may also be a list of assert lines (MBPP's
`test_list`). The program run is the solution, continued from the prompt when it is only the body
of the prompt's function (see `complete_solution`). Admitted only when the solution and the tests
run to completion within the limits (and, with the mutation gate on, the tests kill enough mutants
of the solution).
"""

from __future__ import annotations

import ast
import re
import signal
from collections.abc import Iterator

from pipeline.document import KEEP, Document, Verdict, keep, reject
from synthesis.mutation import UNPARSEABLE, mutants
from synthesis.sandbox import RunResult, SandboxPool, signal_name

CODE_REASONS = (
    "no_solution",
    "tests_failed",
    "timeout",
    "memory_limit",
    "crashed",
    "syntax_error",
    "no_tests",
    "output_limit",
    "file_limit",
    "weak_tests",
    "unsupported",
)
IMPORTS = (ast.Import, ast.ImportFrom)
EXITS = ("exit", "_exit", "quit")  # sys.exit, os._exit, the builtins
BLOCKS = (ast.If, ast.Try, ast.TryStar, ast.For, ast.AsyncFor, ast.While)  # with body and orelse
SYNTAX_ERRORS = ("SyntaxError", "IndentationError", "TabError", "ValueError")
MAX_SOURCE_CHARS = 1 << 20  # solution + tests; parsed outside the sandbox, at ~300 bytes a character
MUTANT_SLOWDOWN = 10.0
MUTANT_MIN_TIMEOUT_S = 0.5


def tests_text(doc: Document) -> str:
    """The candidate's tests as source (a list of lines is joined)."""
    tests = doc.metadata.get("tests") or ""
    if isinstance(tests, list):
        tests = "\n".join(str(line) for line in tests)
    return str(tests)


def defines(code: str, name: str) -> bool:
    """Whether `code` has a `def name(` line. Indentation is matched within the line: `^\\s*` also
    ran across line ends, from every line start of a run of blank lines (32,000 of them: 26 s)."""
    pattern = rf"^[ \t\f]*(?:async[ \t\f]+)?def[ \t\f]+{re.escape(name)}[ \t\f]*\("
    return re.search(pattern, code, re.MULTILINE) is not None


def complete_solution(prompt: str, solution: str, entry_point: str | None) -> str:
    """The program to run: a completion-style solution (only the body of the function whose signature
    is in the prompt, as HumanEval completions are) continues the prompt; a full one gets the prompt's
    top-level imports it lacks."""
    if entry_point and not defines(solution, entry_point) and defines(prompt, entry_point):
        return prompt.rstrip("\n") + "\n" + solution
    # A full solution written for a code prompt may rely on the prompt's imports (`List`), as it
    # would in the HumanEval harness, where the prompt is part of the program. Only a prompt that is
    # code has them (a prose prompt's `from mypkg import helper` is an example), and they go after
    # the solution's `from __future__` imports, which must come first.
    tree = syntax_tree(solution) if len(solution) <= MAX_SOURCE_CHARS else None
    present = {ast.unparse(node) for node in tree.body if isinstance(node, IMPORTS)} if tree else set()
    missing = [line for line in prompt_imports(prompt) if line not in present]
    if not missing:
        return solution
    future = (
        [n for n in tree.body if isinstance(n, ast.ImportFrom) and n.module == "__future__"] if tree else []
    )
    lines = solution.splitlines(keepends=True)
    at = future[-1].end_lineno if future else 0
    return "".join(lines[:at]) + "\n".join(missing) + "\n" + "".join(lines[at:])


def prompt_imports(prompt: str) -> list[str]:
    """The top-level imports of a prompt that is Python code (none of a prose one), `__future__` aside."""
    tree = syntax_tree(prompt) if len(prompt) <= MAX_SOURCE_CHARS else None
    if tree is None:
        return []
    imports = [n for n in tree.body if isinstance(n, IMPORTS)]
    return [
        ast.unparse(n) for n in imports if not (isinstance(n, ast.ImportFrom) and n.module == "__future__")
    ]


def program(doc: Document) -> str:
    """The candidate's full program (see `complete_solution`)."""
    meta = doc.metadata
    return complete_solution(
        str(meta.get("prompt") or ""), str(meta.get("solution") or ""), meta.get("entry_point")
    )


def syntax_tree(source: str) -> ast.Module | None:
    """`source` parsed; None when it does not parse (the sandbox reports it as a syntax error)."""
    try:
        return ast.parse(source)
    except UNPARSEABLE:
        return None


def has_tests(tests: ast.Module | None) -> bool:
    """True when the tests (parsed) can fail: an `assert`, an `assert*` call, a `raise` or an exit
    with a status that is not 0 (`sys.exit(1)`) somewhere.

    Tests that cannot parse (None) count as present: the sandbox reports them as `syntax_error`.
    """
    if tests is None:
        return True
    for node in ast.walk(tests):
        if isinstance(node, ast.Assert | ast.Raise):
            return True
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", None) or getattr(node.func, "id", "")
            if name.startswith(("assert", "fail")) or (name in EXITS and not _exits_ok(node)):
                return True
    return False


def _exits_ok(call: ast.Call) -> bool:
    """`exit()`, `sys.exit(0)` or `exit(None)`: an exit that reports success (any other can fail)."""
    return not call.args or (isinstance(call.args[0], ast.Constant) and call.args[0].value in (0, None))


def untested_names(
    program: ast.Module | None, tests: ast.Module | None, entry_point: str | None
) -> list[str] | None:
    """The names the program defines at top level (in `if`, `try`, `with` and loop blocks too: a
    fallback `def lcm` under `except ImportError`) when the tests use none of them, else None (both
    parsed).

    Tests that call nothing of the solution (`assert True`) verify nothing. A `check` run on
    `entry_point`, or source that does not parse (the sandbox reports it), counts as using it.
    """
    if program is None or tests is None:
        return None
    defined: set[str] = set()
    for node in run_at_import(program.body):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defined.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            defined.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    used = {n.id for n in ast.walk(tests) if isinstance(n, ast.Name)}
    imports = [n for n in ast.walk(tests) if isinstance(n, ast.Import | ast.ImportFrom)]
    used.update(a.asname or a.name for n in imports for a in n.names)
    used.update(n.module for n in imports if isinstance(n, ast.ImportFrom) and n.module)
    checked = entry_point and any(  # the runner calls check(entry_point)
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "check" for n in tests.body
    )
    if not defined or defined & used or "solution" in used or checked:  # `import solution` works too
        return None
    return sorted(defined)


def run_at_import(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of `body` and of the blocks inside it that run with it (not function or
    class bodies)."""
    for node in body:
        yield node
        if isinstance(node, BLOCKS):
            for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                yield from run_at_import(block)
            for handler in getattr(node, "handlers", []):
                yield from run_at_import(handler.body)
        elif isinstance(node, ast.With | ast.AsyncWith):
            yield from run_at_import(node.body)


def classify(result: RunResult, timeout_s: float) -> Verdict:
    """Map a sandbox run to KEEP or a reason code.

    A timeout's detail is the same whichever limit fired first (own time, or the CPU rlimit just
    above it: CPU time never exceeds own time) and names no measured time, so a rejection row does
    not depend on the machine's load; the wall and wait figures stay in the RunResult.
    """
    if result.passed:
        return KEEP
    over_time = f"own time > {timeout_s:g}s"
    if result.outcome == "timeout":
        return reject("timeout", over_time)
    if result.outcome == "output_limit":
        return reject("output_limit", "stdout+stderr above max_output_bytes")
    if result.outcome == "file_limit":
        return reject("file_limit", "created more than max_files files and folders")
    if result.outcome == "runner_died":
        return reject(
            "crashed", "the sample killed a fresh sandbox runner too: " + " | ".join(result.attempts)
        )
    if result.signal is not None:
        # SIGXCPU at the soft CPU limit; SIGKILL at the hard one, or from the sample itself or the
        # kernel's out-of-memory killer (then it ran for less CPU time than the limit)
        cpu_limit_kill = result.signal == signal.SIGKILL and (result.cpu_s or 0.0) >= timeout_s
        if result.signal == signal.SIGXCPU or cpu_limit_kill:
            return reject("timeout", over_time)
        if result.signal == signal.SIGXFSZ:
            return reject("crashed", "file size limit (SIGXFSZ)")
        return reject("crashed", f"killed by {signal_name(result.signal)}")
    status = result.status
    if status is None:
        return reject("crashed", f"exited with status {result.exit_code} before the tests finished")
    error, phase = status.get("error", ""), status.get("phase", "")
    detail = f"{phase}: {error}: {status.get('message', '')}".strip().rstrip(":")
    if error == "MemoryError":
        if phase.startswith("compile"):
            detail += " (the source is too large, or nested too deep, to compile)"
        return reject("memory_limit", detail)
    if phase.startswith("compile") and error in SYNTAX_ERRORS:
        return reject("syntax_error", detail)
    if "can't start new thread" in detail:  # RLIMIT_NPROC counts threads
        detail += " (the sandbox allows max_processes processes and threads per sample: 1 by default)"
    if phase in ("tests", "check"):
        return reject("tests_failed", detail)
    return reject("crashed", detail)


def render_code(doc: Document) -> str:
    """Training text: the solution alone when it already contains the prompt, else prompt + code block."""
    prompt = str(doc.metadata.get("prompt") or "").strip()
    solution = program(doc).rstrip()
    if not prompt or solution.lstrip().startswith(prompt):
        return solution + "\n"
    language = doc.metadata.get("language") or "python"
    return f"{prompt}\n\n```{language}\n{solution}\n```\n"


class CodeVerifier:
    """Checks batches of code candidates through a SandboxPool, optionally with the mutation gate."""

    def __init__(
        self,
        pool: SandboxPool,
        min_mutation_score: float = 0.0,
        max_mutants: int = 20,
        max_source_chars: int = MAX_SOURCE_CHARS,
    ) -> None:
        self.pool = pool
        self.min_mutation_score = min_mutation_score
        self.max_mutants = max_mutants
        self.max_source_chars = max_source_chars

    def _precheck(self, doc: Document) -> Verdict:
        language = str(doc.metadata.get("language") or "python").lower()
        if language not in ("python", "py", "python3"):
            return reject("unsupported", f"language={language}")
        solution = doc.metadata.get("solution")
        if not isinstance(solution, str) or not solution.strip():
            what = "empty" if isinstance(solution, str) else f"{type(solution).__name__}, not a string"
            return reject("no_solution", f"solution is {'missing' if solution is None else what}")
        entry = doc.metadata.get("entry_point")
        if entry not in (None, "") and not (isinstance(entry, str) and entry.isidentifier()):
            return reject("unsupported", f"entry_point {entry!r} is not a Python name")
        source, tests = program(doc), tests_text(doc)
        if len(source) + len(tests) > self.max_source_chars:
            return reject(
                "unsupported",
                f"solution and tests are {len(source) + len(tests):,} characters, over max_source_chars "
                f"({self.max_source_chars:,}): not parsed or run",
            )
        tests_tree = syntax_tree(tests)
        unused = untested_names(syntax_tree(source), tests_tree, entry or None)
        if unused:
            return reject("no_tests", f"the tests use nothing the solution defines ({', '.join(unused[:5])})")
        if not has_tests(tests_tree):
            return reject("no_tests", "tests are empty or contain no assertion")
        return KEEP

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        """Verdicts in input order; every sample of the batch runs in parallel in the pool."""
        verdicts = [self._precheck(doc) for doc in docs]
        runnable = [i for i, v in enumerate(verdicts) if v.keep]
        jobs = [self._job(docs[i], program(docs[i])) for i in runnable]
        elapsed = {}
        for i, result in zip(runnable, self.pool.run_many(jobs)):
            verdicts[i] = classify(result, self.pool.limits.timeout_s)
            elapsed[i] = result.elapsed_s - result.waited_s  # own time, as the limits count it
        if self.min_mutation_score > 0:
            self._mutation_gate(docs, verdicts, elapsed)
        return verdicts

    def _job(self, doc: Document, solution: str) -> tuple[str, str, str | None]:
        return (solution, tests_text(doc), doc.metadata.get("entry_point") or None)

    def _mutation_gate(
        self, docs: list[Document], verdicts: list[Verdict], elapsed: dict[int, float]
    ) -> None:
        """Reject admitted samples whose tests let too many mutants of the solution pass.

        A mutant that runs far longer than the original (a loop whose exit condition was mutated)
        counts as killed: its timeout is MUTANT_SLOWDOWN times the original's own time, at least
        MUTANT_MIN_TIMEOUT_S, so looping mutants do not each cost the full timeout.
        """
        owners: list[int] = []
        jobs = []
        unrewritable = set()
        for i, verdict in enumerate(verdicts):
            if verdict.keep:
                timeout = max(MUTANT_MIN_TIMEOUT_S, MUTANT_SLOWDOWN * elapsed[i])
                made = mutants(program(docs[i]), self.max_mutants)
                if made is None:
                    unrewritable.add(i)
                for mutant in made or []:
                    owners.append(i)
                    jobs.append((*self._job(docs[i], mutant), timeout))
        killed: dict[int, list[bool]] = {}
        for i, result in zip(owners, self.pool.run_many(jobs)):
            killed.setdefault(i, []).append(not result.passed)
        for i, verdict in enumerate(verdicts):
            if not verdict.keep:
                continue
            if i in unrewritable:  # a padding ast.unparse refuses (an int of 4,000 digits) scored 1.0
                why = "the solution cannot be rewritten into mutants, so its tests cannot be measured"
                verdicts[i] = reject("weak_tests", why, docs[i])
                continue
            outcomes = killed.get(i, [])
            score = sum(outcomes) / len(outcomes) if outcomes else 1.0  # 1.0: nothing to mutate
            scored = docs[i].with_scores({"mutation_score": score})
            verdicts[i] = keep(scored)
            if score < self.min_mutation_score:
                verdicts[i] = reject(
                    "weak_tests",
                    f"mutation score {score:.2f} < {self.min_mutation_score:g} ({len(outcomes)} mutants)",
                    scored,
                )
