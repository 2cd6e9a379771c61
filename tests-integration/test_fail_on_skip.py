"""The CI rule (tools/pytest-plugins/neml2_fail_on_skip.py) and the nox sessions that
apply it: under NEML2_FAIL_ON_SKIP=1 a skip, xfail or xpass fails the run, except that
of a test marked needs_gpu on a machine without CUDA; every session running pytest
loads the plugin and sets the variable."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
PLUGINS = ROOT / "tools" / "pytest-plugins"
NOXFILE = ROOT / "noxfile.py"

#: a conftest that makes the plugin see a CUDA device (or none) whatever the machine has
FAKE_CUDA = "import neml2_fail_on_skip\nneml2_fail_on_skip.cuda_available = lambda: {}\n"


def _run(
    tmp_path: Path,
    tests: str,
    *,
    rule: bool = True,
    cuda: bool | None = None,
    args: tuple[str, ...] = (),
) -> subprocess.CompletedProcess:
    """pytest on a test file holding *tests*, with the plugin loaded as nox loads it;
    *cuda* (when given) is what the plugin's probe answers."""
    (tmp_path / "test_one.py").write_text("import pytest\n\n" + textwrap.dedent(tests))
    if cuda is not None:
        (tmp_path / "conftest.py").write_text(FAKE_CUDA.format(cuda))
    env = {k: v for k, v in os.environ.items() if k not in ("NEML2_FAIL_ON_SKIP", "PYTHONPATH")}
    env["PYTHONPATH"] = str(PLUGINS)
    if rule:
        env["NEML2_FAIL_ON_SKIP"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    cmd += ["-p", "neml2_fail_on_skip", *args, str(tmp_path)]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)


def _check(out: subprocess.CompletedProcess, code: int, *lines: str) -> None:
    text = out.stdout + out.stderr
    assert out.returncode == code, text
    for line in lines:
        assert line in text, text


PLAIN_SKIP = """
    def test_ok():
        pass

    def test_skipped():
        pytest.skip("the neml2 packages are not importable")
"""


def test_a_skip_fails_the_run_only_under_the_rule(tmp_path):
    _check(
        _run(tmp_path, PLAIN_SKIP),
        1,
        "SKIPPED test_one.py::test_skipped: Skipped: the neml2 packages are not importable",
    )
    _check(_run(tmp_path, PLAIN_SKIP, rule=False), 0, "1 passed, 1 skipped")


@pytest.mark.parametrize(
    "tests",
    [
        'def test_x():\n    pytest.skip("needs a CUDA device")\n',
        '@pytest.mark.skipif(True, reason="no GPU here")\ndef test_x():\n    pass\n',
        'def test_x():\n    pytest.importorskip("cuda_nowhere_to_be_found")\n',
    ],
    ids=["skip-cuda", "skipif-gpu", "importorskip-cuda"],
)
def test_the_words_of_a_reason_exempt_nothing(tmp_path, tests):
    """The former exemption (the substring "cuda" or "gpu" in the reason) is gone: only
    the needs_gpu marker exempts, on a machine without CUDA."""
    _check(_run(tmp_path, tests, cuda=False), 1, "SKIPPED test_one.py::test_x")


GPU_SKIP = """
    @pytest.mark.needs_gpu
    @pytest.mark.skipif(True, reason="needs a CUDA device")
    def test_on_gpu():
        pass

    @pytest.mark.needs_gpu
    def test_on_gpu_xfail():
        pytest.xfail("the kernel needs a CUDA device")

    def test_ok():
        pass
"""


def test_needs_gpu_exempts_only_on_a_machine_without_cuda(tmp_path):
    _check(_run(tmp_path, GPU_SKIP, cuda=False), 0, "1 passed, 1 skipped, 1 xfailed")
    # the same tests where the machine has a GPU: nothing excuses them
    _check(
        _run(tmp_path, GPU_SKIP, cuda=True),
        1,
        "SKIPPED test_one.py::test_on_gpu: Skipped: needs a CUDA device",
        "XFAILED test_one.py::test_on_gpu_xfail: the kernel needs a CUDA device",
    )


