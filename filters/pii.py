"""`pii_redact`: replace e-mail addresses and public IP addresses (FineWeb's PII formatter)."""

from __future__ import annotations

import ipaddress
import re

from pipeline.document import Document, Verdict, keep
from pipeline.stages import ConfigError, DocumentStage, Param, register

# datatrove 0.10 PIIFormatter patterns (Apache-2.0). EMAIL's first item is ours: an '@' within
# LOCAL_PART_MAX characters. Without it, every start that cannot reach an '@' scanned to the end of
# its run of address characters, so one long run (a base64 image in a page that has an '@'
# somewhere) took quadratic time: 100 KB of base64, 7.8 s; 1 MB, minutes. It changes only matches
# whose part before the '@' is longer than LOCAL_PART_MAX (RFC 5321 allows 64): such a match is
# dropped, or shortened to start at a word boundary within LOCAL_PART_MAX characters of the '@'. The domain,
# datatrove's `(?:LABEL\.)+LABEL`, is written `LABEL(?:\.LABEL)++`: the same matches (nothing follows
# it to backtrack for), but the engine kept state for each label it matched, so `a@` and 5 million
# `b.` took 1 GB.
LOCAL_PART_MAX = 256
LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
EMAIL = re.compile(
    rf"\b(?=[^\s@]{{1,{LOCAL_PART_MAX}}}@)"
    r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:"
    rf"{LABEL}(?:\.{LABEL})++|\[(?:(?:25[0-5]|2[0-4][0-9]|["
    r"01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?|[A-Za-z0-9-]*[A-Za-z0-9]:)])"
)
IPV4 = re.compile(
    r"(?:(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)\.){3}(?:25[0-5]|2[0-4][0-9]|[01]?[0-9][0-9]?)"
)
EMAIL_REPLACEMENTS = ["email@example.com", "firstname.lastname@example.org"]
# Addresses that did not answer pings when datatrove chose them.
IP_REPLACEMENTS = [
    "22.214.171.124",
    "126.96.36.199",
    "188.8.131.52",
    "184.108.40.206",
    "220.127.116.11",
    "18.104.22.168",
]


def is_public_ip(text: str) -> bool:
    """True for a globally routable address; private, loopback, reserved ranges are not PII."""
    try:
        return ipaddress.ip_address(text).is_global
    except ValueError:
        return False


def is_ip_address(text: str) -> bool:
    """True for an address Python reads: `01.02.03.04` (leading zeros) is none, as datatrove's
    `public_ip_validator` decides in either mode."""
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


@register("pii_redact")
class PIIRedact(DocumentStage):
    """Replace e-mail addresses and public IPv4 addresses with placeholders; never rejects.

    Replacements cycle through the placeholder lists, restarting for each document (so the output
    does not depend on worker order). Private, loopback and reserved addresses are kept.
    Writes `metadata["pii_redactions"] = {"email": n, "ip": m}` on every document.
    Reasons: none (an editor).
    """

    reasons = ()
    params = {
        "emails": Param(bool, True, "replace e-mail addresses"),
        "ips": Param(bool, True, "replace public IPv4 addresses"),
        "only_public_ips": Param(bool, True, "keep private, loopback and reserved addresses"),
        "email_replacements": Param(list[str], EMAIL_REPLACEMENTS, "placeholders for e-mails, used in turn"),
        "ip_replacements": Param(list[str], IP_REPLACEMENTS, "placeholders for IPs, used in turn"),
    }

    def configure(self) -> None:
        for key in ("email_replacements", "ip_replacements"):
            if not getattr(self, key):
                raise ConfigError(f"{key}: needs at least one placeholder")

    def check(self, doc: Document) -> Verdict:
        text = doc.text
        counts = {"email": 0, "ip": 0}
        if self.emails and "@" in text:
            text = self._replace(EMAIL, text, self.email_replacements, counts, "email", None)
        if self.ips and "." in text:
            valid = is_public_ip if self.only_public_ips else is_ip_address
            text = self._replace(IPV4, text, self.ip_replacements, counts, "ip", valid)
        return keep(doc.with_text(text).with_metadata({"pii_redactions": counts}))

    @staticmethod
    def _replace(
        pattern: re.Pattern, text: str, replacements: list[str], counts: dict, key: str, valid
    ) -> str:
        def substitute(match: re.Match) -> str:
            found = match.group(0)
            if valid is not None and not valid(found):
                return found
            replacement = replacements[counts[key] % len(replacements)]
            counts[key] += 1
            return replacement

        return pattern.sub(substitute, text)
