"""The package's examples run as tests, shortened: their runs everywhere, their plots where matplotlib is
installed (`tools/packages.sh examples`; the plot tests skip without it)."""
from __future__ import annotations

import numpy as np
import pytest

import dam_break_numpy
import shallows
import valley

# Runs that write output.nc (the default format) need a build with NetCDF.
needs_netcdf = pytest.mark.skipif(not shallows.netcdf_available(), reason="this build writes no NetCDF (output.nc)")


def needs_matplotlib():
    pytest.importorskip("matplotlib", reason="the examples plot with matplotlib (tools/packages.sh examples)")


def test_the_numpy_dam_break_example_breaches_the_dam():
    sim = dam_break_numpy.simulate(end=0.25, nx=40)
    h = sim.h
    assert np.all(np.isfinite(h)) and np.all(h >= 0)
    x = (np.arange(40) + 0.5) * 1.0  # 40 m over 40 cells
    assert h[:, x > 15.5].max() > 0.1  # the water came through the breach
    assert sim.time == 0.25


def test_the_numpy_dam_break_example_plots_a_png(tmp_path):
    needs_matplotlib()
    png = dam_break_numpy.main(["--end", "0.25", "--nx", "40", "--out", str(tmp_path / "dam.png")])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def valley_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("valley")
    return valley.simulate(300.0, out / "out"), out


@needs_netcdf
def test_the_valley_example_runs_and_writes_output_nc(valley_run):
    sim, out = valley_run
    assert (out / "out" / "output.nc").is_file()
    assert np.nanmax(sim.max_h) > 0.25  # the river's base flow, at least


@needs_netcdf
def test_the_valley_example_maps_its_largest_depth(valley_run):
    needs_matplotlib()
    sim, out = valley_run
    png = valley.plot(sim, out / "valley.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
