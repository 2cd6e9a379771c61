"""The exception hierarchy of :mod:`neml2.hit`.

Every error raised by the parser, the substitution engine, the value
conversions and the override machinery is a :class:`HitError`.  Each one
carries the place it refers to (``file``, ``line``, ``column``; 1-based) and a
short ``reason``; ``str(err)`` renders as ``file:line:column: reason`` so that
editors and terminals can jump straight to the offending spot.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "HitDuplicateError",
    "HitError",
    "HitIncludeError",
    "HitOverrideError",
    "HitSubstitutionError",
    "HitSyntaxError",
    "HitValueError",
    "Location",
]


@dataclass(frozen=True, slots=True)
class Location:
    """A position in an input: file name, 1-based line and 1-based column.

    ``str(location)`` is ``file:line:column``. Instances are frozen.

    Attributes:
        file: the input's file name (``"<string>"`` for in-memory text,
            ``"<command line>"`` for overrides).
        line: 1-based line number.
        column: 1-based column number (characters, a tab counts as one).
    """

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


class HitError(Exception):
    """Base class of every error of :mod:`neml2.hit`.

    Attributes:
        file: the input the error refers to (``"<string>"`` for in-memory text,
            ``"<command line>"`` for overrides).
        line: 1-based line number.
        column: 1-based column number (characters, a tab counts as one).
        reason: a short human-readable explanation, without the location.
        location: the :class:`Location` of ``file``, ``line`` and ``column``.
    """

    def __init__(self, location: Location, reason: str) -> None:
        """Make an error whose message is ``file:line:column: reason``.

        Args:
            location: the place the error refers to.
            reason: a short human-readable explanation, without the location.
        """
        self.location = location
        self.file = location.file
        self.line = location.line
        self.column = location.column
        self.reason = reason
        super().__init__(f"{location}: {reason}")

    def __reduce__(self):  # keep the exception picklable
        return (type(self), (self.location, self.reason))


class HitSyntaxError(HitError):
    """The text is not valid HIT (unterminated section, bad name, bad escape, ...)."""


class HitDuplicateError(HitSyntaxError):
    """A parameter is set twice without the ``:=`` override operator."""


class HitValueError(HitError):
    """A parameter value cannot be converted to the requested type."""


class HitIncludeError(HitError):
    """An ``!include`` cannot be resolved (missing file, cycle, too deep)."""


class HitOverrideError(HitError):
    """A command-line override names a block or parameter the input does not have.

    Its location is ``<command line>:N:COLUMN`` (N: the override's 1-based position).
    """


class HitSubstitutionError(HitError):
    """A ``${...}`` brace expression cannot be evaluated."""
