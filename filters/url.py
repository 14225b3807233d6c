"""`url_filter`: block documents by URL: domain/URL blocklists and banned words (RefinedWeb / FineWeb)."""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from urllib.parse import urlsplit

import idna
from tldextract import TLDExtract

from filters import ut1
from filters.text_analysis import DATA_DIR
from pipeline.document import KEEP, Document, Verdict, reject
from pipeline.stages import ConfigError, DocumentStage, Param, register
from pipeline.urls import normalize_url

URL_LISTS = DATA_DIR / "url"
_NON_ALNUM = re.compile(r"[^a-zA-Z0-9]+")
_END_OF_HOST = re.compile(r"[/?#]")
_AUTHORITY = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.-]*:)?//")  # `https://` or `//` before the host
_PORT = re.compile(r":\d*$")
MAX_DOMAIN_CHARS = 253  # DNS's limit on a domain name
_CJK_FULL_STOPS = str.maketrans("\u3002\uff0e\uff61", "...")  # dots to IDNA, and to browsers


def normalize(text: str) -> str:
    """Lower-case alphanumerics only (how banned words and sub-words are compared)."""
    return _NON_ALNUM.sub("", text).lower()


def _read_list(path: Path) -> list[str]:
    """Non-empty, non-comment lines of a text file (gzip if it ends in .gz)."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as handle:
        return [line.strip() for line in handle if line.strip() and not line.startswith("#")]


def url_host(url: str) -> str:
    """The URL's host as `lookup_host` gives it; for a URL urllib refuses (an unclosed or invalid
    `[...]` address), what lies between `//` and the path, without user name or port."""
    url = url if _AUTHORITY.match(url) else "//" + url  # `example.com/a//b` has a host too
    try:
        return lookup_host(urlsplit(url).hostname or "")
    except ValueError:
        netloc = _END_OF_HOST.split(url.split("//", 1)[1], maxsplit=1)[0].rpartition("@")[2]
        return lookup_host(_PORT.sub("", netloc).strip("[]"))


def lookup_host(host: str) -> str:
    """A host as the blocklists hold it: lower-case, without surrounding whitespace, CJK full
    stops (`example。com`) as dots, and each internationalized label in its ASCII form (IDNA:
    `18años.com` is `xn--18aos-qta.com`, as the lists write it)."""
    host = host.strip().lower()
    if host.isascii():
        return host
    return ".".join(map(_ascii_label, host.translate(_CJK_FULL_STOPS).split(".")))


def _ascii_label(label: str) -> str:
    """One label of a host in its IDNA 2008 ASCII form, as browsers write it (`straße` is
    `xn--strae-oqa`, not IDNA 2003's `strasse`), or as it is where IDNA refuses it (too long)."""
    if label.isascii():
        return label
    try:
        return idna.encode(label, uts46=True).decode("ascii")
    except (idna.IDNAError, UnicodeError):
        return label


def domain_entry(entry: str) -> str:
    """A listed domain as `lookup_host` gives hosts; a URL, port or `*.` written around it is
    dropped (`https://shop.example/`, `*.shop.example`, `shop.example.` all list shop.example; an
    IPv6 address, bracketed or not, is itself)."""
    entry = entry.strip().removeprefix("*.")
    if "/" in entry:  # a URL
        return url_host(entry).strip(".")
    if entry.count(":") == 1:  # a port
        entry = entry.partition(":")[0]
    return lookup_host(entry.strip("[]")).strip(".")


def host_suffixes(url: str) -> list[str]:
    """The URL's host and every parent domain: a.b.example.com, b.example.com, example.com, com;
    only those of up to `MAX_DOMAIN_CHARS`, which no domain, so no blocklist entry, exceeds (every
    suffix of a longer host, a crawl's garbage, cost time quadratic in its length)."""
    suffixes, suffix = [], ""
    for part in reversed(url_host(url).strip(".").split(".")):
        suffix = f"{part}.{suffix}" if suffix else part
        if len(suffix) > MAX_DOMAIN_CHARS:
            break
        if part:
            suffixes.append(suffix)
    return suffixes[::-1]


@register("url_filter")
class URLFilter(DocumentStage):
    """Reject documents whose URL is on a blocklist or contains banned words (as datatrove's URLFilter).

    Checks, in order: the host or any parent domain is a blocked domain; the exact URL is
    blocked; a URL word (alphanumeric run, lower-cased) is a banned word; at least
    `soft_word_threshold` URL words are soft-banned; a banned sub-word occurs in the URL reduced
    to lower-case alphanumerics. Shipped lists (`filters/data/url/`, from datatrove / RefinedWeb):
    banned words, soft-banned words, banned sub-words. FineWeb's 4.56M blocked domains and 19.6k
    URLs (datatrove's integrated UT1 lists, `ut1_lists`) come from the datatrove wheel, which
    `make` installs without its dependencies (`filters/ut1.py`); more with `domain_files`. Documents
    without a URL are kept. Unlike datatrove, the host and URL words are lower-cased first, so
    "PORN" matches like "porn", a blocked domain also blocks its sub-domains at any depth
    (datatrove looks up the registered domain and the whole host as written), and a host written
    in Unicode (`18años.com`) matches the ASCII (IDNA 2008) form the lists hold:
    `datatrove_matching` decides as datatrove does (recipes/fineweb.toml; entries as written,
    lower-cased). Otherwise listed domains and URLs are read as the reader gives documents' URLs
    (scheme and host lower-cased; a `*.`, port or URL around a domain dropped), so an entry copied
    from the data matches it, and a URL is matched with or without its scheme (UT1's 19.6k URLs
    are written without one: as datatrove does, they blocked only URLs written so too).
    Reasons: `blocked_domain`, `blocked_url`, `banned_word`, `soft_banned_words`, `banned_subword`.
    """

    reasons = ("blocked_domain", "blocked_url", "banned_word", "soft_banned_words", "banned_subword")
    params = {
        "use_builtin_lists": Param(bool, True, "use the shipped banned / soft-banned words and sub-words"),
        "blocked_domains": Param(list[str], [], "extra blocked domains (sub-domains are blocked too)"),
        "blocked_urls": Param(list[str], [], "extra blocked exact URLs"),
        "domain_files": Param(list[str], [], "files of blocked domains, one per line (.gz allowed)"),
        "url_files": Param(list[str], [], "files of blocked URLs, one per line (.gz allowed)"),
        "banned_words": Param(list[str], [], "extra banned URL words"),
        "soft_banned_words": Param(list[str], [], "extra soft-banned URL words"),
        "banned_subwords": Param(list[str], [], "extra banned URL sub-words"),
        "soft_word_threshold": Param(int, 2, "soft-banned words needed to reject", min=1),
        "ut1_lists": Param(
            bool,
            True,
            "block FineWeb's 4.56M domains and 19.6k URLs (datatrove's integrated UT1 lists, read from the "
            "datatrove wheel that `make` installs)",
        ),
        "datatrove_matching": Param(
            bool,
            False,
            "decide as datatrove's URLFilter (so FineWeb): host and URL words compared as written (case "
            "matters, but the reader lower-cases every URL's scheme and host), and a listed domain blocks a host equal to it or whose registered domain (Public "
            "Suffix List) it is; off: both lower-cased, and a listed domain blocks every host under it",
        ),
    }

    def data_files(self) -> list[str]:
        return [*self.domain_files, *self.url_files]

    def configure(self) -> None:
        if self.ut1_lists:
            ut1.asset_path()  # a missing wheel stops the recipe here, not in a worker
        for key in ("domain_files", "url_files"):
            missing = [path for path in getattr(self, key) if not Path(path).is_file()]
            if missing:
                raise ConfigError(f"{key}: {missing[0]} is not a file")
        self._urls = None  # the lists: loaded by setup()

    def setup(self) -> None:
        builtin = self.use_builtin_lists

        def words(key: str, file_name: str) -> frozenset[str]:
            listed = _read_list(URL_LISTS / file_name) if builtin else []
            return frozenset(filter(None, map(normalize, listed + getattr(self, key))))

        # datatrove looks its entries up as written (lower-cased): so does `datatrove_matching`
        entry = (lambda d: d.lower().strip(".")) if self.datatrove_matching else domain_entry
        self._domains = frozenset(map(entry, self.blocked_domains)).union(
            *(map(entry, _read_list(Path(p))) for p in self.domain_files)
        )
        self._ut1_domains = ut1.blocked_domains() if self.ut1_lists else None
        # tldextract's bundled Public Suffix List, never fetched; the run stays offline
        self._extract = TLDExtract(suffix_list_urls=(), cache_dir=None) if self.datatrove_matching else None
        listed = [*self.blocked_urls, *(url for p in self.url_files for url in _read_list(Path(p)))]
        # as the reader gives documents' URLs: scheme and host lower-cased
        self._urls = frozenset(map(_as_read, listed)).union(ut1.blocked_urls() if self.ut1_lists else ())
        # UT1's URLs (and many a user's) are written without a scheme: as datatrove does, those
        # matched only a document URL without one too; here a URL is also looked up without its scheme
        self._bare_urls = None if self.datatrove_matching else frozenset(map(_without_scheme, self._urls))
        self._banned = words("banned_words", "banned_words.txt")
        self._soft = words("soft_banned_words", "soft_banned_words.txt")
        subwords = words("banned_subwords", "banned_subwords.txt")
        self._subword = re.compile("|".join(map(re.escape, sorted(subwords)))) if subwords else None

    def check(self, doc: Document) -> Verdict:
        url = doc.url
        if not url:
            return KEEP
        self.require_setup(self._urls)
        if self._domains or self._ut1_domains is not None:
            for domain in self._domains_to_look_up(url):
                if domain in self._domains or (self._ut1_domains is not None and domain in self._ut1_domains):
                    return reject("blocked_domain", domain)
        if url in self._urls or (self._bare_urls is not None and _without_scheme(url) in self._bare_urls):
            return reject("blocked_url", url)
        url_words = set(_NON_ALNUM.split(url if self.datatrove_matching else url.lower()))
        banned = url_words & self._banned
        if banned:
            return reject("banned_word", min(banned))
        soft = url_words & self._soft
        if len(soft) >= self.soft_word_threshold:
            return reject("soft_banned_words", ",".join(sorted(soft)))
        if self._subword is not None:
            found = self._subword.search(normalize(url))
            if found:
                return reject("banned_subword", found.group(0))
        return KEEP

    def _domains_to_look_up(self, url: str) -> list[str]:
        """datatrove's: the registered domain, then the whole host, as written; else the host and
        every parent domain, lower-cased."""
        if self._extract is None:
            return host_suffixes(url)
        parts = self._extract(url)
        return [domain for domain in (parts.top_domain_under_public_suffix, parts.fqdn) if domain]


def _without_scheme(url: str) -> str:
    """`host/path...` of a URL (`http://x.org/a` and `x.org/a` alike)."""
    return url.split("://", 1)[-1]


def _as_read(url: str) -> str:
    """A listed URL as the reader writes documents' URLs (scheme and host lower-cased); one written
    without a scheme (`Example.com/Page`) stays without one."""
    if "://" in url:
        return normalize_url(url) or url
    return _without_scheme(normalize_url(f"http://{url}") or url)
