"""shallows.run_ensemble: the members of a case's [ensemble], as the command line runs them."""
from __future__ import annotations

import csv
from pathlib import Path

import pytest

import shallows

CASE = """
[domain]
nx = 12
ny = 2
x = [0.0, 6.0]
y = [0.0, 1.0]
[bathymetry]
z = 0.0
[initial]
eta = "x < 2 ? 1 : 0.2"
[time]
end = 1.0
output_every = 0.5
[output]
format = ["netcdf"]
[ensemble]
members = [ { "physics.manning" = 0.01 }, { "physics.manning" = 0.05 } ]
"""


def test_run_ensemble_runs_every_member_then_skips_them(tmp_path: Path) -> None:
    case = tmp_path / "case.toml"
    case.write_text(CASE)
    out = tmp_path / "out"
    assert shallows.run_ensemble(case, output=out, threads=1) == {"members": 2, "ran": 2, "skipped": 0, "failed": 0}
    with open(out / "ensemble.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["physics.manning"] for r in rows] == ["0.01", "0.05"]
    assert [r["status"] for r in rows] == ["ok", "ok"]
    assert (out / "members" / "0001" / "output.nc").is_file()
    assert shallows.run_ensemble(case, output=out, threads=1) == {"members": 2, "ran": 0, "skipped": 2, "failed": 0}


def test_run_ensemble_names_a_bad_key(tmp_path: Path) -> None:
    case = tmp_path / "case.toml"
    case.write_text(CASE.replace('"physics.manning" = 0.05', '"physics.maning" = 0.05'))
    with pytest.raises(shallows.CaseError, match=r"\[ensemble\] members\[1\]: unknown key 'physics.maning'"):
        shallows.run_ensemble(case, output=tmp_path / "out")
