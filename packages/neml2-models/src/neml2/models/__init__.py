"""neml2 material models: the Model contract, composition, the registry and the HIT factory.

Importing this package registers the built-in model types.
"""

from neml2 import solvers as _solvers  # noqa: F401
from neml2.models import chemical_reactions as _chemical_reactions  # noqa: F401
from neml2.models import common as _common  # noqa: F401
from neml2.models import coordinate_descent as _coordinate_descent  # noqa: F401
from neml2.models import csv_tensors as _csv_tensors  # noqa: F401
from neml2.models import finite_volume as _finite_volume  # noqa: F401
from neml2.models import implicit_update as _implicit_update  # noqa: F401
from neml2.models import kwn as _kwn  # noqa: F401
from neml2.models import phase_field_fracture as _phase_field_fracture  # noqa: F401
from neml2.models import porous_flow as _porous_flow  # noqa: F401
from neml2.models import predictors as _predictors  # noqa: F401
from neml2.models import python_tensors as _python_tensors  # noqa: F401
from neml2.models import solid_mechanics as _solid_mechanics  # noqa: F401
from neml2.models._composed import ComposedModel
from neml2.models._expression_check import suggest
from neml2.models._factory import load_input, load_model, load_nonlinear_system, load_string
from neml2.models._history import with_zero_history
from neml2.models._input_file import InputFile
from neml2.models._jit import CompiledModel, compile
from neml2.models._model import Model
from neml2.models._python_code import ALLOW_PYTHON_CODE_ENV, allow_python_code
from neml2.models._registry import (
    ENTRY_POINT_GROUP,
    lookup,
    register,
    register_neml2_object,
    registered_types,
)
from neml2.models._schema import (
    REQUIRED,
    NonlinearParameter,
    data_ref,
    input,
    model_ref,
    option,
    output,
    parameter,
)
from neml2.models.material_point import MaterialPoint, MaterialPointResult
from neml2.models.reduced_dimensions import Axisymmetric, PlaneStrain, PlaneStress

__all__ = [
    "ALLOW_PYTHON_CODE_ENV",
    "ENTRY_POINT_GROUP",
    "REQUIRED",
    "Axisymmetric",
    "CompiledModel",
    "ComposedModel",
    "InputFile",
    "MaterialPoint",
    "MaterialPointResult",
    "Model",
    "NonlinearParameter",
    "PlaneStrain",
    "PlaneStress",
    "allow_python_code",
    "compile",
    "data_ref",
    "input",
    "load_input",
    "load_model",
    "load_nonlinear_system",
    "load_string",
    "lookup",
    "model_ref",
    "option",
    "output",
    "parameter",
    "register",
    "register_neml2_object",
    "registered_types",
    "suggest",
    "with_zero_history",
]
