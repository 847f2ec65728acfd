"""A simulation in the process: the same bytes as the command line, runs interrupted and continued, the state
written between steps, results as xarray."""
from __future__ import annotations

import os
import signal
import subprocess
import threading

import numpy as np
import pytest

import shallows

# Runs that write output.nc (the default format) need a build with NetCDF.
needs_netcdf = pytest.mark.skipif(not shallows.netcdf_available(), reason="this build writes no NetCDF (output.nc)")


# Each backend this build can run: the GPU's where one answers.
BACKENDS = ["cpu", pytest.param("cuda", marks=pytest.mark.skipif(not shallows.cuda_available(),
                                                                  reason="no GPU answers in this build"))]


def dam_break(nx: int = 40, ny: int = 8, end: float = 1.0) -> shallows.Case:
    """A dam break over a bump in a closed basin: wet and dry cells, walls, both directions of flow."""
    return shallows.Case({
        "domain": {"nx": nx, "ny": ny, "x": [0.0, 10.0], "y": [0.0, 2.0]},
        "bathymetry": {"z": "0.3 * exp(-((x-6)^2 + (y-1)^2))"},
        "initial": {"eta": "x < 4 ? 1 : 0.2"},
        "boundary": {"west": "wall", "east": "wall", "south": "wall", "north": "wall"},
        "time": {"end": end, "output_every": end / 4},
    })


@needs_netcdf
def test_a_run_from_python_writes_the_bytes_of_the_command_lines_run(root, cli, tmp_path, monkeypatch):
    # output.nc's history attribute holds the time of the run: SOURCE_DATE_EPOCH stands for it in both runs.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    toml = root / "cases" / "s000-t1" / "case.toml"
    sets = {"time.end": "0.5", "time.output_every": "0.25", "output.format": '["netcdf"]'}
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    subprocess.run([cli, "run", str(toml), "-o", str(tmp_path / "cli"), "-q", "--threads", "1", *args], check=True)
    case = shallows.Case.from_toml(toml)
    for k, v in sets.items():
        case.set(k, v)
    case.output_dir = tmp_path / "python"
    sim = shallows.Simulation(case, threads=1)
    batches = []
    summary = sim.run(progress=lambda t, dt: batches.append((t, dt)))
    cli_bytes = (tmp_path / "cli" / "output.nc").read_bytes()
    assert (tmp_path / "python" / "output.nc").read_bytes() == cli_bytes
    assert summary["steps"] == shallows.read_summary(tmp_path / "cli")["steps"] == sim.steps
    assert batches and batches[-1][0] == pytest.approx(0.5) and sim.time == 0.5
    # The simulation holds the final state: the last frame of output.nc.
    ds = shallows.open_output(tmp_path / "cli")
    np.testing.assert_array_equal(ds["h"].isel(time=-1).values, sim.h.astype(ds["h"].dtype))
    ds.close()


def test_run_refuses_a_simulation_that_has_advanced():
    sim = shallows.Simulation(dam_break()).step()
    with pytest.raises(ValueError, match="has advanced already"):
        sim.run()


def test_a_run_stopped_after_some_steps_and_continued_is_the_run_straight_to_the_end():
    straight = shallows.Simulation(dam_break()).advance(1.0)
    stopped = shallows.Simulation(dam_break()).step(7)
    assert stopped.steps == 7 and 0 < stopped.time < 1.0 and stopped.dt > 0
    stopped.advance(stopped.time).advance(1.0)  # advancing to where it stands takes no step
    assert stopped.steps == straight.steps
    for name in ("h", "hu", "hv", "max_h", "max_speed", "arrival_time"):
        np.testing.assert_array_equal(stopped[name], straight[name], err_msg=name)


def test_advancing_to_output_times_gives_the_state_the_command_line_writes_there():
    # advance(t1), advance(t2) lands on t1 as a run that writes a frame at t1 does.
    case = dam_break()
    by_frames = shallows.Simulation(case)
    for t in (0.25, 0.5, 0.75, 1.0):
        by_frames.advance(t)
    by_run = shallows.Simulation(case.copy().set("output.format", "[]"))
    by_run.run()
    np.testing.assert_array_equal(by_frames.h, by_run.h)
    assert by_frames.steps == by_run.steps