def test_needs_gpu_asks_torch_itself(tmp_path):
    """Without the fake: the plugin's own probe, torch.cuda.is_available()."""
    torch = pytest.importorskip("torch")
    expected = 1 if torch.cuda.is_available() else 0
    _check(_run(tmp_path, GPU_SKIP), expected)


@pytest.mark.parametrize(
    ("tests", "line"),
    [
        (
            '@pytest.mark.xfail(strict=True, reason="route gap")\n'
            "def test_x():\n    assert False\n",
            "XFAILED test_one.py::test_x: route gap",
        ),
        (
            '@pytest.mark.xfail(reason="flaky")\ndef test_x():\n    assert False\n',
            "XFAILED test_one.py::test_x: flaky",
        ),
        (
            '@pytest.mark.xfail(reason="was a gap")\ndef test_x():\n    pass\n',
            "XPASSED test_one.py::test_x: was a gap",
        ),
        ('def test_x():\n    pytest.xfail("not yet")\n', "XFAILED test_one.py::test_x: not yet"),
    ],
    ids=["strict-xfail", "xfail", "xpass", "imperative-xfail"],
)
def test_an_xfail_or_xpass_fails_the_run_under_the_rule(tmp_path, tests, line):
    """An expected failure is a known gap: under the rule it fails the run like a skip
    (a strict xfail that passes fails it already, by pytest's own rule)."""
    _check(_run(tmp_path, tests), 1, line)
    assert _run(tmp_path, tests, rule=False).returncode == 0


def test_a_module_skipped_as_a_whole_fails_the_run(tmp_path):
    (tmp_path / "test_two.py").write_text("def test_ok():\n    pass\n")
    tests = 'pytest.importorskip("no_such_module_anywhere")\n\ndef test_x():\n    pass\n'
    _check(_run(tmp_path, tests), 1, "SKIPPED test_one.py: Skipped: could not import")
    _check(_run(tmp_path, tests, rule=False), 0, "1 passed, 1 skipped")


def test_the_rule_sees_the_reports_of_xdist_workers(tmp_path):
    """The integration session runs on two workers: the controller judges their reports
    (the needs_gpu mark travels with them)."""
    pytest.importorskip("xdist")
    tests = GPU_SKIP + PLAIN_SKIP.replace("test_ok", "test_ok2")
    xdist = ("-p", "xdist", "-n", "2")
    _check(_run(tmp_path, tests, cuda=False, args=xdist), 1, "test_one.py::test_skipped")
    _check(_run(tmp_path, GPU_SKIP, cuda=False, args=xdist), 0, "1 skipped, 1 xfailed")


def test_no_test_collected_stays_exit_5(tmp_path):
    """pytest's exit 5 (nothing collected, or everything deselected) reaches nox, which
    fails the session on any non-zero status (no session maps 5 to success)."""
    assert _run(tmp_path, "").returncode == 5
    assert _run(tmp_path, PLAIN_SKIP, args=("-m", "needs_sibling")).returncode == 5
    assert "success_codes" not in NOXFILE.read_text()


def test_needs_sibling_is_deselected_not_skipped(tmp_path):
    tests = "@pytest.mark.needs_sibling\ndef test_x():\n    pass\n\ndef test_y():\n    pass\n"
    _check(_run(tmp_path, tests, args=("-m", "not needs_sibling")), 0, "1 passed, 1 deselected")


