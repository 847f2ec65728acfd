"""Meshes from numpy arrays: written as a Gmsh file by the library, read by the case reader, fields per cell."""
from __future__ import annotations

import numpy as np
import pytest

import shallows

# Runs that write output.nc (the default format) need a build with NetCDF.
needs_netcdf = pytest.mark.skipif(not shallows.netcdf_available(), reason="this build writes no NetCDF (output.nc)")


def square_mesh(path, n: int = 4):
    """The unit square as n x n squares, each cut into two triangles; its four sides as named groups."""
    xs = np.linspace(0.0, 1.0, n + 1)
    X, Y = np.meshgrid(xs, xs)
    nodes = np.column_stack([X.ravel(), Y.ravel()])
    node = lambda i, j: j * (n + 1) + i  # noqa: E731
    cells = []
    for j in range(n):
        for i in range(n):
            cells.append([node(i, j), node(i + 1, j), node(i + 1, j + 1)])
            cells.append([node(i, j), node(i + 1, j + 1), node(i, j + 1)])
    side = lambda pts: np.array([[a, b] for a, b in zip(pts[:-1], pts[1:])])  # noqa: E731
    r = range(n + 1)
    boundaries = {"west": side([node(0, j) for j in r]), "east": side([node(n, j) for j in r]),
                  "south": side([node(i, 0) for i in r]), "north": side([node(i, n) for i in r])}
    return shallows.write_mesh(path, nodes, np.array(cells), boundaries), len(cells)


def test_a_mesh_from_arrays_runs_with_fields_per_cell_in_the_order_of_its_cells(tmp_path):
    msh, cells = square_mesh(tmp_path / "square.msh")
    h0 = np.linspace(0.5, 1.0, cells)  # a different depth in every cell
    case = shallows.Case({
        "mesh": {"file": str(msh), "ordering": "file"},
        "initial": {"h": h0},
        "boundary": {"west": "wall", "east": "wall", "south": "wall", "north": "wall"},
        "time": {"end": 0.05},
    })
    assert case.shape == (cells,) and case.info["on_mesh"]
    np.testing.assert_array_equal(case.field("h"), h0)
    sim = shallows.Simulation(case)
    np.testing.assert_array_equal(sim.h, h0)
    volume = sim.volume
    sim.advance(0.05)
    assert sim.volume == pytest.approx(volume, rel=1e-12)  # walls all round
    ds = sim.to_xarray()
    assert ds["h"].dims == ("face",) and ds.sizes["face"] == cells


def test_a_lake_on_a_mesh_from_arrays_stays_at_rest(tmp_path):
    msh, cells = square_mesh(tmp_path / "square.msh")
    case = shallows.Case({"mesh": {"file": str(msh)}, "bathymetry": {"z": "0.2 * x * y"}, "initial": {"eta": 1.0},
                          "time": {"end": 0.2}})
    sim = shallows.Simulation(case).advance(0.2)
    np.testing.assert_allclose(sim.eta, 1.0, rtol=0, atol=1e-13)


def test_a_bad_mesh_array_or_a_wrong_field_shape_names_what_is_wrong(tmp_path):
    with pytest.raises(ValueError, match=r"cells\[0\]: node index 9 is not in \[0, 3\)"):
        shallows.write_mesh(tmp_path / "bad.msh", np.zeros((3, 2)), np.array([[0, 1, 9]]))
    msh, cells = square_mesh(tmp_path / "square.msh")
    case = shallows.Case({"mesh": {"file": str(msh)}, "initial": {"h": 1.0}, "time": {"end": 1.0}})
    with pytest.raises(ValueError, match=rf"initial\.h: the mesh has {cells} cells: expected shape \({cells},\)"):
        case.set("initial.h", np.ones((4, 8)))


def square_case(msh, ordering: str, h0: np.ndarray, **output) -> shallows.Case:
    """A basin on the square mesh: a tilted bed, depth h0 per element of the mesh file, walls all round."""
    return shallows.Case({
        "mesh": {"file": str(msh), "ordering": ordering},
        "bathymetry": {"z": "0.1 * x + 0.05 * y * y"},
        "initial": {"h": h0},
        "time": {"end": 0.05, "output_every": 0.05},
        "output": {"format": ["netcdf"], **output},
    })


def test_mesh_arrays_are_in_the_file_order_whatever_the_ordering_and_runs_agree_bit_for_bit(tmp_path):
    msh, cells = square_mesh(tmp_path / "square.msh", n=6)
    h0 = np.linspace(0.2, 1.0, cells) ** 2  # a different depth in every element
    runs = {}
    for ordering in ("file", "rcm", "random"):
        case = square_case(msh, ordering, h0)
        np.testing.assert_array_equal(case.field("h"), h0)
        sim = shallows.Simulation(case, threads=1)
        np.testing.assert_array_equal(sim.h, h0)
        sim.advance(0.05)
        runs[ordering] = (case.x, case.y, case.field("z"), sim.h, sim.hu, sim.hv, sim.eta, sim.max_h, sim.max_speed)
    for ordering in ("rcm", "random"):
        for a, b in zip(runs["file"], runs[ordering]):
            np.testing.assert_array_equal(a, b)
    # The steps moved water: the runs compared are not their initial states.
    assert np.abs(runs["file"][3] - h0).max() > 1e-3


@needs_netcdf
def test_a_depth_set_from_numpy_shows_up_at_its_element_in_output_nc(tmp_path):
    msh, cells = square_mesh(tmp_path / "square.msh", n=6)
    h0 = np.linspace(0.2, 1.0, cells)
    case = square_case(msh, "rcm", np.full(cells, 0.5))
    case.output_dir = tmp_path / "out"
    sim = shallows.Simulation(case, threads=1)
    sim.h = h0
    np.testing.assert_array_equal(sim.h, h0)
    sim.run()
    with shallows.open_output(tmp_path / "out") as ds:
        tag = ds["mesh_face_tag"].values.astype(np.int64)
        first = ds["h"].isel(time=0).values
        last = ds["h"].isel(time=-1).values
    # The run's faces are renumbered (RCM), and output.nc names each face's element (write_mesh tags 1, 2, ...).
    assert sorted(tag) == list(range(1, cells + 1)) and not np.array_equal(tag, np.arange(1, cells + 1))
    element = tag - 1
    np.testing.assert_array_equal(first, h0[element].astype(first.dtype))
    np.testing.assert_array_equal(last, sim.h[element].astype(last.dtype))


def test_gauge_cells_index_the_mesh_arrays(tmp_path):
    msh, cells = square_mesh(tmp_path / "square.msh", n=6)
    h0 = np.linspace(0.2, 1.0, cells)
    case = square_case(msh, "rcm", h0, gauges=[{"name": "g", "x": 0.3, "y": 0.8}])
    g = shallows.Simulation(case).gauges()["g"]
    assert g["h"] == h0[g["cell"]]
    x, y = case.x[g["cell"]], case.y[g["cell"]]
    assert abs(x - 0.3) < 1 / 6 and abs(y - 0.8) < 1 / 6
