from filters.pii import PIIRedact
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


def test_edge_cases_untouched():
    for text in EDGE_TEXTS.values():
        doc = redact(text)
        assert doc.text == text and doc.metadata["pii_redactions"] == {"email": 0, "ip": 0}
