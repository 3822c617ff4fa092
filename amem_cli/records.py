"""Records: typed values that travel as JSON (the operations' requests and results,
`amem_cli.wire`).

A record declares its fields as class annotations, with defaults as class attributes, as
a dataclass does; it holds JSON's own types (text, numbers, true/false, null, lists,
objects) and other records, and `to_json` gives its fields in the order declared.
`decode` reads JSON into a type, checking every value on the way.

Not dataclasses: records are on the path of every quick command (`amem search` through
the warm server), where importing `dataclasses` (and `inspect` with it) and the code it
writes for each class would cost more than the rest of the command's imports together.
"""

from __future__ import annotations

import types
import typing
from typing import Any


class Misfit(ValueError):
    """A JSON value that is not of the type asked for: `field` names where (the
    record's field it is in, at the top), `value` what was there."""

    def __init__(self, field: str | None, value: Any):
        super().__init__(f"{field!r} cannot be {value!r}" if field else f"cannot be {value!r}")
        self.field, self.value = field, value


class Record:
    """Fields: the class annotations (a subclass adds its own after its base's). A default
    that is a list or a dict is copied for each record."""

    _fields: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}
    # JSON keys `to_json` writes besides the fields (values a record works out, such as
    # a report's summary): `from_json` passes over them. (No annotation: not a field.)
    derived = ()

    def __init_subclass__(cls, **kwargs: Any):
        super().__init_subclass__(**kwargs)
        own = [name for name in cls.__dict__.get("__annotations__", {}) if not name.startswith("_")]
        cls._fields = (*(f for f in cls._fields if f not in own), *own)
        cls._defaults = {**cls._defaults, **{name: cls.__dict__[name] for name in own if name in cls.__dict__}}
        cls._hints = None

    def __init__(self, *args: Any, **values: Any):
        if len(args) > len(self._fields):
            raise TypeError(f"{type(self).__name__} takes {len(self._fields)} fields, not {len(args)}")
        for name, value in zip(self._fields, args):
            if name in values:
                raise TypeError(f"{type(self).__name__} got {name!r} twice")
            values[name] = value
        for name in self._fields:
            if name in values:
                value = values.pop(name)
            elif name in self._defaults:
                value = self._defaults[name]
                value = list(value) if isinstance(value, list) else dict(value) if isinstance(value, dict) else value
            else:
                raise TypeError(f"{type(self).__name__} needs {name!r}")
            setattr(self, name, value)
        if values:
            raise TypeError(f"{type(self).__name__} has no field {next(iter(values))!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and all(getattr(self, f) == getattr(other, f) for f in self._fields)

    __hash__ = None  # type: ignore[assignment]  (mutable, as a dataclass)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def to_json(self) -> dict[str, Any]:
        return {name: encode(getattr(self, name)) for name in self._fields}

    @classmethod
    def from_json(cls, data: Any) -> "Record":
        """The record of a JSON object; Misfit names the first field that does not fit
        (a field missing, or one the record lacks: its name, with the value None or what
        was given)."""
        if not isinstance(data, dict):
            raise Misfit(None, data)
        hints = cls.hints()
        values = {}
        for key, value in data.items():
            if key in hints:
                try:
                    values[key] = decode(hints[key], value)
                except Misfit:
                    raise Misfit(key, value) from None
            elif key not in cls.derived:
                raise Misfit(key, value)
        missing = [f for f in cls._fields if f not in values and f not in cls._defaults]
        if missing:
            raise Misfit(missing[0], None)
        return cls(**values)

    @classmethod
    def hints(cls) -> dict[str, Any]:
        """{field: its type}, read once from the annotations (evaluated, if a module keeps
        them as text)."""
        if cls.__dict__.get("_hints") is None:
            every: dict[str, Any] = {}
            for kind in reversed(cls.__mro__):
                every.update(kind.__dict__.get("__annotations__", {}))
            if any(isinstance(every[name], str) for name in cls._fields):  # (annotations kept as text)
                every = typing.get_type_hints(cls)
            cls._hints = {name: every[name] for name in cls._fields}
        return cls._hints


def encode(value: Any) -> Any:
    """A value as JSON: records by their `to_json`, other objects by their `to_dict` (the
    services' own data: a note, a search hit), lists and dicts item by item."""
    if isinstance(value, Record):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {k: encode(v) for k, v in value.items()}
    if hasattr(value, "to_dict"):
        return value.to_dict()
    return value


# The JSON types a value of each plain hint may arrive as.
_PLAIN: dict[Any, type | tuple[type, ...]] = {str: str, int: int, float: (int, float), bool: bool}


def decode(hint: Any, value: Any) -> Any:
    """`value` (JSON) as the type `hint`: records made from objects; Misfit when it does not fit.
    A float may be given as a whole number; a bool is never a number."""
    if hint in _PLAIN:  # most values: checked before any typing introspection
        if isinstance(value, _PLAIN[hint]) and not (isinstance(value, bool) and hint is not bool):
            return value
        raise Misfit(None, value)
    if hint is Any:
        return value
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return decode(option, value)
            except Misfit:
                continue
        raise Misfit(None, value)
    if isinstance(hint, type) and issubclass(hint, Record):
        return value if isinstance(value, hint) else hint.from_json(value)
    if origin is list:
        if isinstance(value, list):
            (item,) = typing.get_args(hint)
            if item is str and all(type(v) is str for v in value):  # ids, keywords, tags
                return list(value)
            return [decode(item, v) for v in value]
    elif origin is dict:
        if isinstance(value, dict):
            key, item = typing.get_args(hint)
            return {decode(key, k): decode(item, v) for k, v in value.items()}
    elif hint is type(None):
        if value is None:
            return None
    else:
        raise TypeError(f"no JSON type {hint!r}")
    raise Misfit(None, value)
