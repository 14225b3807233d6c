import pytest

from pipeline.recipe import DEFAULT_RECIPE, build_recipe, load_recipe
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
        ({"use": "no_such_stage"}, "stage 1 (no_such_stage): unknown stage 'no_such_stage'"),
        ({"use": "length", "min_wrds": 3}, "stage 1 (length): unknown parameter 'min_wrds'"),
        ({"use": "length", "min_words": "ten"}, "stage 1 (length): min_words: expected int"),
        ({"use": "length", "min_words": -1}, "stage 1 (length): min_words: -1 is below the minimum 0"),
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


@pytest.mark.parametrize(
    "tables, message",
    [
        ({"run": {"max_failed_fraction": 2.0}}, "max_failed_fraction"),
        ({"run": {"nam": "x"}}, "[run]: unknown key 'nam'"),
        ({"output": {"shards": 2, "target_shard_mb": 5}}, "not shards and target_shard_mb"),
        ({"output": {"shards": "2"}}, "shards must be int"),
        ({"input": {"paths": ["a"], "html_extractor": "lynx"}}, "html_extractor"),
        ({"stages": []}, "unknown table [stages]"),
    ],
)
def test_bad_tables(tables, message):
    data = recipe([{"use": "length"}])
    data.update(tables)
    with pytest.raises(ConfigError) as error:
        build_recipe(data)
    assert message in str(error.value)


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
