import json
import random

import pyarrow.parquet as pq
import pytest

from pipeline.kept_output import copies, mixture_group, mixture_rates, order_key, shard_order, shard_starts
from pipeline.recipe import load_recipe
from pipeline.run import run_recipe
from pipeline.stages import ConfigError
from pipeline.tokenizer import BUNDLED_TOKENIZER, load_tokenizer
from tests.conftest import IN_PROCESS, write_jsonl

WORDS = "the river flows past old mills where grain was ground into flour for the town".split()


def corpus(n: int, source_tag: str = "", seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    return [
        {
            "id": f"{source_tag}doc{i:04d}",
            "text": " ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 400))),
        }
        for i in range(n)
    ]


def run(tmp_path, inputs: list[str], output: str, name: str = "out"):
    recipe_path = tmp_path / f"{name}.toml"
    recipe_path.write_text(f'[run]\nname = "t"\n[output]\n{output}\n[input]\npaths = {json.dumps(inputs)}\n')
    result = run_recipe(load_recipe(str(recipe_path)), str(tmp_path / name), IN_PROCESS)
    return tmp_path / name, result.manifest


def kept_shards(out, manifest):
    return [
        (s, pq.read_table(out / s["file"]).to_pylist()) for s in manifest["shards"] if s["kind"] == "kept"
    ]


def test_token_counts_and_token_balanced_shards(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(600))
    out, manifest = run(tmp_path, [str(data)], 'tokenizer = "gristmill-bpe-32k"\ntarget_shard_tokens = 20000')
    shards = kept_shards(out, manifest)
    tokenizer = load_tokenizer(str(BUNDLED_TOKENIZER))
    for _, rows in shards:
        for row in rows[:20]:
            assert row["n_tokens"] == len(tokenizer.encode(row["text"], add_special_tokens=False).ids)
    tokens = [info["n_tokens"] for info, _ in shards]
    assert tokens == [sum(r["n_tokens"] for r in rows) for _, rows in shards]
    assert sum(tokens) == manifest["kept_output"]["n_tokens"]
    assert len(shards) == -(-sum(tokens) // 20000) and len(shards) > 3
    assert max(tokens) <= 1.05 * min(tokens)
    assert manifest["counts"]["kept"] == 600 and manifest["conservation"]


def test_row_balanced_shards(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(250))
    out, manifest = run(tmp_path, [str(data)], "target_shard_rows = 60")
    rows = [info["rows"] for info, _ in kept_shards(out, manifest)]
    assert len(rows) == 5 and sum(rows) == 250 and max(rows) - min(rows) <= 1


def test_global_shuffle_is_seeded_and_rows_follow_it(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(300))
    first_out, first = run(tmp_path, [str(data)], "shards = 3\nshuffle_seed = 1", "a")
    again_out, again = run(tmp_path, [str(data)], "shards = 3\nshuffle_seed = 1", "b")
    other_out, other = run(tmp_path, [str(data)], "shards = 3\nshuffle_seed = 2", "c")
    files = lambda m: {s["file"]: s["sha256"] for s in m["shards"]}  # noqa: E731
    assert files(first) == files(again)
    order = [r["id"] for _, rows in kept_shards(first_out, first) for r in rows]
    assert order != [r["id"] for _, rows in kept_shards(other_out, other) for r in rows]
    assert order != sorted(order)
    for _, rows in kept_shards(first_out, first):  # each shard is a contiguous range of the order
        assert [order_key(r, 1) for r in rows] == sorted(order_key(r, 1) for r in rows)


def test_rows_sharing_an_id_take_the_same_order_whatever_order_they_arrive_in():
    """Documents with one id share a shuffle place; the shard writer's order must still be total,
    or the shard's bytes depend on the worker count (they did: 1 vs 2 workers differed)."""
    rows = [
        {"id": "7", "source": source, "text": text, "metadata": metadata}
        for source in ("a.jsonl", "b.jsonl")
        for text in ("one", "two")
        for metadata in ('{"line": 1}', '{"line": 2}')
    ] + [{"id": "8", "source": "a.jsonl", "text": "x", "metadata": "{}"}]
    orders = set()
    for seed in range(20):
        arrived = random.Random(seed).sample(rows, len(rows))
        orders.add(tuple(map(repr, sorted(arrived, key=lambda row: shard_order(row, 1)))))
    assert len(orders) == 1


def test_shard_starts_split_weight_evenly():
    keys = [(i / 10, f"d{i}", 10) for i in range(10)]
    assert shard_starts(0, keys, {0: 100}, 2) == [(0.0, "d0", 0), (0.5, "d5", 1)]
    assert shard_starts(1, keys[:2], {0: 50, 1: 20}, 2) == [(0.0, "d0", 1)]  # bucket 0 filled shard 0
    assert shard_starts(1, keys[:2], {0: 30, 1: 40}, 2) == [(0.0, "d0", 0), (0.1, "d1", 1)]


def test_mixture_proportions_within_one_point_on_100k_documents():
    rng = random.Random(0)
    sizes = {"web": 70000, "code": 20000, "math": 10000}
    rows = [(f"{group}-{i}", group, rng.randint(20, 2000)) for group, n in sizes.items() for i in range(n)]
    for weights, max_repeat in (
        ({"web": 0.5, "code": 0.3, "math": 0.2}, 1.0),
        ({"web": 0.4, "math": 0.6}, 3.0),
    ):
        totals = {g: sum(t for _, group, t in rows if group == g) for g in sizes}
        rates = mixture_rates(weights, totals, max_repeat)
        assert max(rates.values()) <= max_repeat + 1e-9
        achieved = dict.fromkeys(weights, 0)
        for row_id, group, tokens in rows:
            if group in rates:
                achieved[group] += copies(row_id, rates[group], seed=0) * tokens
        total = sum(achieved.values())
        for group, weight in weights.items():
            assert abs(achieved[group] / total - weight / sum(weights.values())) < 0.01, (weights, achieved)


def test_mixture_in_the_pipeline_rejects_what_it_leaves_out_and_reports_shares(tmp_path):
    web = write_jsonl(tmp_path / "web.jsonl", corpus(400, "w", seed=1))
    math = write_jsonl(tmp_path / "math.jsonl", corpus(40, "m", seed=2))
    out, manifest = run(
        tmp_path,
        [str(web), str(math)],
        'shards = 2\ntokenizer = "gristmill-bpe-32k"\nmixture = { "*web*" = 0.6, "*math*" = 0.4 }\nmixture_max_repeat = 4',
    )
    rows = [r for _, shard in kept_shards(out, manifest) for r in shard]
    repeats = [r for r in rows if "#repeat" in r["id"]]
    assert repeats and all(r["source"].endswith("math.jsonl") for r in repeats)
    rejected = pq.read_table(out / "rejected").to_pylist()
    assert rejected and {(r["stage"], r["reason"]) for r in rejected} == {("mixture", "downsampled")}
    counts = manifest["counts"]
    assert counts["input"] == 440 == counts["kept"] + counts["rejected"] and manifest["conservation"]
    assert manifest["kept_output"]["repeats"] == len(repeats)
    shares = manifest["kept_output"]["mixture"]
    assert abs(shares["*math*"]["achieved"] - 0.4) < 0.1 and shares["*math*"]["unit"] == "tokens"
    # the card and the report said kept N beside a kept/ of N + repeats rows, without a word
    card = (out / "README.md").read_text()
    assert (
        f"`kept/` holds {len(rows)} rows: the {counts['kept']} kept documents and {len(repeats)} repeats"
        in card
    )
    report = (out / "report.html").read_text()
    assert f'id="count-repeats">{len(repeats):,}<' in report and "Kept rows include the" in report


def test_token_ids_column_decodes_to_the_text(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(20))
    out, manifest = run(
        tmp_path, [str(data)], 'shards = 1\ntokenizer = "gristmill-bpe-32k"\ntoken_ids = true'
    )
    tokenizer = load_tokenizer(str(BUNDLED_TOKENIZER))
    for _, rows in kept_shards(out, manifest):
        for row in rows:
            assert (
                tokenizer.decode(row["token_ids"]) == row["text"] and len(row["token_ids"]) == row["n_tokens"]
            )


def test_no_tokenizer_by_default_leaves_counts_null(tmp_path):
    data = write_jsonl(tmp_path / "in.jsonl", corpus(10))
    out, manifest = run(tmp_path, [str(data)], "shards = 1")
    assert {r["n_tokens"] for _, rows in kept_shards(out, manifest) for r in rows} == {None}
    assert manifest["kept_output"]["n_tokens"] is None


@pytest.mark.parametrize(
    ("output", "message"),
    [
        ("shards = 2\ntarget_shard_tokens = 10", "set one of"),
        ("target_shard_tokens = 10", "needs a tokenizer"),
        ('mixture = { "a" = 0 }', "must be a finite positive number"),
        ("mixture_max_repeat = 0.5", "at least 1"),
        ("shuffle_seed = 1.5", "shuffle_seed"),
    ],
)
def test_output_table_errors_name_the_key(tmp_path, output, message):
    path = tmp_path / "r.toml"
    path.write_text(f'[output]\n{output}\n[input]\npaths = ["x.jsonl"]\n')
    with pytest.raises(ConfigError, match=message):
        load_recipe(str(path))


def test_mixture_group_is_the_first_matching_pattern():
    assert mixture_group("data/web/a.jsonl", ["*web*", "*"]) == "*web*"
    assert mixture_group("data/code/a.jsonl", ["*web*", "*"]) == "*"
    assert mixture_group("x", ["*web*"]) is None
