"""Build configuration for the native text analysis (everything else is in pyproject.toml).

`optional=True`: without a working C compiler the install still succeeds and
`filters.text_analysis` falls back to its pure-Python reference with a warning.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "filters._text_native",
            ["filters/_text_native.c"],
            extra_compile_args=["-O3"],
            optional=True,
        )
    ]
)
