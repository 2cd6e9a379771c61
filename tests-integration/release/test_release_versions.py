"""Versions a release must keep in step: each command's ``--version`` shows every
package at the version of its pyproject.toml; docs/aoti.md, docs/releasing.md and the
changelogs state the artifact schema neml2-compile writes and the range the runtime
reads, as the code defines them."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from _release_repos import ROOT
from neml2_release import compat, workspace


def _mains():
    from neml2.compiler._cli import main as compile_main
    from neml2.drivers._cli import inspect_main, run_main, syntax_main
    from neml2.hit._cli import main as hit_main

    return {
        "neml2-hit": hit_main,
        "neml2-run": run_main,
        "neml2-inspect": inspect_main,
        "neml2-syntax": syntax_main,
        "neml2-compile": compile_main,
    }


def _assert_every_package(out: str) -> None:
    for name, pkg in workspace.load(ROOT).items():
        line = rf"^  {re.escape(name)} +{re.escape(str(pkg.version))}$"
        assert re.search(line, out, re.M), f"{name} {pkg.version} not in:\n{out}"


@pytest.mark.parametrize("tool", ["neml2-hit", "neml2-run", "neml2-inspect", "neml2-syntax",
                                  "neml2-compile"])  # fmt: skip
def test_version_prints_each_package_at_its_version(tool, capsys):
    with pytest.raises(SystemExit) as e:
        _mains()[tool](["--version"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{tool} ")
    _assert_every_package(out)


def test_console_script_version():
    exe = Path(sys.executable).parent / "neml2-hit"
    proc = subprocess.run([str(exe), "--version"], capture_output=True, text=True, check=True)
    hit = workspace.load(ROOT)["neml2-hit"]
    assert proc.stdout.startswith(f"neml2-hit {hit.version}\n")
    _assert_every_package(proc.stdout)


def test_schema_and_range_are_stated_where_the_code_defines_them():
    import neml2.aoti
    import neml2.compiler

    written = compat.schema_written(ROOT)
    lo, hi = compat.schema_accepted(ROOT)
    assert neml2.compiler.SCHEMA_VERSION == written
    assert neml2.aoti.SCHEMA_VERSION == hi
    # libneml2's header is generated from the same declaration (shipped in the wheel's SDK)
    header = Path(neml2.aoti.__file__).parent / "include" / "neml2" / "aoti" / "schema.h"
    assert f"constexpr int64_t VERSION = {hi};" in header.read_text()

    packages = workspace.load(ROOT)

    def minor(name):
        v = packages[name].version
        return f"{v.major}.{v.minor}"

    aoti_md = (ROOT / "docs/aoti.md").read_text()
    assert f"| neml2-compile {minor('neml2-compile')} writes | {written} |" in aoti_md
    assert f"| neml2-aoti-runtime {minor('neml2-aoti-runtime')} reads | {lo} to {hi} |" in aoti_md
    releasing = (ROOT / "docs/releasing.md").read_text()
    assert (
        f"neml2-compile writes schema {written} and neml2-aoti-runtime reads schemas {lo} to {hi}"
        in (" ".join(releasing.split()))
    )
    # the newest statement in each changelog (entries are newest first)
    compile_log = packages["neml2-compile"].changelog.read_text()
    runtime_log = packages["neml2-aoti-runtime"].changelog.read_text()
    assert re.search(r"[Aa]rtifact schema version (\d+)", compile_log)[1] == str(written)
    m = re.search(r"schema versions (\d+) to (\d+)", " ".join(runtime_log.split()))
    assert (int(m[1]), int(m[2])) == (lo, hi)
