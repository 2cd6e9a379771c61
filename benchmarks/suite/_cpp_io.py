"""Tensor files exchanged with the C++ timing program (``benchmarks/aoti/cpp``).

One format both ways, no pickle and no torch serialization: ``STEM.json`` holds
``{"tensors": {"<kind>/<name>": {"shape": [...], "offset": k}}}`` (offsets in float64
elements into the blob) and ``STEM.bin`` the raw little-endian float64 values, one
tensor after another. The worker writes the inputs (kind ``input``); the program,
given ``--outputs STEM``, writes the outputs of one forward call (kind ``output``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import torch


def save(stem: Path, tensors: dict[str, torch.Tensor], kind: str = "input") -> None:
    """Write *tensors* (name -> tensor, any device and float dtype; stored as float64)
    as ``stem.json`` + ``stem.bin`` under the keys ``<kind>/<name>``."""
    index, chunks, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.detach().to(device="cpu", dtype=torch.float64).contiguous()
        index[f"{kind}/{name}"] = {"shape": list(t.shape), "offset": offset}
        chunks.append(t.numpy().astype("<f8").tobytes())
        offset += t.numel()
    stem.with_suffix(".bin").write_bytes(b"".join(chunks))
    stem.with_suffix(".json").write_text(json.dumps({"tensors": index}))


def load(stem: Path, kind: str = "output") -> dict[str, torch.Tensor]:
    """Read the ``<kind>/<name>`` tensors of ``stem.json`` + ``stem.bin``.

    Returns:
        name -> float64 CPU tensor at the shape the index gives.

    Raises:
        FileNotFoundError: a file is missing; ValueError: an entry reaches past the end
            of ``stem.bin`` or the index has no ``<kind>/`` entry (both name the file).
    """
    index = json.loads(stem.with_suffix(".json").read_text())["tensors"]
    blob = np.frombuffer(stem.with_suffix(".bin").read_bytes(), dtype="<f8")
    out = {}
    prefix = f"{kind}/"
    for key, spec in index.items():
        if not key.startswith(prefix):
            continue
        shape, start = [int(d) for d in spec["shape"]], int(spec["offset"])
        end = start + math.prod(shape)
        if end > blob.size:
            raise ValueError(
                f"{stem.with_suffix('.bin')}: '{key}' needs float64 elements "
                f"{start}..{end}, the file has {blob.size}"
            )
        out[key[len(prefix) :]] = torch.from_numpy(blob[start:end].astype(np.float64)).reshape(
            shape
        )
    if not out:
        raise ValueError(f"{stem.with_suffix('.json')}: no '{prefix}' tensors")
    return out
