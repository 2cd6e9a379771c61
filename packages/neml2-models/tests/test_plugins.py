"""Plugins (entry points of the ``neml2.models`` group): a broken one is named and skipped."""

from __future__ import annotations

import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

import neml2
from neml2.models import _registry
from neml2.tensors import FatalError


@pytest.fixture()
def plugins(monkeypatch, tmp_path):
    """Install fake entry points: ``plugins(ep, ...)`` makes the registry see exactly those."""
    monkeypatch.syspath_prepend(str(tmp_path))

    def install(*eps: EntryPoint) -> None:
        monkeypatch.setattr(_registry, "entry_points", lambda group: list(eps))
        monkeypatch.setattr(_registry, "_plugins_loaded", False)
        monkeypatch.setattr(_registry, "_plugin_failures", [])

    yield tmp_path, install
    for name in [m for m in sys.modules if m.startswith("fake_plugin_")]:
        del sys.modules[name]
    _registry._registry.pop("FakePluginScale", None)


def test_a_broken_plugin_is_named_and_the_others_still_load(plugins):
    where, install = plugins
    (where / "fake_plugin_broken.py").write_text("import not_a_module_anywhere\n")
    (where / "fake_plugin_good.py").write_text(
        textwrap.dedent(
            """
            from neml2.models import register
            from neml2.models.model import HitSchema, Model, input, output
            from neml2.tensors import Scalar

            @register("FakePluginScale")
            class FakePluginScale(Model):
                "y = 2 x"
                hit = HitSchema(input("x", Scalar, "x"), output("y", Scalar, "y"))

                def forward(self, x, *nl_params, v=None, v2=None, vh=None):
                    return 2 * x
            """
        )
    )
    install(
        EntryPoint("Broken", "fake_plugin_broken", "neml2.models"),
        EntryPoint("Good", "fake_plugin_good", "neml2.models"),
    )
    with pytest.warns(_registry.PluginLoadWarning, match=r"'Broken = fake_plugin_broken'.*"):
        assert _registry.lookup("FakePluginScale") is not None  # the good one loaded
    (failure,) = _registry.plugin_failures()
    assert "ModuleNotFoundError" in failure and "not_a_module_anywhere" in failure


def test_an_unknown_type_error_names_the_broken_plugin(plugins):
    where, install = plugins
    (where / "fake_plugin_broken2.py").write_text("raise RuntimeError('boom at import')\n")
    install(EntryPoint("Broken2", "fake_plugin_broken2", "neml2.models"))
    text = "[Models]\n  [m]\n    type = NoSuchPluginType\n  []\n[]\n"
    with pytest.warns(_registry.PluginLoadWarning):
        with pytest.raises(FatalError, match=r"<string>:3.*unknown type 'NoSuchPluginType'") as e:
            neml2.load_string(text, "m")
    assert "'Broken2 = fake_plugin_broken2'" in str(e.value)
    assert "RuntimeError: boom at import" in str(e.value)
