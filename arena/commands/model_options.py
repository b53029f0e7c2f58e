"""Command-line options generated from a pydantic model: one option per field, nested models flattened.

The option's default, help and bounds are the field's, and the field's own validators parse the text,
so a command cannot drift from the model it fills (trl builds its command line from its config
dataclasses the same way). Only what the model leaves open is said here: how a list is spelled on a
command line (comma-separated) and a flag that keeps an older spelling than the field's name.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, get_args, get_origin

import annotated_types
import typer
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from rich.markup import escape

from arena.commands.common import fail

_METAVARS = {float: "float", int: "int", str: "str", Path: "path", datetime: "time"}
_LOWER = {annotated_types.Ge: ("ge", "<="), annotated_types.Gt: ("gt", "<")}
_UPPER = {annotated_types.Le: ("le", "<="), annotated_types.Lt: ("lt", "<")}


@dataclass(frozen=True)
class _Field:
    path: tuple[str, ...]  # ("gates", "template"): where the value goes in the model
    owner: type[BaseModel]  # the (nested) model that declares the field
    info: FieldInfo
    flag: str

    @property
    def name(self) -> str:
        return self.path[-1]

    @property
    def parameter(self) -> str:
        return "__".join(self.path)

    @property
    def is_list(self) -> bool:
        return get_origin(self.info.annotation) is list

    def metavar(self) -> str:
        if self.is_list:
            return "<a,b,...>"
        kinds = [t for t in (get_args(self.info.annotation) or (self.info.annotation,)) if t is not type(None)]
        kind = _METAVARS.get(kinds[0], "text") if len(kinds) == 1 else "text"
        bounds = _bounds(self.info)
        return f"<{kind} range> [{bounds}]" if bounds else f"<{kind}>"

    def help(self) -> str:
        if not self.info.description:
            raise TypeError(f"{self.owner.__name__}.{self.name} has no description: its flag {self.flag} needs one")
        default = _default_text(self.info)
        return escape(self.info.description + (f" [default: {default}]" if default is not None else ""))

    def parse(self, text: str) -> Any:
        """The text as the field's value, checked by the field's own type, bounds and validators."""
        value: Any = [part.strip() for part in text.split(",") if part.strip()] if self.is_list else text
        blank = self.owner.model_construct()  # validate_assignment checks one field without the others
        try:
            self.owner.__pydantic_validator__.validate_assignment(blank, self.name, value)
        except ValidationError as exc:
            raise typer.BadParameter(_reason(exc)) from None
        return getattr(blank, self.name)

    def option(self) -> inspect.Parameter:
        required = self.info.is_required()
        annotation = Annotated[
            Any,
            typer.Option(self.flag, parser=self.parse, metavar=self.metavar(), help=self.help(), show_default=False),
        ]
        return inspect.Parameter(
            self.parameter, inspect.Parameter.KEYWORD_ONLY, default=... if required else None, annotation=annotation
        )


def _bounds(info: FieldInfo) -> str:
    """The field's bounds as typer writes a range: ``0.0<=x<1.0``, ``x>0``."""
    low = high = None
    for item in info.metadata:
        if type(item) in _LOWER:
            low = (getattr(item, _LOWER[type(item)][0]), _LOWER[type(item)][1])
        elif type(item) in _UPPER:
            high = (getattr(item, _UPPER[type(item)][0]), _UPPER[type(item)][1])
    if low and high:
        return f"{low[0]}{low[1]}x{high[1]}{high[0]}"
    if low:
        return f"x{low[1].replace('<', '>')}{low[0]}"
    return f"x{high[1]}{high[0]}" if high else ""


def _default_text(info: FieldInfo) -> str | None:
    if info.default_factory is not None:
        default = info.default_factory()  # type: ignore[call-arg]
    elif info.default is PydanticUndefined:
        return None
    else:
        default = info.default
    if isinstance(default, list):
        return ",".join(map(str, default)) or None
    return None if default is None else str(default)


def _reason(exc: ValidationError) -> str:
    first = exc.errors()[0]
    error = (first.get("ctx") or {}).get("error")
    return str(error) if first["type"] == "value_error" and error is not None else first["msg"]


def _fields(model: type[BaseModel], flags: Mapping[str, str], prefix: tuple[str, ...] = ()) -> list[_Field]:
    found = []
    for name, info in model.model_fields.items():
        path = (*prefix, name)
        nested = info.annotation
        if isinstance(nested, type) and issubclass(nested, BaseModel):
            found += _fields(nested, flags, path)
            continue
        flag = flags.get(".".join(path), "--" + name.replace("_", "-"))
        found.append(_Field(path=path, owner=model, info=info, flag=flag))
    return found


def model_options(model: type[BaseModel], *, flags: Mapping[str, str] | None = None) -> Callable:
    """Decorate a command whose first parameter, ``config``, receives ``model`` built from its flags.

    The command's other parameters stay as they are and follow the generated options. ``flags`` spells
    a field's flag where it is not ``--field-name`` (``{"gates.template": "--chat-template"}``). A flag
    left out leaves the field to its model default, so the default lives in the model alone.
    """
    fields = _fields(model, flags or {})
    names = [f.flag for f in fields]
    if len(set(names)) != len(names):
        raise TypeError(f"{model.__name__}: two fields would share a flag: {sorted(names)}")
    unknown = set(flags or {}) - {".".join(f.path) for f in fields}
    if unknown:
        raise TypeError(f"{model.__name__} has no field {sorted(unknown)}")

    def decorate(command: Callable) -> Callable:
        own = list(inspect.signature(command, eval_str=True).parameters.values())
        if not own or own[0].name != "config":
            raise TypeError(f"{command.__name__}: the first parameter must be `config` (the {model.__name__})")

        @functools.wraps(command)
        def run(**given: Any) -> Any:
            values: dict[str, Any] = {}
            for field in fields:
                value = given.pop(field.parameter)
                if value is not None:
                    target = values
                    for part in field.path[:-1]:
                        target = target.setdefault(part, {})
                    target[field.name] = value
            try:
                config = model.model_validate(values)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"]))
                flag = next((f.flag for f in fields if ".".join(f.path) == where), where)
                fail(f"{flag}: {_reason(exc)}")
            return command(config, **given)

        parameters = [f.option() for f in fields] + [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own[1:]]
        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run

    return decorate
