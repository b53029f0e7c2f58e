"""pyproject.toml as the installed setuptools reads it: no deprecation that turns into an error later."""

from __future__ import annotations

import tomllib
import warnings
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_setuptools_reads_the_project_table_without_a_deprecation_warning():
    """`project.license` as a table ({text = ...}) warns that builds fail from 2027-02-18 on: the SPDX string
    form reads silently, and the build requires a setuptools that knows it (77, PEP 639)."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        dist = apply_configuration(Distribution(), str(PYPROJECT))
    said = [str(w.message).strip().splitlines()[0] for w in caught if "deprecat" in str(w.message).lower()]
    assert not said, said
    assert dist.metadata.license_expression == "Apache-2.0"
    requires = [Requirement(r) for r in tomllib.loads(PYPROJECT.read_text())["build-system"]["requires"]]
    setuptools = next(r for r in requires if r.name == "setuptools")
    assert not setuptools.specifier.contains(Version("76.9")), setuptools  # PEP 639 license strings: 77 and up
