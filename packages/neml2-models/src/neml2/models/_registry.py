"""Registry of model classes keyed by their HIT ``type`` name.

Built-in models register with :func:`register` (or :func:`register_neml2_object`, the
reference library's name for it). Third-party packages register through the
``neml2.models`` entry-point group: each entry point names a module (or object) whose
import registers its classes; they are loaded the first time a type is looked up that
is not built in.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from importlib.metadata import EntryPoint, entry_points
from typing import TypeVar

T = TypeVar("T", bound=type)

ENTRY_POINT_GROUP = "neml2.models"

_registry: dict[str, type] = {}
_plugins_loaded = False
_plugin_failures: list[str] = []


class RegistryError(ValueError):
    """A type name is registered twice."""


class PluginLoadWarning(UserWarning):
    """An entry point of the ``neml2.models`` group could not be loaded (it is skipped)."""


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
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            ep.load()
        except Exception as e:  # a broken plugin must not hide the others
            message = f"{_describe(ep)} failed to load: {type(e).__name__}: {e}"
            _plugin_failures.append(message)
            warnings.warn(message, PluginLoadWarning, stacklevel=3)


def _describe(ep: EntryPoint) -> str:
    dist = ep.dist
    owner = f" of distribution {dist.name} {dist.version}" if dist is not None else ""
    return f"plugin entry point '{ep.name} = {ep.value}'{owner} (group {ENTRY_POINT_GROUP})"


def plugin_failures() -> list[str]:
    """Why each plugin that failed to load did (after loading plugins); empty if none did.

    Returns:
        One message per failed entry point: its name, value, distribution and the error.
    """
    _load_plugins()
    return list(_plugin_failures)


def lookup(type_name: str) -> type | None:
    """Find the class registered under a HIT type name.

    A name that is not built in loads the entry-point plugins first.

    Args:
        type_name: The HIT ``type`` value.

    Returns:
        The registered class, or ``None`` if no class is registered under *type_name*.
    """
    if type_name not in _registry:
        _load_plugins()
    return _registry.get(type_name)


def registered_types() -> list[str]:
    """List every registered type name (plugins included).

    Returns:
        The type names, sorted.
    """
    _load_plugins()
    return sorted(_registry)
