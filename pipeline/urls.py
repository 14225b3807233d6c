"""URL normalization applied where records are created, so every stage sees one form of a URL."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_INNER_WHITESPACE = str.maketrans("", "", "\t\n\r")


def normalize_url(raw: object) -> str | None:
    """`raw` as a clean URL, or None when there is none.

    Strips surrounding whitespace and the angle brackets of WARC/1.0's `<uri>` form (wget writes
    `WARC-Target-URI: <https://...>`), drops tabs and line breaks inside (as the WHATWG URL
    parser does), and lower-cases the scheme and host; path, query and user name keep their case.
    A URL that `urllib` cannot split is returned stripped but otherwise unchanged.
    """
    if not isinstance(raw, str):
        return None
    url = raw.strip()
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    url = url.translate(_INNER_WHITESPACE)
    if not url:
        return None
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return url
    if not parts.netloc or host is None:
        return url
    user, at, host_port = parts.netloc.rpartition("@")
    # hostname is the lower-cased host without brackets or port; keep the written brackets/port.
    netloc = f"{user}{at}{host_port.lower()}"
    return urlunsplit((parts.scheme.lower(), netloc, parts.path, parts.query, parts.fragment))
