"""Input ids may repeat (each file numbered from 0, the same record read from two files): every
dedup stage must decide as it would with unique ids, not merge or crash on documents sharing an id."""

import random

import pyarrow.parquet as pq
import pytest

from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from tests.conftest import IN_PROCESS, write_jsonl, write_recipe

WORDS = (
    "river mill grain stone wheel water flour bread town market road bridge field farmer harvest autumn "
    "winter spring summer light morning evening people village church school house garden tree forest "
    "hill valley copper engine ledger sailor violin harbour lantern orchard quarry weaver"
).split()


def _text(seed: int) -> str:
    rng = random.Random(seed)
    paragraphs = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(30, 45))).capitalize() + "." for _ in range(3)
    ]
    return "\n\n".join(paragraphs)


def _write_inputs(folder) -> tuple[list[str], set[str]]:
    """Three files whose documents are numbered 0..11 in each, as their ids: every fourth text is
    the same in all three files (same id, same text), the others differ. (paths, distinct texts)"""
    folder.mkdir()
    paths, texts = [], set()
    for part in range(3):
        records = [{"id": str(n), "text": _text(n if n % 4 == 0 else 100 * part + n)} for n in range(12)]
        texts.update(record["text"] for record in records)
        paths.append(str(write_jsonl(folder / f"part{part}.jsonl", records)))
    return paths, texts


@pytest.mark.parametrize(
    "stage", ["exact_dedup", "paragraph_dedup", "minhash_dedup", "unit_dedup", "semantic_dedup"]
)
def test_documents_sharing_an_id_are_deduplicated_as_if_their_ids_differed(tmp_path, stage):
    inputs, texts = _write_inputs(tmp_path / "in")
    recipe = write_recipe(tmp_path / "recipe.toml", inputs, f'[[stage]]\nuse = "{stage}"\n')
    run_recipe(load_recipe(recipe), str(tmp_path / "out"), IN_PROCESS)
    kept = pq.read_table(tmp_path / "out" / "kept", columns=["text"]).column("text").to_pylist()
    assert sorted(kept) == sorted(texts)  # one copy of each of the 30 texts, whatever their ids
    removed = pq.read_table(tmp_path / "out" / "rejected").to_pylist()
    assert sorted((row["id"], row["duplicate_of"]) for row in removed) == [(n, n) for n in "004488"]


def test_the_same_documents_cut_into_other_files_are_deduplicated_alike(tmp_path):
    """semantic_dedup's k-means sample was ordered by hashes of the run-unique ids (id and origin:
    file and position), so the clusters, and the pairs compared, changed with the file layout; and
    the similarity to the centroid that picks survivors changed in its last bits with the batch."""
    rng = random.Random(5)
    records = []
    for n in range(1000):
        text = _text(n) if n < 900 else _text(rng.randrange(900)).replace("river", "stream", 1)
        records.append({"id": f"doc{n}", "text": text})
    (tmp_path / "in").mkdir()
    layouts = {
        "one file": [str(write_jsonl(tmp_path / "in" / "all.jsonl", records))],
        "six files": [str(write_jsonl(tmp_path / "in" / f"part{p}.jsonl", records[p::6])) for p in range(6)],
    }
    removed = {}
    for name, inputs in layouts.items():
        recipe = write_recipe(
            tmp_path / "recipe.toml", inputs, '[[stage]]\nuse = "semantic_dedup"\nclusters = 5\n'
        )
        out = tmp_path / name.replace(" ", "-")
        run_recipe(load_recipe(recipe), str(out), IN_PROCESS)
        table = pq.read_table(out / "rejected", columns=["id", "duplicate_of", "detail"]).to_pydict()
        removed[name] = sorted(zip(table["id"], table["duplicate_of"], table["detail"]))
    assert removed["one file"] == removed["six files"] and removed["one file"]


def test_which_of_two_near_copies_sharing_an_id_survives_does_not_depend_on_input_order(tmp_path):
    """The survivor order ended with where a document was read, so of two equally long near-copies
    with one id the first in the file survived: reversing the file changed the kept shard."""
    words = _text(7).split(" ")
    middle = len(words) // 2
    copies = [
        {"id": "dup", "text": " ".join(words[:middle] + [word] + words[middle + 1 :])}
        for word in ("hefty", "harsh")
    ]
    assert len(copies[0]["text"]) == len(copies[1]["text"]) and copies[0]["text"] != copies[1]["text"]
    survivors = []
    for name, records in (("forward", copies), ("reversed", copies[::-1])):
        inputs = [str(write_jsonl(tmp_path / "in.jsonl", records))]  # one path: one origin hash
        recipe = write_recipe(tmp_path / "recipe.toml", inputs, '[[stage]]\nuse = "minhash_dedup"\n')
        run_recipe(load_recipe(recipe), str(tmp_path / name), IN_PROCESS)
        survivors.append(pq.read_table(tmp_path / name / "kept", columns=["text"]).column("text").to_pylist())
    assert len(survivors[0]) == 1 and survivors[0] == survivors[1]
