"""Build configuration of the C extensions (everything else is in pyproject.toml).

`optional=True`: without a working C compiler the install still succeeds, and
`filters.text_analysis` / `dedup.signatures` / `quality_models.combined` fall back to their Python references and `filters.language`
to fastText's binding, with a warning.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(name, [name.replace(".", "/") + ".c"], extra_compile_args=["-O3"], optional=True)
        for name in (
            "filters._text_native",
            "dedup._minhash_native",
            "filters._lid_native",
            "quality_models._stats_native",
        )
    ]
)
