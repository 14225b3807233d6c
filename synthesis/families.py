"""Shared base of the built-in generators: tasks drawn round robin from named families."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any, ClassVar

from pipeline.document import Document
from pipeline.stages import ConfigError, Generator


class FamilyGenerator(Generator):
    """Draws `count` items round robin from `families`, each from its own seeded RNG.

    Subclasses set `FAMILIES` (name → builder taking an RNG) and `kind`, and turn a built item
    into candidate metadata in `metadata()`.
    """

    FAMILIES: ClassVar[dict[str, Callable[[random.Random], Any]]] = {}
    kind: ClassVar[str] = ""

    def configure(self) -> None:
        unknown = sorted(set(self.families) - set(self.FAMILIES))
        if unknown:
            known = ", ".join(sorted(self.FAMILIES))
            raise ConfigError(f"families: unknown family {unknown[0]!r} (known: {known})")
        if not self.families:
            raise ConfigError("families: needs at least one family")

    def metadata(self, family: str, item: Any, rng: random.Random) -> dict[str, Any]:
        raise NotImplementedError

    def generate(self) -> Iterator[Document]:
        families = sorted(set(self.families))
        for index in range(self.count):
            family = families[index % len(families)]
            rng = random.Random(f"{self.seed}:{family}:{index}")
            item = self.FAMILIES[family](rng)
            yield Document(
                id=f"{self.name}-{self.seed}-{index:06d}-{family}",
                text="",
                source=f"synthetic:{self.name}",
                kind=self.kind,
                metadata=self.metadata(family, item, rng),
            )
