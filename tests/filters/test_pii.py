import base64
import random
import re
import time
import tracemalloc

from filters.pii import EMAIL, PIIRedact
from pipeline.document import Document
from tests.filters.conftest import EDGE_TEXTS


def redact(text: str, **params) -> Document:
    doc = Document(id="d", text=text)
    verdict = PIIRedact("pii_redact", **params).check(doc)
    assert verdict.keep and doc.text == text  # the input document is never edited
    return verdict.doc


def test_emails_and_public_ips_replaced_and_counted():
    doc = redact("Mail jane.doe@corp.com or bob@x.org; server 8.8.8.8, router 192.168.1.1, local 127.0.0.1.")
    assert doc.text == (
        "Mail email@example.com or firstname.lastname@example.org; server 22.214.171.124, "
        "router 192.168.1.1, local 127.0.0.1."
    )
    assert doc.metadata["pii_redactions"] == {"email": 2, "ip": 1}


def test_replacement_cycle_restarts_per_document():
    stage = PIIRedact("pii_redact")
    texts = []
    for _ in range(2):
        texts.append(stage.check(Document(id="d", text="a@b.com")).doc.text)
    assert texts == ["email@example.com", "email@example.com"]


def test_switches():
    doc = redact("x@y.com 10.0.0.1 8.8.4.4", emails=False, only_public_ips=False)
    assert doc.text == "x@y.com 22.214.171.124 126.96.36.199"
    assert doc.metadata["pii_redactions"] == {"email": 0, "ip": 2}
    # not addresses Python reads (leading zeros): kept in either mode, as datatrove keeps them
    doc = redact("ip 01.02.03.04 and 1.2.3.04 and 10.0.0.1", only_public_ips=False)
    assert doc.text == "ip 01.02.03.04 and 1.2.3.04 and 22.214.171.124"


def test_edge_cases_untouched():
    for text in EDGE_TEXTS.values():
        doc = redact(text)
        assert doc.text == text and doc.metadata["pii_redactions"] == {"email": 0, "ip": 0}


# datatrove 0.10's PIIFormatter e-mail pattern, as published (Apache-2.0): the reference for ours.
DATATROVE_EMAIL = re.compile(
    r"\b[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:(?:[A-Za-z0-9](?:["
    r"A-Za-z0-9-]*[A-Za-z0-9])?\.)+[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)


def test_emails_found_are_datatrove_s_on_address_like_text():
    rng = random.Random(3)
    pieces = [
        "a",
        "Zq",
        "0",
        ".",
        "-",
        "_",
        "+",
        "@",
        "@",
        " ",
        "\n",
        "[",
        "]",
        "1.2.3.4",
        "é",
        "x.org",
        "(",
        "'",
    ]
    for _ in range(5_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randrange(40)))
        assert [m.span() for m in EMAIL.finditer(text)] == [
            m.span() for m in DATATROVE_EMAIL.finditer(text)
        ], text


def test_a_long_run_of_address_characters_takes_linear_time():
    """One start per word boundary used to scan to the end of the run: 100 KB of base64 in a page
    with an '@' took 7.8 s (quadratic); 400 KB would take about two minutes."""
    blob = base64.b64encode(random.Random(1).randbytes(300_000)).decode()
    text = f"Write to jane@corp.com. The image: data:image/png;base64,{blob} and a-b-c-d-e-{'a-' * 20_000}"
    started = time.process_time()
    doc = redact(text)
    assert time.process_time() - started < 5  # ~0.05 s; quadratic: minutes
    assert doc.metadata["pii_redactions"]["email"] == 1 and blob in doc.text


def test_a_long_run_of_domain_labels_takes_memory_about_its_size():
    """The regex engine kept state for each label of the domain: `a@` and 5 million `b.` took 1 GB."""
    text = "write to a@" + "b." * 1_000_000 + "org today"
    tracemalloc.start()
    try:
        doc = redact(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert doc.text == "write to email@example.com today"
    assert peak < 20 * len(text)  # about 10 MB; 200 MB before
