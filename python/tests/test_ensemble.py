"""shallows.run_ensemble: the members of a case's [ensemble], as the command line runs them."""
from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

import shallows

# Runs that write output.nc (the default format) need a build with NetCDF.
needs_netcdf = pytest.mark.skipif(not shallows.netcdf_available(), reason="this build writes no NetCDF (output.nc)")

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


@needs_netcdf
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


# shallows.Ensemble: members from Python, run by the same runner, results as xarray.

def dam_break() -> shallows.Case:
    """A dam break on a 12 x 2 grid whose initial surface is a numpy array (an array travels to every member)."""
    case = shallows.Case({
        "domain": {"nx": 12, "ny": 2, "x": [0.0, 6.0], "y": [0.0, 1.0]},
        "bathymetry": {"z": 0.0},
        "initial": {"eta": 0.2},
        "time": {"end": 1.0, "output_every": 0.5},
        "output": {"format": ["netcdf"]},
    })
    eta = np.where(case.x < 2.0, 1.0, 0.2)[None, :].repeat(2, axis=0)
    return case.set("initial.eta", eta).set("physics.manning", 0.03)


@needs_netcdf
def test_ensemble_members_get_the_maxima_of_their_own_runs(tmp_path: Path) -> None:
    ens = shallows.Ensemble(dam_break(), members=[{"physics.manning": 0.01}, {"physics.manning": 0.08, "weight": 2},
                                                  {}])
    assert len(ens) == 3 and ens.keys == ["physics.manning"]
    assert ens.output_dir == ens.case.output_dir
    counts = ens.run(threads=1, output=tmp_path / "ens")
    assert ens.output_dir == tmp_path / "ens"
    assert counts == {"members": 3, "ran": 3, "skipped": 0, "failed": 0, "output_dir": tmp_path / "ens"}
    ds = ens.to_xarray()
    assert ds["max_h"].dims == ("member", "y", "x") and ds.sizes["member"] == 3
    np.testing.assert_array_equal(ds["physics.manning"].values, [0.01, 0.08, np.nan])  # NaN: the case's 0.03
    np.testing.assert_array_equal(ds["weight"].values, [1.0, 2.0, 1.0])
    assert ds["ok"].values.tolist() == [True, True, True]
    for m in range(3):
        case = ens.member_case(m)
        case.output_dir = tmp_path / f"alone{m}"
        sim = shallows.Simulation(case, threads=1)
        summary = sim.run()
        np.testing.assert_array_equal(ds["max_h"].values[m], sim.max_h)
        np.testing.assert_array_equal(ds["max_speed"].values[m], sim.max_speed)
        assert ds["steps"].values[m] == summary["steps"]
    # The roughness changed the runs; the default member is the case's own roughness, between the two.
    peak = ds["max_speed"].max(dim=("y", "x")).values
    assert peak[0] > peak[2] > peak[1]
    # Run again: every member is done already, and the results are the same.
    assert ens.run(threads=1, output=tmp_path / "ens")["skipped"] == 3
    np.testing.assert_array_equal(ens.dataset["max_h"].values, ds["max_h"].values)


@needs_netcdf
def test_ensemble_statistics_are_those_of_the_members_maxima(tmp_path: Path) -> None:
    manning = np.array([0.01, 0.02, 0.04, 0.08])
    weight = np.array([1.0, 2.0, 3.0, 4.0])
    ens = shallows.Ensemble(dam_break(), members={"physics.manning": manning, "weight": weight},
                            thresholds=[0.3, 0.6], percentiles=[50])
    ens.run(jobs=2, threads=2, output=tmp_path / "ens")
    ds = ens.to_xarray()
    h = ds["max_h"].values
    w = weight[:, None, None] / weight.sum()
    np.testing.assert_array_equal(ds["threshold"].values, [0.3, 0.6])
    for k, t in enumerate([0.3, 0.6]):
        np.testing.assert_allclose(ds["exceedance"].values[k], (w * (h > t)).sum(axis=0), rtol=1e-14, atol=0)
    np.testing.assert_allclose(ds["max_h_mean"].values, (w * h).sum(axis=0), rtol=1e-14, atol=0)
    np.testing.assert_array_equal(ds["max_h_max"].values, h.max(axis=0))
    np.testing.assert_array_equal(ds["max_h_min"].values, h.min(axis=0))
    # The weighted median is one member's value: the first whose cumulative weight reaches half.
    order = np.argsort(h, axis=0, kind="stable")
    weights = np.broadcast_to(weight[:, None, None], h.shape)
    cumulative = np.cumsum(np.take_along_axis(weights, order, axis=0), axis=0)  # whole numbers: exact
    first = (cumulative * 100 >= 50 * weight.sum()).argmax(axis=0)
    median = np.take_along_axis(np.sort(h, axis=0), first[None], axis=0)[0]
    np.testing.assert_array_equal(ds["max_h_percentile"].values[0], median)
    assert len(np.unique(h.reshape(4, -1), axis=0)) == 4  # the members differ


