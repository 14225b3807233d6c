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
