"""The package's examples run as tests, shortened. They plot with matplotlib: without it
(`tools/packages.sh examples` installs it) they skip."""
from __future__ import annotations

import pytest

pytest.importorskip("matplotlib", reason="the examples plot with matplotlib (tools/packages.sh examples)")

import dam_break_numpy  # noqa: E402
import valley  # noqa: E402

import shallows  # noqa: E402

# Runs that write output.nc (the default format) need a build with NetCDF.
needs_netcdf = pytest.mark.skipif(not shallows.netcdf_available(), reason="this build writes no NetCDF (output.nc)")


def test_the_numpy_dam_break_example_plots_a_png(tmp_path):
    png = dam_break_numpy.main(["--end", "0.25", "--nx", "40", "--out", str(tmp_path / "dam.png")])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_netcdf
def test_the_valley_example_runs_and_maps_its_largest_depth(tmp_path):
    png = valley.main(["--end", "300", "--out", str(tmp_path / "valley.png"), "--output-dir", str(tmp_path / "out")])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "out" / "output.nc").is_file()
