"""Cases from TOML and dicts: the library's case reader, its keys and errors, numpy arrays as fields."""
from __future__ import annotations

import numpy as np
import pytest

import shallows


def channel(**sections) -> dict:
    """A small closed channel, 20 x 4 cells, with a y-dependent bed (asymmetric south to north)."""
    table = {
        "domain": {"nx": 20, "ny": 4, "x": [0.0, 10.0], "y": [0.0, 2.0]},
        "bathymetry": {"z": "0.1 * y"},
        "initial": {"eta": "x < 5 ? 1 : 0.5"},
        "time": {"end": 0.5, "output_every": 0.25},
    }
    table.update(sections)
    return table


def test_a_dict_case_reads_as_its_toml_file_does(root):
    from_file = shallows.Case.from_toml(root / "cases" / "s000-t1" / "case.toml")
    as_dict = shallows.Case({
        "name": "s000-t1",
        "domain": {"nx": 100, "ny": 10, "x": [0.0, 10.0], "y": [0.0, 1.0]},
        "bathymetry": {"z": "cos(2*pi*x)/2 - 1"},
        "initial": {"eta": "x < 5 ? 2 : 0"},
        "boundary": {"west": "wall", "east": "wall", "south": "wall", "north": "wall"},
        "numerics": {"scheme": "roe1", "cfl": 0.9},
        "time": {"end": 5.0, "output_every": 0.5},
    })
    assert from_file.shape == as_dict.shape == (10, 100)
    for name in ("z", "h", "hu", "hv"):
        np.testing.assert_array_equal(from_file.field(name), as_dict.field(name))


def test_an_unknown_key_is_an_error_that_names_it_and_the_closest_key():
    with pytest.raises(shallows.CaseError, match=r"physics\.maning.*did you mean 'physics\.manning'"):
        shallows.Case(channel(physics={"maning": 0.03}))


def test_a_bad_value_is_a_value_error_naming_its_key():
    with pytest.raises(ValueError, match=r"physics\.manning: must be >= 0"):
        shallows.Case(channel(physics={"manning": -0.1}))


def test_a_missing_case_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothing.toml"):
        shallows.Case.from_toml(tmp_path / "nothing.toml")


def test_set_is_the_command_lines_set():
    case = shallows.Case(channel())
    case.set("domain.nx", 40).set("physics.manning", 0.03).set("numerics.scheme", "roe3")
    assert case.shape == (4, 40)
    assert case.info["scheme"] == "roe3"
    assert case.overrides == ["domain.nx=40", "physics.manning=0.03", "numerics.scheme=roe3"]


def test_a_refused_set_names_the_key_and_leaves_the_case_as_it_was():
    case = shallows.Case(channel())
    with pytest.raises(shallows.CaseError, match=r"time\.end"):
        case.set("time.end", -1.0)
    with pytest.raises(shallows.CaseError, match=r"unknown key 'domain\.nz'"):
        case.set("domain.nz", 3)
    assert case.info["t_end"] == 0.5 and case.overrides == []


def test_an_array_field_reads_back_with_row_0_the_southern_row():
    case = shallows.Case(channel())
    z = case.field("z")
    assert z.shape == (4, 20)
    # bathymetry z = 0.1 y: row 0 holds the southern cells (y = 0.25), the last row the northern (y = 1.75).
    np.testing.assert_allclose(z[0], 0.025)
    np.testing.assert_allclose(z[-1], 0.175)
    np.testing.assert_allclose(case.y, [0.25, 0.75, 1.25, 1.75])
    # An asymmetric array in, the same array out, and the initial depth follows it (h = eta - z).
    bed = np.add.outer(0.05 * np.arange(4), 0.001 * np.arange(20))
    case.set("bathymetry.z", bed)
    np.testing.assert_array_equal(case.field("z"), bed)
    eta = np.where(case.x < 5, 1.0, 0.5)[np.newaxis, :]
    np.testing.assert_allclose(case.field("h"), eta - bed, rtol=0, atol=1e-15)
    sim = shallows.Simulation(case)
    np.testing.assert_array_equal(sim.z, bed)
    np.testing.assert_allclose(sim.eta, np.broadcast_to(eta, bed.shape), rtol=0, atol=1e-15)


def test_an_array_gives_the_same_case_as_the_expression_it_holds():
    by_expression = shallows.Case(channel())
    eta = by_expression.field("h") + by_expression.field("z")
    by_array = shallows.Case(channel(initial={"eta": eta}))
    np.testing.assert_array_equal(by_array.field("h"), by_expression.field("h"))
    by_set = shallows.Case(channel()).set("initial.eta", eta)
    np.testing.assert_array_equal(by_set.field("h"), by_expression.field("h"))


def test_a_manning_map_as_an_array_is_read_as_the_reader_reads_a_raster():
    case = shallows.Case(channel())
    case.set("physics.manning", np.full(case.shape, 0.03))
    with pytest.raises(ValueError, match=r"physics\.manning is -0\.01 at cell centre"):
        case.set("physics.manning", np.full(case.shape, -0.01))


def test_an_array_of_the_wrong_shape_names_the_key_and_the_shape():
    case = shallows.Case(channel())
    with pytest.raises(ValueError, match=r"bathymetry\.z: the grid has ny x nx = 4 x 20 cells: expected shape \(4, 20\)"):
        case.set("bathymetry.z", np.zeros((20, 4)))
    with pytest.raises(ValueError, match=r"initial\.h: an array of 3 values, but the grid has 4 x 20 cells"):
        shallows.Case(channel(initial={"h": np.zeros(3)}))


def test_an_array_for_a_key_that_is_no_field_is_an_error_naming_it():
    case = shallows.Case(channel())
    with pytest.raises(shallows.CaseError, match=r"physics\.g: takes a number, not values per cell"):
        case.set("physics.g", np.ones(case.shape))


def test_a_non_finite_value_in_an_array_names_the_key_and_the_cell():
    case = shallows.Case(channel())
    h = np.zeros(case.shape)
    h[2, 3] = np.inf
    with pytest.raises(ValueError, match=r"initial\.h is inf at cell centre \(x, y\) = \(1\.75, 1\.25\)"):
        shallows.Case(channel(initial={"h": h}))


def test_a_nan_in_the_bed_marks_an_inactive_cell():
    case = shallows.Case(channel())
    z = case.field("z")
    z[1, 1] = np.nan
    case.set("bathymetry.z", z)
    sim = shallows.Simulation(case).advance(0.1)
    assert np.isnan(sim.eta[1, 1]) and sim.h[1, 1] == 0
