"""Shared helpers of the Python package's tests: the repository's folders and the command line."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(os.environ.get("SHALLOWS_SOURCE_DIR", Path(__file__).resolve().parents[2]))
# The package's examples import as modules (python/examples on the path).
sys.path.insert(0, str(ROOT / "python" / "examples"))


@pytest.fixture
def root() -> Path:
    """The repository's root folder."""
    return ROOT


@pytest.fixture
def cli() -> str:
    """The shallows command (CTest passes the built one)."""
    path = os.environ.get("SHALLOWS_CLI", str(ROOT / "build" / "shallows"))
    if not Path(path).is_file():
        pytest.skip(f"{path}: the shallows command is not built")
    return path
