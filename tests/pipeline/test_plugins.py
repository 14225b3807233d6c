"""Stages from installed packages: the `gristmill.plugins` entry point group, in a real process.

Each test installs a small package the way pip lays one out (the module and a `.dist-info`
folder with `entry_points.txt`) into a folder put on PYTHONPATH for a `gristmill` subprocess.
"""

import json
import os
import subprocess
import sys

import pyarrow.parquet as pq

from tests.conftest import LONG_TEXT, write_jsonl, write_recipe

SHOUTING_STAGE = '''
from pipeline.document import KEEP, reject
from pipeline.stages import DocumentStage, Param, register


@register("no_shouting")
class NoShouting(DocumentStage):
    """Reject documents that are mostly upper case.

    Reasons: `shouting`.
    """

    reasons = ("shouting",)
    params = {"max_upper": Param(float, 0.5, "largest fraction of upper-case letters", min=0, max=1)}

    def check(self, doc):
        letters = [c for c in doc.text if c.isalpha()]
        upper = sum(c.isupper() for c in letters) / max(1, len(letters))
        if upper > self.max_upper:
            return reject("shouting", f"upper={upper:.2f}>{self.max_upper}")
        return KEEP
'''


def install_plugin(site, module: str, source: str) -> None:
    """Lay out package `module` with one `gristmill.plugins` entry point, as pip would."""
    (site / f"{module}.py").write_text(source)
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[gristmill.plugins]\n{module} = {module}\n")


def gristmill(site, *argv):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), os.getcwd()])}
    return subprocess.run(
        [sys.executable, "-m", "pipeline.cli", *argv], env=env, capture_output=True, text=True, timeout=300
    )


def test_a_recipe_uses_a_stage_from_an_installed_package(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "shouting_filters", SHOUTING_STAGE)
    data = write_jsonl(
        tmp_path / "in.jsonl",
        [{"id": "calm", "text": LONG_TEXT}, {"id": "loud", "text": LONG_TEXT.upper()}],
    )
    recipe = write_recipe(
        tmp_path / "r.toml", [str(data)], '[[stage]]\nuse = "no_shouting"\nmax_upper = 0.6\n'
    )
    out = tmp_path / "out"
    # the default local runner: stages are unpickled in separate worker processes
    done = gristmill(site, "run", "--recipe", str(recipe), "--output", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    assert pq.read_table(out / "kept").column("id").to_pylist() == ["calm"]
    rejected = pq.read_table(out / "rejected").to_pylist()
    assert [(r["id"], r["stage"], r["reason"]) for r in rejected] == [("loud", "no_shouting", "shouting")]
    assert rejected[0]["detail"].startswith("upper=1.00>0.6")
    assert json.loads((out / "manifest.json").read_text())["counts"]["rejected"] == 1

    listing = gristmill(site, "list", "no_shouting")
    assert listing.returncode == 0, listing.stderr
    assert "no_shouting  (document stage, plugin shouting_filters)" in listing.stdout
    assert "reasons: shouting" in listing.stdout


def test_a_plugin_that_fails_to_import_stops_with_one_line_naming_it(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "broken_filters", "import not_a_module_anywhere\n")
    recipe = write_recipe(tmp_path / "r.toml", ["in.jsonl"], '[[stage]]\nuse = "length"\n')
    done = gristmill(site, "validate", str(recipe))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "gristmill: error: plugin 'broken_filters' (broken_filters, entry point group gristmill.plugins) "
        "failed to load: ModuleNotFoundError: No module named 'not_a_module_anywhere'"
    ]


def test_a_plugin_cannot_replace_a_shipped_stage(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    install_plugin(site, "my_length", SHOUTING_STAGE.replace('"no_shouting"', '"length"'))
    recipe = write_recipe(tmp_path / "r.toml", ["in.jsonl"], '[[stage]]\nuse = "length"\n')
    done = gristmill(site, "validate", str(recipe))
    assert done.returncode == 2
    assert "stage name 'length' of my_length.NoShouting is already taken by filters.length." in done.stderr
