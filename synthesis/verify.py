"""`verify`: admit synthesis candidates only when they are verified by execution or checking."""

from __future__ import annotations

import os
import shutil
import subprocess
from typing import Any

from pipeline.document import KEEP, Document, Verdict, keep, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register
from synthesis.code_verifier import CODE_REASONS, MAX_SOURCE_CHARS, CodeVerifier, render_code
from synthesis.math.verifier import REASONS as MATH_REASONS
from synthesis.math.verifier import MathVerifier
from synthesis.sandbox import SANDBOXES, Limits, SandboxPool, default_python


@register("verify")
class Verify(DocumentStage):
    """Admit code and math candidates only when sandboxed execution or answer/step checking verifies them.

    Code (`kind = "code"`) runs in a bubblewrap sandbox: solution, then tests, then
    `check(<entry_point>)` when the tests define `check`. Math (`kind = "math"`) is checked by the
    math verifier (final answer up to symbolic equivalence, every checkable step). Admitted
    candidates get `text` = their training rendering and keep `kind`; documents without `kind` pass
    untouched. A sandbox fault (a runner that dies, hangs or cannot start) is retried on a fresh
    runner; one that persists raises `SandboxError`, a failure record, never a rejection.
    Reasons: `no_solution`, `tests_failed`, `timeout`, `memory_limit`, `crashed`, `syntax_error`,
    `no_tests`, `output_limit`, `file_limit`, `weak_tests`, `unsupported`, `wrong_answer`, `bad_step`,
    `no_answer`, `unparseable`.
    """

    reasons = CODE_REASONS + MATH_REASONS
    handles_candidates = True
    admits_candidates = True
    params = {
        "sandbox": Param(
            str,
            "bubblewrap",
            "`bubblewrap` (namespaces, read-only system, no network), or `process` (rlimits only; weak, logs a warning)",
            choices=SANDBOXES,
        ),
        "timeout_s": Param(
            float,
            5.0,
            "seconds of a code sample's own time (running or sleeping, not waiting for a CPU on a loaded machine)",
            min=0.1,
            max=3600,
        ),
        "memory_mb": Param(
            int,
            512,
            "address-space limit per process of a code sample, MiB (a sample of `max_processes` processes may hold that many times it)",
            min=64,
            max=1 << 20,
        ),
        "max_output_bytes": Param(
            int, 1 << 20, "stdout+stderr a sample may print before `output_limit`", min=1024
        ),
        "max_processes": Param(
            int, 1, "processes/threads a sample may run, itself included", min=1, max=4096
        ),
        "max_open_files": Param(int, 64, "open file descriptors per sample", min=16, max=65536),
        "max_file_mb": Param(int, 16, "largest file a sample may write, MiB", min=1, max=1 << 20),
        "max_files": Param(
            int,
            10_000,
            "files and folders a sample may create (each costs ~1 KB of kernel memory that no rlimit "
            "bounds: ~200,000 a second otherwise) before `file_limit`",
            min=16,
        ),
        "scratch_mb": Param(
            int,
            64,
            "size of each sandbox's private /tmp, MiB (its /dev/shm: 8 MiB, or this if smaller)",
            min=1,
            max=1 << 20,
        ),
        "workers": Param(int, 0, "sandboxed runners per Beam worker; 0 = one per CPU core", min=0, max=1024),
        "python": Param(
            str, "", "interpreter inside the sandbox; empty = /usr/bin/python3 as root, else this one"
        ),
        "import_paths": Param(
            list,
            [],
            "folders samples may import packages from (e.g. a virtual environment's site-packages, built "
            "for the sandbox's Python), bound read-only; empty: the standard library only",
        ),
        "min_mutation_score": Param(
            float,
            0.0,
            "test-strength gate: fraction of solution mutants the tests must kill (0 = off; a solution "
            "with nothing to mutate scores 1, one that cannot be rewritten is `weak_tests`)",
            min=0,
            max=1,
        ),
        "max_source_chars": Param(
            int,
            MAX_SOURCE_CHARS,
            "characters of solution + tests a code sample may have; a longer one is rejected `unsupported` "
            "unparsed (parsing, outside the sandbox, takes ~300 bytes of memory a character)",
            min=1024,
        ),
        "max_mutants": Param(
            int, 20, "mutants tried per sample when the mutation gate is on", min=1, max=1000
        ),
        "math_timeout_s": Param(
            float, 2.0, "sympy's own-time limit per math equivalence check", min=0.1, max=600
        ),
        "math_memory_mb": Param(
            int, 1024, "address-space limit of the sympy worker that compares math answers, MiB", min=256
        ),
        "check_steps": Param(bool, True, "math: also check calculator annotations and equation chains"),
    }

    def configure(self) -> None:
        missing = [path for path in self.import_paths if not os.path.isdir(path)]
        if missing:
            raise ConfigError(f"import_paths: {missing[0]!r} is not a folder")
        self.import_paths = [os.path.abspath(path) for path in self.import_paths]
        self._code: CodeVerifier | None = None
        self._math: MathVerifier | None = None

    def score_names(self) -> list[str]:
        """`mutation_score` of the admitted code samples, with the mutation gate on."""
        return ["mutation_score"] if self.min_mutation_score > 0 else []

    def setup(self) -> None:
        limits = Limits(
            timeout_s=self.timeout_s,
            memory_mb=self.memory_mb,
            max_output_bytes=self.max_output_bytes,
            max_processes=self.max_processes,
            max_open_files=self.max_open_files,
            max_file_mb=self.max_file_mb,
            max_files=self.max_files,
        )
        pool = SandboxPool(
            self.sandbox, self.workers, limits, self.python or None, self.scratch_mb, tuple(self.import_paths)
        )
        self._code = CodeVerifier(pool, self.min_mutation_score, self.max_mutants, self.max_source_chars)
        self._math = MathVerifier(
            sympy_timeout_s=self.math_timeout_s,
            sympy_memory_mb=self.math_memory_mb,
            check_steps=self.check_steps,
        )

    def teardown(self) -> None:
        """Stop the sandbox runners and the sympy worker that `setup` started."""
        if self._code is not None:
            self._code.pool.close()
        if self._math is not None:
            self._math.close()
        self._code = self._math = None

    def manifest_extra(self) -> dict[str, Any]:
        """The sandbox actually used, for reproducing a run's admissions."""
        extra: dict[str, Any] = {"sandbox": self.sandbox, "interpreter": self.python or default_python()}
        if self.import_paths:
            extra["import_paths"] = self.import_paths
        if self.sandbox == "bubblewrap" and shutil.which("bwrap"):
            version = subprocess.run(["bwrap", "--version"], capture_output=True, text=True, check=False)
            extra["bubblewrap"] = version.stdout.strip()
        return extra

    def check(self, doc: Document) -> Verdict:
        return self.check_batch([doc])[0]

    def check_batch(self, docs: list[Document]) -> list[Verdict]:
        self.require_setup(self._code, self._math)
        verdicts: list[Verdict] = [KEEP] * len(docs)
        code = [i for i, doc in enumerate(docs) if doc.kind == "code"]
        for i, verdict in zip(code, self._code.check_batch([docs[i] for i in code])):
            if verdict.keep:
                checked = verdict.doc or docs[i]
                verdict = keep(checked.with_text(render_code(checked)))
            verdicts[i] = verdict
        for i, doc in enumerate(docs):
            if doc.kind == "math":
                verdicts[i] = self._math.check(doc)
                if verdicts[i].keep:
                    verdicts[i] = keep(doc.with_text(self._math.render(doc)))
            elif doc.kind not in (None, "code"):
                verdicts[i] = reject("unsupported", f"kind={doc.kind}")
        return verdicts
