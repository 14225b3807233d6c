import re

import pytest

from pipeline.recipe import DEFAULT_RECIPE, build_recipe, language_notes, load_recipe
from pipeline.stages import ConfigError


def recipe(stages, **tables):
    return {"input": {"paths": ["x.jsonl"]}, "stage": stages, **tables}


def test_defaults_make_a_sensible_stage():
    built = build_recipe(recipe([{"use": "length"}]))
    assert built.stages[0].name == "length"
    assert built.stages[0].resolved() == {
        "min_words": 50,
        "max_words": 100_000,
        "min_chars": 0,
        "max_chars": 10_000_000,
    }


@pytest.mark.parametrize(
    "stage, message",
    [
        ({"use": "no_such_stage"}, "stage 1 (no_such_stage): unknown stage 'no_such_stage' (known: "),
        ({"use": "gopher_qualty"}, "unknown stage 'gopher_qualty' (did you mean 'gopher_quality'? known: "),
        (
            {"use": "length", "min_wrds": 3},
            "stage 1 (length): unknown parameter 'min_wrds' (did you mean 'min_words'? known: ",
        ),
        ({"use": "length", "min_words": "ten"}, "stage 1 (length): min_words: expected int"),
        ({"use": "length", "min_words": -1}, "stage 1 (length): min_words: -1 is below the minimum 0"),
        ({"use": "score_threshold", "score": "s", "min": float("nan")}, "min: nan is not a number"),
        ({"use": "length", "name": "short", "min_words": 9, "max_words": 3}, "stage 1 (short): min_words"),
        ({"name": "x"}, "stage 1: missing `use"),
    ],
)
def test_bad_stage_names_index_name_and_key(stage, message):
    with pytest.raises(ConfigError) as error:
        build_recipe(recipe([stage]), "r.toml")
    assert message in str(error.value)
    assert str(error.value).startswith("r.toml: ")


def test_bool_is_not_an_int():
    with pytest.raises(ConfigError, match="min_words: expected int"):
        build_recipe(recipe([{"use": "length", "min_words": True}]))


def test_duplicate_stage_names_need_a_name():
    with pytest.raises(ConfigError, match="two stages are named 'length'"):
        build_recipe(recipe([{"use": "length"}, {"use": "length"}]))
    build_recipe(recipe([{"use": "length"}, {"use": "length", "name": "length_again"}]))


def test_duplicate_generator_names_need_a_name():
    """The second generator's candidates were silently dropped (both had one checkpoint key)."""
    math = {"use": "math", "count": 4}
    with pytest.raises(ConfigError, match="two generators are named 'math'; give one a `name`"):
        build_recipe(recipe([{"use": "verify"}], synthesis=[math, {**math, "seed": 1}]))
    build_recipe(recipe([{"use": "verify"}], synthesis=[math, {**math, "seed": 1, "name": "math_1"}]))


@pytest.mark.parametrize(
    "name, message",
    [
        ("read", "the stage name 'read' is reserved for the readers"),
        ("mixture", "the stage name 'mixture' is reserved for the output mixture's rejections"),
        ("length/strict", "stage name 'length/strict': a stage name may not hold '/'"),
    ],
)
def test_stage_names_that_the_run_figures_would_mix_up_are_refused(name, message):
    """Figures are keyed 'stage/reason': `length` and `length/strict` shared counts, and a stage
    named `mixture` gave the funnel a negative kept count."""
    with pytest.raises(ConfigError, match=message):
        build_recipe(recipe([{"use": "length"}, {"use": "length", "name": name}]))


@pytest.mark.parametrize(
    "tables, message",
    [
        ({"run": {"max_failed_fraction": 2.0}}, "max_failed_fraction"),
        ({"run": {"nam": "x"}}, "[run]: unknown key 'nam' (did you mean 'name'? known: "),
        ({"output": {"shards": 2, "target_shard_mb": 5}}, "not shards and target_shard_mb"),
        ({"output": {"shards": "2"}}, "shards must be int"),
        ({"output": {"row_group_mb": float("nan")}}, "row_group_mb must be a finite number, got nan"),
        ({"output": {"target_shard_mb": float("nan")}}, "target_shard_mb must be a finite number"),
        # these passed loading and failed the run after everything was read
        ({"output": {"row_group_mb": float("inf")}}, "row_group_mb must be a finite number, got inf"),
        ({"output": {"mixture_max_repeat": float("nan")}}, "mixture_max_repeat must be a finite number"),
        ({"output": {"mixture": {"*": float("inf")}}}, "weight of '*' must be a finite positive number"),
        ({"output": {"mixture": {"*": float("nan")}}}, "weight of '*' must be a finite positive number"),
        ({"run": {"max_failed_fraction": float("nan")}}, "max_failed_fraction must be a finite number"),
        ({"input": {"paths": ["a"], "html_extractor": "lynx"}}, "html_extractor"),
        ({"input": {"paths": ["a"], "split_bytes": 0}}, "[input] split_bytes must be at least 1, got 0"),
        ({"stages": []}, "unknown table [stages] (did you mean 'stage'? known: "),
        # these ran everything, then ran out of memory (3M empty shards) or file name length
        ({"output": {"shards": 4611686018427387904}}, "shards must be at most 100,000"),
        ({"output": {"target_shard_mb": 1e-300}}, "target_shard_mb must be at least 0.01"),
        ({"output": {"shards": -1}}, "[output] shards must be 0 (unset) or more, got -1"),
    ],
)
def test_bad_tables(tables, message):
    data = recipe([{"use": "length"}])
    data.update(tables)
    with pytest.raises(ConfigError) as error:
        build_recipe(data)
    assert message in str(error.value)


