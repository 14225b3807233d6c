"""The README's stage reference is generated from the registry (`make readme`)."""

from pathlib import Path

from pipeline.docs import BEGIN, END, _summary, registry_markdown

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_stage_reference_is_what_the_registry_generates():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"{BEGIN}\n{registry_markdown()}\n{END}" in readme, "the README is stale: run `make readme`"


def test_a_stage_is_summed_up_by_its_docstrings_whole_first_paragraph():
    class Wrapped:
        """Remove paragraphs copied from another document, and
        documents mostly contained in another.

        Reasons: ...
        """

    assert (
        _summary(Wrapped)
        == "Remove paragraphs copied from another document, and documents mostly contained in another."
    )


def test_the_readme_recipe_example_loads(tmp_path, monkeypatch):
    """Its mixture named folders no input has: `gristmill validate` refused the example."""
    from pipeline.preflight import check_inputs, check_mixture
    from pipeline.recipe import load_recipe

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("## Recipes\n\n```toml\n") + len("## Recipes\n\n```toml\n")
    (tmp_path / "recipe.toml").write_text(readme[start : readme.index("```", start)])
    monkeypatch.chdir(ROOT)  # its paths are the repository's sample_data
    recipe = load_recipe(tmp_path / "recipe.toml")
    check_mixture(recipe, check_inputs(recipe.input))
