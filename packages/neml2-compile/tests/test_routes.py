"""neml2.routes: the registry of routes and open_model on each, on a small elasticity model.

The route matrix of tests-integration/routes compares every route with py-eager on the
whole zoo; here: the registry's contract, the errors, and that open_model reaches each
route's own object with the one surface.
"""

from __future__ import annotations

import pytest
import torch

import neml2
import neml2.routes as routes
from neml2.tensors import FatalError

F64 = torch.float64


def test_the_registry_names_six_routes_once():
    assert routes.NAMES == (
        "py-eager",
        "py-jit",
        "py-aoti",
        "cpp-aoti",
        "cpp-dispatch",
        "cpp-eager",
    )
    assert len(set(routes.NAMES)) == len(routes.ROUTES)
    assert {r.name for r in routes.ROUTES if r.artifact} == {"py-aoti", "cpp-aoti", "cpp-dispatch"}
    # the drivers run the routes whose model is a typed neml2 model
    assert {r.name for r in routes.ROUTES if r.typed} == {"py-eager", "py-jit", "py-aoti"}
    for r in routes.ROUTES:
        assert routes.route(r.name) is r and routes.route(r) is r
        assert r.host in ("Python", "C++") and r.entry


def test_an_unknown_route_names_the_closest_one():
    with pytest.raises(FatalError, match=r"unknown route 'py-jt' \(did you mean 'py-jit'\?\)"):
        routes.route("py-jt")


def test_parse_reads_lists_and_all_and_names_its_source_in_errors():
    assert routes.parse("") == routes.ROUTES
    assert routes.parse("all") == routes.ROUTES
    assert [r.name for r in routes.parse(" cpp-eager, py-jit ")] == ["cpp-eager", "py-jit"]
    with pytest.raises(FatalError, match=r"^NEML2_ROUTES: unknown route 'gpu'"):
        routes.parse("py-eager,gpu", what="NEML2_ROUTES")


def _strain(n: int = 3) -> torch.Tensor:
    return torch.linspace(-1e-3, 2e-3, 6 * n, dtype=F64).reshape(n, 6)


@pytest.fixture(scope="module")
def artifact(elasticity_input, cache_dir, tmp_path_factory):
    out = tmp_path_factory.mktemp("route-artifacts")
    return routes.build_artifact(
        elasticity_input, "elasticity", pairs=["stress:strain"], output_dir=out, cache_dir=cache_dir
    )


@pytest.mark.parametrize("name", routes.NAMES)
def test_open_model_gives_py_eager_s_values_on_every_route(name, elasticity_input, artifact):
    ref = neml2.load_model(elasticity_input, "elasticity")
    x = {"strain": _strain()}
    with torch.no_grad():
        want = ref.forward(x)["stress"]
        _, want_j = ref.jacobian(x)
        m = routes.open_model(
            name,
            elasticity_input,
            "elasticity",
            artifact=artifact if routes.route(name).artifact else None,
            jit_backend="eager",
        )
        assert m.route.name == name
        assert m.input_names == ["strain"] and m.output_names == ["stress"]
        got = m.forward(x)
        out, J = m.jacobian(x)
        _, jv = m.jvp(x, {"strain": x["strain"]})
    # plain dicts (the runtimes' dict subclasses are not part of the surface)
    assert type(got) is dict and type(J) is dict and type(J["stress"]) is dict
    torch.testing.assert_close(got["stress"], want, rtol=1e-12, atol=0.0)
    torch.testing.assert_close(out["stress"], want, rtol=1e-12, atol=0.0)
    torch.testing.assert_close(
        J["stress"]["strain"], want_j["stress"]["strain"], rtol=1e-12, atol=0.0
    )
    # elasticity is linear: the jvp along the strain itself is the stress
    torch.testing.assert_close(jv["stress"], want, rtol=1e-12, atol=0.0)
    if m.route.typed:
        assert isinstance(m.impl, torch.nn.Module) and hasattr(m.impl, "input_spec")


def test_a_loaded_model_opens_on_the_python_routes(elasticity_input):
    model = neml2.load_model(elasticity_input, "elasticity")
    assert routes.open_model("py-eager", model).impl is model
    jit = routes.open_model("py-jit", model, jit_backend="eager")
    assert jit.impl.model is model
    with pytest.raises(FatalError, match="cpp-eager opens an input file"):
        routes.open_model("cpp-eager", model)


def test_a_file_without_a_model_name_is_refused(elasticity_input):
    with pytest.raises(FatalError, match=r"name the \[Models\] block"):
        routes.open_model("py-eager", elasticity_input)


def test_no_grad_calls_keep_no_graph(elasticity_input):
    x = {"strain": _strain().requires_grad_()}
    values = routes.open_model("py-eager", elasticity_input, "elasticity", no_grad=True)
    assert values.forward(x)["stress"].grad_fn is None
    assert values.jacobian(x)[1]["stress"]["strain"].grad_fn is None
    # the default keeps autograd (calibration differentiates through py-eager)
    grad = routes.open_model("py-eager", elasticity_input, "elasticity")
    assert grad.forward(x)["stress"].grad_fn is not None