@pytest.mark.parametrize(
    "table, message",
    [
        # each passed loading, then failed the run once every document was read (or, for memory_mb,
        # made every code sample `crashed`)
        ({"use": "exact_dedup", "name": "x" * 101}, "`name` is longer than 100 characters"),
        ({"use": "semantic_dedup", "seed": 2**31}, "seed: 2147483648 is above the maximum 2147483647"),
        ({"use": "verify", "memory_mb": 2**53}, "memory_mb: 9007199254740992 is above the maximum"),
        # the manifest would hold `Infinity`, which is not JSON
        ({"use": "gopher_quality", "max_avg_word_length": float("inf")}, "inf is not a finite number"),
    ],
)
def test_values_a_run_cannot_use_are_refused_when_the_recipe_loads(table, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_recipe(recipe([table]))


def test_two_stages_writing_one_score_name_are_refused():
    """Before, the later stage silently overwrote the earlier one's score."""
    stages = [
        {"use": "fasttext_quality", "name": "emb.toxic"},
        {"use": "embedding_quality", "name": "emb", "model": "", "heads": ["toxic"]},
    ]
    with pytest.raises(ConfigError, match="stage 2 \\(emb\\): writes score 'emb.toxic', which an earlier"):
        build_recipe(recipe(stages))


def test_no_input_is_an_error():
    with pytest.raises(ConfigError, match="no input"):
        build_recipe({"stage": [{"use": "length"}]})


def test_input_override_and_file_errors(tmp_path):
    path = tmp_path / "r.toml"
    path.write_text('[input]\npaths = ["a.jsonl"]\n[[stage]]\nuse = "length"\n')
    assert load_recipe(path, ["b.jsonl"]).input.paths == ("b.jsonl",)
    with pytest.raises(ConfigError, match="recipe file not found .shipped recipes: .*default.toml"):
        load_recipe(tmp_path / "missing.toml")
    with pytest.raises(ConfigError, match=f"did you mean {path}"):
        load_recipe(tmp_path / "r")
    with pytest.raises(ConfigError, match=f"did you mean {DEFAULT_RECIPE.parent / 'fineweb.toml'}"):
        load_recipe("fineweb")
    path.write_text("[input\n")
    with pytest.raises(ConfigError, match="invalid TOML"):
        load_recipe(path)
    with pytest.raises(ConfigError, match=f"{tmp_path}: cannot read the recipe: Is a directory"):
        load_recipe(tmp_path)


def test_a_recipe_saved_with_a_byte_order_mark_loads(tmp_path):
    path = tmp_path / "notepad.toml"
    path.write_text('[input]\npaths = ["a.jsonl"]\n[[stage]]\nuse = "length"\n', encoding="utf-8-sig")
    assert load_recipe(path).input.paths == ("a.jsonl",)


@pytest.mark.parametrize(
    "value, message",
    [
        ("en", "stage 1 (length): only_languages: must be a non-empty list of language codes"),
        ([], "must be a non-empty list"),
        (["en", "e n"], "only_languages: 'e n' is not a language code"),
        (["en", 3], "only_languages: must be a list of language codes"),
        # before, accepted: no document is ever in it, so the stage quietly did nothing
        (["EN"], "only_languages: lid.176 has no label 'EN' (did you mean 'en'?"),
    ],
)
def test_only_languages_must_be_a_list_of_codes(value, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        build_recipe(recipe([{"use": "length", "only_languages": value}]))


@pytest.mark.parametrize(
    "table",
    [
        {"use": "c4_badwords", "default_language": "EN"},
        {"use": "semantic_dedup", "languages": ["EN"]},
        {"use": "unit_dedup", "embed_languages": ["EN"]},
    ],
)
def test_every_language_parameter_takes_only_lid176_labels(table):
    key = next(key for key in table if key != "use")
    with pytest.raises(ConfigError, match=re.escape(f"{key}: lid.176 has no label 'EN' (did you mean 'en'?")):
        build_recipe(recipe([table]))


def test_only_languages_is_kept_and_shown_in_the_resolved_recipe():
    built = build_recipe(recipe([{"use": "length", "only_languages": ["en", "de"]}, {"use": "exact_dedup"}]))
    assert built.stages[0].only_languages == {"en", "de"} and built.stages[1].only_languages is None
    resolved = built.resolved()["stages"]
    assert resolved[0]["only_languages"] == ["de", "en"] and "only_languages" not in resolved[1]


SCORER = {"use": "fasttext_quality", "only_languages": ["en"]}


@pytest.mark.parametrize(
    "reader, ok",
    [
        ({"use": "score_threshold", "score": "fasttext_quality"}, False),
        ({"use": "score_threshold", "score": "fasttext_quality", "only_languages": ["en", "de"]}, False),
        ({"use": "score_threshold", "score": "fasttext_quality", "only_languages": ["en"]}, True),
        ({"use": "exact_dedup", "prefer_score": "fasttext_quality"}, True),  # unscored: ranked last
    ],
)
def test_a_stage_reading_a_score_sees_only_the_languages_it_was_written_for(reader, ok):
    data = recipe([SCORER, reader])
    if ok:
        build_recipe(data)
        return
    with pytest.raises(
        ConfigError, match="stage 2 .*score 'fasttext_quality' is written only for documents in en"
    ):
        build_recipe(data, "r.toml")


def notes_of(stages):
    return language_notes(build_recipe(recipe(stages), "r.toml"))


def test_notes_name_the_stages_that_misjudge_the_languages_kept():
    gopher, scorer = {"use": "gopher_quality"}, {"use": "fasttext_quality"}
    notes = notes_of([{"use": "language", "languages": ["en", "de", "zh"]}, gopher, scorer])
    assert len(notes) == 2
    assert notes[0].startswith("note: r.toml: stage 2 (gopher_quality): its stop_words are Gopher's English")
    assert "documents in de, zh are rejected as too_few_stop_words" in notes[0]
    assert "documents in zh (written without spaces) are rejected as too_few_words" in notes[0]
    # Every stage counting words split at spaces says so (length, c4 and fineweb were silent).
    stages = [
        {"use": "length"},
        {"use": "c4_quality"},
        {"use": "fineweb_quality"},
        {"use": "gopher_repetition"},
    ]
    word_notes = notes_of([{"use": "language", "languages": ["en", "ja"]}, *stages])
    assert [note.split(": ")[2] for note in word_notes] == [
        "stage 2 (length)",
        "stage 3 (c4_quality)",
        "stage 4 (fineweb_quality)",
    ]
    assert all("documents in ja (written without spaces)" in note for note in word_notes)
    assert notes_of([{"use": "language", "languages": ["en", "de"]}, *stages]) == []
    assert notes_of([{"use": "language", "languages": ["ja"]}, {"use": "length", "min_words": 1}]) == []
    assert notes[1].startswith(
        "note: r.toml: stage 3 (fasttext_quality): its shipped model was trained on English"
    )
    assert "in languages other than English" in notes_of([{"use": "language", "languages": []}, scorer])[0]
    combined = [{"use": "embedding_quality", "model": "", "heads": ["informative", "depth", "toxic"]}]
    combined += [{"use": "quality"}]
    notes = notes_of([{"use": "language", "languages": ["de"]}, scorer, *combined])
    assert [note.split(": ")[2] for note in notes] == [
        "stage 2 (fasttext_quality)",
        "stage 3 (embedding_quality)",
        "stage 4 (quality)",
    ]


def test_a_note_when_only_languages_comes_before_any_language_stage():
    (note,) = notes_of([{"use": "length", "only_languages": ["en"]}, {"use": "language"}])
    assert note.startswith("note: r.toml: stage 1 (length): only_languages, and no language stage before it")


@pytest.mark.parametrize(
    "stages",
    [
        [{"use": "gopher_quality"}, {"use": "fasttext_quality"}],  # no language stage: languages unknown
        [{"use": "language"}, {"use": "gopher_quality"}],  # English only
        [{"use": "language", "languages": ["de"]}, {"use": "gopher_quality", "stop_words": ["der", "die"]}],
        [{"use": "language", "languages": ["de", "en"]}, {"use": "gopher_quality", "only_languages": ["en"]}],
        [{"use": "gopher_quality"}, {"use": "language", "languages": ["de"]}],  # before identification
    ],
)
def test_no_note_where_no_stage_misjudges_a_language_it_sees(stages):
    assert notes_of(stages) == []
