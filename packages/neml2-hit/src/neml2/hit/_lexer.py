"""Character-level scanning of HIT text.

The HIT grammar is context dependent (a value may contain ``=``, a section
header may not), so instead of a free-running token stream this module offers a
:class:`Scanner` with one method per lexical element; the parser
(:mod:`neml2.hit._parser`) calls whichever element the grammar expects next.

Values are scanned into :class:`Value` objects: the exact source token (kept
for lossless rendering) plus a list of *segments*, literal text and
:class:`Brace` expressions (``${...}``), which :mod:`neml2.hit._substitute`
later evaluates into the parameter's ``raw`` string.
"""

from __future__ import annotations

import re
import textwrap
from bisect import bisect_right
from dataclasses import dataclass, field

from ._errors import HitSyntaxError, Location

__all__ = [
    "NAME_RE",
    "Brace",
    "Scanner",
    "Source",
    "Value",
    "valid_name",
]

#: One path segment of a section or parameter name.
SEGMENT = r"[A-Za-z0-9_.+\-*<>~@%^&|,?]+"
#: A (possibly path-like) section or parameter name: ``a``, ``a/b/c``.
NAME_RE = re.compile(rf"{SEGMENT}(?:/{SEGMENT})*")

_WS = re.compile(r"[ \t\r\n\f\v]*")
_INLINE_WS = re.compile(r"[ \t\r\f\v]*")
_COMMENT = re.compile(r"#[^\n]*")
_HEADER = re.compile(r"\[([^\]\n]*)\]")
_UNQUOTED_CHUNK = re.compile(r"[^\s#\[\]$]+")
_QUOTED_CHUNK = {"'": re.compile(r"[^'\\$\n]+"), '"': re.compile(r'[^"\\$\n]+')}
_BRACE_CHUNK = re.compile(r"[^${}\n'\"]+")
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t", "r": "\r", "$": "$"}

#: Maximum nesting of brace expressions inside one another (``${a ${b ${c}}}``).
MAX_BRACE_NESTING = 16


def valid_name(name: str) -> bool:
    """Whether *name* is a valid section/parameter name (path segments allowed)."""
    if not NAME_RE.fullmatch(name):
        return False
    return all(seg not in (".", "..") for seg in name.split("/"))


class Source:
    """A text together with its file name and a line table for locations."""

    __slots__ = ("_line_starts", "filename", "text")

    def __init__(self, text: str, filename: str) -> None:
        self.text = text
        self.filename = filename
        starts = [0]
        find = text.find
        i = find("\n")
        while i >= 0:
            starts.append(i + 1)
            i = find("\n", i + 1)
        self._line_starts = starts

    def location(self, offset: int) -> Location:
        """The 1-based line/column location of character *offset*."""
        line = bisect_right(self._line_starts, offset)
        return Location(self.filename, line, offset - self._line_starts[line - 1] + 1)


@dataclass(slots=True)
class Brace:
    """A ``${...}`` brace expression found inside a value.

    Attributes:
        segments: the content between ``${`` and ``}``, itself literal text and
            nested braces.
        source: the source the brace was read from.
        offset: offset of the ``$`` in ``source.text``.
        end: offset just after the closing ``}``.
    """

    segments: list[str | Brace]
    source: Source
    offset: int
    end: int

    @property
    def text(self) -> str:
        """The expression as written, ``${`` and ``}`` included."""
        return self.source.text[self.offset : self.end]

    @property
    def location(self) -> Location:
        """Location of the ``$`` that opens the expression."""
        return self.source.location(self.offset)


@dataclass(slots=True)
class Value:
    """A scanned parameter value.

    Attributes:
        text: the exact source token, quotes included.
        segments: literal text (escapes already resolved) and brace expressions.
        quote: ``""`` (unquoted), ``"'"``, ``'"'``, ``"'''"`` or ``'\"\"\"'``.
    """

    text: str
    segments: list[str | Brace] = field(default_factory=list)
    quote: str = ""

    @property
    def dedent(self) -> bool:
        """Triple-quoted values are dedented and stripped after substitution."""
        return len(self.quote) == 3

    def unevaluated(self) -> str:
        """The value with brace expressions left as written (before substitution)."""
        raw = "".join(s if isinstance(s, str) else s.text for s in self.segments)
        return textwrap.dedent(raw).strip() if self.dedent else raw


