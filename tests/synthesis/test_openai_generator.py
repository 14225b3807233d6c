"""`openai` generator against a small OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import socketserver
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pipeline.document import Document, Failure
from pipeline.stages import GENERATORS, ConfigError, load_builtin_stages
from synthesis import openai_generator
from synthesis.openai_generator import GIVE_UP_AFTER, OpenAIGenerator, complete_solution, extract_code
from synthesis.verify import Verify
from tests.pipeline.test_run import _free_port

RIGHT = "Here you go:\n```python\ndef add(a, b):\n    return a + b\n```\nExample:\n```python\nprint(add(1, 2))\n```"
WRONG = "```python\ndef add(a, b):\n    return a - b\n```"


class FakeServer:
    """Answers chat completions; the first request of each sample gets a 429 (or every one a 500)."""

    def __init__(
        self, always_fail: bool = False, fail_prompt: str = "", odd_prompt: str = "", retry_after: str = "0"
    ) -> None:
        self.requests: list[dict] = []
        self.auth: list[str | None] = []
        self.in_flight = self.max_in_flight = 0
        self.lock = threading.Lock()
        self.seen: set[tuple[str, int]] = set()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with server.lock:
                    server.requests.append(body)
                    server.auth.append(self.headers.get("Authorization"))
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    key = (body["messages"][-1]["content"], body["seed"])
                    first = key not in server.seen
                    server.seen.add(key)
                time.sleep(0.05)
                with server.lock:
                    server.in_flight -= 1
                if self.path != "/v1/chat/completions":
                    return self._send(404, {"error": "not found"})
                if always_fail or (fail_prompt and fail_prompt in body["messages"][-1]["content"]):
                    return self._send(500, {"error": "boom"})
                if odd_prompt and odd_prompt in body["messages"][-1]["content"]:  # not a chat completion
                    return self._send(200, {"choices": [{"message": {"content": [{"type": "image"}]}}]})
                if first:
                    return self._send(429, {"error": "slow down"}, {"Retry-After": retry_after})
                content = RIGHT if body["seed"] % 2 == 0 else WRONG
                self._send(
                    200, {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
                )

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                for name, value in {"Content-Type": "application/json", **(headers or {})}.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def prompts(tmp_path):
    path = tmp_path / "prompts.jsonl"
    rows = [
        {"id": f"p{i}", "prompt": f"Write add #{i}.", "tests": "assert add(2, 3) == 5", "entry_point": "add"}
        for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(path)


def generator(url: str, prompts: str, **params) -> OpenAIGenerator:
    defaults = {"base_url": url, "model": "tiny", "prompts": [prompts], "backoff_s": 0.01}
    return OpenAIGenerator("llm", **(defaults | params))


def test_samples_retries_concurrency_and_candidates(prompts, monkeypatch):
    load_builtin_stages()
    assert GENERATORS["openai"] is OpenAIGenerator
    monkeypatch.setenv("TEST_LLM_KEY", "sk-test")
    with FakeServer() as server:
        docs = list(generator(server.url, prompts, n=2, concurrency=2, api_key_env="TEST_LLM_KEY").generate())
    assert [d.id for d in docs] == ["p0/0", "p0/1", "p1/0", "p1/1", "p2/0", "p2/1"]
    assert {d.source for d in docs} == {"synthetic:llm"} and {d.kind for d in docs} == {"code"}
    assert docs[0].metadata["solution"] == "def add(a, b):\n    return a + b\n"
    assert docs[1].metadata["solution"] == "def add(a, b):\n    return a - b\n"
    assert (
        docs[0].metadata["prompt"] == "Write add #0." and docs[0].metadata["tests"] == "assert add(2, 3) == 5"
    )
    assert len(server.requests) == 12  # every sample was refused once (429) and retried
    assert set(server.auth) == {"Bearer sk-test"}
    assert server.max_in_flight <= 2
    assert server.requests[0]["model"] == "tiny" and server.requests[0]["messages"][0]["role"] == "system"
    if shutil.which("bwrap"):
        stage = Verify("verify", timeout_s=2.0, workers=2)
        stage.setup()
        try:
            reasons = [v.reason for v in stage.check_batch(docs)]
        finally:
            stage.teardown()
        assert reasons == [None, "tests_failed"] * 3


def test_a_retry_after_of_a_day_waits_at_most_max_retry_after_s(prompts, monkeypatch):
    """A 429 asking for 100,000 s stalled the run that long (`timeout_s` did not bound it)."""
    waits = []
    monkeypatch.setattr(openai_generator.time, "sleep", waits.append)
    with FakeServer(retry_after="100000") as server:
        docs = list(generator(server.url, prompts, n=1).generate())
    assert [d.id for d in docs] == ["p0/0", "p1/0", "p2/0"]
    # (the fake server's own 0.05 s sleeps land here too)
    assert max(waits) == openai_generator.MAX_RETRY_AFTER_S and waits.count(max(waits)) == 3


def test_a_request_failing_after_its_retries_is_one_failed_record_and_the_others_go_on(prompts):
    with FakeServer(fail_prompt="add #1") as server:
        records = list(generator(server.url, prompts, retries=1).generate())
    assert [r.id for r in records] == ["p0/0", "p1/0", "p2/0"]
    assert isinstance(records[0], Document) and isinstance(records[2], Document)
    assert isinstance(records[1], Failure) and records[1].error == "RequestFailed"
    assert "HTTP 500" in records[1].message and records[1].source == "synthetic:llm"
    assert sum("add #1" in r["messages"][-1]["content"] for r in server.requests) == 2  # a try, a retry


def test_a_server_that_never_answers_is_given_up_after_eight_failures(tmp_path):
    path = tmp_path / "prompts.jsonl"
    path.write_text("".join(json.dumps({"id": f"p{i}", "prompt": "Write add."}) + "\n" for i in range(200)))
    down = f"http://127.0.0.1:{_free_port()}/v1"  # nothing listens there
    started = time.monotonic()
    records = list(generator(down, str(path), retries=1, concurrency=2).generate())
    assert time.monotonic() - started < 30
    assert len(records) == 200 and all(isinstance(r, Failure) for r in records)
    errors = [r.error for r in records]
    assert errors.count("RequestFailed") in range(GIVE_UP_AFTER, GIVE_UP_AFTER + 2)  # 2 in flight
    assert errors[-1] == "NotSent" and "the first 8 requests failed and none succeeded" in records[-1].message


def test_rate_limit_spaces_request_starts(prompts):
    with FakeServer() as server:
        start = time.monotonic()
        list(generator(server.url, prompts, concurrency=8, rate_limit=20.0).generate())
        elapsed = time.monotonic() - start
    assert elapsed >= 5 / 20.0  # 6 requests (3 refused + 3 retried): 5 intervals of 50 ms


def test_extract_code():
    assert extract_code(RIGHT, "add") == "def add(a, b):\n    return a + b\n"
    example_first = "```python\nprint(f(1))\n```\n```python\ndef f(x):\n    return x\n```"
    assert extract_code(example_first, "f") == "def f(x):\n    return x\n"
    assert extract_code("```\nx = 1\n```") == "x = 1\n"
    assert extract_code("def g():\n    return 2") == "def g():\n    return 2\n"


def test_completion_style_answers_continue_the_prompt():
    prompt = 'def add(a, b):\n    """Add."""\n'
    assert complete_solution(prompt, "    return a + b\n", "add") == prompt + "    return a + b\n"
    full = "def add(a, b):\n    return a + b\n"
    assert complete_solution(prompt, full, "add") == full
    assert complete_solution("Write add.", full, "add") == full


def test_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="model"):
        OpenAIGenerator("llm", prompts=["p.jsonl"])
    with pytest.raises(ConfigError, match="prompts"):
        OpenAIGenerator("llm", model="m")
    # A glob matching nothing was a failure at run time, after the other inputs were read.
    with pytest.raises(ConfigError, match="prompts: .*nothing-here"):
        OpenAIGenerator("llm", model="m", prompts=[f"{tmp_path}/nothing-here*.jsonl"])


def test_math_prompts_become_math_candidates(tmp_path):
    path = tmp_path / "math.jsonl"
    path.write_text(json.dumps({"id": "q1", "problem": "What is 2+3?", "answer": "5"}) + "\n")
    with FakeServer() as server:
        (doc,) = generator(server.url, str(path), kind="math").generate()
    assert doc.id == "q1/0" and doc.kind == "math"
    assert doc.metadata["problem"] == "What is 2+3?" and doc.metadata["answer"] == "5"
    assert doc.metadata["solution"] == RIGHT  # the completion itself, not an extracted code block
    assert server.requests[-1]["messages"][0]["content"].startswith("Solve the problem")


def test_an_answer_that_is_not_a_chat_completion_is_a_failed_record(prompts):
    with FakeServer(odd_prompt="add #2") as server:  # every sample is refused once (429), then answered
        records = list(generator(server.url, prompts, retries=1).generate())
    assert [type(r).__name__ for r in records] == ["Document", "Document", "Failure"]
    assert records[2].error == "RequestFailed" and "not a chat completion" in records[2].message


class RawServer:
    """Answers each request with the raw byte chunks `reply(prompt)` gives, `pause` seconds apart
    (a reply cut short, one trickled a byte at a time), then closes the connection."""

    def __init__(self, reply, pause: float = 0.0) -> None:
        class Handler(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                length = 0
                while (line := self.rfile.readline()) not in (b"\r\n", b""):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                prompt = json.loads(self.rfile.read(length))["messages"][-1]["content"]
                try:
                    for chunk in reply(prompt):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        time.sleep(pause)
                except OSError:  # the client gave up
                    pass

        self.httpd = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def completion_reply(content: str) -> list[bytes]:
    body = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
    return [b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body]


def test_an_error_reply_cut_short_fails_its_sample_alone(prompts):
    """A 400 whose body ended before its Content-Length raised out of the generator: the other
    prompts' samples were never output, and never counted."""

    def reply(prompt: str) -> list[bytes]:
        if "add #1" in prompt:
            return [b"HTTP/1.1 400 Bad Request\r\nContent-Length: 100\r\n\r\nshort"]
        return completion_reply(RIGHT)

    with RawServer(reply) as server:
        records = list(generator(server.url, prompts, n=2).generate())
    assert [r.id for r in records] == ["p0/0", "p0/1", "p1/0", "p1/1", "p2/0", "p2/1"]
    assert [type(r).__name__ for r in records] == ["Document"] * 2 + ["Failure"] * 2 + ["Document"] * 2
    assert records[2].error == "RequestFailed" and "HTTP 400" in records[2].message


