"""`openai`: candidates sampled from any OpenAI-compatible chat-completions server.

Works with vLLM, TGI, llama.cpp's server, or the OpenAI API itself (`POST {base_url}/chat/completions`).
Prompts come from a file (any reader format) of records `{"id", "prompt", "tests", "entry_point"?}`
for code, or `{"id", "problem", "answer"}` for math. Each prompt is sampled `n` times, one request
per sample with a per-sample `seed` (so a deterministic server gives reproducible output), with
bounded concurrency, a requests-per-second limit, and retries with exponential backoff on 429, 5xx
and network errors (honouring `Retry-After` up to `MAX_RETRY_AFTER_S`: a server asking for a day
does not stall the run). A sample whose request still fails after its
retries is a `failed` record (`RequestFailed`), the others go on; once `GIVE_UP_AFTER` requests
have failed and none has succeeded, the server is taken to be down and the rest are not sent
(`NotSent`, each a `failed` record). Code completions become candidates by extracting
their Python code block (appended to the prompt when it holds only the body of the prompt's
function); math completions are the solution text. Candidates come out in prompt
order, then sample order, whatever order the server answered in.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

from pipeline.document import READ_STAGE, Document, Failure, Record
from pipeline.stages import ConfigError, Generator, Param, register_generator
from synthesis.code_verifier import complete_solution, defines
from synthesis.file_generator import PROMPT_FIELD, check_paths, read_records

FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
RETRY_STATUS = {408, 409, 429}  # and every 5xx
READ_BYTES = 1 << 16  # a reply is read this much at a time, the deadline checked between reads
MAX_RETRY_AFTER_S = 300.0
GIVE_UP_AFTER = 8  # requests failed (after their retries) with none succeeded: the server is down
DEFAULT_SYSTEM = {
    "code": "You are an expert Python programmer. Answer with one complete, self-contained solution "
    "in a single ```python code block.",
    "math": "Solve the problem step by step. End with the final answer as \\boxed{answer}.",
}


def retried(status: int) -> bool:
    """Whether an HTTP error status is worth another try: 408, 409, 429 and every 5xx."""
    return status in RETRY_STATUS or 500 <= status < 600


def retry_after(value: str, default: float) -> float:
    """The seconds a `Retry-After` header asks for (`default` when it gives none, or a date)."""
    if not re.fullmatch(r"\s*\d+(\.\d+)?\s*", value, re.ASCII):
        return default
    return float(value)


def error_body(error: urllib.error.HTTPError) -> bytes:
    """The start of an error reply's body, for the failure's message (what reading it raised when
    the body is cut short or stalls)."""
    try:
        return error.read(300)
    except Exception as failure:
        return f"(body unreadable: {type(failure).__name__}: {failure})".encode()


def read_by(response, deadline: float) -> bytes:
    """A reply's whole body, or TimeoutError once `deadline` (time.monotonic) passes: the socket's
    timeout bounds each read, and a server trickling bytes would otherwise hold a request for ever.
    The deadline is checked between reads, so a body can take up to twice `timeout_s`; headers and
    chunk-size lines trickled a byte at a time are bounded only per read."""
    parts = []
    while part := response.read1(READ_BYTES):
        parts.append(part)
        if time.monotonic() > deadline:
            raise TimeoutError("the reply took longer than timeout_s")
    return b"".join(parts)


def extract_code(completion: str, entry_point: str | None = None) -> str:
    """The completion's Python code block: tagged python before untagged, the one defining the entry
    point first; the whole completion when it has no fence."""
    blocks = [(tag.lower(), body) for tag, body in FENCE.findall(completion)]
    python = [body for tag, body in blocks if tag in ("python", "py", "python3")]
    untagged = [body for tag, body in blocks if not tag]
    candidates = python or untagged
    if not candidates:
        return completion.strip() + "\n"
    if entry_point:
        for body in candidates:
            if defines(body, entry_point):
                return body
    return candidates[0]


class Outage:
    """Whether the server is taken to be down: GIVE_UP_AFTER requests failed, none succeeded."""

    def __init__(self) -> None:
        self.failures = 0
        self.answered = False
        self.declared = ""  # why the rest are not sent, once it is down
        self.lock = threading.Lock()

    def failed(self, error: str) -> None:
        with self.lock:
            self.failures += 1
            if not self.answered and self.failures >= GIVE_UP_AFTER and not self.declared:
                self.declared = (
                    f"the first {self.failures} requests failed and none succeeded (last: {error})"
                )

    def succeeded(self) -> None:
        with self.lock:
            self.answered = True


class RateLimiter:
    """At most `per_second` request starts per second across threads (0 = unlimited)."""

    def __init__(self, per_second: float) -> None:
        self.interval = 1.0 / per_second if per_second > 0 else 0.0
        self.next_start = 0.0
        self.lock = threading.Lock()

    def wait(self) -> None:
        if not self.interval:
            return
        with self.lock:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
        time.sleep(max(0.0, start - now))


@register_generator("openai")
class OpenAIGenerator(Generator):
    """Sample code or math candidates from an OpenAI-compatible chat-completions server."""

    params = {
        "base_url": Param(
            str, "http://127.0.0.1:8000/v1", "server URL up to /v1 (vLLM, TGI, llama.cpp, OpenAI)"
        ),
        "model": Param(str, "", "model name sent to the server"),
        "prompts": Param(list[str], [], "globs of prompt files (any reader format)"),
        "kind": Param(str, "code", "what the prompts ask for", choices=("code", "math")),
        "id_field": Param(str, "id", "prompt record field holding the id"),
        "n": Param(int, 1, "samples per prompt", min=1, max=1000),
        "temperature": Param(float, 0.8, "sampling temperature", min=0, max=2),
        "max_tokens": Param(int, 1024, "completion token limit", min=1),
        "system": Param(str, "", "system message; empty = a default for the kind"),
        "seed": Param(int, 0, "base seed; sample k of a prompt is sent seed + k"),
        "concurrency": Param(int, 4, "requests in flight", min=1, max=1024),
        "rate_limit": Param(float, 0.0, "requests started per second (0 = unlimited)", min=0),
        "retries": Param(int, 4, "retries per request on 429, 5xx and network errors", min=0, max=100),
        "backoff_s": Param(float, 1.0, "first retry delay, doubled each retry", min=0),
        "timeout_s": Param(
            float, 120.0, "seconds a request may wait for each read, and for the reply's body in all", min=0.1
        ),
        "api_key_env": Param(str, "OPENAI_API_KEY", "environment variable holding the API key (optional)"),
    }

    def data_files(self) -> list[str]:
        return list(self.prompts)

    def configure(self) -> None:
        if not self.model:
            raise ConfigError("model: the openai generator needs a model name")
        if not self.prompts:
            raise ConfigError("prompts: the openai generator needs a prompts file")
        check_paths("prompts", self.prompts)

    def generate(self) -> Iterator[Record]:
        prompt_field = PROMPT_FIELD[self.kind]
        records = list(read_records(self.prompts, f"synthetic:{self.name}", prompt_field, self.id_field))
        prompts = []
        for record in records:
            entry_point = record.metadata.get("entry_point") if isinstance(record, Document) else None
            if entry_point is not None and not isinstance(entry_point, str):
                why = f"'entry_point' is {type(entry_point).__name__}, not text"
                record = Failure(record.id, f"synthetic:{self.name}", READ_STAGE, "BadCandidate", why)
            if isinstance(record, Failure):  # unreadable prompts: not sent
                yield record
            else:
                prompts.append(record)
        jobs = [(record, k) for record in prompts for k in range(self.n)]
        limiter, outage = RateLimiter(self.rate_limit), Outage()
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="openai") as pool:
            results = pool.map(lambda job: self._sample(job[0].text, job[1], limiter, outage), jobs)
            for (record, k), result in zip(jobs, results):  # in order, each as soon as it is answered
                if isinstance(result, str):
                    yield self._candidate(record, k, result)
                else:
                    yield Failure(f"{record.id}/{k}", f"synthetic:{self.name}", READ_STAGE, *result)

    def _sample(
        self, prompt: str, sample: int, limiter: RateLimiter, outage: Outage
    ) -> str | tuple[str, str]:
        """A completion, or (error, message) for a failed record."""
        if outage.declared:
            return "NotSent", f"not sent: {outage.declared}"
        try:
            completion = self._complete(prompt, sample, limiter)
        except Exception as error:  # whatever a server's reply raises fails this sample alone
            message = str(error) if isinstance(error, RuntimeError) else f"{type(error).__name__}: {error}"
            outage.failed(message)
            return "RequestFailed", message
        outage.succeeded()
        return completion

    def _candidate(self, record: Document, sample: int, completion: str) -> Document:
        metadata = {key: value for key, value in record.metadata.items() if key != "kind"}
        metadata |= {PROMPT_FIELD[self.kind]: record.text, "model": self.model, "sample": sample}
        if self.kind == "code":
            metadata.setdefault("language", "python")
            entry_point = metadata.get("entry_point")
            code = extract_code(completion, entry_point)
            metadata["solution"] = complete_solution(record.text, code, entry_point)
        else:
            metadata["solution"] = completion
        return Document(
            f"{record.id}/{sample}", "", source=f"synthetic:{self.name}", kind=self.kind, metadata=metadata
        )

    def _complete(self, prompt: str, sample: int, limiter: RateLimiter) -> str:
        """One chat completion, retried with exponential backoff; raises after the last retry."""
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": self.system or DEFAULT_SYSTEM[self.kind]},
                {"role": "user", "content": prompt},
            ],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed + sample,
            "n": 1,
        }
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env, "") if self.api_key_env else ""
        if key:
            headers["Authorization"] = f"Bearer {key}"
        url = self.base_url.rstrip("/") + "/chat/completions"
        delay = self.backoff_s
        attempt = 0
        while True:
            limiter.wait()
            request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
            try:
                deadline = time.monotonic() + self.timeout_s
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    answer = read_by(response, deadline)
                try:
                    content = json.loads(answer)["choices"][0]["message"]["content"] or ""
                    if isinstance(content, str):
                        return content
                except (ValueError, LookupError, TypeError):
                    pass
                raise RuntimeError(f"{url}: not a chat completion: {answer[:300]!r}")
            except urllib.error.HTTPError as error:
                if not retried(error.code) or attempt == self.retries:
                    raise RuntimeError(f"{url}: HTTP {error.code}: {error_body(error)!r}") from error
                wait = min(retry_after(error.headers.get("Retry-After", ""), delay), MAX_RETRY_AFTER_S)
            except (OSError, http.client.HTTPException) as error:  # refused, reset, timed out, cut short
                if attempt == self.retries:
                    raise RuntimeError(f"{url}: {error}") from error
                wait = delay
            time.sleep(wait)
            delay *= 2
            attempt += 1
