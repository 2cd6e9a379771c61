"""The rules by which a model names a variable after another variable.

A model that needs the previous-step value, the rate or the residual of a
variable ``x`` does not take a second option for it: it derives the name from
``x`` by one of the rules below (``x~1``, ``x_rate``, ``x_residual``). Each rule
lives here once. Models apply a rule only through
:meth:`neml2.models.Model.derived_name` (which checks that the class declares
the derivation in its ``derives``, see :func:`neml2.models._schema.derived`) or
through a variable default built by :meth:`NamingRule.template`; that is how
``neml2-syntax`` lists, for every type, exactly the names its code derives, and
how ``neml2-syntax --conventions`` explains them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NamingRule:
    """A suffix appended to a variable's name, and what the derived variable means."""

    #: short identifier, used as ``rule`` in ``neml2-syntax --json``
    key: str
    #: appended to the variable's name
    suffix: str
    #: what the derived variable is, a few words about the variable ``{x}``
    short: str
    #: what it holds and who provides it, one or two sentences about ``{x}``
    meaning: str

    def __call__(self, name: str) -> str:
        """The derived name of variable *name*: ``name + suffix`` (``x`` -> ``x~1``)."""
        return f"{name}{self.suffix}"

    def template(self, option: str) -> str:
        """A variable default derived from *option*'s variable name, e.g.
        ``"{back_stress}_rate"``; the model fills it in when it is built."""
        return "{" + option + "}" + self.suffix

    def describe(self, x: str = "x", *, long: bool = False) -> str:
        """What the derived variable of *x* is (``long``: and who provides it)."""
        return (self.meaning if long else self.short).format(x=x)

    def placeholder(self, option: str) -> str:
        """How the catalogue writes the derived name: ``<option>_rate``."""
        return f"<{option}>{self.suffix}"


HISTORY = NamingRule(
    "history",
    "~1",
    "{x} at the previous step",
    "the value of {x} at the end of the previous step: an input that a TransientDriver "
    "fills from step k-1 ({x} prescribed there, else the model's output {x}; at step 0 "
    "the initial condition, else zero)",
)
HISTORY_2 = NamingRule(
    "history_2",
    "~2",
    "{x} two steps back",
    "the value of {x} two steps back (in general {x}~m is m steps back), read by "
    "extrapolating predictors; zero before the first step",
)
RATE = NamingRule(
    "rate",
    "_rate",
    "time rate of {x}",
    "the time rate of {x}: the output of the model that computes it (a *VariableRate, "
    "a flow rule, a hardening law) and the input of a time integrator",
)
RESIDUAL = NamingRule(
    "residual",
    "_residual",
    "residual of the equation for {x}",
    "the residual of the equation solved for {x} (zero at the solution); a "
    "NonlinearSystem pairs each unknown {x} with the output {x}_residual unless its "
    "'residuals' option names others",
)

#: Every rule, in the order ``neml2-syntax --conventions`` explains them.
RULES: tuple[NamingRule, ...] = (HISTORY, HISTORY_2, RATE, RESIDUAL)


def rule_of_template(template: str) -> tuple[NamingRule, str] | None:
    """``(rule, option)`` when *template* is ``rule.template(option)``, else None."""
    for rule in RULES:
        if template.startswith("{") and template.endswith("}" + rule.suffix):
            option = template[1 : -len(rule.suffix) - 1]
            if option.isidentifier():
                return rule, option
    return None


def history_of(name: str) -> tuple[str, int] | None:
    """Read a history name (the :data:`HISTORY` family: ``x~1``, ``x~2``, ...).

    Args:
        name: a variable name.

    Returns:
        ``(x, m)`` for ``x~m`` (``m >= 1`` steps back), else None.
    """
    variable, sep, steps = name.rpartition("~")
    if not sep or not variable or not steps.isdigit() or int(steps) < 1:
        return None
    return variable, int(steps)
