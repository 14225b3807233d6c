"""Shared base of the built-in generators: tasks drawn round robin from named families."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from pipeline.document import Document
from pipeline.stages import ConfigError, Generator


class FamilyGenerator(Generator):
    """Draws `count` items round robin from `families` (in name order), each from its own seeded RNG.

    Subclasses set `FAMILIES` (name → builder taking an RNG) and `kind`, turn a built item into
    candidate metadata in `metadata()`, and say in `identity()` what makes two items the same
    sample. An item that repeats an earlier one is drawn again from the next seeded RNG, up to
    `MAX_DRAWS` times, and then kept: repeats are rare until a family's variety runs low, not
    impossible (a family of 110 items gave 107 distinct ones in 110 draws).
    """

    FAMILIES: ClassVar[dict[str, Callable[[random.Random], Any]]] = {}
    kind: ClassVar[str] = ""
    MAX_DRAWS: ClassVar[int] = 20

    def configure(self) -> None:
        unknown = sorted(set(self.families) - set(self.FAMILIES))
        if unknown:
            known = ", ".join(sorted(self.FAMILIES))
            raise ConfigError(f"families: unknown family {unknown[0]!r} (known: {known})")
        if not self.families:
            raise ConfigError("families: needs at least one family")

    def metadata(self, family: str, item: Any, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def identity(self, item: Any) -> str:
        """The text that makes an item a distinct training sample (its prompt and solution)."""
        raise NotImplementedError

    def generate(self) -> Iterator[Document]:
        families = sorted(set(self.families))
        seen: set[bytes] = set()
        for index in range(self.count):
            family = families[index % len(families)]
            for draw in range(self.MAX_DRAWS):
                rng = random.Random(f"{self.seed}:{family}:{index}" + (f":{draw}" if draw else ""))
                item = self.FAMILIES[family](rng)
                digest = hashlib.blake2b(self.identity(item).encode(), digest_size=16).digest()
                if digest not in seen:
                    break
            seen.add(digest)
            yield Document(
                id=f"{self.name}-{self.seed}-{index:06d}-{family}",
                text="",
                source=f"synthetic:{self.name}",
                kind=self.kind,
                metadata=self.metadata(family, item, rng),
            )
