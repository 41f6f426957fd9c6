# The two commands of the README: `make compare` and `make test`.
# Each creates .venv on first use and installs the project with the pinned versions in
# constraints.txt (pyproject.toml keeps open ranges for users, GPU builds welcome).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Threads are set alike for every worker; 2 cores here.
THREADS ?= 2
OUT ?= runs/fast

.PHONY: compare test reference clean-venv

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24"
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all,test]"
	touch $(STAMP)

compare: $(STAMP)
	$(BIN)/python -m comparisons run --profile fast --seeds 1 --threads $(THREADS) --out $(OUT)

test: $(STAMP)
	$(BIN)/python -m pytest -q

# The committed reference run (about 18 minutes on 2 cores), English and Chinese reports.
reference: $(STAMP)
	$(BIN)/python -m comparisons run --profile full --seeds 3 --threads $(THREADS) --lang zh --out results/reference

clean-venv:
	rm -rf $(VENV)
