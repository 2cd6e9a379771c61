r"""The equations of the registered types' docstrings, as TeX for the catalogue pages.

The docstrings write their equations in plain text inside ``code`` spans, with Unicode
symbols: ``h = R (1 - exp(-d ε̄p))``, ``Ẋ = (2/3 C N_M - g X) γ̇ - A ‖X‖^(a-1) X``.
:func:`to_tex` reads such a span and returns its TeX (``h = R (1 - \exp (- d
\bar{\varepsilon}_{p}))``), which the catalogue writes as ``$...$`` for
pymdownx.arithmatex; a span that is code rather than mathematics (an option setting
``rate_form = true``, a variable name ``<variable>~1``, a shape ``(*B, 6)``, an option's
name) or that holds a character it does not know stays a code span (``None``).

The reading, in short: a Greek letter is its TeX command, a combining dot, bar or hat
above a letter an accent (``γ̇`` is ``\dot{\gamma}``), Unicode sub- and superscripts
(``σ₀``, ``F⁻ᵀ``) and ``_x``, ``_{...}``, ``^x``, ``^(...)`` scripts (the parentheses of
``^(a-1)`` group, as braces do in TeX); a letter followed by digits is subscripted
(``K0`` is :math:`K_0`), a Greek letter followed by letters too (``φmax``,
``ε̄p``); other words of two letters stay one italic symbol (``Pc``) and longer ones
upright (``trial``) unless they are functions (``exp``, ``sqrt(...)``, ``tr``,
``dev``); ``Σ``/``Π`` are sums and products, ``‖x‖``, ``⟨x⟩`` and ``|x|`` norms,
Macaulay brackets and absolute values, ``x~1`` the previous-step name, ``*`` after a
symbol a superscript star (``R*``) and ``'`` a prime.
"""

from __future__ import annotations

import re
import unicodedata

#: Greek letters (``φ`` is the void fraction of the docs: ``\varphi``).
GREEK = {
    "α": r"\alpha",
    "β": r"\beta",
    "γ": r"\gamma",
    "δ": r"\delta",
    "ε": r"\varepsilon",
    "ζ": r"\zeta",
    "η": r"\eta",
    "θ": r"\theta",
    "ι": r"\iota",
    "κ": r"\kappa",
    "λ": r"\lambda",
    "μ": r"\mu",
    "ν": r"\nu",
    "ξ": r"\xi",
    "π": r"\pi",
    "ρ": r"\rho",
    "σ": r"\sigma",
    "τ": r"\tau",
    "υ": r"\upsilon",
    "φ": r"\varphi",
    "ϕ": r"\phi",
    "χ": r"\chi",
    "ψ": r"\psi",
    "ω": r"\omega",
    "Γ": r"\Gamma",
    "Θ": r"\Theta",
    "Λ": r"\Lambda",
    "Ξ": r"\Xi",
    "Φ": r"\Phi",
    "Ψ": r"\Psi",
    "Ω": r"\Omega",
}
#: Symbols that stand alone (never part of a word).
SYMBOLS = {
    "Δ": r"\Delta",
    "∂": r"\partial",
    "Σ": r"\sum",
    "Π": r"\prod",
    "∞": r"\infty",
    "½": r"\tfrac{1}{2}",
    "·": r"\cdot",
    "∘": r"\circ",
    "⊗": r"\otimes",
    "≤": r"\le",
    "≥": r"\ge",
    "≠": r"\ne",
    "⋚": r"\lesseqgtr",
    "±": r"\pm",
    "→": r"\to",
    "←": r"\leftarrow",
    "≈": r"\approx",
    "…": r"\ldots",
    "|": r"\vert",  # never a bare '|': the catalogue's tables split cells on it
    "‖": r"\Vert",
    "⟨": r"\langle",
    "⟩": r"\rangle",
}
#: Operators and punctuation written as they are.
PLAIN = set("+-/=<>()[],;:")
#: Combining accents above a letter (after NFD normalisation).
ACCENTS = {
    "\u0307": r"\dot",
    "\u0308": r"\ddot",
    "\u0304": r"\bar",
    "\u0305": r"\bar",
    "\u0302": r"\hat",
}
SUPERSCRIPTS = dict(zip("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻ⁿⁱᵖᵐᵀᴹᴷᵉᶠᵗ", "0123456789+-nipmTMKeft", strict=True))
SUBSCRIPTS = dict(
    zip("₀₁₂₃₄₅₆₇₈₉₊₋ₐₑₒₓₕₖₗₘₙₚₛₜᵢᵣᵤᵥⱼ", "0123456789+-aeoxhklmnpstiruvj", strict=True)
)
#: Function names: TeX's own operators, the rest upright.
FUNCTIONS = {
    "exp": r"\exp",
    "ln": r"\ln",
    "log": r"\log",
    "cos": r"\cos",
    "sin": r"\sin",
    "tan": r"\tan",
    "cosh": r"\cosh",
    "sinh": r"\sinh",
    "tanh": r"\tanh",
    "max": r"\max",
    "min": r"\min",
    "det": r"\det",
    "sum": r"\sum",
    **{
        f: rf"\operatorname{{{f}}}"
        for f in ("tr", "dev", "vol", "sym", "skew", "sign", "clamp", "mean", "arctan")
    },
}
#: Words that are symbols of their own: ``eps``, the dtype's machine epsilon.
WORDS = {"eps": r"\varepsilon"}

