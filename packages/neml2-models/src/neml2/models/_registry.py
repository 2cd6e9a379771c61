"""Registry of model classes keyed by their HIT ``type`` name.

Built-in models register with :func:`register` (or :func:`register_neml2_object`, the
reference library's name for it). Third-party packages register through the
``neml2.models`` entry-point group: each entry point names a module (or object) whose
import registers its classes; they are loaded the first time a type is looked up that
is not built in.

A plugin that cannot be loaded is a :class:`~neml2.tensors.FatalError` naming its entry
point (name, value, distribution) and what went wrong: an exception at import, a
``sys.exit()`` at import, a type name that is already registered (a plugin cannot shadow
a built-in type). Every plugin is tried (the error lists each failure), the failed
one's registrations are undone, and every later lookup that needs the plugins raises the
same error: a run never goes on with a plugin missing. neml2's own distributions load
first, so a plugin that takes one of their names is the one named.
"""

from __future__ import annotations

import signal
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TypeVar

from neml2.tensors import FatalError
from neml2.tensors.interrupt import Interrupted

T = TypeVar("T", bound=type)

ENTRY_POINT_GROUP = "neml2.models"

_registry: dict[str, type] = {}
_plugins_loaded = False
_plugin_failures: list[str] = []


class RegistryError(ValueError):
    """A type name is registered twice."""


def register(type_name: str | None = None) -> Callable[[T], T]:
    """Make a class decorator that registers the class as ``type = <type_name>``.

    Args:
        type_name: The HIT type name; ``None`` (the default) uses the class name.

    Returns:
        The decorator; it registers the class and returns it unchanged. Registering a
            second, different class under a taken name raises ``RegistryError`` (a plugin
            cannot silently shadow a built-in); registering the same class again is a no-op.
    """

    def deco(cls: T) -> T:
        name = type_name or cls.__name__
        old = _registry.get(name)
        if old is not None and old is not cls:
            raise RegistryError(
                f"model type '{name}' is already registered by "
                f"{old.__module__}.{old.__qualname__}; cannot register "
                f"{cls.__module__}.{cls.__qualname__} under the same name"
            )
        _registry[name] = cls
        return cls

    return deco


def register_neml2_object(cls: T | str | None = None, /, name: str | None = None):
    """:func:`register` under the reference library's name (the same registry).

    Three forms::

        @register_neml2_object              # type name: the class name
        @register_neml2_object()            # the same
        @register_neml2_object("MyType")    # or register_neml2_object(name="MyType")

    Args:
        cls: The class to register (the bare decorator form), the type name (the
            ``("MyType")`` form), or ``None``.
        name: The type name, given by keyword; default: the class name.

    Returns:
        (type | Callable[[type], type]): With a class, the class itself, registered;
            otherwise the decorator.

    Raises:
        TypeError: If the type name is given twice, or *cls* is neither a class, a
            string nor ``None``.
    """
    if isinstance(cls, type):
        if name is not None:
            raise TypeError(
                "register_neml2_object(cls, name=...): use @register_neml2_object(name)"
            )
        return register()(cls)
    if isinstance(cls, str):
        if name is not None:
            raise TypeError("register_neml2_object: give the type name once")
        return register(cls)
    if cls is not None:
        raise TypeError(f"register_neml2_object decorates a class, not a {type(cls).__name__}")
    return register(name)


def _load_plugins() -> None:
    """Load the plugins (once); raise the :class:`FatalError` of those that failed (each
    time: the registry stays without them)."""
    _try_plugins()
    if _plugin_failures:
        if len(_plugin_failures) == 1:
            raise FatalError(f"{_plugin_failures[0]}; fix or uninstall the plugin")
        listed = "; ".join(f"({i}) {m}" for i, m in enumerate(_plugin_failures, 1))
        raise FatalError(
            f"{len(_plugin_failures)} plugins failed to load: {listed}; fix or uninstall them"
        )


def _try_plugins() -> None:
    """Load every plugin once; record why each that failed did (in ``_plugin_failures``)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    # neml2's own distributions first: a third-party plugin that takes one of their
    # type names is the one reported, not the neml2 package it shadows
    eps = sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: not _ours(ep))
    for ep in eps:
        before = set(_registry)
        try:
            ep.load()
        except BaseException as e:  # SystemExit at import included: a plugin must not exit
            if _is_interrupt(e):
                _plugins_loaded = False  # stopped, not failed: a later lookup tries again
                raise
            for name in set(_registry) - before:  # undo what the failed plugin registered
                del _registry[name]
            _plugin_failures.append(f"{_describe(ep)} failed to load: {_why(e)}")


def _ours(ep: EntryPoint) -> bool:
    dist = ep.dist
    return dist is not None and str(dist.name).replace("_", "-").startswith("neml2-")


def _is_interrupt(e: BaseException) -> bool:
    """Whether *e* is the user stopping the process (let it through), not the plugin
    failing: a signal under the command-line tools (:class:`Interrupted`), or a
    ``KeyboardInterrupt`` while Python's own SIGINT handler is installed (Ctrl-C may have
    raised it). A ``KeyboardInterrupt`` while another handler is installed (the tools
    turn SIGINT into ``Interrupted``) was raised by the plugin itself."""
    if isinstance(e, Interrupted):
        return True
    if isinstance(e, KeyboardInterrupt):
        return signal.getsignal(signal.SIGINT) is signal.default_int_handler
    return False


def _why(e: BaseException) -> str:
    """What went wrong, for the message."""
    if isinstance(e, SystemExit):
        return (
            f"it called sys.exit({e.code!r}) while being imported (a plugin must register "
            "its types, not end the process)"
        )
    if isinstance(e, RegistryError):
        return f"{e} (a plugin cannot shadow a registered type; pick another type name)"
    text = str(e).strip()
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


def _describe(ep: EntryPoint) -> str:
    dist = ep.dist
    owner = f" of distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"plugin entry point '{ep.name} = {ep.value}'{owner} (group {ENTRY_POINT_GROUP})"


def plugin_failures() -> list[str]:
    """Why each plugin that failed to load did (after trying them); empty if none did.

    Unlike :func:`lookup` and :func:`registered_types`, it does not raise for them.

    Returns:
        One message per failed entry point: its name, value, distribution and the error.
    """
    _try_plugins()
    return list(_plugin_failures)


def lookup(type_name: str) -> type | None:
    """Find the class registered under a HIT type name.

    A name that is not built in loads the entry-point plugins first.

    Args:
        type_name: The HIT ``type`` value.

    Returns:
        The registered class, or ``None`` if no class is registered under *type_name*.

    Raises:
        FatalError: *type_name* is not built in and a plugin failed to load (the message
            names its entry point, value and distribution).
    """
    if type_name not in _registry:
        _load_plugins()
    return _registry.get(type_name)


def registered_types() -> list[str]:
    """List every registered type name (plugins included).

    Returns:
        The type names, sorted.

    Raises:
        FatalError: A plugin failed to load (the message names its entry point).
    """
    _load_plugins()
    return sorted(_registry)