class Scanner:
    """Scans the lexical elements of one HIT source, left to right."""

    __slots__ = ("n", "pos", "source", "text")

    def __init__(self, source: Source) -> None:
        self.source = source
        self.text = source.text
        self.pos = 0
        self.n = len(source.text)

    # -- helpers --------------------------------------------------------------------
    def error(self, offset: int, reason: str, cls: type[HitSyntaxError] = HitSyntaxError):
        """Build (not raise) a syntax error located at *offset*."""
        return cls(self.source.location(offset), reason)

    def eof(self) -> bool:
        """Whether the whole text has been consumed."""
        return self.pos >= self.n

    def peek(self) -> str:
        """The next character, or ``""`` at the end of the text."""
        return self.text[self.pos] if self.pos < self.n else ""

    def at_line_end(self) -> bool:
        """Whether the next character ends the line (or the text)."""
        return self.pos >= self.n or self.text[self.pos] == "\n"

    # -- simple elements --------------------------------------------------------------
    def ws(self) -> str:
        """Consume any whitespace, newlines included, and return it."""
        m = _WS.match(self.text, self.pos)
        self.pos = m.end()
        return m.group()

    def inline_ws(self) -> str:
        """Consume whitespace up to (not including) the next newline."""
        m = _INLINE_WS.match(self.text, self.pos)
        self.pos = m.end()
        return m.group()

    def comment(self) -> str:
        """Consume a ``#`` comment up to the end of the line (newline excluded)."""
        m = _COMMENT.match(self.text, self.pos)
        self.pos = m.end()
        return m.group()

    def header(self) -> tuple[str, str]:
        """Consume a ``[...]`` header; return ``(full text, content)``."""
        m = _HEADER.match(self.text, self.pos)
        if m is None:
            raise self.error(self.pos, "unterminated section header (missing ']')")
        self.pos = m.end()
        return m.group(), m.group(1)

    def name(self) -> str | None:
        """Consume a section/parameter name if one starts here."""
        m = NAME_RE.match(self.text, self.pos)
        if m is None:
            return None
        self.pos = m.end()
        return m.group()

    def looks_like_assignment(self) -> bool:
        """Whether ``name [ws] (= | :=)`` starts here (without consuming it)."""
        m = NAME_RE.match(self.text, self.pos)
        if m is None:
            return False
        m2 = _INLINE_WS.match(self.text, m.end())
        return self.text.startswith(("=", ":="), m2.end())

    # -- values -------------------------------------------------------------------------
    def value(self) -> Value:
        """Consume a parameter value (quoted, triple-quoted or unquoted)."""
        text, pos = self.text, self.pos
        if text.startswith(("'''", '"""'), pos):
            return self._triple(text[pos : pos + 3])
        ch = text[pos]
        if ch in "'\"":
            return self._quoted(ch)
        return self._unquoted()

    def _unquoted(self) -> Value:
        text, start = self.text, self.pos
        segments: list[str | Brace] = []
        pos = start
        while pos < self.n:
            m = _UNQUOTED_CHUNK.match(text, pos)
            if m is not None:
                segments.append(m.group())
                pos = m.end()
                continue
            if text.startswith("${", pos):
                brace, pos = self._brace(pos, 0)
                segments.append(brace)
            elif text[pos] == "$":
                segments.append("$")
                pos += 1
            else:
                break
        self.pos = pos
        return Value(text[start:pos], _merge(segments), "")

    def _quoted(self, q: str) -> Value:
        text, start = self.text, self.pos
        chunk = _QUOTED_CHUNK[q]
        segments: list[str | Brace] = []
        pos = start + 1
        while True:
            if pos >= self.n:
                raise self.error(start, f"unterminated string (missing closing {q})")
            m = chunk.match(text, pos)
            if m is not None:
                segments.append(m.group())
                pos = m.end()
                continue
            ch = text[pos]
            if ch == q:
                pos += 1
                break
            if ch == "\n":
                segments.append("\n")
                pos += 1
            elif ch == "\\":
                esc = text[pos + 1 : pos + 2]
                if esc not in _ESCAPES:
                    shown = repr(esc) if esc else "end of text"
                    raise self.error(pos, f"bad escape sequence '\\' followed by {shown}")
                segments.append(_ESCAPES[esc])
                pos += 2
            elif text.startswith("${", pos):
                brace, pos = self._brace(pos, 0)
                segments.append(brace)
            else:  # a lone '$'
                segments.append("$")
                pos += 1
        self.pos = pos
        return Value(text[start:pos], _merge(segments), q)

    def _triple(self, q: str) -> Value:
        text, start = self.text, self.pos
        end = text.find(q, start + 3)
        if end < 0:
            raise self.error(start, f"unterminated string (missing closing {q})")
        segments: list[str | Brace] = []
        pos = start + 3
        while pos < end:
            nxt = text.find("${", pos, end)
            if nxt < 0:
                segments.append(text[pos:end])
                break
            if nxt > pos:
                segments.append(text[pos:nxt])
            brace, pos = self._brace(nxt, 0, limit=end)
            segments.append(brace)
        self.pos = end + 3
        return Value(text[start : end + 3], _merge(segments), q)

    def _brace(self, start: int, nesting: int, limit: int | None = None) -> tuple[Brace, int]:
        """Scan a ``${...}`` starting at *start*; return it and the offset after it.

        A brace expression ends at its matching ``}``; it may contain spaces
        and nested braces but not a newline or a quote.
        """
        if nesting >= MAX_BRACE_NESTING:
            raise self.error(start, "brace expressions nested too deeply")
        text = self.text
        end = self.n if limit is None else limit
        segments: list[str | Brace] = []
        pos = start + 2
        depth = 0
        while True:
            if pos >= end:
                raise self.error(start, "unterminated brace expression (missing '}')")
            m = _BRACE_CHUNK.match(text, pos, end)
            if m is not None:
                segments.append(m.group())
                pos = m.end()
                continue
            ch = text[pos]
            if ch == "}":
                if depth == 0:
                    return Brace(_merge(segments), self.source, start, pos + 1), pos + 1
                depth -= 1
                segments.append("}")
                pos += 1
            elif ch == "{":
                depth += 1
                segments.append("{")
                pos += 1
            elif text.startswith("${", pos):
                inner, pos = self._brace(pos, nesting + 1, limit)
                segments.append(inner)
            elif ch == "$":
                segments.append("$")
                pos += 1
            else:  # newline or quote
                raise self.error(start, "unterminated brace expression (missing '}')")


def _merge(segments: list[str | Brace]) -> list[str | Brace]:
    """Join adjacent literal segments."""
    out: list[str | Brace] = []
    for seg in segments:
        if isinstance(seg, str) and out and isinstance(out[-1], str):
            out[-1] += seg
        else:
            out.append(seg)
    return out
