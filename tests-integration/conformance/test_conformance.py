"""The reference library's own test suite (data/, the repository's copy), every file, on py-eager.

Each ``.i`` file is one case. The rules:

* an unlisted case must pass;
* a case listed in ``ledger.toml`` (with the reason it does not pass yet) must
  still fail: a listed case that passes fails here, so the ledger only shrinks;
* an entry of any ledger (py-eager's, and the compiled routes' and graph captures' in
  ledgers/, whose runs are opt-in) must name an existing file: checked here, in the
  default run;
* the folder must be there (a missing prerequisite is a failure, not a skip).

The session summary prints the pass count per folder (see ../conftest.py).
"""

from __future__ import annotations

import pytest
from _cases import (
    FOLDER,
    LEDGER,
    case_files,
    case_id,
    every_ledger,
    read_ledger,
    run_case,
    stale_entries,
)

FILES = case_files()
LEDGER_ENTRIES = read_ledger()


def test_folder_is_there():
    assert FOLDER.is_dir(), (
        f"conformance data not found at {FOLDER}; the repository keeps it in "
        "tests-integration/conformance/data/ (NEML2_CONFORMANCE_DIR overrides: a folder "
        "holding models/, regression/ and verification/)"
    )
    assert len(FILES) >= 251, f"expected the whole suite (251 inputs), found {len(FILES)}"


@pytest.mark.parametrize("ledger", every_ledger(), ids=lambda p: p.name)
def test_ledger_names_existing_cases(ledger):
    stale = stale_entries(ledger)
    assert not stale, f"{ledger.name} lists cases that do not exist: {stale}"


@pytest.mark.parametrize("path", FILES, ids=[case_id(p) for p in FILES])
def test_case(record_property, path):
    key = case_id(path)
    outcome = run_case(path)
    record_property("conformance_case", [key, outcome.passed])  # ../conftest.py's summary
    listed = LEDGER_ENTRIES.get(key)
    if listed is None:
        assert outcome.passed, (
            f"{key} fails and is not in {LEDGER.name}: {outcome.reason}\n{outcome.output[-4000:]}"
        )
    else:
        assert not outcome.passed, (
            f"{key} passes now: remove it from {LEDGER.name} (it was listed as: {listed})"
        )