@needs_netcdf
def test_a_member_that_fails_is_reported_and_the_others_run(tmp_path: Path) -> None:
    ens = shallows.Ensemble(dam_break(), members=[{"physics.manning": 0.01},
                                                  {"physics.manning": {"file": str(tmp_path / "missing.asc")}}])
    assert ens.run(threads=1, output=tmp_path / "ens")["failed"] == 1
    ds = ens.to_xarray()
    assert ds["ok"].values.tolist() == [True, False]
    assert ds["message"].values[0] == "" and "missing.asc" in ds["message"].values[1]
    assert np.isnan(ds["max_h"].values[1]).all() and not np.isnan(ds["max_h"].values[0]).any()
    np.testing.assert_array_equal(ds["max_h_mean"].values, ds["max_h"].values[0])  # over the member that ran
    manning = ds["physics.manning"].values.tolist()  # a column of numbers and a table: the values as text
    assert manning[0] == "0.01" and manning[1].startswith("{") and "missing.asc" in manning[1]


def test_an_ensemble_from_a_dict_of_arrays_is_the_one_from_a_list_of_dicts() -> None:
    columns = shallows.Ensemble(dam_break(), members={"physics.manning": np.array([0.01, np.nan]),
                                                      "boundary.east": ["open", "wall"]})
    rows = shallows.Ensemble(dam_break(), members=[{"physics.manning": 0.01, "boundary.east": "open"},
                                                   {"boundary.east": "wall"}])
    for e in (columns, rows):
        assert e.keys == ["boundary.east", "physics.manning"]
        m = e.members
        assert m["boundary.east"].tolist() == ["open", "wall"]
        np.testing.assert_array_equal(m["physics.manning"], [0.01, np.nan])
        assert e.member_case(0).overrides[-2:] == ["boundary.east=\"open\"", "physics.manning=0.01"]


@needs_netcdf
def test_ensemble_of_a_case_file_takes_its_own_members_and_new_thresholds(tmp_path: Path) -> None:
    case = tmp_path / "case.toml"
    case.write_text(CASE)
    ens = shallows.Ensemble(shallows.Case.from_toml(case), thresholds=[0.25])
    assert len(ens) == 2 and ens.members["physics.manning"].tolist() == [0.01, 0.05]
    ens.run(threads=1, output=tmp_path / "out")
    ds = ens.to_xarray()
    np.testing.assert_array_equal(ds["threshold"].values, [0.25])
    with open(tmp_path / "out" / "ensemble.csv", newline="") as f:
        assert [r["status"] for r in csv.DictReader(f)] == ["ok", "ok"]


@needs_netcdf
def test_ensemble_on_a_mesh_gives_fields_in_the_file_order(tmp_path: Path) -> None:
    from test_mesh import square_mesh

    msh, cells = square_mesh(tmp_path / "square.msh", n=4)
    case = shallows.Case({"mesh": {"file": str(msh), "ordering": "rcm"}, "bathymetry": {"z": "0.3 * x"},
                          "initial": {"h": np.linspace(0.1, 0.6, cells)}, "time": {"end": 0.2},
                          "output": {"format": ["netcdf"]}})
    ens = shallows.Ensemble(case, members={"physics.manning": [0.0, 0.05]})
    ens.run(threads=1, output=tmp_path / "ens")
    ds = ens.to_xarray()
    assert ds["max_h"].dims == ("member", "face")
    np.testing.assert_array_equal(ds["x"].values, case.x)
    for m in range(2):
        member = ens.member_case(m)
        member.output_dir = tmp_path / f"alone{m}"
        sim = shallows.Simulation(member, threads=1)
        sim.run()
        np.testing.assert_array_equal(ds["max_h"].values[m], sim.max_h)


