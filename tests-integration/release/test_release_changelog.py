"""tools/neml2_release: the changelog form, version ranges and the in-place edits."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from neml2_release import changelog, workspace
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]

LOG = """# Changelog

Intro text.

## [Unreleased]

### Added

- a new thing,
  on two lines
- another

### Fixed

## [0.1.0] - 2026-01-02

### Added

- the first thing
"""


def test_release_moves_unreleased_under_the_version():
    out = changelog.release(LOG, "0.2.0", "2026-03-04")
    assert out.startswith(
        "# Changelog\n\nIntro text.\n\n## [Unreleased]\n\n## [0.2.0] - 2026-03-04\n"
    )
    section = changelog.release_section(out, "0.2.0")
    assert section == "### Added\n\n- a new thing,\n  on two lines\n- another\n"  # no empty Fixed
    assert changelog.unreleased_entries(out) == []
    assert "## [0.1.0] - 2026-01-02\n\n### Added\n\n- the first thing\n" in out
    assert changelog.released_versions(out) == [Version("0.2.0"), Version("0.1.0")]
    assert changelog.problems(out, Version("0.2.0")) == []


def test_release_without_entries_is_refused():
    with pytest.raises(ValueError, match="no entry"):
        changelog.release("# Changelog\n\n## [Unreleased]\n\n### Added\n", "0.2.0", "2026-03-04")


def test_add_entry_appends_or_makes_the_kind_in_order():
    out = changelog.add_entry(LOG, "Added", "third")
    assert "- another\n- third\n\n### Fixed" in out
    out = changelog.add_entry(LOG, "Changed", "requires x")
    assert "- another\n\n### Changed\n\n- requires x\n\n### Fixed" in out
    out = changelog.add_entry(LOG, "Fixed", "a bug")
    assert "### Fixed\n\n- a bug\n\n## [0.1.0]" in out
    out = changelog.add_entry(LOG, "Security", "last")
    assert "### Fixed\n\n### Security\n\n- last\n\n## [0.1.0]" in out
    with pytest.raises(ValueError, match="kind"):
        changelog.add_entry(LOG, "Misc", "x")


def test_link_references_stay_at_the_end():
    text = LOG + "\n[Unreleased]: https://example.invalid/compare\n"
    out = changelog.release(text, "0.2.0", "2026-03-04")
    assert out.endswith("- the first thing\n\n[Unreleased]: https://example.invalid/compare\n")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (LOG.replace("# Changelog", "# Changes"), "first line must be '# Changelog'"),
        (LOG.replace("## [Unreleased]\n", ""), "first section must be '## [Unreleased]'"),
        (LOG.replace("2026-01-02", "2026-13-02"), "is not a date"),
        (LOG.replace(" - 2026-01-02", ""), "needs its date"),
        (LOG.replace("### Fixed", "### Misc"), "'### Misc' is not one of"),
        (LOG + "\n## [0.2.0] - 2026-01-01\n\n- x\n", "is not older than"),
        (
            LOG + "\n## [0.0.9] - 2026-03-01\n\n- x\n",
            "[0.0.9] is dated 2026-03-01, after [0.1.0] above it (2026-01-02)",
        ),
        (LOG.replace("[0.1.0]", "[0.0.9]"), "is not the version in pyproject.toml (0.1.0)"),
    ],
)
def test_problems(text, message):
    found = changelog.problems(text, Version("0.1.0"))
    assert any(message in p for p in found), found


def test_latest_dated_release():
    assert changelog.latest_dated_release(LOG) == ("0.1.0", date(2026, 1, 2))
    assert changelog.latest_dated_release(LOG.split("## [0.1.0]")[0]) is None


def test_every_package_changelog_is_valid_and_has_entries():
    for pkg in workspace.load(ROOT).values():
        text = pkg.changelog.read_text()
        assert changelog.problems(text, pkg.version) == [], pkg.name
        assert changelog.unreleased_entries(text) or changelog.released_versions(text)


@pytest.mark.parametrize(
    ("version", "lower", "expected"),
    [
        ("0.2.0", None, ">=0.2,<0.3"),
        ("0.2.3", None, ">=0.2.3,<0.3"),
        ("1.0.0", None, ">=1.0,<2"),
        ("2.4.0", None, ">=2.4,<3"),
        ("0.3.0rc1", None, ">=0.3.0rc1,<0.4"),
        ("0.2.0", "0.1", ">=0.1,<0.3"),
    ],
)
def test_compatible_range(version, lower, expected):
    assert workspace.compatible_range(Version(version), lower) == expected


def test_above_below_inside():
    req = Requirement("neml2-hit>=0.1,<0.2")
    assert workspace.is_above(req, Version("0.2.0"))
    assert not workspace.is_above(req, Version("0.1.5"))  # inside
    assert not workspace.is_above(Requirement("neml2-hit>=0.3,<0.4"), Version("0.2.0"))  # below
    assert workspace.lower_bound(req) == "0.1"
    extra = Requirement('neml2-drivers[plot]>=0.1,<0.2; python_version >= "3.11"')
    assert workspace.with_specifier(extra, ">=0.2,<0.3") == (
        'neml2-drivers[plot]>=0.2,<0.3; python_version >= "3.11"'
    )
    assert workspace.spec_text("neml2-hit >= 0.1, <0.2") == ">=0.1,<0.2"


def test_text_edits_keep_the_rest():
    text = '[project]\nname = "x"\nversion = "0.1.0"  # bump me\n\n[tool.x]\nversion = "9"\n'
    assert workspace.set_version(text, "0.2.0") == text.replace('"0.1.0"', '"0.2.0"')
    with pytest.raises(workspace.ToolError):
        workspace.set_version('[tool.x]\nversion = "1"\n', "0.2.0")
    deps = 'dependencies = ["a>=0.1,<0.2", "neml2-hit>=0.1,<0.2"]\n'
    assert workspace.replace_requirement(deps, "neml2-hit>=0.1,<0.2", "neml2-hit>=0.2,<0.3") == (
        'dependencies = ["a>=0.1,<0.2", "neml2-hit>=0.2,<0.3"]\n'
    )
    lock = '[[package]]\nname = "neml2-hit"\nversion = "0.1.0"\nsource = { editable = "x" }\n'
    assert 'version = "0.2.0"' in workspace.lock_with_version(lock, "neml2-hit", "0.2.0")
    cmake = "find_package(neml2 0.1 REQUIRED OPTIONAL_COMPONENTS eager)\n"
    assert workspace.cmake_requested(cmake) == (0, 1)
    assert workspace.set_cmake_requested(cmake, Version("0.2.0")).startswith(
        "find_package(neml2 0.2 REQUIRED"
    )


def test_the_workspace_as_the_tool_reads_it():
    packages = workspace.load(ROOT)
    assert sorted(packages) == sorted(
        ["neml2-hit", "neml2-tensors", "neml2-models", "neml2-drivers", "neml2-compile",
         "neml2-aoti-runtime"]
    )  # fmt: skip
    deps = {d.name for d, _ in workspace.dependants(packages, "neml2-hit")}
    assert deps == {"neml2-models"}
    assert packages["neml2-hit"].modules == ["neml2.hit"]
    assert "neml2.compiler" in packages["neml2-compile"].modules
