import random
import re

import apache_beam as beam
import numpy as np
import pytest
from apache_beam.options.pipeline_options import PipelineOptions
from apache_beam.testing.util import assert_that, equal_to

from dedup.minhash import MinHashDedup, VerifyPairs, _endpoints, by_partition, verification_set
from dedup.signatures import (
    _UNSPACED,
    MinHasher,
    band_keys,
    jaccard,
    normalize_text,
    shingle_hashes,
    words_of_unspaced_scripts,
)
from pipeline.document import Document
from pipeline.run import new_pipeline
from pipeline.stages import ConfigError

VOCAB = [
    "".join(chr(97 + (i // 26**k) % 26) for k in range(3)) for i in range(3000)
]  # no digits: they normalize to 0


def text(seed: int, words: int = 300) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(VOCAB) for _ in range(words))


def edit(base: str, seed: int, changes: int) -> str:
    rng = random.Random(seed)
    words = base.split()
    for _ in range(changes):
        words[rng.randrange(len(words))] = rng.choice(VOCAB)
    return " ".join(words)


def test_normalize_text_matches_simplify_text_rules():
    assert normalize_text("  Hello,\tWORLD!  It's 3.14 or 1,000 — café\n") == "hello world it s 0 or 0 cafe"


def test_shingles_ignore_case_punctuation_and_whitespace():
    a = shingle_hashes("The quick brown fox jumps over the lazy dog", 5, 1)
    b = shingle_hashes("the QUICK, brown fox...\n jumps over the lazy dog!", 5, 1)
    assert a.size == 5 and np.array_equal(a, b)
    assert shingle_hashes("two words", 5, 1).size == 1  # short text: one shingle of all its words
    assert shingle_hashes(" ... ", 5, 1).size == 0
    assert not np.array_equal(a, shingle_hashes("The quick brown fox jumps over the lazy dog", 5, 2))


# One news-style paragraph per script written without spaces, an edit of a phrase in it, and an
# unrelated paragraph in the same script.
UNSPACED = {
    "zh": (
        "北京是中华人民共和国的首都，也是全国的政治和文化中心。这座城市有三千多年的历史，拥有故宫、天坛和长城等"
        "许多名胜古迹。每年都有大量游客从世界各地来这里参观，感受古老文化与现代生活的结合。",
        ("大量游客", "很多旅行者"),
        "上海位于长江入海口，是中国重要的经济、金融和贸易中心。港口的吞吐量多年位居世界前列，城市的夜景也吸引着无数人。",
    ),
    "ja": (
        "東京は日本の首都であり、世界でも有数の大都市です。毎朝たくさんの人が電車に乗って会社や学校へ向かいます。"
        "古い寺院と新しい高層ビルが並ぶ街の景色は、訪れる人々に強い印象を残します。",
        ("たくさんの人", "大勢の人"),
        "京都には千年以上の歴史を持つ神社やお寺が数多く残っており、春の桜と秋の紅葉の季節には観光客でにぎわいます。",
    ),
    "th": (
        "กรุงเทพมหานครเป็นเมืองหลวงของประเทศไทยและเป็นศูนย์กลางทางเศรษฐกิจของประเทศ มีประชากรมากกว่าสิบล้านคน"
        "นักท่องเที่ยวจากทั่วโลกเดินทางมาชมวัดและตลาดน้ำที่มีชื่อเสียงทุกปี",
        ("นักท่องเที่ยว", "ผู้มาเยือน"),
        "เชียงใหม่ตั้งอยู่ทางภาคเหนือของประเทศไทย ล้อมรอบด้วยภูเขาและมีอากาศเย็นสบายในช่วงฤดูหนาว",
    ),
}


@pytest.mark.parametrize("language", sorted(UNSPACED))
def test_scripts_without_spaces_are_shingled_by_character_pairs(language):
    """A page in Chinese, Japanese or Thai is one whitespace word per sentence: word shingles saw
    an edit of a phrase as a different page. Overlapping character pairs are the words there."""
    page, (phrase, replacement), other = UNSPACED[language]
    assert phrase in page
    original = shingle_hashes(page, 5, 1)
    assert jaccard(original, shingle_hashes(page.replace(phrase, replacement), 5, 1)) >= 0.75
    assert jaccard(original, shingle_hashes(other, 5, 1)) < 0.05
    assert normalize_text("Tokyo 東京タワー, 2024") == "tokyo 東京タワー 0"  # datatrove's own rules unchanged


def _pairs_reference(text: str) -> str:
    """`words_of_unspaced_scripts` by its definition, one run at a time."""

    def spaced(run):
        start, end = run.span()
        characters = run.group()
        words = " ".join(a + b for a, b in zip(characters, characters[1:])) or characters
        before = " " if start and text[start - 1] != " " else ""
        return before + words + (" " if end < len(text) and text[end] != " " else "")

    return re.sub(f"[{_UNSPACED}]+", spaced, text)


def test_runs_of_unspaced_scripts_become_character_pairs_next_to_other_words():
    assert words_of_unspaced_scripts("abc北京 东x ok 東京タワー") == "abc 北京 东 x ok 東京 京タ タワ ワー"
    assert words_of_unspaced_scripts("café 서울 시") == "café 서울 시"  # Korean is written with spaces
    rng = random.Random(5)
    pieces = ["北", "京", "タ", "ก", "𠀀", " ", "a", "é", "서", "ab", "ไทย"]
    for _ in range(5_000):
        text = " ".join("".join(rng.choice(pieces) for _ in range(rng.randrange(14))).split())
        assert words_of_unspaced_scripts(text) == _pairs_reference(text), text


def test_signature_agreement_estimates_jaccard():
    minhasher = MinHasher(112, 1)
    errors = []
    for seed in range(30):
        base = text(seed)
        a, b = shingle_hashes(base, 5, 1), shingle_hashes(edit(base, seed, 10), 5, 1)
        sig = minhasher.signatures([a, b])
        errors.append(np.mean(sig[0] == sig[1]) - jaccard(a, b))
    assert abs(np.mean(errors)) < 0.02 and np.std(errors) < 0.07  # sd of a 112-hash estimate ≈ 0.045


def test_batched_signatures_equal_one_by_one():
    minhasher = MinHasher(112, 1)
    sets = [shingle_hashes(text(s, words=50 + 400 * (s % 3)), 5, 1) for s in range(12)] + [
        np.empty(0, np.uint64)
    ]
    together = minhasher.signatures(sets)
    for i, s in enumerate(sets[:-1]):
        assert np.array_equal(together[i], minhasher.signatures([s])[0])
    keys = band_keys(together, 14, 8, 1)
    assert keys.shape == (13, 14) and len(set(keys[0].tolist())) == 14


def corpus() -> list[Document]:
    base, other = text(1), text(2)
    docs = [
        Document("a-orig", base),
        Document("a-edit1", edit(base, 10, 2)),
        Document("a-edit2", "HEADER " + edit(base, 11, 3)),
        Document("a-long", base + " footer text appended here"),
        Document("b", other),
        Document("b-copy", other.upper()),
        Document("hard-negative", edit(base, 12, 60)),  # same "template", Jaccard ≈ 0.3
        Document("short", "tiny"),
        Document("empty", "   "),
    ] + [Document(f"u{i}", text(100 + i)) for i in range(5)]
    return docs


def run_stage(docs, stage, workers=1):
    """(pipeline, kept ids, rejected rows, failed) of `stage` on `docs`; with 2 workers, in worker
    processes and with the input spread over them."""
    options = ["--direct_running_mode=multi_processing", f"--direct_num_workers={workers}"]
    pipeline = new_pipeline(PipelineOptions(options) if workers > 1 else None)
    out = stage.expand(pipeline | beam.Create(docs, reshuffle=workers > 1))
    kept = out.kept | "KeptIds" >> beam.Map(lambda d: d.id)
    rejected = out.rejected | "RejectedRows" >> beam.Map(
        lambda r: (r.doc.id, r.stage, r.reason, r.duplicate_of, r.detail)
    )
    return pipeline, kept, rejected, out.failed


def expected_outcome():
    kept = ["a-long", "b", "hard-negative", "short", "empty"] + [f"u{i}" for i in range(5)]
    rejected = [
        ("a-orig", "near_dups", "near_duplicate", "a-long", "cluster_size=4"),
        ("a-edit1", "near_dups", "near_duplicate", "a-long", "cluster_size=4"),
        ("a-edit2", "near_dups", "near_duplicate", "a-long", "cluster_size=4"),
        ("b-copy", "near_dups", "near_duplicate", "b", "cluster_size=2"),
    ]
    return kept, rejected


def check_outcome(docs, rounds, workers=1):
    """Run the stage on `docs`; the expected kept, rejected and counters, whatever the order."""
    stage = MinHashDedup("near_dups", cc_rounds=rounds)
    pipeline, kept, rejected, failed = run_stage(docs, stage, workers)
    exp_kept, exp_rejected = expected_outcome()
    assert_that(kept, equal_to(exp_kept), label="kept")
    assert_that(rejected, equal_to(exp_rejected), label="rejected")
    assert_that(failed, equal_to([]), label="failed")
    result = pipeline.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    assert counters.get("cc_unconverged_nodes", 0) == 0
    assert counters["verified_pairs"] == 6 + 1  # the a-cluster's 6 pairs, b/b-copy
    assert counters["clusters"] == 2 and counters["near_duplicates"] == 4
    assert counters["docs_without_shingles"] == 1


@pytest.mark.parametrize("shuffle_seed, rounds", [(None, 20), (3, 3)])
def test_stage_removes_near_duplicates_deterministically_in_any_order(shuffle_seed, rounds):
    docs = corpus()
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(docs)
    check_outcome(docs, rounds)


def test_prefer_score_and_tie_break_choose_the_survivor():
    docs = [doc.with_scores({"quality": 0.9 if doc.id == "a-edit1" else 0.1}) for doc in corpus()]
    pipeline, kept, rejected, _ = run_stage(
        docs, MinHashDedup("near_dups", prefer_score="quality", cc_rounds=3)
    )
    assert_that(
        rejected | beam.Filter(lambda r: r[0].startswith("a-")) | beam.Map(lambda r: r[3]) | beam.Distinct(),
        equal_to(["a-edit1"]),
    )
    pipeline.run().wait_until_finish()
    pipeline, kept, rejected, _ = run_stage(
        docs, MinHashDedup("near_dups", tie_break="smallest_id", cc_rounds=3)
    )
    assert_that(
        rejected | beam.Map(lambda r: (r[0], r[3])),
        equal_to([("a-long", "a-edit1"), ("a-orig", "a-edit1"), ("a-edit2", "a-edit1"), ("b-copy", "b")]),
    )
    pipeline.run().wait_until_finish()


def test_oversized_buckets_use_star_edges_and_unverified_mode_accepts_collisions():
    base = text(5)
    docs = [Document(f"copy{i}", base) for i in range(6)] + [Document("hard", edit(base, 3, 40))]
    stage = MinHashDedup("near_dups", max_bucket_size=3, jaccard_threshold=0.0, cc_rounds=3)
    pipeline, kept, rejected, _ = run_stage(docs, stage)
    assert_that(kept, equal_to(["copy0", "hard"]), label="kept")
    assert_that(
        rejected | beam.Map(lambda r: (r[3], r[4])) | beam.Distinct(), equal_to([("copy0", "cluster_size=6")])
    )
    result = pipeline.run()
    result.wait_until_finish()
    counters = {c.key.metric.name: c.committed for c in result.metrics().query()["counters"]}
    assert counters["oversized_buckets"] >= 1 and counters["star_edges"] >= 5
    assert "candidate_pairs" not in counters  # nothing verified


def test_multi_worker_run_gives_the_same_outcome_in_another_order():
    docs = corpus()
    random.Random(4).shuffle(docs)
    check_outcome(docs, 3, workers=2)


def test_settings_s_curve_and_derived_bands():
    stage = MinHashDedup("near_dups")
    extra = stage.manifest_extra()
    assert (extra["bands"], extra["rows"], extra["num_perm"]) == (14, 8, 112)
    assert extra["s_curve"]["0.50"] < 0.1 and extra["s_curve"]["0.85"] > 0.98
    derived = MinHashDedup("near_dups", target_threshold=0.9)
    assert derived.bands * derived.rows <= 112 and derived.rows > 8
    with pytest.raises(ConfigError, match="bands"):
        MinHashDedup("near_dups", bands=512, rows=128)
    # a target below the verification threshold found pairs of Jaccard 0.5-0.75 only to refuse them all
    with pytest.raises(
        ConfigError,
        match=r"target_threshold 0.5 is below jaccard_threshold 0.75: .*set jaccard_threshold = 0.5",
    ):
        MinHashDedup("near_dups", target_threshold=0.5)
    assert MinHashDedup("near_dups", target_threshold=0.5, jaccard_threshold=0.5).rows < 8


def verify(pairs, stored, tmp_path, partitions=4):
    """Run `VerifyPairs` on candidate `pairs` with the shingle sets of `stored` (id → hashes)."""
    chunks = by_partition(
        [(i, verification_set(np.array(h, dtype=np.uint64))) for i, h in stored.items()], partitions
    )
    pipeline = new_pipeline()
    sets = pipeline | "Sets" >> beam.Create(chunks)
    verified = (
        pipeline
        | "Pairs" >> beam.Create(pairs)
        | VerifyPairs(sets, _endpoints, 0.5, "near_dups", partitions, str(tmp_path))
    )
    return pipeline, verified


def test_verification_meets_each_pairs_sets_in_spill_files_and_checks_jaccard(tmp_path):
    stored = {"a": range(100), "b": range(10, 100), "c": range(60, 160), "d": range(500, 600)}
    pipeline, verified = verify([("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")], stored, tmp_path)
    assert_that(verified, equal_to([("a", "b")]))  # J(a,b) = 0.9; the others are at most 0.4
    pipeline.run().wait_until_finish()
    assert not [f for f in tmp_path.rglob("*") if f.is_file()]  # the spilled sets are read once, then deleted


@pytest.mark.parametrize(
    "pairs, message",
    [
        ([("a", "b"), ("a", "x")], "met 1 shingle sets instead of 2"),  # x's set never stored
        ([("a", "b"), ("x", "y")], "2 candidate pairs, but 1 reached verification"),  # neither stored
    ],
)
def test_verification_fails_the_run_when_a_pair_misses_a_set(tmp_path, pairs, message):
    pipeline, _ = verify(pairs, {"a": range(100), "b": range(100)}, tmp_path)
    with pytest.raises(Exception, match=message):
        pipeline.run().wait_until_finish()