#: A span that is code, not mathematics: quotes, shapes ``(*B, ...)``, placeholders
#: ``<variable>``, attribute access ``torch.float64``, markup characters.
_CODE = re.compile(r"[\"`$\\#&%@!?{}]|\*B|\(\*|<\w+>|(?<!\.)\.[A-Za-z_]|(?:^|[\s=(])'")
#: An ASCII identifier, for the checks on option names and code-like words.
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_RELATION = re.compile(r"=|<|>|≤|≥|≠|⋚|≈")
#: One symbol written in ASCII: ``R``, ``K0``, ``Pc``, ``x_i``, ``x^eq``, ``R*``.
_SYMBOL = re.compile(r"[A-Za-z]{1,2}[0-9]*(?:_[A-Za-z0-9]+)?(?:\^[A-Za-z0-9]+)?[*']?")
#: An ASCII expression of such symbols: ``M - X``, ``H(x)``, ``a e_1, a e_2, a e_3``.
_EXPRESSION = re.compile(r"(?=.*[A-Za-z])[A-Za-z0-9_^*'+\-/()|,. ]+")
#: A shape or a tuple: ``(N,)``, ``(m, m)``: code.
_TUPLE = re.compile(r"\([^()]*,[^()]*\)")


class _Unknown(Exception):
    """A character or construct this reader does not know: the span stays code."""


def _is_code(span: str, names: frozenset[str]) -> bool:
    """Is *span* code (an option setting, a Python name, a placeholder) by its look?"""
    braced = re.sub(r"_\{[^{}]*\}", "_x", span)  # u_{N-1}, Σ_{j≠i}: scripts, not code
    if _CODE.search(braced):
        return True
    letters = re.findall(r"[A-Za-z]+", span)
    if letters and span.isascii() and all(len(w) > 2 for w in letters):
        return True  # only names: parameter = variable, side = left
    if re.fullmatch(r"[A-Za-z]_[A-Za-z]{4,}", span):
        return True  # a variable's name: s_rate, s_residual
    for word in _IDENT.findall(span):
        head, _, rest = word.partition("_")
        if word in names and len(word) > 1:
            return True  # an option's name: the span talks about the input file
        if word in ("true", "false", "True", "False", "None"):
            return True
        if rest and (word.count("_") > 1 or (len(head) > 2 and head not in FUNCTIONS)):
            return True  # snake_case: sub_batch_ndim, linesearch_cutback
        if len(word) > 2 and word.isupper() and word.isalpha():
            return True  # an enumeration value: VONMISES, VOLDEV
        if len(word) > 3 and word.isalpha() and word[0].isupper() and not word.isupper():
            return True  # a type name: Scalar, GTNYieldFunction
    return False


