"""Developer sessions for the neml2 workspace.

Every session installs from ``uv.lock`` (``uv sync --frozen``) into its own
virtual environment, so torch and every tool come from the lock and nothing
from the developer's machine leaks in. ``uv run nox`` runs the default set
(the full test suite); ``uv run nox -l`` lists every session.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox

nox.options.default_venv_backend = "uv"
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = True
# What default CI runs (the sessions, the route matrix's models and left-out cells) is
# decided in tools/neml2_ci_scope.py, which the docs build reads too (docs/development.md)
sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
from neml2_ci_scope import CI_ROUTE_EXCLUDE, CI_ROUTE_MODELS, DEFAULT_SESSIONS  # noqa: E402

nox.options.sessions = list(DEFAULT_SESSIONS)

ROOT = Path(__file__).resolve().parent
CPP = ROOT / "cpp"

#: Workspace members in dependency order; each is tested in an environment
#: holding only its declared dependencies, so an undeclared sibling import fails.
PACKAGES = [
    "neml2-hit",
    "neml2-tensors",
    "neml2-models",
    "neml2-drivers",
    "neml2-compile",
    "neml2-aoti-runtime",
]


def _sync(session: nox.Session, *args: str) -> None:
    """Install the locked environment described by ``uv sync`` *args* into the session venv."""
    session.run_install(
        "uv",
        "sync",
        "--frozen",
        *args,
        # .pyc files at install time (pyproject.toml [tool.uv] says why only here)
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location, "UV_COMPILE_BYTECODE": "1"},
        external=True,
    )


def _python(session: nox.Session) -> str:
    return str(Path(session.virtualenv.location) / "bin" / "python")


def _workers(session: nox.Session) -> list[str]:
    """pytest-xdist arguments: two workers (one per core of the CI machine), tests grouped
    as tests-integration/conftest.py says; none when the posargs choose (``-- -n 0``)."""
    if any(a.startswith(("-n", "--numprocesses", "--dist")) for a in session.posargs):
        return []
    return ["-n", "2", "--dist", "loadscope"]


#: the CI rule as a pytest plugin, in no wheel (tools/pytest-plugins/neml2_fail_on_skip.py):
#: under NEML2_FAIL_ON_SKIP=1 a skip, xfail or xpass fails the run, except that of a test
#: marked needs_gpu on a machine without CUDA
RULE_PLUGIN_DIR = ROOT / "tools" / "pytest-plugins"
RULE_PLUGIN = "neml2_fail_on_skip"
#: the marker of a package test that needs a sibling its package does not depend on
SIBLING_MARK = "needs_sibling"


def _pytest(session: nox.Session, *args: str, env: dict[str, str] | None = None) -> None:
    """Run pytest in the session venv under the CI rule: every session that runs pytest
    goes through here (a test in tests-integration/test_fail_on_skip.py checks it). A
    non-zero exit fails the session, 5 (no test collected) included."""
    path = os.pathsep.join(p for p in (str(RULE_PLUGIN_DIR), os.environ.get("PYTHONPATH")) if p)
    env = {**(env or {}), "NEML2_FAIL_ON_SKIP": "1", "PYTHONPATH": path}
    session.run("python", "-m", "pytest", "-p", RULE_PLUGIN, *args, env=env)


def _sibling_tests() -> list[Path]:
    """The package test files with a test marked needs_sibling: their package's isolated
    session deselects it, the integration session runs the file."""
    files = (ROOT / "packages").glob("*/tests/**/test_*.py")
    return sorted(p for p in files if SIBLING_MARK in p.read_text())


def _release_tool():
    """tools/neml2_release: the changelog rule, the release and the compatibility check
    (plain Python beside the workspace, in no wheel; the sessions below wrap it)."""
    tools = str(ROOT / "tools")
    if tools not in sys.path:
        sys.path.insert(0, tools)
    import neml2_release

    return neml2_release


def _check_changelogs(session: nox.Session) -> None:
    """The changelog rule (docs/releasing.md): every package keeps a CHANGELOG.md, and a
    commit changing packages/<p>/src changes its CHANGELOG.md or says it need not."""
    tool = _release_tool()
    report = tool.rule.check(ROOT)
    for note in report.notes:
        session.log(note)
    if not report.ok:
        session.error("changelog rule:\n  " + "\n  ".join(report.problems))


@nox.session
@nox.parametrize("package", PACKAGES)
def tests(session: nox.Session, package: str) -> None:
    """Run one package's tests with only that package's declared dependencies; its tests
    that need a sibling package (marked needs_sibling) are deselected: integration runs them."""
    _sync(session, "--package", package, "--all-extras")
    tests_dir = ROOT / "packages" / package / "tests"
    _pytest(session, str(tests_dir), "-q", "-m", f"not {SIBLING_MARK}", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """Run the cross-package tests in tests-integration/, the six-route matrix on the
    CI_ROUTE_MODELS and the FE hosts included, on two pytest-xdist workers."""
    # the FE codes (the `fe` group) too: their hosts run here, in this venv, rather than
    # in a session of their own that would install torch once more
    _sync(session, "--all-packages", "--group", "fe")
    tests = ROOT / "tests-integration"
    # The package tests that need a sibling package (marked needs_sibling, deselected in
    # their own isolated `tests` session) run here, where every package is installed.
    siblings = _sibling_tests()
    if not siblings:
        session.error(f"no package test file is marked {SIBLING_MARK}: is the scan broken?")
    env = {
        "NEML2_ROUTE_MODELS": ",".join(CI_ROUTE_MODELS),
        "NEML2_ROUTE_EXCLUDE": ",".join(CI_ROUTE_EXCLUDE),
        # one intra-op thread per worker: two workers on two cores, no oversubscription
        "OMP_NUM_THREADS": "1",
        # Inductor's caches (py-jit) in the tree, as build/aoti-cache: a fresh clone
        # starts cold, and nothing outside the checkout changes what a run costs
        "TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache"),
        # tests-integration/fe/test_host_*.py: scikit-fem and torch-fem as hosts
        "NEML2_FE_HOSTS": "1",
    }
    _pytest(
        session,
        str(tests),
        *map(str, siblings),
        *_workers(session),
        "-q",
        "-rs",
        "--durations=15",
        *session.posargs,
        env=env,
    )


@nox.session(name="bench-tests")
def bench_tests(session: nox.Session) -> None:
    """The benchmark harness' own checks (benchmarks/suite/test_suite.py: the worker
    protocol, the report, the agreement checks; benchmarks/gpu/test_gpu_run.py: the GPU
    run's options, refusal, time budgets and table, on the CPU), not its timings."""
    _sync(session, "--all-packages")
    suite = ROOT / "benchmarks" / "suite" / "test_suite.py"
    gpu = ROOT / "benchmarks" / "gpu" / "test_gpu_run.py"
    # a tiny py-jit run among them: Inductor's caches in the tree, as in `integration`
    env = {"TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache")}
    _pytest(session, str(suite), str(gpu), "-q", "-p", "no:xdist", *session.posargs, env=env)