def test_ctrl_c_stops_advance_cleanly_and_the_run_goes_on_unchanged():
    case = dam_break(nx=200, ny=40, end=8.0)
    straight = shallows.Simulation(case, threads=1).advance(8.0)
    sim = shallows.Simulation(case, threads=1)
    timer = threading.Timer(0.15, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        sim.advance(8.0)
        interrupted = False
    except KeyboardInterrupt:
        interrupted = True
    timer.join()
    if interrupted:  # else the machine ran the whole advance within 0.15 s
        assert sim.time < 8.0
    sim.advance(8.0)
    np.testing.assert_array_equal(sim.h, straight.h)
    np.testing.assert_array_equal(sim.hu, straight.hu)


def test_a_lake_written_between_steps_stays_at_rest():
    sim = shallows.Simulation(dam_break()).advance(0.5)
    assert np.abs(sim.hu).max() > 0.1
    # A level lake over the bump, at rest: well balanced, it stays so to round-off.
    sim.eta = np.full(sim.h.shape, 0.8)
    sim.hu = np.zeros(sim.h.shape)
    sim.hv = np.zeros(sim.h.shape)
    np.testing.assert_allclose(sim.eta, 0.8, rtol=0, atol=1e-15)
    sim.advance(1.0)
    np.testing.assert_allclose(sim.eta, 0.8, rtol=0, atol=1e-12)
    assert np.abs(sim.hu).max() < 1e-12 and np.abs(sim.hv).max() < 1e-12


def test_a_depth_written_between_steps_is_what_the_next_step_starts_from():
    case = dam_break()
    sim = shallows.Simulation(case)
    h = sim.h
    h[:, : h.shape[1] // 2] += 0.5  # raise the reservoir
    sim.h = h
    np.testing.assert_array_equal(sim.h, h)
    raised = case.copy().set("initial.eta", h + sim.z)
    fresh = shallows.Simulation(raised)
    sim.step(3)
    fresh.step(3)
    np.testing.assert_array_equal(sim.h, fresh.h)


def test_a_state_of_the_wrong_shape_or_a_negative_depth_is_refused():
    sim = shallows.Simulation(dam_break())
    with pytest.raises(ValueError, match=r"h: the grid has ny x nx = 8 x 40 cells: expected shape \(8, 40\)"):
        sim.h = np.zeros((40, 8))
    with pytest.raises(ValueError, match=r"h: cell 0 would hold h = -1"):
        sim.h = np.full((8, 40), -1.0)
    with pytest.raises(KeyError, match="no field 'salt'"):
        sim.scalar("salt")


def test_float_runs_in_float():
    double = shallows.Simulation(dam_break()).advance(0.5)
    single = shallows.Simulation(dam_break(), precision="float").advance(0.5)
    assert single.case.info["precision"] == "float"
    np.testing.assert_allclose(single.h, double.h, atol=1e-4)
    assert not np.array_equal(single.h, double.h)


def test_the_state_as_xarray_has_y_x_dims_south_first_and_units():
    sim = shallows.Simulation(dam_break()).advance(0.5)
    ds = sim.to_xarray()
    assert ds["h"].dims == ("y", "x") and ds["h"].attrs["units"] == "m"
    assert ds["hu"].attrs["units"] == "m2 s-1" and ds["arrival_time"].attrs["units"] == "s"
    assert ds["y"].values[0] < ds["y"].values[-1]
    np.testing.assert_array_equal(ds["max_h"].values, sim.max_h)
    assert (sim.max_h >= sim.h).all() and ds.attrs["time"] == 0.5
    # The bump's top, at (6, 1), is where the bed is highest.
    top = ds["z"].where(ds["z"] == ds["z"].max(), drop=True)
    assert float(top["x"][0]) == pytest.approx(5.875) and float(top["y"][0]) in (0.875, 1.125)


@needs_netcdf
def test_outputs_read_back_as_xarray_and_a_dict(tmp_path):
    case = dam_break().set("output.format", '["netcdf"]')
    case.output_dir = tmp_path
    sim = shallows.Simulation(case)
    sim.run()
    ds = shallows.open_output(tmp_path)
    assert ds["h"].dims == ("time", "y", "x") and ds.sizes["time"] == 5
    np.testing.assert_allclose(ds["time"].values, [0, 0.25, 0.5, 0.75, 1.0])
    ds.close()
    summary = shallows.read_summary(tmp_path)
    assert summary["steps"] == sim.steps and summary["mass_balance_ok"]
    with pytest.raises(FileNotFoundError, match="output.nc"):
        shallows.open_output(tmp_path / "nothing")


def test_gauges_read_the_state_in_their_cells(tmp_path):
    case = dam_break().set("output.gauges", '[{ name = "dam", x = 4.1, y = 0.3 }, { name = "far", x = 9.9, y = 1.9 }]')
    sim = shallows.Simulation(case).advance(0.5)
    gauges = sim.gauges()
    assert list(gauges) == ["dam", "far"]
    # (4.1, 0.3) lies in column 16 (dx = 0.25), row 1 (dy = 0.25); (9.9, 1.9) in the last cell.
    assert gauges["dam"]["cell"] == 1 * 40 + 16 and gauges["far"]["cell"] == 8 * 40 - 1
    assert gauges["dam"]["h"] == sim.h[1, 16] and gauges["far"]["hu"] == sim.hu[-1, -1]
    assert gauges["dam"]["eta"] == sim.eta[1, 16]


def lake(z, h) -> shallows.Case:
    """A closed basin on a 40 x 8 grid with the bed z and the depth h (expressions or arrays); no end in sight."""
    return shallows.Case({
        "domain": {"nx": 40, "ny": 8, "x": [0.0, 10.0], "y": [0.0, 2.0]},
        "bathymetry": {"z": z}, "initial": {"h": h},
        "boundary": {"west": "wall", "east": "wall", "south": "wall", "north": "wall"},
        "time": {"end": 1000.0},
    })


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bed_lowered_between_steps_gives_the_run_started_on_that_bed(backend):
    bump = "0.3 * exp(-((x-6)^2 + (y-1)^2))"
    sim = shallows.Simulation(lake(bump, f"0.8 - {bump}"), backend=backend, threads=1).step(5)
    assert np.abs(sim.hu).max() < 1e-13  # a lake at rest
    h, volume = sim.h, sim.volume
    z = sim.z
    z[:, 10:14] -= 0.25  # a breach in the floor
    sim.z = z
    np.testing.assert_array_equal(sim.z, z)
    np.testing.assert_array_equal(sim.h, h)  # the depths stay: the surface dips over the breach
    assert sim.volume == volume and sim.steps == 5
    fresh = shallows.Simulation(lake(z, h), backend=backend, threads=1)
    sim.step(30)
    fresh.step(30)
    assert np.abs(sim.hu).max() > 1e-2  # the water flows into the dip
    for name in ("h", "hu", "hv"):
        np.testing.assert_array_equal(sim[name], fresh[name])
    assert sim.volume == pytest.approx(volume, rel=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_breach_filled_to_the_lake_level_stays_at_rest(backend):
    bump = "0.3 * exp(-((x-6)^2 + (y-1)^2))"
    sim = shallows.Simulation(lake(bump, f"0.8 - {bump}"), backend=backend, threads=1).step(5)
    z = sim.z
    z[:, 10:14] -= 0.25
    sim.z = z
    sim.eta = np.full(z.shape, 0.8)  # the breach fills to the lake's level
    np.testing.assert_allclose(sim.h[:, 10:14], 0.8 - z[:, 10:14], rtol=0, atol=1e-15)
    sim.step(50)
    # Well balanced on the new bed (its slopes derived anew): at rest to round-off.
    np.testing.assert_allclose(sim.eta, 0.8, rtol=0, atol=1e-13)
    assert np.abs(sim.hu).max() < 1e-13 and np.abs(sim.hv).max() < 1e-13


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_bed_written_on_a_mesh_is_in_the_file_order_and_gives_the_run_started_on_it(tmp_path, backend):
    from test_mesh import square_mesh

    msh, cells = square_mesh(tmp_path / "square.msh", n=6)

    def basin(z, h):
        return shallows.Case({"mesh": {"file": str(msh), "ordering": "rcm"}, "bathymetry": {"z": z},
                              "initial": {"h": h}, "time": {"end": 1000.0}})

    sim = shallows.Simulation(basin("0.1 * x", "0.5 - 0.1 * x"), backend=backend, threads=1).step(3)
    z = sim.z
    z[: cells // 3] -= 0.2  # the first elements of the mesh file
    h, volume = sim.h, sim.volume
    sim.z = z
    np.testing.assert_array_equal(sim.z, z)
    fresh = shallows.Simulation(basin(z, h), backend=backend, threads=1)
    sim.step(20)
    fresh.step(20)
    assert np.abs(sim.hu).max() > 1e-3
    for name in ("h", "hu", "hv"):
        np.testing.assert_array_equal(sim[name], fresh[name])
    assert sim.volume == pytest.approx(volume, rel=1e-13)


def test_a_bed_of_the_wrong_shape_or_one_that_changes_the_active_cells_is_refused():
    z = np.zeros((8, 40))
    z[0, 0] = np.nan  # an inactive cell
    sim = shallows.Simulation(lake(z, 0.5))
    with pytest.raises(ValueError, match=r"z: the grid has ny x nx = 8 x 40 cells: expected shape \(8, 40\)"):
        sim.z = np.zeros((40, 8))
    with pytest.raises(ValueError, match=r"z: cell 0 is inactive \(NaN in the case's bed\) and must stay NaN"):
        sim.z = np.zeros((8, 40))
    bad = z.copy()
    bad[0, 1] = np.inf
    with pytest.raises(ValueError, match=r"z: cell 1 is active and needs a finite bed"):
        sim.z = bad
    np.testing.assert_array_equal(sim.z, z)  # left as it was
