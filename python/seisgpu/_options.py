"""Keyword options into the library's option structs (enums by name)."""

from __future__ import annotations

import ctypes
import operator
from typing import Any, Mapping

from ._errors import ArgumentTypeError, InvalidArgumentError


def choice(value: Any, name: str, names: Mapping[str, int]) -> int:
    """The C value of an enum given by name (case-insensitive)."""
    if isinstance(value, str) and value.lower() in names:
        return names[value.lower()]
    if isinstance(value, str):
        raise InvalidArgumentError(
            f"{name} = {value!r}: expected one of {', '.join(repr(n) for n in names)}")
    raise ArgumentTypeError(
        f"{name}: expected one of {', '.join(repr(n) for n in names)}, got {value!r}")


def fill(struct: ctypes.Structure, options: Mapping[str, Any], what: str,
         enums: Mapping[str, Mapping[str, int]] | None = None,
         flags: tuple[str, ...] = ()) -> ctypes.Structure:
    """Sets `struct`'s fields from `options` (None keeps the default); enum fields by name,
    `flags` from booleans. Unknown names raise ArgumentTypeError, as Python does for an
    unexpected keyword argument."""
    enums = enums or {}
    fields = {f[0]: f[1] for f in struct._fields_}
    for key, value in options.items():
        if key not in fields:
            raise ArgumentTypeError(
                f"{what}: unknown option {key!r}; the options are {', '.join(fields)}")
        if value is None:
            continue
        if key in enums:
            value = choice(value, key, enums[key])
        elif key in flags:
            value = int(bool(value))
        elif fields[key] in (ctypes.c_double,):
            try:
                value = float(value)
            except (TypeError, ValueError) as e:
                raise ArgumentTypeError(f"{key}: expected a number, got {value!r}") from e
        else:
            try:
                if isinstance(value, bool):
                    raise TypeError
                value = operator.index(value)
            except TypeError as e:
                raise ArgumentTypeError(f"{key}: expected an integer, got {value!r}") from e
            lo, hi = _range(fields[key])
            if not lo <= value <= hi:
                raise InvalidArgumentError(f"{key} = {value}: out of range ({lo} … {hi})")
        setattr(struct, key, value)
    return struct


def _range(ctype: Any) -> tuple[int, int]:
    bits = ctypes.sizeof(ctype) * 8
    if ctype in (ctypes.c_int32, ctypes.c_int64, ctypes.c_int):
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def as_dict(struct: ctypes.Structure, enums: Mapping[str, Mapping[str, int]] | None = None
            ) -> dict[str, Any]:
    """The struct's fields, enums by name."""
    enums = enums or {}
    out = {}
    for f in struct._fields_:
        key = f[0]
        v = getattr(struct, key)
        if key in enums:
            v = next((n for n, c in enums[key].items() if c == v), v)
        out[key] = v
    return out
