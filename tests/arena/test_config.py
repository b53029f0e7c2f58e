from __future__ import annotations

import pytest

from arena.config_file import ConfigError
from arena.race.settings import RaceSettings
from arena.settings import describe, load_settings


def test_defaults_env_and_toml_precedence(tmp_path, monkeypatch):
    monkeypatch.delenv("ARENA_CONFIG", raising=False)
    assert load_settings().scoring.mode == "official"
    assert load_settings().race == RaceSettings()  # no race configured: the race's own defaults
    toml = tmp_path / "arena.toml"
    toml.write_text('log_level = "DEBUG"\n[scoring]\nmode = "strict"\nsimilarity = "embedding"\n')
    settings = load_settings(toml)
    assert settings.scoring.mode == "strict" and settings.scoring.similarity == "embedding"
    monkeypatch.setenv("ARENA_SCORING__MODE", "official")
    assert load_settings(toml).scoring.mode == "official"  # the environment beats the file
    monkeypatch.setenv("ARENA_CONFIG", str(toml))
    assert load_settings().log_level == "DEBUG"


def test_bad_values_and_missing_files_are_clear(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(tmp_path / "missing.toml")
    monkeypatch.setenv("ARENA_SCORING__MODE", "lenient")
    with pytest.raises(ValueError, match="scoring.mode"):
        load_settings()


def test_every_setting_is_described():
    rows = describe(load_settings())
    assert {"scoring.mode", "catalog.path", "shoppingbench_dir"} <= {name for name, _, _ in rows}
    assert all(meaning for _, _, meaning in rows)


def test_the_configuration_doc_lists_every_setting():
    from tests.conftest import REPO

    doc = (REPO / "docs" / "configuration.md").read_text()
    missing = [name for name, _, _ in describe(load_settings()) if f"`{name}`" not in doc]
    assert not missing, f"docs/configuration.md lacks {missing}"
