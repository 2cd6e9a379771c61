"""Elasticity tensors as model outputs: isotropic (two constants) and cubic (three).

The stiffness is an ``SSR4`` output named after the ``[Models]`` block (or the
``C`` option), so another model takes it as a parameter
(``elastic_stiffness_tensor = 'block'``). The constants may be numbers,
``[Tensors]`` names or variables (then inputs of the model).
"""

from __future__ import annotations

import torch

from neml2.models._registry import register
from neml2.models._schema import option, output, parameter
from neml2.models.common._block_output import BlockNamedOutput
from neml2.models.solid_mechanics.elasticity import (
    COEFFICIENTS,
    bulk_shear,
    check_elastic_constants,
)
from neml2.tensors import SSR4, Scalar


def _declare_coefficients(model: BlockNamedOutput, count: int) -> dict[str, str]:
    """Declare the ``coefficients`` as parameters named after their ``coefficient_types``.

    Returns ``{coefficient type: parameter name}``; errors name the option.
    """
    coefs = model.opts["coefficients"]
    types = model.opts["coefficient_types"]
    if len(coefs) != count:
        raise model.error(
            f"option 'coefficients' needs exactly {count} values, got {len(coefs)}", "coefficients"
        )
    if len(types) != count:
        raise model.error(
            f"option 'coefficient_types' needs exactly {count} values, got {len(types)}",
            "coefficient_types",
        )
    if len(set(types)) != count:
        raise model.error(
            f"option 'coefficient_types' repeats a type: {' '.join(types)}", "coefficient_types"
        )
    check_elastic_constants(
        types,
        coefs,
        lambda message: model.error(f"option 'coefficients': {message}", "coefficients"),
    )
    names = {}
    for t, c in zip(types, coefs, strict=True):
        names[t] = COEFFICIENTS[t]
        model.declare_parameter(COEFFICIENTS[t], Scalar, c)
    return names


_FIELDS = (
    parameter(
        "coefficients", Scalar, many=True, doc="the elastic constants, in the order of the types"
    ),
    option(
        "coefficient_types",
        str,
        many=True,
        choices=tuple(COEFFICIENTS),
        doc="what each coefficient is",
    ),
)


def _cubic_basis(like: Scalar) -> tuple[SSR4, SSR4, SSR4]:
    """The Mandel projectors ``I_C1`` (normal diagonal), ``I_C2`` (normal off-diagonal)
    and ``I_C3`` (shear diagonal)."""
    normal = torch.zeros(6, dtype=like.dtype, device=like.device)
    normal[:3] = 1.0
    shear = 1.0 - normal
    i1 = torch.diag(normal)
    i2 = normal.unsqueeze(-1) * normal.unsqueeze(-2) - i1
    return SSR4(i1), SSR4(i2), SSR4(torch.diag(shear))


@register()
class IsotropicElasticityTensor(BlockNamedOutput):
    """Isotropic stiffness ``C = 3K I_vol + 2G I_dev`` (``(*B, 6, 6)`` Mandel).

    ``K`` and ``G`` follow from any two of ``YOUNGS_MODULUS``, ``POISSONS_RATIO``,
    ``BULK_MODULUS``, ``SHEAR_MODULUS``, ``LAME_LAMBDA`` (``coefficient_types``),
    e.g. ``K = E / (3(1 - 2ν))``, ``G = E / (2(1 + ν))``. The output is named
    after the block unless ``C`` says otherwise.
    """

    OUTPUT_OPTION = "C"
    fields = (
        output("C", SSR4, "C", doc="the stiffness tensor (default: the block name)"),
        *_FIELDS,
    )

    def setup(self) -> None:
        names = _declare_coefficients(self, 2)
        try:
            bulk_shear(dict.fromkeys(names.values(), Scalar(1.0)))
        except ValueError as e:
            raise self.error(f"option 'coefficient_types': {e}", "coefficient_types") from e
        self._names = tuple(names.values())

    def forward(self) -> SSR4:
        K, G = bulk_shear({n: self.param(n) for n in self._names})
        return SSR4.isotropic_K_G(K, G)


@register()
class CubicElasticityTensor(BlockNamedOutput):
    """Cubic stiffness ``C = C₁ I_C1 + C₂ I_C2 + C₃ I_C3`` (``(*B, 6, 6)`` Mandel).

    ``I_C1`` has ones on the normal diagonal ``(i, i), i < 3``, ``I_C2`` on the
    normal off-diagonal ``(i, j), i ≠ j < 3`` and ``I_C3`` on the shear
    diagonal ``(i, i), i ≥ 3``. From ``YOUNGS_MODULUS`` ``E``,
    ``POISSONS_RATIO`` ``ν`` and ``SHEAR_MODULUS`` ``μ`` (any order):
    ``C₁ = E(1 - ν) / ((1 + ν)(1 - 2ν))``, ``C₂ = Eν / ((1 + ν)(1 - 2ν))``,
    ``C₃ = 2μ``. The output is named after the block unless ``C`` says otherwise.
    """

    OUTPUT_OPTION = "C"
    fields = (
        output("C", SSR4, "C", doc="the stiffness tensor (default: the block name)"),
        *_FIELDS,
    )

    def setup(self) -> None:
        names = _declare_coefficients(self, 3)
        if set(names) != {"YOUNGS_MODULUS", "POISSONS_RATIO", "SHEAR_MODULUS"}:
            raise self.error(
                "option 'coefficient_types' takes YOUNGS_MODULUS, POISSONS_RATIO and SHEAR_MODULUS "
                "(in any order), got " + " ".join(self.opts["coefficient_types"]),
                "coefficient_types",
            )

    def forward(self) -> SSR4:
        E, nu, G = self.param("E"), self.param("nu"), self.param("G")
        d = (1.0 + nu) * (1.0 - 2.0 * nu)
        c1 = E * (1.0 - nu) / d
        c2 = E * nu / d
        c3 = 2.0 * G
        i1, i2, i3 = _cubic_basis(c1)
        return c1 * i1 + c2 * i2 + c3 * i3