@nox.session
def cpp(session: nox.Session) -> None:
    """Configure, build and ctest libneml2, install it, then build and run cpp/consumer."""
    if shutil.which("cmake") is None:
        session.error("cmake is not on PATH: install CMake >= 3.24 (e.g. apt-get install cmake)")
    # neml2-models lets the cpp-eager ctest run; neml2-compile the compiled-route ctest
    # (cpp-aoti vs py-eager), here on elasticity and J2 only: Chaboche and the crystal
    # model compile for minutes each cold (all four: -DNEML2_TEST_ROUTES= by hand).
    _sync(session, "--package", "neml2-compile", "--no-dev")  # with neml2-models
    build = ROOT / "build" / "cpp"
    prefix = ROOT / "build" / "cpp-install"
    consumer = ROOT / "build" / "cpp-consumer"
    jobs = str(os.cpu_count() or 2)
    session.run(
        "cmake",
        "-S",
        str(CPP),
        "-B",
        str(build),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DPython3_EXECUTABLE={_python(session)}",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        "-DNEML2_TEST_ROUTES=elasticity;j2",
        "-DNEML2_REQUIRE_ALL_TESTS=ON",  # a missing prerequisite fails, never skips
        external=True,
    )
    session.run("cmake", "--build", str(build), "-j", jobs, external=True)
    session.run("ctest", "--test-dir", str(build), "--output-on-failure", external=True)
    session.run("cmake", "--install", str(build), external=True)
    session.run(
        "cmake",
        "-S",
        str(CPP / "consumer"),
        "-B",
        str(consumer),
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DPython3_EXECUTABLE={_python(session)}",
        "-DNEML2_REQUIRE_ALL_TESTS=ON",
        external=True,
    )
    session.run("cmake", "--build", str(consumer), external=True)
    session.run("ctest", "--test-dir", str(consumer), "--output-on-failure", external=True)


