#!/usr/bin/env bash
# The first run on a GPU (issue #65); what it does: benchmarks/gpu/gpu_run.py and
# benchmarks/README.md, "Running on a GPU".
#   here, once before the device call:  bash benchmarks/gpu/run.sh --prepare
#   there (device tool, carry build/gpu-carry):
#                                       bash benchmarks/gpu/run.sh --out build/gpu-results --bundle "$OUT"
#   anywhere, the plan only:            bash benchmarks/gpu/run.sh --dry-run
# NEML2_GPU_PYTHON picks the Python (default python3: on the GPU machine, the one with torch).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
export PYTHONUNBUFFERED=1
exec "${NEML2_GPU_PYTHON:-python3}" "$here/gpu_run.py" "$@"
