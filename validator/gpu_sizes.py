"""How many GPUs common Azure GPU VM sizes have (public facts from the Azure VM size pages).

Used to tell when a distributed job asks for more processes per node than the node has GPUs:
each process of a PyTorch/MPI job takes the GPU of its local rank, so a fifth process on a
four-GPU node finds no GPU of its own and NCCL fails ("Duplicate GPU detected").

Only whole-GPU sizes are listed; fractional sizes (NVadsA10 v5 with a part of a GPU) and CPU
sizes are absent on purpose: :func:`gpu_count` returns ``None`` for them, and callers then judge
nothing.
"""

from __future__ import annotations

_SIZES: dict[str, int] = {
    # NC (K80; retired, still in older specs). NC6 has one GPU (half a K80 card).
    "Standard_NC6": 1, "Standard_NC12": 2, "Standard_NC24": 4, "Standard_NC24r": 4,
    # NCv2 (P100)
    "Standard_NC6s_v2": 1, "Standard_NC12s_v2": 2, "Standard_NC24s_v2": 4, "Standard_NC24rs_v2": 4,
    # NCv3 (V100)
    "Standard_NC6s_v3": 1, "Standard_NC12s_v3": 2, "Standard_NC24s_v3": 4, "Standard_NC24rs_v3": 4,
    # NCasT4_v3 (T4)
    "Standard_NC4as_T4_v3": 1, "Standard_NC8as_T4_v3": 1, "Standard_NC16as_T4_v3": 1,
    "Standard_NC64as_T4_v3": 4,
    # NC A100 v4
    "Standard_NC24ads_A100_v4": 1, "Standard_NC48ads_A100_v4": 2, "Standard_NC96ads_A100_v4": 4,
    # NC H100 v5
    "Standard_NC40ads_H100_v5": 1, "Standard_NC80adis_H100_v5": 2,
    # ND (P40)
    "Standard_ND6s": 1, "Standard_ND12s": 2, "Standard_ND24s": 4, "Standard_ND24rs": 4,
    # ND v2 (V100), ND A100 v4, NDm A100 v4, ND H100 v5, ND H200 v5
    "Standard_ND40rs_v2": 8, "Standard_ND96asr_v4": 8, "Standard_ND96amsr_A100_v4": 8,
    "Standard_ND96isr_H100_v5": 8, "Standard_ND96isr_H200_v5": 8,
    # NV (M60; NV6 has one GPU, half an M60 card) and NVv3 (M60)
    "Standard_NV6": 1, "Standard_NV12": 2, "Standard_NV24": 4,
    "Standard_NV12s_v3": 1, "Standard_NV24s_v3": 2, "Standard_NV48s_v3": 4,
}

_BY_KEY: dict[str, tuple[str, int]] = {name.lower(): (name, count) for name, count in _SIZES.items()}


def _key(instance_type: str) -> str:
    key = instance_type.strip().lower()
    return key if key.startswith("standard_") else "standard_" + key


def gpu_count(instance_type: object) -> int | None:
    """GPUs of the VM size ``instance_type`` (case-insensitive, ``Standard_`` prefix optional),
    or ``None`` when the size is not a known whole-GPU size (or not a string)."""
    if not isinstance(instance_type, str) or not instance_type.strip():
        return None
    found = _BY_KEY.get(_key(instance_type))
    return found[1] if found else None


def canonical_name(instance_type: object) -> str | None:
    """The size as Azure spells it (``standard_nc6s_v3`` -> ``Standard_NC6s_v3``), if known."""
    if not isinstance(instance_type, str) or not instance_type.strip():
        return None
    found = _BY_KEY.get(_key(instance_type))
    return found[0] if found else None


KNOWN_SIZES: tuple[str, ...] = tuple(_SIZES)