@nox.session
def mpi(session: nox.Session) -> None:
    """Build cpp/ with MPI into build/mpi and run the MPI ctest (DistributedModel, 2 ranks).

    Installs Open MPI from the distribution's packages (apt-get) when ``mpicxx`` is
    missing. Builds only libneml2, libneml2_mpi, the test and test_signature (which checks
    that DistributedModel has the one model surface); ``mpirun -np 2`` runs the test with
    --oversubscribe (and as root where the session runs as root).
    """
    if shutil.which("mpicxx") is None:
        if shutil.which("apt-get") is None:
            session.error("mpicxx not found: install an MPI with its compiler wrappers")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        session.run(*sudo, "apt-get", "update", "-q", external=True)
        pkgs = ["openmpi-bin", "libopenmpi-dev"]
        session.run(
            *sudo, "apt-get", "install", "-y", "--no-install-recommends", *pkgs, external=True
        )
    _sync(session, "--package", "neml2-tensors", "--no-dev")
    build = ROOT / "build" / "mpi"
    session.run(
        "cmake",
        "-S",
        str(CPP),
        "-B",
        str(build),
        "-DCMAKE_BUILD_TYPE=Release",
        "-DNEML2_WITH_MPI=ON",
        "-DNEML2_BUILD_EAGER=OFF",
        f"-DPython3_EXECUTABLE={_python(session)}",
        external=True,
    )
    jobs = str(os.cpu_count() or 2)
    # test_signature checks at compile time that DistributedModel has the one model surface
    targets = ["--target", "test_dispatch_mpi", "--target", "test_signature"]
    session.run("cmake", "--build", str(build), *targets, "-j", jobs, external=True)
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    # -R picks the MPI test and the surface check; ctest adds the MPI test's fixture (the
    # artifact build) itself
    session.run(
        "ctest",
        "--test-dir",
        str(build),
        "-R",
        "^(dispatch\\.mpi|aoti\\.signature)$",
        "--output-on-failure",
        env=env,
        external=True,
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Changelog rule, ruff lint + format check, clang-format check (layering: integration)."""
    _check_changelogs(session)
    _sync(session, "--all-packages", "--group", "dev")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    cxx = sorted(
        str(p)
        for base in (CPP, ROOT / "packages" / "neml2-aoti-runtime" / "csrc")
        for p in base.rglob("*")
        if p.suffix in {".h", ".cpp"} and "_build" not in p.parts
    )
    session.run("clang-format", "--dry-run", "--Werror", *cxx)


@nox.session
def wheels(session: nox.Session) -> None:
    """Build the six wheels; check the deployment pair installs and runs alone, then all six."""
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("uv", "build", "--all-packages", "--wheel", "-o", str(dist), external=True)
    built = sorted(p.name for p in dist.glob("*.whl"))
    session.log("built: " + ", ".join(built))
    if len(built) != len(PACKAGES):
        session.error(f"expected {len(PACKAGES)} wheels, got {built}")
    check = ROOT / "tests-integration" / "wheels" / "check_install.py"
    for mode, members in (
        ("deployment", ["neml2-tensors", "neml2-aoti-runtime"]),
        ("full", PACKAGES),
    ):
        venv = ROOT / "build" / f"wheels-{mode}"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("uv", "venv", "-q", "--python", sys.executable, str(venv), external=True)
        # Third-party requirements pinned by the lock (torch included) ...
        reqs = venv / "requirements.txt"
        export = ["uv", "export", "--frozen", "--no-dev", "--no-emit-workspace", "--no-hashes"]
        export += ["--all-packages"] if mode == "full" else ["--package", "neml2-aoti-runtime"]
        session.run(*export, "-o", str(reqs), "--quiet", external=True)
        py = str(venv / "bin" / "python")
        session.run("uv", "pip", "install", "-q", "--python", py, "-r", str(reqs), external=True)
        # ... then our wheels, without letting pip resolve anything else.
        wheels_ = [str(next(dist.glob(m.replace("-", "_") + "-*.whl"))) for m in members]
        session.run(
            "uv", "pip", "install", "-q", "--no-deps", "--python", py, *wheels_, external=True
        )
        session.run(py, str(check), mode, external=True)


@nox.session
def compat(session: nox.Session) -> None:
    """Deployment pair with the oldest neml2-tensors it allows; the oldest compiler's artifact."""
    # docs/releasing.md; runs after `wheels`, whose runtime wheel in dist/ it reuses
    tool = _release_tool()
    try:
        plan = tool.compat.plan(ROOT)
        session.log(plan.describe())
        compile_python = None
        if plan.compiler.tag is None:  # this tree's neml2-compile compiles the artifact
            # (with the runtime: it owns the artifact schema the compiler writes through;
            # uv reuses the runtime wheel an earlier session built)
            _sync(session, "--package", "neml2-compile", "--no-dev")
            compile_python = _python(session)
        tool.compat.run_check(plan, ROOT, compile_python=compile_python)
    except tool.ToolError as e:
        session.error(str(e))


@nox.session(python=False)
def release(session: nox.Session) -> None:
    """Release one package: nox -s release -- PACKAGE VERSION [--dry-run] (docs/releasing.md)."""
    tool = _release_tool()
    try:
        tool.release.main(session.posargs, ROOT)
    except tool.ToolError as e:
        session.error(str(e))


@nox.session
def docs(session: nox.Session) -> None:
    """Build the documentation site (MkDocs, warnings are errors) into build/site, then
    check that it reads offline: tests-integration/docs opens it from file:// in headless
    Chromium with the network cut (equations typeset, code highlighted, nothing fetched).

    Installs Chromium from the distribution's packages (apt-get) when it is missing.
    """
    if not any(map(shutil.which, ("chromium", "chromium-browser", "google-chrome"))):
        if shutil.which("apt-get") is None:
            session.error("chromium not found: install Chromium (the offline check opens the site)")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        session.run(*sudo, "apt-get", "update", "-q", external=True)
        session.run(
            *sudo, "apt-get", "install", "-y", "--no-install-recommends", "chromium", external=True
        )
    # The build runs neml2-syntax (the model catalogue, AOTIModel included, whose module
    # needs the runtime's artifact schema); uv reuses the runtime wheel built earlier.
    _sync(session, "--all-packages", "--group", "docs")
    site = ROOT / "build" / "site"
    config = str(ROOT / "mkdocs.yml")
    session.run("mkdocs", "build", "--strict", "-f", config, "-d", str(site), *session.posargs)
    check = ROOT / "tests-integration" / "docs"
    _pytest(session, str(check), "-q", "-p", "no:xdist", env={"NEML2_DOCS_SITE": str(site)})


@nox.session
def fe(session: nox.Session) -> None:
    """Finite-element codes from PyPI as hosts of neml2 (the ``fe`` dependency group):
    tests-integration/fe/test_host_*.py, scikit-fem and torch-fem around
    neml2.MaterialPoint (quadratic global Newton, torch-fem's own J2, plane stress);
    `integration` runs them too, this runs them alone."""
    _sync(session, "--all-packages", "--group", "fe")
    tests = sorted((ROOT / "tests-integration" / "fe").glob("test_host_*.py"))
    if not tests:
        session.error("no tests-integration/fe/test_host_*.py: is the glob broken?")
    env = {"NEML2_FE_HOSTS": "1", "OMP_NUM_THREADS": "1"}
    _pytest(
        session,
        *map(str, tests),
        "-q",
        "-p",
        "no:xdist",
        "--durations=10",
        *session.posargs,
        env=env,
    )


@nox.session
def dealii(session: nox.Session) -> None:
    """deal.II as a host of neml2 (opt-in): examples/dealii built against the installed
    CMake package, run by tests-integration/dealii (quadratic global Newton, scikit-fem's
    reactions, py-eager's MaterialPoint). Installs Debian's libdeal.ii-dev (apt-get, about
    160 MB download, 2 GB installed) when deal.II's CMake package is missing."""
    if not Path("/usr/share/cmake/deal.II/deal.IIConfig.cmake").is_file():
        if shutil.which("apt-get") is None:
            session.error("deal.II not found: install libdeal.ii-dev (deal.II >= 9.3)")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        session.run(*sudo, "apt-get", "update", "-q", external=True)
        session.run(
            *sudo,
            "apt-get",
            "install",
            "-y",
            "--no-install-recommends",
            "libdeal.ii-dev",
            external=True,
            env={"DEBIAN_FRONTEND": "noninteractive"},
        )
    _sync(session, "--all-packages", "--group", "fe")  # neml2-compile and scikit-fem
    out = ROOT / "build" / "dealii"
    prefix, artifact, example = out / "install", out / "artifact", out / "example"
    jobs = str(os.cpu_count() or 2)
    session.run(
        "cmake",
        "-S",
        str(CPP),
        "-B",
        str(out / "cpp"),
        "-DCMAKE_BUILD_TYPE=Release",
        f"-DPython3_EXECUTABLE={_python(session)}",
        f"-DCMAKE_INSTALL_PREFIX={prefix}",
        "-DNEML2_BUILD_TESTS=OFF",
        "-DNEML2_BUILD_EAGER=OFF",
        external=True,
    )
    session.run("cmake", "--build", str(out / "cpp"), "-j", jobs, external=True)
    session.run("cmake", "--install", str(out / "cpp"), external=True)
    j2 = ROOT / "examples" / "tutorials" / "3-implicit-j2" / "j2.i"
    session.run("neml2-compile", str(j2), "model", "-d", "stress:strain", "-o", str(artifact), "-q")
    session.run(
        "cmake",
        "-S",
        str(ROOT / "examples" / "dealii"),
        "-B",
        str(example),
        f"-DCMAKE_PREFIX_PATH={prefix}",
        f"-DPython3_EXECUTABLE={_python(session)}",  # the torch the install found
        external=True,
    )
    session.run("cmake", "--build", str(example), external=True)
    env = {
        "NEML2_DEALII": "1",
        "NEML2_DEALII_PROGRAM": str(example / "dealii_bar"),
        "NEML2_DEALII_ARTIFACT": str(artifact / "model"),
        "OMP_NUM_THREADS": "1",
    }
    tests = ROOT / "tests-integration" / "dealii"
    _pytest(session, str(tests), "-q", "-p", "no:xdist", "-s", *session.posargs, env=env)


def _not_yet(session: nox.Session, issue: str) -> None:
    session.error(f"session '{session.name}' is not implemented yet ({issue}); it fails on purpose")


@nox.session
def routes(session: nox.Session) -> None:
    """Six-route matrix vs py-eager on every zoo model (integration runs it on
    CI_ROUTE_MODELS); some routes: NEML2_ROUTES=cpp-eager,py-jit uv run nox -s routes."""
    # the FE codes (the `fe` group) too: their hosts run here, in this venv, rather than
    # in a session of their own that would install torch once more
    _sync(session, "--all-packages", "--group", "fe")
    tests = ROOT / "tests-integration" / "routes"
    env = {
        # the routes are neml2.routes.NAMES; the test reads the selection (default: all)
        "NEML2_ROUTES": os.environ.get("NEML2_ROUTES", "all"),
        "NEML2_ROUTE_MODELS": "all",
        "OMP_NUM_THREADS": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache"),
    }
    _pytest(session, str(tests), *_workers(session), "-q", *session.posargs, env=env)


@nox.session
def conformance(session: nox.Session) -> None:
    """Every input of tests-integration/conformance/data (NEML2_CONFORMANCE_DIR overrides)
    against the ledger (integration runs it too)."""
    # the FE codes (the `fe` group) too: their hosts run here, in this venv, rather than
    # in a session of their own that would install torch once more
    _sync(session, "--all-packages", "--group", "fe")
    tests = ROOT / "tests-integration" / "conformance"
    _pytest(session, str(tests), "-q", *session.posargs)


@nox.session
def conformance_routes(session: nox.Session) -> None:
    """The conformance suite with its models on py-jit and py-aoti, against per-route ledgers
    (NEML2_CONFORMANCE_ROUTES, NEML2_CONFORMANCE_SHARD=K/N; compiles resume from the caches)."""
    # the FE codes (the `fe` group) too: their hosts run here, in this venv, rather than
    # in a session of their own that would install torch once more
    _sync(session, "--all-packages", "--group", "fe")
    tests = ROOT / "tests-integration" / "conformance" / "test_conformance_routes.py"
    env = {
        "NEML2_CONFORMANCE_ROUTES": os.environ.get("NEML2_CONFORMANCE_ROUTES", "py-jit,py-aoti"),
        "OMP_NUM_THREADS": "1",
        "TORCHINDUCTOR_CACHE_DIR": str(ROOT / "build" / "inductor-cache"),
    }
    _pytest(
        session, str(tests), *_workers(session), "-q", "--durations=20", *session.posargs, env=env
    )


@nox.session
def conformance_capture(session: nox.Session) -> None:
    """The graphs of every conformance case captured as the compiled routes capture them
    (torch.export, Dynamo) and run against py-eager (NEML2_CONFORMANCE_CAPTURE, _SHARD)."""
    # the FE codes (the `fe` group) too: their hosts run here, in this venv, rather than
    # in a session of their own that would install torch once more
    _sync(session, "--all-packages", "--group", "fe")
    tests = ROOT / "tests-integration" / "conformance" / "test_graph_capture.py"
    env = {
        "NEML2_CONFORMANCE_CAPTURE": os.environ.get("NEML2_CONFORMANCE_CAPTURE", "all"),
        "OMP_NUM_THREADS": "1",
    }
    _pytest(
        session, str(tests), *_workers(session), "-q", "--durations=20", *session.posargs, env=env
    )


@nox.session
def bench(session: nox.Session) -> None:
    """Benchmark suite, our routes (benchmarks/suite/run.py; posargs go to it, e.g. --quick)."""
    _sync(session, "--all-packages")
    session.run("python", str(ROOT / "benchmarks" / "suite" / "run.py"), *session.posargs)


@nox.session(name="bench-reference")
def bench_reference(session: nox.Session) -> None:
    """Benchmarks side by side with NEML2 3.1.0 (its own venv outside the workspace, made once)."""
    _sync(session, "--all-packages")
    suite = ROOT / "benchmarks" / "suite"
    session.run("python", str(suite / "run.py"), "--reference", *session.posargs)