def test_ensemble_errors_name_the_argument_the_member_and_the_key() -> None:
    case = dam_break()
    with pytest.raises(shallows.CaseError, match=r"\[ensemble\] members\[1\]: unknown key 'physics.maning'"):
        shallows.Ensemble(case, members=[{"physics.manning": 0.01}, {"physics.maning": 0.05}])
    with pytest.raises(ValueError, match=r"members: the arrays differ in length .*'physics.manning' has 2, "
                                         r"'rain.scale' has 3"):
        shallows.Ensemble(case, members={"physics.manning": [0.01, 0.02], "rain.scale": [1, 2, 3]})
    with pytest.raises(ValueError, match=r"members\[0\]: physics.manning: the grid has ny x nx = 2 x 12 cells: "
                                         r"expected shape \(2, 12\), row 0 the southern row, found \(2,\)"):
        shallows.Ensemble(case, members={"physics.manning": np.zeros((2, 2))})
    with pytest.raises(TypeError, match=r"members\[1\]: expected a dict"):
        shallows.Ensemble(case, members=[{"physics.manning": 0.01}, 0.02])
    with pytest.raises(TypeError, match=r"members\[0\]: physics.manning: expected an array of numbers"):
        shallows.Ensemble(case, members=[{"physics.manning": np.array([["a"] * 12] * 2)}])
    with pytest.raises(shallows.CaseError, match=r"'initial.eta' is given to the case as an array"):
        shallows.Ensemble(case, members=[{"initial.eta": 1.0}])
    with pytest.raises(shallows.CaseError, match=r"members\[0\]: unknown key 'physics.maning'"):
        shallows.Ensemble(case, members=[{"physics.maning": np.full((2, 12), 0.01)}])
    with pytest.raises(shallows.CaseError, match=r"thresholds: must increase"):
        shallows.Ensemble(case, members=[{}], thresholds=[0.5, 0.1])
    with pytest.raises(shallows.CaseError, match=r"no \[ensemble\] section"):
        shallows.Ensemble(case)
    with pytest.raises(ValueError, match=r"has not run: call run\(\) first"):
        shallows.Ensemble(case, members=[{}]).to_xarray()


@needs_netcdf
def test_members_given_arrays_are_the_runs_of_those_arrays_set_on_a_case(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    case = dam_break()
    ny, nx = case.shape
    beds = np.stack([0.02 * case.x[None, :].repeat(ny, axis=0), np.zeros((ny, nx))])
    manning = np.full((ny, nx), 0.02)
    manning[:, nx // 2:] = 0.06
    # A list of dicts (an array beside a number), and a dict with the members' beds stacked along the first axis.
    listed = shallows.Ensemble(case, members=[{"bathymetry.z": beds[0], "physics.manning": 0.01},
                                              {"bathymetry.z": beds[1], "physics.manning": manning}])
    stacked = shallows.Ensemble(case, members={"bathymetry.z": beds, "physics.manning": [0.01, manning]})
    assert listed.keys == stacked.keys == ["bathymetry.z", "physics.manning"]
    assert listed.members["bathymetry.z"].tolist() == ["<values per cell>"] * 2
    np.testing.assert_array_equal(listed.members["physics.manning"], ["0.01", "<values per cell>"])
    listed.run(threads=1, output=tmp_path / "listed")
    stacked.run(threads=1, output=tmp_path / "stacked")
    ds = listed.to_xarray()
    assert ds["ok"].values.tolist() == [True, True]
    for m in range(2):
        alone = case.copy().set("bathymetry.z", beds[m]).set("physics.manning", [0.01, manning][m])
        alone.output_dir = tmp_path / f"alone{m}"
        sim = shallows.Simulation(alone, threads=1)
        sim.run()
        np.testing.assert_array_equal(ds["max_h"].values[m], sim.max_h)
        np.testing.assert_array_equal(ds["max_speed"].values[m], sim.max_speed)
        member_dir = tmp_path / "listed" / "members" / f"{m:04d}"
        for name in ("output.nc",):
            assert (member_dir / name).read_bytes() == (tmp_path / f"alone{m}" / name).read_bytes(), name
            assert (tmp_path / "stacked" / "members" / f"{m:04d}" / name).read_bytes() == \
                (member_dir / name).read_bytes(), name
        # member_case gives the member's own arrays.
        np.testing.assert_array_equal(listed.member_case(m).field("z"), beds[m])
    np.testing.assert_array_equal(stacked.to_xarray()["max_h"].values, ds["max_h"].values)
    # The beds made the runs differ; a rerun skips both, and other arrays run again.
    assert not np.array_equal(ds["max_h"].values[0], ds["max_h"].values[1])
    assert listed.run(threads=1, output=tmp_path / "listed")["skipped"] == 2
    other = shallows.Ensemble(case, members=[{"bathymetry.z": beds[1], "physics.manning": 0.01},
                                             {"bathymetry.z": beds[1], "physics.manning": manning}])
    assert other.run(threads=1, output=tmp_path / "listed") == {
        "members": 2, "ran": 1, "skipped": 1, "failed": 0, "output_dir": tmp_path / "listed"}
    # An array at a key that takes none fails its member alone, the message naming the key.
    bad = shallows.Ensemble(case, members=[{"physics.g": np.full((ny, nx), 9.81)}, {}])
    assert bad.run(threads=1, output=tmp_path / "bad")["failed"] == 1
    assert bad.to_xarray()["message"].values[0] == "array: physics.g: takes a number, not values per cell"
