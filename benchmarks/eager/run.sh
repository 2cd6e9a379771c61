#!/usr/bin/env bash
# Per-call overhead of cpp-eager vs cpp-aoti (linear elasticity, batch 1 and 1e4).
# Usage, from anywhere in the workspace: benchmarks/eager/run.sh [REPEATS]
# Builds bench_eager against the neml2-aoti-runtime wheel installed in .venv (so it
# also checks find_package(neml2 COMPONENTS eager) from the wheel), compiles the
# elasticity artifact with neml2-compile (cached in build/aoti-cache) and runs both,
# then times py-eager in-process (py_eager_floor.py): the Python model's own share.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
py=$root/.venv/bin/python
out=$root/build/bench-eager
input=$root/cpp/tests/eager/elasticity.i
prefix=$("$py" -c "import neml2.aoti as a; print(a.cmake_prefix_path())")
"$root/.venv/bin/neml2-compile" "$input" --model model -o "$out/artifacts" -d stress:strain \
  --cache-dir "$root/build/aoti-cache" --quiet
cmake -S "$root/benchmarks/eager" -B "$out/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" -DPython3_EXECUTABLE="$py" >/dev/null
cmake --build "$out/build" -j2
NEML2_PYTHON=$py "$out/build/bench_eager" "$input" "$out/artifacts/model" "${1:-200}"
echo
"$py" "$root/benchmarks/eager/py_eager_floor.py" "$input" "${1:-200}"