# ---------------------------------------------------------------------- the nox sessions
class FakeSession:
    """What a nox session function calls, recorded (nothing is installed or run)."""

    def __init__(self) -> None:
        self.posargs: list[str] = []
        self.runs: list[tuple[tuple[str, ...], dict[str, str]]] = []
        self.virtualenv = SimpleNamespace(location="/nonexistent/venv")
        self._runner = SimpleNamespace(global_config=SimpleNamespace(sessions=None))

    def run_install(self, *args, **kwargs) -> None:
        pass

    def run(self, *args, env=None, **kwargs) -> None:
        self.runs.append((tuple(map(str, args)), dict(env or {})))

    def log(self, *args) -> None:
        pass

    def error(self, message: str):
        raise AssertionError(f"session.error: {message}")


@pytest.fixture(scope="module")
def noxfile():
    pytest.importorskip("nox")
    spec = importlib.util.spec_from_file_location("neml2_noxfile_under_test", NOXFILE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _pytest_runs(session_func, **params) -> list[tuple[tuple[str, ...], dict[str, str]]]:
    """pytest's arguments (after ``python -m pytest``) and environment, per pytest run."""
    fake = FakeSession()
    session_func(fake, **params)
    runs = [(args[args.index("pytest") + 1 :], env) for args, env in fake.runs if "pytest" in args]
    assert runs, f"{session_func} ran no pytest"
    return runs


def _sessions(noxfile):
    yield from (("tests", noxfile.tests, {"package": p}) for p in noxfile.PACKAGES)
    yield "integration", noxfile.integration, {}
    yield "conformance", noxfile.conformance, {}
    yield "routes", noxfile.routes, {}
    yield "conformance_routes", noxfile.conformance_routes, {}
    yield "conformance_capture", noxfile.conformance_capture, {}
    yield "docs", noxfile.docs, {}
    yield "fe", noxfile.fe, {}
    yield "dealii", noxfile.dealii, {}
    yield "bench-tests", noxfile.bench_tests, {}


def test_every_pytest_session_applies_the_rule(noxfile):
    for name, func, params in _sessions(noxfile):
        for args, env in _pytest_runs(func, **params):
            assert env.get("NEML2_FAIL_ON_SKIP") == "1", (name, params)
            assert "-p" in args and args[args.index("-p") + 1] == "neml2_fail_on_skip", name
            assert str(PLUGINS) in env["PYTHONPATH"].split(os.pathsep), name
    assert (PLUGINS / "neml2_fail_on_skip.py").is_file()


def test_pytest_runs_only_through_the_one_helper(noxfile):
    """A session added later cannot run pytest around the rule: the word "pytest" as a
    string in noxfile.py appears only inside _pytest."""
    tree = ast.parse(NOXFILE.read_text())
    outside = []
    for func in ast.walk(tree):
        if isinstance(func, ast.FunctionDef) and func.name != "_pytest":
            for node in ast.walk(func):
                if isinstance(node, ast.Constant) and node.value == "pytest":
                    outside.append(f"{func.name} (line {node.lineno})")
    assert outside == []


def test_package_sessions_deselect_what_integration_runs(noxfile):
    siblings = {str(p.relative_to(ROOT)) for p in noxfile._sibling_tests()}
    assert {
        "packages/neml2-aoti-runtime/tests/test_eager.py",
        "packages/neml2-aoti-runtime/tests/test_surface.py",
        "packages/neml2-models/tests/test_plasticity_normality.py",
    } <= siblings
    for package in noxfile.PACKAGES:
        ((args, _),) = _pytest_runs(noxfile.tests, package=package)
        assert args[args.index("-m") + 1] == "not needs_sibling", package
    ((args, _),) = _pytest_runs(noxfile.integration)
    assert {str(ROOT / s) for s in siblings} <= set(args)
    assert "-m" not in args


def test_the_benchmark_harness_checks_run_by_default(noxfile):
    assert "bench-tests" in noxfile.nox.options.sessions
    ((args, _),) = _pytest_runs(noxfile.bench_tests)
    assert str(ROOT / "benchmarks" / "suite" / "test_suite.py") in args
    assert str(ROOT / "benchmarks" / "gpu" / "test_gpu_run.py") in args