def is_math(span: str, names: frozenset[str] = frozenset()) -> bool:
    """Is *span* (a docstring's ``code`` span) an equation or a symbol to typeset?

    Yes when it states a relation (``=``, ``<=``, ...), holds a Unicode letter or
    symbol, or is one letter (``R``, ``K0``, ``x_i``), and does not look like code
    (:func:`_is_code`; *names* are the type's option names, which stay code).
    """
    s = span.strip()
    if not s or _is_code(s, names):
        return False
    return bool(
        _RELATION.search(s)
        or any(ord(c) > 127 for c in s)
        or (_SYMBOL.fullmatch(s) and s not in names)
        or (
            _EXPRESSION.fullmatch(s)
            and not _TUPLE.fullmatch(s)
            and all(len(w) <= 2 or w in FUNCTIONS for w in re.findall(r"[A-Za-z]+", s))
        )
    )


def to_tex(span: str, names: frozenset[str] = frozenset()) -> str | None:
    """The TeX of *span*, or ``None`` when it is code or holds a construct this reader
    does not know (then the caller keeps the code span)."""
    if not is_math(span, names):
        return None
    try:
        text = unicodedata.normalize("NFD", span.strip()).replace("=\u0338", "≠")
        return _Reader(text).read()
    except _Unknown:
        return None


class _Atom:
    """One symbol with its accents, sub- and superscripts and a trailing ``~N``."""

    def __init__(self, tex: str, takes_scripts: bool = True) -> None:
        self.tex = tex
        self.subs: list[str] = []
        self.sups: list[str] = []
        self.suffix = ""
        self.takes_scripts = takes_scripts

    def render(self) -> str:
        out = self.tex
        if self.subs:
            out += "_{" + ",".join(self.subs) + "}"
        if self.sups:
            out += "^{" + "".join(self.sups) + "}"
        return out + self.suffix


