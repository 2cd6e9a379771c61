"""Plugins (entry points of the ``neml2.models`` group): one that fails at import, exits
at import or shadows a registered type is a FatalError naming its entry point."""

from __future__ import annotations

import signal
import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest

import neml2
from neml2.models import _registry
from neml2.tensors import FatalError
from neml2.tensors.interrupt import Interrupted, signals_raise

#: a plugin module that registers FakePluginScale (y = 2 x)
GOOD = textwrap.dedent(
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


def test_a_broken_plugin_is_fatal_and_named_and_the_others_still_load(plugins):
    where, install = plugins
    (where / "fake_plugin_broken.py").write_text("import not_a_module_anywhere\n")
    (where / "fake_plugin_good.py").write_text(GOOD)
    install(
        EntryPoint("Broken", "fake_plugin_broken", "neml2.models"),
        EntryPoint("Good", "fake_plugin_good", "neml2.models"),
    )
    with pytest.raises(FatalError, match=r"'Broken = fake_plugin_broken'.*not_a_module_any"):
        _registry.lookup("FakePluginScale")
    assert "FakePluginScale" in _registry._registry  # the good one loaded all the same
    (failure,) = _registry.plugin_failures()  # which does not raise
    assert "ModuleNotFoundError" in failure and "not_a_module_anywhere" in failure
    # every later lookup that needs the plugins says so again; built-ins still work
    with pytest.raises(FatalError, match="'Broken = fake_plugin_broken'"):
        _registry.registered_types()
    assert _registry.lookup("LinearIsotropicElasticity") is not None


def test_loading_an_input_with_a_broken_plugin_names_it(plugins):
    where, install = plugins
    (where / "fake_plugin_broken2.py").write_text("raise RuntimeError('boom at import')\n")
    install(EntryPoint("Broken2", "fake_plugin_broken2", "neml2.models"))
    text = "[Models]\n  [m]\n    type = NoSuchPluginType\n  []\n[]\n"
    with pytest.raises(FatalError) as e:
        neml2.load_string(text, "m")
    assert "'Broken2 = fake_plugin_broken2'" in str(e.value)
    assert "RuntimeError: boom at import" in str(e.value)


def test_a_plugin_that_exits_at_import_is_fatal_not_an_exit(plugins):
    where, install = plugins
    (where / "fake_plugin_exit.py").write_text("import sys\nsys.exit(0)\n")
    install(EntryPoint("Exits", "fake_plugin_exit", "neml2.models"))
    with pytest.raises(FatalError, match=r"'Exits = fake_plugin_exit'.*called sys.exit\(0\)"):
        _registry.lookup("NoSuchPluginType")


def test_a_plugin_that_shadows_a_builtin_is_fatal_and_undone(plugins):
    where, install = plugins
    builtin = _registry.lookup("LinearIsotropicElasticity")
    (where / "fake_plugin_shadow.py").write_text(
        GOOD.replace('"FakePluginScale"', '"FakePluginFirst"')
        + GOOD.replace('"FakePluginScale"', '"LinearIsotropicElasticity"').replace(
            "class FakePluginScale", "class Shadow"
        )
    )
    install(EntryPoint("Shadow", "fake_plugin_shadow", "neml2.models"))
    with pytest.raises(FatalError) as e:
        _registry.lookup("FakePluginFirst")
    message = str(e.value)
    assert "'Shadow = fake_plugin_shadow'" in message
    assert "'LinearIsotropicElasticity' is already registered" in message
    assert "cannot shadow" in message
    assert _registry.lookup("LinearIsotropicElasticity") is builtin
    assert "FakePluginFirst" not in _registry._registry  # the failed plugin's types are undone


def test_a_plugin_from_a_distribution_is_named_with_it(plugins, tmp_path, monkeypatch):
    """A real distribution (a dist-info on sys.path): the message names it and its version."""
    where, _ = plugins
    (where / "fake_plugin_dist.py").write_text("raise ValueError('bad plugin')\n")
    info = where / "fake_neml2_plugin-1.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-neml2-plugin\nVersion: 1.2\n")
    (info / "entry_points.txt").write_text("[neml2.models]\nDistPlugin = fake_plugin_dist\n")
    monkeypatch.setattr(_registry, "_plugins_loaded", False)
    monkeypatch.setattr(_registry, "_plugin_failures", [])
    with pytest.raises(FatalError) as e:
        _registry.lookup("NoSuchPluginType")
    message = str(e.value)
    assert "'DistPlugin = fake_plugin_dist' of distribution fake-neml2-plugin 1.2" in message
    assert "ValueError: bad plugin" in message


def test_an_interrupt_during_plugin_import_goes_through(plugins):
    """A signal while a plugin imports stops the run; it is not the plugin's failure."""
    where, install = plugins
    (where / "fake_plugin_slow.py").write_text(
        "import os, signal\nos.kill(os.getpid(), signal.SIGTERM)\nfor _ in range(1000): pass\n"
    )
    install(EntryPoint("Slow", "fake_plugin_slow", "neml2.models"))
    with pytest.raises(Interrupted), signals_raise():
        _registry.lookup("NoSuchPluginType")
    assert _registry._plugin_failures == []
    assert _registry._plugins_loaded is False  # a later lookup tries the plugins again


def test_a_keyboard_interrupt_raised_by_the_plugin_is_its_failure(plugins):
    """Under the tools' handler a real SIGINT is ``Interrupted``: a bare KeyboardInterrupt
    came from the plugin. Under Python's default handler it may be Ctrl-C: it goes through."""
    where, install = plugins
    (where / "fake_plugin_kbd.py").write_text("raise KeyboardInterrupt\n")
    install(EntryPoint("Kbd", "fake_plugin_kbd", "neml2.models"))
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        _registry.lookup("NoSuchPluginType")
    install(EntryPoint("Kbd", "fake_plugin_kbd", "neml2.models"))
    with signals_raise(), pytest.raises(FatalError, match="'Kbd = fake_plugin_kbd'"):
        _registry.lookup("NoSuchPluginType")
