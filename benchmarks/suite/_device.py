"""The device a run measures on (``--device cpu`` or ``cuda``): refusal, clocks, memory.

Imports only torch and the standard library: both workers (ours, and the reference's in
its own virtual environment) use it, and ``run.py`` runs it as a script with each
side's Python to ask that side's torch about the GPU::

    python _device.py cuda     # one JSON line: {"problem": str | null, "gpu": {...}}

There is no fallback: ``--device cuda`` on a machine (or in an environment) whose torch
sees no CUDA device is refused with :func:`problem`'s message before anything is
measured.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

import torch

DEVICES = ("cpu", "cuda")


def problem(device: str) -> str | None:
    """Why this Python cannot measure on *device*; None when it can.

    Args:
        device: ``"cpu"`` or ``"cuda"`` (the ``--device`` value).

    Returns:
        None for ``cpu``, and for ``cuda`` when torch sees a CUDA device; otherwise a
        message naming the option, the torch build and this interpreter.
    """
    if device not in DEVICES:
        return f"--device {device}: unknown device (choose from {', '.join(DEVICES)})"
    if device == "cpu" or torch.cuda.is_available():
        return None
    build = (
        f"a CUDA {torch.version.cuda} build"
        if torch.version.cuda
        else "a CPU-only build (no CUDA support at all)"
    )
    return (
        f"--device cuda: torch {torch.__version__} ({build}) in {sys.executable} sees no "
        "CUDA device (torch.cuda.is_available() is False). The GPU table needs a machine "
        "with an NVIDIA GPU and its driver; run it there, or leave out --device cuda for "
        "the CPU table. Nothing was measured: the harness never falls back to the CPU."
    )


def synchronize(device: str) -> None:
    """Wait for every kernel queued on *device* (cuda: ``torch.cuda.synchronize``; cpu:
    calls return when done, nothing to wait for). Called before a timer is read."""
    if device == "cuda":
        torch.cuda.synchronize()


def synced(fn, device: str):
    """*fn* followed by :func:`synchronize`: a call whose wall time is its device time."""
    if device != "cuda":
        return fn

    def call(*args, **kwargs):
        out = fn(*args, **kwargs)
        torch.cuda.synchronize()
        return out

    return call


def reset_peak(device: str) -> None:
    """Start a new peak of device memory (cuda: ``torch.cuda.reset_peak_memory_stats``)."""
    if device == "cuda":
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def allocated_mb(device: str) -> float:
    """Device memory held by torch's allocator now, in MiB (0 on cpu)."""
    return torch.cuda.memory_allocated() / 2**20 if device == "cuda" else 0.0


def peak_mb(device: str) -> float:
    """Peak device memory held by torch's allocator since :func:`reset_peak`, in MiB
    (``torch.cuda.max_memory_allocated``; 0 on cpu)."""
    if device != "cuda":
        return 0.0
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() / 2**20


def describe(device: str) -> dict:
    """What ``metadata.json`` records about the device: for cuda, torch's CUDA version,
    the driver (``nvidia-smi``, where installed) and every visible GPU (name, memory in
    GiB, compute capability, multiprocessors); for cpu, ``{}``."""
    if device != "cuda" or not torch.cuda.is_available():
        return {}
    gpus = []
    for i in range(torch.cuda.device_count()):
        p = torch.cuda.get_device_properties(i)
        gpus.append(
            {
                "index": i,
                "name": p.name,
                "memory_gib": round(p.total_memory / 2**30, 1),
                "capability": f"{p.major}.{p.minor}",
                "multiprocessors": p.multi_processor_count,
            }
        )
    driver = None
    smi = shutil.which("nvidia-smi")
    if smi is not None:
        r = subprocess.run(
            [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        if r.returncode == 0 and r.stdout.strip():
            driver = r.stdout.strip().splitlines()[0]
    return {"torch_cuda": torch.version.cuda, "driver": driver, "gpus": gpus}


if __name__ == "__main__":
    dev = sys.argv[1] if len(sys.argv) > 1 else "cpu"
    why = problem(dev)
    print(json.dumps({"problem": why, "gpu": None if why else describe(dev)}))
