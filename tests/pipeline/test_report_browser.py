"""report.html opened in headless Chromium (installed by `make test`), offline."""

import json
import re

import pytest

from tests.pipeline.browser import chromium, pixel_spread, render

pytestmark = pytest.mark.skipif(chromium() is None, reason="chromium not installed (make test installs it)")


def test_report_renders_without_errors_and_shows_the_manifest(curated_output, tmp_path):
    page = curated_output / "report.html"
    assert "http://" not in page.read_text() and "https://" not in page.read_text()  # self-contained
    result = render(page, tmp_path)
    dom, manifest = result["dom"], json.loads((curated_output / "manifest.json").read_text())
    assert result["console"] == [] and 'data-errors="0"' in dom
    for name, key in (("read", "input"), ("kept", "kept"), ("rejected", "rejected"), ("failed", "failed")):
        assert re.search(rf'id="count-{name}">{manifest["counts"][key]:,}<', dom), name
    for stage in manifest["stages"]:
        assert stage["name"] in dom
    assert "too_few_words" in dom and "exact_dedup/exact_duplicate" in dom and "fasttext_quality" in dom
    assert pixel_spread(result["screenshot"]) > 10  # not blank
    assert int(re.search(r'data-render-ms="(\d+)"', dom).group(1)) < 3000
