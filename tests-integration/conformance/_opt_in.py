"""The conformance files that run hours over the whole suite: each is collected only
when its variable is set (conftest.py), by its own nox session."""

#: opt-in file -> the variable that collects it
OPT_IN = {
    "test_conformance_routes.py": "NEML2_CONFORMANCE_ROUTES",
    "test_graph_capture.py": "NEML2_CONFORMANCE_CAPTURE",
}
