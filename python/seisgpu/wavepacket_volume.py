"""Tiled wave-packet volumes: a volume cut into tiles, each a layout, all tiles'
coefficients on one common grid per box; the tiles may be dealt out over several contexts
(one per GPU). Axes in NumPy order, as in :mod:`seisgpu.wavepacket`."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Sequence, cast

import numpy as np

from . import _arrays, _lib
from ._errors import InvalidArgumentError, check
from .context import Context, require
from .wavepacket import _Frame, _layout_options, _precision, _shape


@dataclass(frozen=True)
class VolumeBox:
    """One box on a tiled volume's common grid: ``level``, ``direction`` (as in
    :class:`Box`), ``offset`` and ``count`` of its coefficients."""

    level: int
    direction: int
    offset: int
    count: int


class WavepacketVolume(_Frame):
    """A volume cut into tiles, each tile a layout, all tiles' coefficients on one common
    grid per box (so an event across a tile border is represented as inside a tile).

    Parameters
    ----------
    ctx:
        A context, or a list of contexts (e.g. one per GPU): the tiles are dealt out over
        them, one thread each, all at once; results equal those of one context. GPU arrays
        (CuPy, PyTorch) are read and written where they are, on the first context's GPU:
        with one context, forward and adjoint run on the device and return without
        waiting; over several, and for the inverse, the calls wait.
    shape, tile:
        The volume's and a tile's shapes, NumPy order (2 or 3 axes; tile axes 8 … 2^20;
        the last tile along an axis is zero-padded).
    dtype, **options:
        As for :class:`WavepacketLayout` (each tile's layout).
    max_device_bytes:
        Each context's device memory cap in bytes (0: none), as for
        :class:`WavepacketLayout`; what it leaves no room for (the device calls' tables, the
        common grids of a call) runs through the host, with the same results.
    """

    _destroy = "sg_wavepacket_volume_destroy"
    _workspace = "sg_wavepacket_volume_workspace_bytes"
    _kind = "sg_wavepacket_volume"
    _device_calls = True

    def __init__(self, ctx: Context | Sequence[Context], shape: Any, tile: Any,
                 dtype: Any = np.float32, max_device_bytes: int = 0,
                 **options: Any) -> None:
        super().__init__()
        self.shape, self.tile = _shape(shape, "shape"), _shape(tile, "tile")
        if len(self.tile) != len(self.shape):
            raise InvalidArgumentError(
                f"tile: {len(self.tile)} axes; the volume has {len(self.shape)}")
        self.real_dtype = _precision(dtype)
        o = _layout_options(options)
        contexts: list[Context] = (list(ctx) if isinstance(ctx, (list, tuple))
                                   else [cast(Context, ctx)])
        for i, c in enumerate(contexts):
            require(c, f"ctx[{i}]" if isinstance(ctx, (list, tuple)) else "ctx")
        # The C volume does not hold its contexts: they are kept open while it lives.
        self._uses_handles(*contexts)
        dims, tiles = _arrays.size_array(self.shape[::-1]), _arrays.size_array(self.tile[::-1])
        p = 1 if self.real_dtype == np.float32 else 2
        if isinstance(ctx, (list, tuple)) or max_device_bytes:
            handles = (ctypes.c_void_p * max(1, len(contexts)))(*[c._ptr() for c in contexts])
            check("sg_wavepacket_volume_create_capped",
                  _lib.lib.sg_wavepacket_volume_create_capped(
                      handles, len(contexts), len(self.shape), dims, tiles, p,
                      ctypes.byref(o), max_device_bytes, ctypes.byref(self._h)))
        else:
            check("sg_wavepacket_volume_create", _lib.lib.sg_wavepacket_volume_create(
                contexts[0]._ptr(), len(self.shape), dims, tiles, p, ctypes.byref(o),
                ctypes.byref(self._h)))
        self.contexts = contexts
        # The device calls take arrays on the first context's GPU, ordered on its stream.
        self.ctx = contexts[0]
        n, m, counts, boxes = (ctypes.c_size_t(), ctypes.c_size_t(), (ctypes.c_size_t * 3)(),
                               ctypes.c_size_t())
        check("sg_wavepacket_volume_sizes", _lib.lib.sg_wavepacket_volume_sizes(
            self._h, ctypes.byref(n), ctypes.byref(m), counts, ctypes.byref(boxes)))
        self.n_samples, self.n_coefficients, self.n_boxes = n.value, m.value, boxes.value
        self.tiles = tuple(counts[:len(self.shape)][::-1])

    @property
    def boxes(self) -> list[VolumeBox]:
        """Every box on the common grid (as one tile's layout orders them)."""
        result = []
        for b in range(self.n_boxes):
            level, direction = ctypes.c_int32(), ctypes.c_int32()
            offset, count = ctypes.c_size_t(), ctypes.c_size_t()
            check("sg_wavepacket_volume_box_info", _lib.lib.sg_wavepacket_volume_box_info(
                self._ptr(), b, ctypes.byref(level), ctypes.byref(direction),
                ctypes.byref(offset), ctypes.byref(count)))
            result.append(VolumeBox(level.value, direction.value, offset.value, count.value))
        return result

    def __repr__(self) -> str:
        return (f"<seisgpu.WavepacketVolume {self.shape} in tiles {self.tile} "
                f"({self.tiles}), {self.real_dtype}{' (closed)' if self.closed else ''}>")
