"""Reading a configuration file: TOML or YAML -> one mapping -> a pydantic model.

Every configuration file of the project goes through here (the settings'
TOML, ``--race-config``, a training stage or recipe, an experiment), so each
fails the same way: a ``ConfigError`` whose message starts with the file (or
where the values came from) and names the field. The format is the caller's,
never guessed from the suffix: a race config is TOML whatever its name.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ValidationError

Format = Literal["toml", "yaml"]
Model = TypeVar("Model", bound=BaseModel)


class ConfigError(ValueError):
    """A configuration that cannot be used: the message names the file, the field and the reason."""


def read_config_file(path: str | Path, format: Format) -> dict[str, Any]:
    """The file's top-level mapping; an empty YAML file is an empty mapping."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from None
    if format == "toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    import yaml  # only the distill commands read YAML

    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise ConfigError(f"{path}: the top level must be a mapping, not {type(loaded).__name__}")
    return loaded


def validate_config(model: type[Model], values: Any, where: str | Path, what: str, **fixed: Any) -> Model:
    """``values`` as ``model`` (with ``fixed`` fields the caller sets); every bad field named, after ``where``."""
    try:
        return model.model_validate({**values, **fixed} if fixed else values)
    except ValidationError as exc:
        raise ConfigError(f"{where}: invalid {what}: {field_problems(exc)}") from None


def load_config_file(
    path: str | Path, model: type[Model], format: Format, what: str, *, table: str | None = None
) -> Model:
    """The file as ``model``; with ``table``, that table of the file when it has one, else its top level."""
    values = read_config_file(path, format)
    if table is not None:
        values = values.get(table, values)
    return validate_config(model, values, path, what)


def field_problems(exc: ValidationError) -> str:
    """``field: reason`` for every error, ``;``-separated (``(top)`` for the whole file)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or '(top)'}: {e['msg']}" for e in exc.errors())