def test_timeout_s_bounds_a_reply_trickled_a_byte_at_a_time(prompts):
    """The socket's timeout bounds each read: a server sending a byte every 0.2 s held a request
    with `timeout_s = 1` for as long as it liked."""
    body = json.dumps({"choices": [{"message": {"content": RIGHT}}]}).encode()
    head = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body)

    with RawServer(lambda prompt: [head, *(body[i : i + 1] for i in range(len(body)))], pause=0.2) as server:
        started = time.monotonic()
        records = list(generator(server.url, prompts, timeout_s=1.0, retries=0, concurrency=3).generate())
    assert time.monotonic() - started < 10  # was len(body) × 0.2 s = 26 s a request
    assert [r.error for r in records] == ["RequestFailed"] * 3
    assert "longer than timeout_s" in records[0].message


def test_a_retry_after_that_is_not_a_number_waits_the_backoff(prompts, monkeypatch):
    """'²' passed `str.isdigit` and `float` raised on it, out of the generator."""
    waits = []
    monkeypatch.setattr(openai_generator.time, "sleep", waits.append)
    with FakeServer(retry_after="²") as server:
        docs = list(generator(server.url, prompts, n=1, backoff_s=0.5).generate())
    assert [type(d).__name__ for d in docs] == ["Document"] * 3
    assert waits.count(0.5) == 3


def test_a_prompt_whose_entry_point_is_not_text_fails_alone(tmp_path):
    """An `entry_point` of 5 raised while its completion was made a candidate: the generator
    ended, and the samples of the prompts after it were lost."""
    path = tmp_path / "prompts.jsonl"
    rows = [
        {"id": f"p{i}", "prompt": f"Write add #{i}.", "entry_point": "add" if i != 1 else 5} for i in range(3)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with FakeServer() as server:
        records = list(generator(server.url, str(path), n=2).generate())
    assert sorted(r.id for r in records) == ["p0/0", "p0/1", "p1", "p2/0", "p2/1"]
    (failure,) = [r for r in records if isinstance(r, Failure)]
    assert (
        failure.id == "p1" and failure.error == "BadCandidate" and "'entry_point' is int" in failure.message
    )
    assert not any("add #1" in r["messages"][-1]["content"] for r in server.requests)  # never sent
