import gzip

import pytest

from filters.url import URLFilter, host_suffixes
from pipeline.document import Document
from pipeline.stages import ConfigError


def url_check(url: str | None, **params):
    stage = URLFilter("url_filter", **params)
    stage.setup()
    return stage.check(Document(id="d", text="text", url=url))


def test_host_suffixes():
    assert host_suffixes("https://User@A.b.Example.com:8080/x") == [
        "a.b.example.com",
        "b.example.com",
        "example.com",
        "com",
    ]
    assert host_suffixes("example.org/path") == ["example.org", "org"]


@pytest.mark.parametrize(
    ("url", "params", "reason"),
    [
        ("https://news.bad-site.com/a", {"blocked_domains": ["bad-site.com"]}, "blocked_domain"),
        ("https://ok.com/page?id=1", {"blocked_urls": ["https://ok.com/page?id=1"]}, "blocked_url"),
        ("https://example.com/free-PORN-videos", {}, "banned_word"),
        ("https://example.com/bitch/boobs", {}, "soft_banned_words"),
        ("https://example.com/bigtitsclub", {}, "banned_subword"),
    ],
)
def test_url_reasons(url, params, reason):
    verdict = url_check(url, **params)
    assert not verdict.keep and verdict.reason == reason


def test_one_soft_word_is_not_enough_and_clean_urls_pass():
    assert url_check("https://example.com/bitch").keep
    assert url_check("https://en.wikipedia.org/wiki/Essex").keep
    assert url_check(None).keep


def test_domain_file_and_builtin_switch(tmp_path):
    path = tmp_path / "domains.gz"
    path.write_bytes(gzip.compress(b"# comment\nblocked.example\n"))
    assert url_check("http://www.blocked.example/x", domain_files=[str(path)]).reason == "blocked_domain"
    assert url_check("https://example.com/free-porn", use_builtin_lists=False).keep
    assert (
        url_check("https://example.com/zorg", use_builtin_lists=False, banned_words=["zorg"]).reason
        == "banned_word"
    )
    with pytest.raises(ConfigError, match="domain_files"):
        URLFilter("url_filter", domain_files=[str(tmp_path / "missing.txt")])