class _Reader:
    """A recursive reader over one normalised span."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0

    # characters ------------------------------------------------------------
    def peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.s[j] if j < len(self.s) else ""

    def _letter(self, c: str) -> bool:
        return c.isalpha() and c not in SYMBOLS and c not in SUPERSCRIPTS and c not in SUBSCRIPTS

    def read(self) -> str:
        out = self.sequence(closing="")
        if self.i != len(self.s):
            raise _Unknown(self.s[self.i :])
        return out

    # a sequence of atoms up to *closing* -------------------------------------
    def sequence(self, closing: str, script: bool = False) -> str:
        atoms: list[_Atom] = []
        while self.i < len(self.s):
            c = self.peek()
            if closing and c == closing:
                break
            if c.isspace():
                self.i += 1
                continue
            if c == "_" or c == "^":
                self.i += 1
                self._script(atoms, c, script)
            elif c in SUPERSCRIPTS or c in SUBSCRIPTS:
                self._unicode_scripts(atoms)
            elif c == "'":
                self.i += 1
                self._last(atoms).sups.append(r"\prime")
            elif c == "*":
                self.i += 1
                if atoms and atoms[-1].takes_scripts:
                    atoms[-1].sups.append("*")
                else:
                    atoms.append(_Atom(r"\ast", takes_scripts=False))
            elif c == "~":
                self.i += 1
                digits = self._digits()
                if not digits:
                    raise _Unknown("~")
                self._last(atoms).suffix += r"{\sim}" + digits
            elif c == "." and self.s.startswith("..", self.i):
                self.i += 3 if self.s.startswith("...", self.i) else 2
                atoms.append(_Atom(r"\ldots", takes_scripts=False))
            elif _digit(c) or (c == "." and _digit(self.peek(1))):
                atoms.append(_Atom(self._number()))
            elif c == "√" or self._function_at("sqrt"):
                self.i += 1 if c == "√" else 4
                atoms.append(_Atom(r"\sqrt{" + self._argument(script) + "}"))
            elif self._letter(c):
                atoms.append(self._word(script))
            elif c == "∞" and self.i and not self.s[self.i - 1].isspace() and atoms:
                self.i += 1  # E∞: the label of E
                self._last(atoms).subs.append(SYMBOLS[c])
            elif c in SYMBOLS:
                self.i += 1
                atoms.append(_Atom(SYMBOLS[c]))
            elif c == "(":
                self.i += 1
                inner = self.sequence(")", script)
                self._expect(")")
                atoms.append(_Atom("(" + inner + ")"))
            elif c in PLAIN:
                self.i += 1
                tex = {"<": r"\lt", ">": r"\gt"}.get(c, c)
                if c in "<>" and self.peek() == "=":
                    self.i += 1
                    tex = r"\le" if c == "<" else r"\ge"
                atoms.append(_Atom(tex, takes_scripts=c in ")]"))
            else:
                raise _Unknown(c)
        return " ".join(a.render() for a in atoms)

    def _function_at(self, name: str) -> bool:
        """Does the word *name* (not a longer word) start here?"""
        return self.s.startswith(name, self.i) and not self._letter(self.peek(len(name)))

    def _last(self, atoms: list[_Atom]) -> _Atom:
        if not atoms or not atoms[-1].takes_scripts:
            raise _Unknown("a script without its symbol")
        return atoms[-1]

    def _digits(self) -> str:
        j = self.i
        while _digit(self.peek()):
            self.i += 1
        return self.s[j : self.i]

    def _number(self) -> str:
        m = re.compile(r"\d*\.?\d+(?:[eE][-+]?\d+)?").match(self.s, self.i)
        if not m:
            raise _Unknown(self.peek())
        self.i = m.end()
        return m[0]

    # scripts ---------------------------------------------------------------
    def _script(self, atoms: list[_Atom], kind: str, script: bool) -> None:
        atom = self._last(atoms)
        c = self.peek()
        if c == "{":
            self.i += 1
            body = self.sequence("}", script=True)
            self._expect("}")
        elif c == "(" and kind == "^":  # ^(a-1): the parentheses group
            self.i += 1
            body = self.sequence(")", script=True)
            self._expect(")")
        else:
            body = self._script_word()
        (atom.sups if kind == "^" else atom.subs).append(body)

    def _script_word(self) -> str:
        """``_n,max``, ``^eq``, ``^2``, ``^η``, ``^*``: one word, commas allowed."""
        parts = []
        while True:
            j = self.i
            while self._letter(self.peek()) or _digit(self.peek()):
                self.i += 1
                while self.peek() in ACCENTS:
                    self.i += 1
            if self.i == j and self.peek() in SYMBOLS:
                self.i += 1
                parts.append(SYMBOLS[self.s[j]])
            elif self.i == j and self.peek() in "+-*":
                self.i += 1
                parts.append(self.s[j])
            elif self.i == j:
                raise _Unknown("an empty script")
            else:
                parts.append(_Reader(self.s[j : self.i]).sequence("", script=True))
            if self.peek() == "," and self.peek(1) and not self.peek(1).isspace():
                self.i += 1
                continue
            return ",".join(parts)

    def _unicode_scripts(self, atoms: list[_Atom]) -> None:
        atom = self._last(atoms)
        while self.peek() in SUPERSCRIPTS or self.peek() in SUBSCRIPTS:
            table, target = (
                (SUPERSCRIPTS, atom.sups)
                if self.peek() in SUPERSCRIPTS
                else (SUBSCRIPTS, atom.subs)
            )
            run = ""
            while self.peek() in table:
                run += table[self.peek()]
                self.i += 1
            target.append(run)
            # εᵥ,ᵢ: a comma between two subscripts belongs to them
            if self.peek() == "," and self.peek(1) in SUBSCRIPTS and table is SUBSCRIPTS:
                self.i += 1

    def _expect(self, c: str) -> None:
        if self.peek() != c:
            raise _Unknown(f"expected {c}")
        self.i += 1

    def _argument(self, script: bool) -> str:
        """The argument of ``sqrt``/``√``: a parenthesised group or one symbol."""
        if self.peek() == "(":
            self.i += 1
            body = self.sequence(")", script)
            self._expect(")")
            return body
        if _digit(self.peek()):
            return self._number()
        if self._letter(self.peek()):
            return self._word(script).render()
        raise _Unknown("sqrt without its argument")

    # words -----------------------------------------------------------------
    def _unit(self) -> tuple[str, list[str]]:
        """One letter and the accents above it."""
        c = self.peek()
        self.i += 1
        accents = []
        while self.peek() in ACCENTS:
            accents.append(ACCENTS[self.peek()])
            self.i += 1
        return c, accents

    def _word(self, script: bool) -> _Atom:
        start = self.i
        units: list[tuple[str, list[str]]] = [self._unit()]
        latin = units[0][0] not in GREEK
        while self._letter(self.peek()) and not (latin and self.peek() in GREEK):
            units.append(self._unit())  # Eν is E ν; φmax is φ with the label max
        digits = self._digits()
        plain = "".join(c for c, _ in units)
        bare = not digits and not any(a for _, a in units)
        if plain in FUNCTIONS and bare and not script:
            return _Atom(FUNCTIONS[plain])
        if plain in WORDS and not digits:
            return _Atom(WORDS[plain])
        if any(ord(c) > 127 and c not in GREEK for c, _ in units):
            raise _Unknown(self.s[start : self.i])
        if script and (len(units) > 1 or digits) and not any(a for _, a in units):
            # inside a script a word is a label: indices as written (A_ij, x^eq), longer
            # labels upright (δ_n0, G_IIc, s_trial, I_vol)
            if plain.isascii() and len(plain) <= 2 and not digits:
                return _Atom(plain)
            if len(units) == 1 and units[0][0] not in GREEK:
                return _Atom(units[0][0] + digits)
            return _Atom(r"\mathrm{" + _letters(units) + digits + "}")
        base = _Atom(_symbol(*units[0]))
        rest = units[1:]
        if len(units) == 1 or units[0][0] in GREEK or units[0][1]:
            # K0, φmax, ε̄p, K̇p: the first letter, the rest subscripted
            label = _letters(rest) + digits
            if label:
                base.subs.append(label if len(label) == 1 or label.isdigit() else _upright(label))
            return base
        if digits or any(a for _, a in rest):
            raise _Unknown(self.s[start : self.i])
        if len(units) == 2:
            return _Atom(r"\mathit{" + plain + "}")  # Pc, kT: one symbol, as written
        return _Atom(r"\mathrm{" + plain + "}")  # trial, crit, from


def _digit(c: str) -> bool:
    """An ASCII digit (``str.isdigit`` is true for ``²`` and ``₀`` too)."""
    return c != "" and c in "0123456789"


def _symbol(c: str, accents: list[str]) -> str:
    tex = GREEK.get(c, c)
    for a in accents:
        tex = a + "{" + tex + "}"
    return tex


def _letters(units: list[tuple[str, list[str]]]) -> str:
    out = []
    for c, accents in units:
        if accents:
            raise _Unknown("an accent inside a word")
        out.append(GREEK[c] + " " if c in GREEK else c)
    return "".join(out).strip()


def _upright(label: str) -> str:
    return r"\mathrm{" + label + "}" if label.isascii() else label
