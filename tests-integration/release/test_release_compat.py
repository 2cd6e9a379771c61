"""``nox -s compat``: which releases it picks (release tags, else this tree), on
throwaway repositories; building a package from a release tag. The session itself
runs in the default CI list, after ``wheels``."""

from __future__ import annotations

from pathlib import Path

import pytest
from _release_repos import ROOT, commit, git
from neml2_release import ToolError, compat
from packaging.version import Version

CONFIG = (ROOT / "tools" / "neml2_release" / "config.toml").read_text()


def _tree(tensors: str, runtime_needs: str, schema_written: int, runtime_reads: str):
    return {
        "tools/neml2_release/config.toml": CONFIG,
        "packages/neml2-tensors/pyproject.toml": (
            f'[project]\nname = "neml2-tensors"\nversion = "{tensors}"\n'
        ),
        "packages/neml2-aoti-runtime/pyproject.toml": (
            '[project]\nname = "neml2-aoti-runtime"\nversion = "0.5.0"\n'
            f'dependencies = ["neml2-tensors{runtime_needs}"]\n'
        ),
        "packages/neml2-compile/pyproject.toml": (
            '[project]\nname = "neml2-compile"\nversion = "0.5.0"\n'
            'dependencies = ["neml2-aoti-runtime>=0.5,<0.6"]\n'
        ),
        compat.COMPILE_SOURCE: f"import x\n\nSCHEMA_VERSION = {schema_written}\n",
        compat.RUNTIME_SOURCE: runtime_reads,
    }


@pytest.fixture
def repo(tmp_path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    return r


def test_the_schema_comes_from_the_declaration_file_where_there_is_one(repo):
    """Trees with artifact_schema.json state the written and accepted schemas there (the
    constants of older trees are ignored then)."""
    tree = _tree("0.3.0", ">=0.3,<0.4", 9, "SCHEMA_VERSION = 9\n")
    tree[compat.SCHEMA_FILE] = '{"schema_version": 3, "oldest_schema_version": 2}\n'
    commit(repo, "tree", tree)
    assert compat.schema_written(repo) == 3
    assert compat.schema_accepted(repo) == (2, 3)
    commit(repo, "broken", {compat.SCHEMA_FILE: '{"version": 3}\n'})
    with pytest.raises(compat.ToolError, match="no integer schema_version"):
        compat.schema_written(repo)


def test_no_release_tag_means_this_tree(repo):
    commit(repo, "tree", _tree("0.3.0", ">=0.3,<0.4", 2, "SCHEMA_VERSION = 2\n"))
    plan = compat.plan(repo)
    assert plan.dependency == compat.Source("neml2-tensors", Version("0.3.0"), None)
    assert plan.requirement == "neml2-tensors>=0.3,<0.4"
    assert plan.compiler == compat.Source("neml2-compile", Version("0.5.0"), None)
    assert plan.schema_range == (2, 2) and plan.compile_schema == 2
    assert "from this tree (no release tag in range)" in plan.describe()


def test_the_oldest_release_tag_inside_the_range(repo):
    for version in ("0.1.0", "0.2.0", "0.2.1"):
        commit(repo, version, _tree(version, ">=0.2,<0.4", 1, "SCHEMA_VERSION = 1\n"))
        git(repo, "tag", "-a", f"neml2-tensors-v{version}", "-m", version)
    commit(repo, "tree", _tree("0.3.0", ">=0.2,<0.4", 1, "SCHEMA_VERSION = 1\n"))
    git(repo, "tag", "neml2-tensors-vbogus")  # not a version: ignored
    assert compat.plan(repo).dependency == compat.Source(
        "neml2-tensors", Version("0.2.0"), "neml2-tensors-v0.2.0"
    )


def test_tree_outside_the_range_without_a_tag_is_an_error(repo):
    commit(repo, "tree", _tree("0.4.0", ">=0.2,<0.4", 1, "SCHEMA_VERSION = 1\n"))
    with pytest.raises(ToolError, match="no release tag of neml2-tensors and not this tree"):
        compat.plan(repo)


def test_the_oldest_compiler_whose_schema_the_runtime_reads(repo):
    reads = "OLDEST_SCHEMA_VERSION = 2\nSCHEMA_VERSION = 3\n"
    for version, schema in (("0.1.0", 1), ("0.2.0", 2), ("0.3.0", 3)):
        commit(repo, version, _tree("0.3.0", ">=0.3,<0.4", schema, reads))
        git(repo, "tag", f"neml2-compile-v{version}")
    commit(repo, "tree", _tree("0.3.0", ">=0.3,<0.4", 3, reads))
    plan = compat.plan(repo)
    assert plan.schema_range == (2, 3)
    assert plan.compiler == compat.Source("neml2-compile", Version("0.2.0"), "neml2-compile-v0.2.0")
    assert plan.compile_schema == 2


def test_a_tree_compiler_the_runtime_cannot_read_is_an_error(repo):
    commit(repo, "tree", _tree("0.3.0", ">=0.3,<0.4", 4, "SCHEMA_VERSION = 3\n"))
    with pytest.raises(ToolError, match=r"writes schema 4, outside the runtime's 3\.\.3"):
        compat.plan(repo)


def test_this_repository_pairs_with_itself_until_a_release():
    plan = compat.plan(ROOT)
    tags = git(ROOT, "tag", "--list", "neml2-tensors-v*")
    if not tags:
        assert plan.dependency.tag is None
    assert plan.schema_range[0] <= plan.compile_schema <= plan.schema_range[1]


def test_build_from_a_release_tag(work_clone, tmp_path, uv_env):
    git(work_clone, "tag", "-a", "neml2-tensors-v0.1.0", "-m", "tensors 0.1.0")
    wheel = compat.build_from_tag(work_clone, "neml2-tensors-v0.1.0", "neml2-tensors", tmp_path)
    assert wheel.name == "neml2_tensors-0.1.0-py3-none-any.whl"
    assert git(work_clone, "worktree", "list").count("\n") == 0  # the worktree is gone
