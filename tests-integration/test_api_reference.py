"""The public Python API is documented for the generated reference (docs/api/).

Every public function, and every public method of every public class, named by a
module's ``__all__`` has a Google-style docstring: an ``Args:`` section when it takes
arguments and a ``Returns:`` section when it returns something. griffe (what
mkdocstrings reads the sources with) parses them here, without importing anything.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import pytest

griffe = pytest.importorskip("griffe")

ROOT = Path(__file__).resolve().parents[1]

#: The modules of the API reference (docs/api/*.md).
MODULES = [
    "neml2.factory",
    "neml2.models",
    "neml2.models.model",
    "neml2.tensors",
    "neml2.tensors.interrupt",
    "neml2.tensors.notation",
    "neml2.hit",
    "neml2.solvers",
    "neml2.aoti",
    "neml2.compiler",
    "neml2.drivers",
]


@pytest.fixture(scope="module")
def loader(tmp_path_factory):
    spec = importlib.util.spec_from_file_location(
        "api_sources", ROOT / "docs" / "_hooks" / "api_sources.py"
    )
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    tree = tmp_path_factory.mktemp("api-src")
    hook.merge_sources(ROOT, tree / "neml2")
    return griffe.GriffeLoader(search_paths=[str(tree)], docstring_parser=griffe.Parser.google)


def _documented_functions(module):
    """``(path, function)`` of every public function and public method of a public class."""
    for name in module.exports or []:
        try:
            obj = module[name]
            while obj.is_alias:
                obj = obj.final_target
        except (griffe.AliasResolutionError, griffe.CyclicAliasError, KeyError):
            continue  # from a compiled extension (docs/api/aoti.md says so)
        if obj.is_function:
            yield obj.path, obj
        elif obj.is_class:
            for key, member in obj.members.items():
                if member.is_alias or not member.is_function:
                    continue
                if key.startswith("_") and key != "__init__":
                    continue
                if key == "__init__" and member.docstring is None:
                    continue  # constructor documented by the class (merged on the page)
                yield member.path, member


def gaps(module) -> list[str]:
    """What each public function of *module* lacks: a docstring, Args, Returns."""
    out = []
    for path, f in _documented_functions(module):
        if f.docstring is None:
            out.append(f"{path}: no docstring")
            continue
        kinds = {s.kind.value for s in f.docstring.parse(griffe.Parser.google)}
        params = [p.name for p in f.parameters if p.name not in ("self", "cls")]
        if params and "parameters" not in kinds:
            out.append(f"{path}: no Args section")
        returns = str(f.returns) if f.returns is not None else None
        if f.name != "__init__" and returns not in (None, "None") and "returns" not in kinds:
            out.append(f"{path}: no Returns section")
    return out


@pytest.mark.parametrize("name", MODULES)
def test_public_functions_have_args_and_returns(loader, name):
    assert gaps(loader.load(name)) == []


@pytest.mark.parametrize("name", MODULES)
def test_docstrings_parse_without_warnings(loader, name, caplog):
    module = loader.load(name)
    with caplog.at_level(logging.WARNING):
        for _, f in _documented_functions(module):
            if f.docstring is not None:
                f.docstring.parse(griffe.Parser.google)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_the_check_finds_a_missing_section(tmp_path):
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "__init__.py").write_text(
        '__all__ = ["good", "bare"]\n'
        "def good(x: int) -> int:\n"
        '    """Twice x.\n\n    Args:\n        x: a number.\n\n'
        '    Returns:\n        2 x.\n    """\n'
        "    return 2 * x\n"
        "def bare(x: int) -> int:\n"
        '    """Twice x."""\n'
        "    return 2 * x\n"
    )
    module = griffe.GriffeLoader(search_paths=[str(tmp_path)]).load("demo")
    assert gaps(module) == ["demo.bare: no Args section", "demo.bare: no Returns section"]


def test_every_module_of_the_api_pages_is_checked():
    import re

    shown = set()
    for page in (ROOT / "docs" / "api").glob("*.md"):
        shown.update(re.findall(r"^::: (\S+)$", page.read_text(), re.M))
    assert shown == set(MODULES)
