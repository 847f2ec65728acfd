"""shallows in Python: cases from TOML, dicts and numpy arrays, the solver in-process, results as xarray.

The numerics are the C++ library's (the compiled module ``shallows._shallows``): a case is read by the same
case reader as ``shallows run`` reads a file, a :class:`Simulation` steps the same backends, and
:meth:`Simulation.run` writes the same output files. Grid fields are numpy arrays of shape ``(ny, nx)`` whose
row 0 is the southern row (as in ``output.nc``); mesh fields have shape ``(cells,)`` in the order of the mesh
file's elements, whatever ``mesh.ordering`` the run renumbers its cells by. An :class:`Ensemble` runs a case's
members (a list of dicts or a dict of arrays) and gives their results as an ``xarray.Dataset`` with a
``member`` dimension.

Example::

    import numpy as np, shallows
    case = shallows.Case({
        "domain": {"nx": 200, "ny": 20, "x": [0.0, 20.0], "y": [0.0, 2.0]},
        "initial": {"eta": "x < 10 ? 1 : 0.1"},
        "time": {"end": 2.0},
    })
    sim = shallows.Simulation(case)
    sim.advance(1.0)
    print(sim.h.max(), sim.time)
    ds = sim.to_xarray()
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Optional, Sequence, Union

import numpy as np

if TYPE_CHECKING:
    import xarray

from . import _shallows
from ._shallows import CaseError

__version__: str = _shallows.__version__
__all__ = ["Case", "CaseError", "Ensemble", "Simulation", "open_output", "read_summary", "write_mesh",
           "cuda_available", "netcdf_available", "features", "run_ensemble"]

PathLike = Union[str, "os.PathLike[str]"]
# An ensemble's members: a list of dicts ({"physics.manning": 0.03, "weight": 2}, ...) or a dict of equal-length
# arrays or lists ({"physics.manning": np.array([0.02, 0.04]), ...}).
Members = Union[Sequence[Mapping[str, Any]], Mapping[str, Any]]

# CF units of the fields a Simulation and output.nc hold.
_UNITS = {
    "h": ("m", "water depth"),
    "hu": ("m2 s-1", "unit discharge along x"),
    "hv": ("m2 s-1", "unit discharge along y"),
    "eta": ("m", "free-surface elevation h + z"),
    "z": ("m", "bed elevation"),
    "max_h": ("m", "largest depth reached"),
    "max_speed": ("m s-1", "largest speed reached"),
    "arrival_time": ("s", "first time the depth exceeded the arrival threshold"),
}


def _space(info: Mapping[str, Any], x: np.ndarray, y: np.ndarray) -> tuple:
    """The dims of a field and the coordinates of its cells, for an xarray.Dataset."""
    if info["on_mesh"]:
        return ("face",), {"x": (("face",), x, {"units": "m", "long_name": "x of the cell centroid"}),
                           "y": (("face",), y, {"units": "m", "long_name": "y of the cell centroid"})}
    return ("y", "x"), {"x": (("x",), x, {"units": "m", "long_name": "x of the cell centre", "axis": "X"}),
                        "y": (("y",), y, {"units": "m", "long_name": "y of the cell centre", "axis": "Y"})}


def cuda_available() -> bool:
    """Whether this build has the CUDA backend and a GPU answers."""
    return bool(_shallows.cuda_available())


def netcdf_available() -> bool:
    """Whether this build writes NetCDF (output.nc, the default output format)."""
    return bool(_shallows.netcdf_available())


def features() -> str:
    """What runs where (grid or mesh, CPU or GPU, ranks), as ``shallows features`` prints it (Markdown)."""
    return str(_shallows.features())


def run_ensemble(path: PathLike, sets: Optional[Sequence[str]] = None, output: Optional[PathLike] = None,
                 jobs: int = 1, threads: int = 0, backend: str = "cpu", quiet: bool = True) -> dict:
    """Runs the members of a case file's ``[ensemble]`` as ``shallows run path`` does (docs/ensembles.md).

    ``sets``: ``"key=value"`` overrides applied before each member's values (``--set``); ``output``: the
    folder (default: the case's ``output.dir``); ``jobs`` members side by side on the CPU, each on
    ``threads / jobs`` threads. Members done already are not run again. Returns the counts ``members``,
    ``ran``, ``skipped`` and ``failed``; the results are in ``ensemble.nc`` and ``ensemble.csv`` of the
    folder. Ctrl-C stops the members and raises ``KeyboardInterrupt`` (a rerun goes on).
    """
    return dict(_shallows.run_ensemble(os.fspath(path), list(sets or []), os.fspath(output or ""), int(jobs),
                                       int(threads), str(backend), bool(quiet)))


class Case:
    """A case: what ``shallows run`` reads from a TOML file, here from a file or a dict.

    Every change goes through the library's case reader again, so that a bad key or value raises
    :class:`CaseError` (a ``ValueError``) naming the key, as the command line names it, and leaves the case
    as it was.
    """

    def __init__(self, table: Mapping[str, Any], base_dir: Optional[PathLike] = None) -> None:
        """A case from a dict with the keys of a case file (docs/case-file.md).

        Values are numbers, strings (expressions in x and y), booleans, lists and dicts as in TOML; a numpy
        array at a field's key gives its value in every cell (see :meth:`set`). Relative file names
        (rasters, meshes, series) resolve against ``base_dir`` (default: the current folder).
        """
        if not isinstance(table, Mapping):
            raise TypeError(f"Case: expected a dict of sections, found {type(table).__name__}")
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        self._c = _shallows.Case.from_dict(dict(table), base)

    @classmethod
    def from_toml(cls, path: PathLike) -> "Case":
        """A case read from a TOML case file, as ``shallows run path`` reads it."""
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"{p}: no such case file")
        case = cls.__new__(cls)
        case._c = _shallows.Case.from_toml(p)
        return case

    def set(self, key: str, value: Any) -> "Case":
        """Sets ``key`` (``"section.key"``) as ``--set key=value`` does; returns the case.

        A string is taken as ``--set`` takes it (a TOML value, else a plain string): ``set("time.end", 5)``
        and ``set("time.end", "5")`` are the same. A numpy array gives a field's value in every cell
        (``bathymetry.z``, ``initial.h``, ``initial.eta``, ``initial.hu``, ``initial.hv``, ``initial.u``,
        ``initial.v``, ``physics.manning``, ``rain.rate``, ...): shape ``(ny, nx)`` on a grid, row 0 the
        southern row, or ``(cells,)`` on a mesh, one value per element of the mesh file in the file's order
        (whatever ``mesh.ordering`` renumbers). NaN in ``bathymetry.z`` marks an inactive cell.
        """
        self._c.set(key, value)
        return self

    def copy(self) -> "Case":
        """An independent copy of this case."""
        other = Case.__new__(Case)
        other._c = self._c.copy()
        return other

    @property
    def output_dir(self) -> Path:
        """The folder :meth:`Simulation.run` writes to (``output.dir``; settable, as ``-o``)."""
        return Path(self._c.info()["output_dir"])

    @output_dir.setter
    def output_dir(self, value: PathLike) -> None:
        self._c.set_output_dir(Path(value))

    @property
    def info(self) -> dict:
        """What the case reader made of the case: name, grid or mesh size, end time, precision, notes, ..."""
        return dict(self._c.info())

    @property
    def name(self) -> str:
        """The case's name (``name`` key, else the file's stem)."""
        return str(self._c.info()["name"])

    @property
    def shape(self) -> tuple:
        """The shape of the case's fields: ``(ny, nx)`` on a grid, ``(cells,)`` on a mesh (file order)."""
        i = self._c.info()
        return (i["cells"],) if i["on_mesh"] else (i["ny"], i["nx"])

    @property
    def x(self) -> np.ndarray:
        """x of the cell centres: per column on a grid ``(nx,)``, per cell on a mesh ``(cells,)``, file order (m)."""
        return self._c.centres()[0]

    @property
    def y(self) -> np.ndarray:
        """y of the cell centres: per row on a grid ``(ny,)``, south first, per cell on a mesh (m)."""
        return self._c.centres()[1]

    def field(self, name: str) -> np.ndarray:
        """The case's bed ``"z"`` or initial state ``"h"``, ``"hu"``, ``"hv"`` as the reader computed them."""
        return self._c.field(name)

    @property
    def text(self) -> str:
        """The TOML text the case was read from (a dict's as TOML), before ``set``."""
        return str(self._c.text)

    @property
    def overrides(self) -> list:
        """The ``set`` calls so far as ``--set`` strings (arrays not included)."""
        return list(self._c.overrides)

    def __repr__(self) -> str:
        i = self._c.info()
        where = f"mesh of {i['cells']} cells" if i["on_mesh"] else f"grid {i['nx']} x {i['ny']}"
        return f"<shallows.Case {i['name']!r}: {where}, t_end {i['t_end']:g} s, {i['precision']}>"


class Simulation:
    """A case run in this process: step it, read and write its state as numpy arrays, write its outputs.

    The state lives in the backend (CPU threads or a GPU); every read of ``h``, ``hu``, ``hv``, ``eta``,
    the maxima or a scalar copies it to a new numpy array, and every write loads it back. The GIL is released
    while stepping; Ctrl-C stops :meth:`advance` after a batch of steps (``KeyboardInterrupt``, the state
    at the end of a whole step, from which the simulation goes on unchanged).
    """

    def __init__(self, case: Case, backend: str = "cpu", precision: Optional[str] = None,
                 threads: Optional[int] = None) -> None:
        """Builds the backend for ``case``.

        backend: ``"cpu"``, ``"cuda"`` or ``"auto"`` (the GPU where one answers). precision: ``"float"`` or
        ``"double"``, as ``--precision`` (default: the case's ``numerics.precision``). threads: CPU threads
        (default: all cores, or ``OMP_NUM_THREADS``).
        """
        if not isinstance(case, Case):
            raise TypeError(f"Simulation: expected a shallows.Case, found {type(case).__name__}")
        if precision is not None:
            if precision not in ("float", "double"):
                raise ValueError(f"precision: '{precision}' is neither 'float' nor 'double'")
            case = case.copy().set("numerics.precision", f'"{precision}"')
        self.case: Case = case
        self._s = _shallows.Simulation(case._c, backend, 0 if threads is None else int(threads))

    def advance(self, t: float) -> "Simulation":
        """Advances to time ``t`` (s) exactly, the last step shortened to land on it; returns self."""
        self._s.advance(float(t))
        return self

    def step(self, n: int = 1) -> "Simulation":
        """Takes ``n`` CFL steps (only the case's end time caps them); returns self."""
        self._s.step(int(n))
        return self

    def run(self, progress: Optional[Callable[[float, float], None]] = None, quiet: bool = True) -> dict:
        """Runs the case to its end, writing the outputs and summary.json as ``shallows run`` does.

        The simulation must not have advanced yet. ``progress(t, dt)`` is called after every batch of
        steps (what it raises ends the run). Ctrl-C writes a checkpoint, closes the outputs and raises
        ``KeyboardInterrupt``, as the command line does. Returns the main numbers of summary.json; afterwards
        the simulation holds the final state.
        """
        return dict(self._s.run(progress, quiet))

    @property
    def time(self) -> float:
        """The simulated time reached (s)."""
        return float(self._s.time)

    @property
    def dt(self) -> float:
        """The length of the last step taken (s); 0 before the first."""
        return float(self._s.dt)

    @property
    def steps(self) -> int:
        """The steps taken so far."""
        return int(self._s.steps)

    @property
    def volume(self) -> float:
        """The water volume (m^3) over the active cells."""
        return float(self._s.volume)

    @property
    def backend(self) -> str:
        """The backend that runs: its name as summary.json gives it."""
        return str(self._s.backend)

    @property
    def h(self) -> np.ndarray:
        """Water depth (m), a copy; assigning loads a new depth into the backend."""
        return self._s.field("h")

    @h.setter
    def h(self, value: np.ndarray) -> None:
        self._s.set_field("h", value)

    @property
    def hu(self) -> np.ndarray:
        """Unit discharge along x (m^2/s), a copy; assignable."""
        return self._s.field("hu")

    @hu.setter
    def hu(self, value: np.ndarray) -> None:
        self._s.set_field("hu", value)

    @property
    def hv(self) -> np.ndarray:
        """Unit discharge along y (m^2/s), a copy; assignable."""
        return self._s.field("hv")

    @hv.setter
    def hv(self, value: np.ndarray) -> None:
        self._s.set_field("hv", value)

    @property
    def eta(self) -> np.ndarray:
        """Free surface h + z (m), a copy; assigning sets h = max(eta - z, 0), discharges kept."""
        return self._s.field("eta")

    @eta.setter
    def eta(self, value: np.ndarray) -> None:
        self._s.set_field("eta", value)

    @property
    def z(self) -> np.ndarray:
        """Bed elevation (m); NaN marks an inactive cell. Assignable on the CPU backends between steps (a breach,
        a dredged channel): the depths stay (so does the volume; the surface moves with the bed: set ``eta``
        after it to keep the surface), the inactive cells stay inactive, and the steps that follow are those of
        a run started on the new bed from this state."""
        return self._s.bed()

    @z.setter
    def z(self, value: np.ndarray) -> None:
        self._s.set_bed(value)

    @property
    def max_h(self) -> np.ndarray:
        """Largest depth reached so far (m)."""
        return self._s.maximum("max_h")

    @property
    def max_speed(self) -> np.ndarray:
        """Largest speed reached so far (m/s)."""
        return self._s.maximum("max_speed")

    @property
    def arrival_time(self) -> np.ndarray:
        """First time (s) the depth exceeded ``output.arrival_threshold``; NaN where it never did."""
        return self._s.maximum("arrival_time")

    def gauges(self) -> dict:
        """The state now in the cell of each gauge of ``output.gauges``: ``{name: {"x", "y", "cell", "h", "hu",
        "hv", "eta"}}`` (the cells gauges.csv samples; only those cells are copied out of the backend). ``cell``
        indexes the flattened arrays (``sim.h.flat[cell]``): row-major on a grid, the file's element on a mesh."""
        return {name: dict(values) for name, values in self._s.gauges().items()}

    def scalar(self, name: str) -> np.ndarray:
        """A passive scalar's concentration (its units), a copy."""
        return self._s.field(name)

    def __getitem__(self, name: str) -> np.ndarray:
        """A field by name: ``h``, ``hu``, ``hv``, ``eta``, ``z``, the maxima, or a passive scalar."""
        if name == "z":
            return self.z
        if name in ("max_h", "max_speed", "arrival_time"):
            return self._s.maximum(name)
        return self._s.field(name)

    def to_xarray(self) -> "xarray.Dataset":
        """The current state, bed and maxima as an ``xarray.Dataset``.

        On a grid the dims are ``y``, ``x`` with the cell centres as coordinates (``y`` south first); on a
        mesh the dim is ``face`` (the mesh file's element order) with ``x``, ``y`` the centroids. Units and
        long names in each variable's attrs; the time, step count and case name in the dataset's.
        """
        import xarray as xr

        info = self._s.info()
        x, y = self._s.centres()
        names = ["h", "hu", "hv", "eta", "z", "max_h", "max_speed", "arrival_time"]
        names += list(info["scalars"])
        dims, coords = _space(info, x, y)
        data = {}
        for n in names:
            units, long_name = _UNITS.get(n, ("1", f"concentration of {n}"))
            data[n] = (dims, self[n], {"units": units, "long_name": long_name})
        attrs = {"time": self.time, "time_units": "s", "steps": self.steps, "case": info["name"],
                 "backend": self.backend, "precision": info["precision"]}
        if info["crs_wkt"]:
            attrs["crs_wkt"] = info["crs_wkt"]
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def __repr__(self) -> str:
        return f"<shallows.Simulation {self.case.name!r} on {self.backend}: t = {self.time:g} s, {self.steps} steps>"


def _member_rows(members: Members) -> list:
    """The members as a list of dicts, from a list of dicts or a dict of equal-length arrays; NaN leaves a key."""
    if isinstance(members, Mapping):
        columns: dict = {}
        for key, column in members.items():
            if not isinstance(key, str):
                raise TypeError(f"members: keys must be strings such as 'physics.manning', found {key!r}")
            if isinstance(column, np.ndarray):
                if column.ndim == 0:
                    raise ValueError(f"members['{key}']: expected one value per member (1-D), or a field per "
                                     f"member stacked along the first axis, found a 0-D array")
                # 1-D: a value per member; more: a field per member along the first axis.
                column = column.tolist() if column.ndim == 1 else list(column)
            elif isinstance(column, (str, bytes, Mapping)) or not isinstance(column, Sequence):
                raise TypeError(f"members['{key}']: expected an array or list of one value per member, found "
                                f"{type(column).__name__}")
            columns[key] = list(column)
        if not columns:
            raise ValueError("members: no key (e.g. {'physics.manning': [0.02, 0.04]})")
        lengths = {key: len(column) for key, column in columns.items()}
        if len(set(lengths.values())) != 1:
            raise ValueError("members: the arrays differ in length (one value per member): " +
                             ", ".join(f"'{k}' has {n}" for k, n in lengths.items()))
        count = next(iter(lengths.values()))
        rows = [{key: column[m] for key, column in columns.items()} for m in range(count)]
    elif isinstance(members, Sequence) and not isinstance(members, (str, bytes)):
        rows = []
        for m, row in enumerate(members):
            if not isinstance(row, Mapping):
                raise TypeError(f"members[{m}]: expected a dict of key: value, found {type(row).__name__}")
            rows.append(dict(row))
    else:
        raise TypeError(f"members: expected a list of dicts or a dict of arrays, found {type(members).__name__}")
    if not rows:
        raise ValueError("members: no member")
    # NaN: the member leaves the key at the case's value (a dict of arrays where members vary different keys).
    return [{k: (v.item() if isinstance(v, np.generic) else v) for k, v in row.items()
             if not (isinstance(v, (float, np.floating)) and np.isnan(v))} for row in rows]


def _member_arrays(rows: list) -> list:
    """Takes the numpy arrays (fields given per cell) out of the member rows: each goes to the member's
    ``{key: array}``, and its key in the row holds the text the case reader puts at an array's key."""
    arrays = []
    for row in rows:
        own = {k: v for k, v in row.items() if isinstance(v, np.ndarray) and v.ndim > 0}
        for k in own:
            row[k] = _shallows.array_placeholder
        arrays.append(own)
    return arrays


class Ensemble:
    """A study of many runs of a case ("members"), each the case with a few keys set, run as ``shallows run``
    runs a case file's ``[ensemble]`` (docs/ensembles.md).

    The members are written as the case's ``[ensemble]`` table and read by the library's reader, so their keys
    are checked as ``--set`` checks them before anything runs; each member's case is the case (its ``set``
    calls and arrays included), then the member's values. :meth:`run` runs them into
    ``output_dir/members/NNNN/`` with the usual outputs and writes ``ensemble.nc`` and ``ensemble.csv``; a member
    done already is not run again. :meth:`to_xarray` gives every member's maxima with a ``member`` dimension,
    the member values as coordinates, and the statistics over the members.

    Example::

        case = shallows.Case.from_toml("cases/s000-t1/case.toml")
        ens = shallows.Ensemble(case, members={"physics.manning": [0.02, 0.03, 0.05]})
        ens.run(jobs=2)
        ds = ens.to_xarray()            # ds.max_h: (member, y, x); ds["physics.manning"]: (member,)
    """

    def __init__(self, case: Case, members: Optional[Members] = None,
                 thresholds: Optional[Sequence[float]] = None,
                 percentiles: Optional[Sequence[float]] = None) -> None:
        """The members of ``case`` (a copy: what is set on ``case`` afterwards does not reach them).

        members: a list of dicts (``[{"physics.manning": 0.02}, {"physics.manning": 0.04, "weight": 2}]``) or a
        dict of equal-length arrays or lists (``{"physics.manning": np.array([0.02, 0.04])}``), keys as
        :meth:`Case.set` takes them and values as one value each (numbers, strings, expressions, dicts such as
        ``{"file": "dem2.tif"}``); ``weight`` (> 0, default 1) weighs a member in the statistics; NaN leaves a
        key at the case's value. A field key (``bathymetry.z``, ``physics.manning``, ``initial.eta``, ...) also
        takes a numpy array per member, as :meth:`Case.set` takes it (shape ``(ny, nx)`` or ``(cells,)``): in a
        list of dicts, or in a dict of arrays as a list of arrays or one array of the members' fields stacked
        along its first axis (``(members, ny, nx)``); the member's value in the tables is then
        ``"<values per cell>"``. None: the case file's own ``[ensemble]`` (members, product or sample).
        thresholds: depths (m) of the exceedance maps (default ``[0.1, 0.5, 1.0]``); percentiles: of max depth
        and speed (default ``[10, 50, 90]``), both increasing. A bad key or value raises :class:`CaseError`
        naming the member and the key.
        """
        if not isinstance(case, Case):
            raise TypeError(f"Ensemble: expected a shallows.Case, found {type(case).__name__}")
        table: dict = {}
        self._arrays: list = []
        if members is not None:
            table["members"] = _member_rows(members)
            self._arrays = _member_arrays(table["members"])
        for name, values in (("thresholds", thresholds), ("percentiles", percentiles)):
            if values is not None:
                table[name] = [float(v) for v in np.asarray(values, dtype=float).ravel()]
        self.case: Case = case.copy()
        self._e = _shallows.Ensemble(self.case._c, table or None, self._arrays if any(self._arrays) else None)

    def __len__(self) -> int:
        return len(self._e)

    @property
    def keys(self) -> list:
        """The keys the members set, sorted."""
        return list(self._e.keys)

    @property
    def members(self) -> dict:
        """The member table as the library read it: ``{key: array per member}`` with ``"weight"``; a number
        column as floats (NaN where a member leaves the case's value), another as strings ("" where left)."""
        return {k: np.asarray(v) for k, v in self._e.members().items()}

    def member_case(self, member: int) -> Case:
        """Member ``member``'s case (0-based): the case, then the member's values, as the ensemble runs it."""
        c = self.case.copy()
        own = self._arrays[int(member)] if int(member) < len(self._arrays) else {}
        for o in self._e.overrides(int(member)):
            key, value = o.split("=", 1)
            if key not in own:
                c.set(key, value)
        for key, value in own.items():
            c.set(key, value)
        return c

    @property
    def output_dir(self) -> Path:
        """The folder of the last :meth:`run` (else the case's ``output.dir``)."""
        d = self._e.output_dir
        return Path(d) if d else self.case.output_dir

    def run(self, jobs: int = 1, threads: Optional[int] = None, backend: str = "cpu",
            output: Optional[PathLike] = None, quiet: bool = True) -> dict:
        """Runs the members (those done already in ``output`` are skipped) and keeps their results.

        jobs: members side by side on the CPU, each on ``threads / jobs`` threads (threads: default all
        cores); backend ``"cpu"``, ``"cuda"`` (members one after another) or ``"auto"``; output: the folder
        (default: the case's ``output.dir``). A member that fails is reported in the results and the others go
        on. Ctrl-C stops the members and raises ``KeyboardInterrupt`` (a rerun goes on). Returns the counts
        ``members``, ``ran``, ``skipped``, ``failed`` and the ``output_dir``.
        """
        out = os.fspath(output) if output is not None else ""
        d = dict(self._e.run(Path(out), int(jobs), 0 if threads is None else int(threads), str(backend),
                             bool(quiet)))
        d["output_dir"] = Path(d["output_dir"])
        return d

    @property
    def dataset(self) -> "xarray.Dataset":
        """The results of the last :meth:`run` as an ``xarray.Dataset`` (see :meth:`to_xarray`)."""
        return self.to_xarray()

    def to_xarray(self) -> "xarray.Dataset":
        """The results of the last :meth:`run` as an ``xarray.Dataset``.

        Dims ``member`` and the case's space (``y``, ``x`` on a grid, ``face`` on a mesh in the file's element
        order), ``threshold`` and ``percentile``. Coordinates: ``member`` (0-based), each varied key (named by
        the key, e.g. ``physics.manning``: floats with NaN where a member leaves the case's value, else
        strings) and ``weight`` over ``member``. Per member: ``max_h``, ``max_speed``, ``arrival_time`` (NaN for
        a failed member), ``ok``, ``message`` (why it failed), ``initial_volume``, ``final_volume``,
        ``mass_balance_residual``, ``steps``, ``wall_seconds``. Over the members that ran, weighted, as
        ``ensemble.nc`` holds them (docs/ensembles.md): ``exceedance(threshold, ...)``, ``max_h_mean``,
        ``max_h_min``, ``max_h_max``, ``max_h_percentile(percentile, ...)``, the same for ``max_speed``,
        ``arrival_time_earliest``, ``arrival_time_median``.
        """
        import xarray as xr

        r = self._e.results()
        info = self.case._c.info()
        x, y = self.case._c.centres()
        space, coords = _space(info, x, y)
        n = len(self)
        coords["member"] = (("member",), np.arange(n))
        for key, column in self._e.members().items():
            coords[key] = (("member",), np.asarray(column))
        coords["threshold"] = (("threshold",), np.asarray(r["thresholds"], dtype=float), {"units": "m"})
        coords["percentile"] = (("percentile",), np.asarray(r["percentiles"], dtype=float), {"units": "%"})
        data: dict = {}
        for name in ("max_h", "max_speed", "arrival_time"):
            units, long_name = _UNITS[name]
            data[name] = (("member",) + space, r[name], {"units": units, "long_name": long_name})
        data["ok"] = (("member",), np.asarray(r["ok"], dtype=bool), {"long_name": "the member ran to its end"})
        data["message"] = (("member",), np.asarray(r["message"], dtype=str), {"long_name": "why the member failed"})
        for name, units in (("initial_volume", "m3"), ("final_volume", "m3"), ("mass_balance_residual", "1"),
                            ("steps", "1"), ("wall_seconds", "s")):
            data[name] = (("member",), r[name], {"units": units})
        if "exceedance" in r:
            data["exceedance"] = (("threshold",) + space, r["exceedance"],
                                  {"units": "1", "long_name": "weight of the members whose max depth exceeds the "
                                                              "threshold, over the total"})
            for field in ("max_h", "max_speed"):
                units, long_name = _UNITS[field]
                for stat in ("mean", "min", "max"):
                    data[f"{field}_{stat}"] = (space, r[f"{field}_{stat}"],
                                               {"units": units, "long_name": f"{stat} over the members: {long_name}"})
                data[f"{field}_percentile"] = (("percentile",) + space, r[f"{field}_percentile"],
                                               {"units": units, "long_name": f"percentile over the members: "
                                                                             f"{long_name}"})
            for stat in ("earliest", "median"):
                data[f"arrival_time_{stat}"] = (space, r[f"arrival_time_{stat}"],
                                                {"units": "s", "long_name": f"{stat} arrival time over the members"})
        attrs = {"case": info["name"], "members": n, "form": self._e.form,
                 "output_dir": os.fspath(self.output_dir)}
        return xr.Dataset(data, coords=coords, attrs=attrs)

    def __repr__(self) -> str:
        return f"<shallows.Ensemble {self.case.name!r}: {len(self)} members over {', '.join(self.keys)}>"


def write_mesh(path: PathLike, nodes: np.ndarray, cells: np.ndarray,
               boundaries: Optional[Mapping[str, np.ndarray]] = None, binary: bool = False) -> Path:
    """Writes a mesh given as arrays to a Gmsh MSH 4.1 file, for a case's ``[mesh] file``; returns the path.

    nodes: shape ``(n, 2)`` (x, y) or ``(n, 3)`` (x, y, z: what ``bathymetry.z = "mesh"`` reads). cells:
    shape ``(m, 3)`` (triangles) or ``(m, 4)`` (quadrilaterals; -1 in the last column makes a row a
    triangle) of node indices, counter-clockwise or not. boundaries: the named boundary groups, each an array of
    shape ``(k, 2)`` of node index pairs (the edges of the group), named in the case's ``[boundary]``. The
    reader checks the mesh when a case reads it; with ``mesh.ordering = "file"`` the case's cells keep the
    order of ``cells``.
    """
    p = Path(path)
    _shallows.write_mesh(p, nodes, cells, dict(boundaries or {}), binary)
    return p


def open_output(dir: PathLike) -> "xarray.Dataset":
    """A run's ``output.nc`` (CF; UGRID on meshes) as an ``xarray.Dataset``, read with the netCDF4 engine.

    ``dir`` is the output folder (or the file itself). Dims ``time``, ``y``, ``x`` on a grid, ``time``,
    ``nMesh_face`` on a mesh; the CRS, where the case has one, in the ``crs`` variable.
    """
    import xarray as xr

    p = Path(dir)
    f = p / "output.nc" if p.is_dir() else p
    if not f.is_file():
        raise FileNotFoundError(f"{f}: no output.nc (was the run's output.format without \"netcdf\"?)")
    return xr.open_dataset(f, engine="netcdf4")


def read_summary(dir: PathLike) -> dict:
    """A run's ``summary.json`` (in output folder ``dir``) as a dict."""
    p = Path(dir)
    f = p / "summary.json" if p.is_dir() else p
    if not f.is_file():
        raise FileNotFoundError(f"{f}: no summary.json (the run did not end?)")
    with open(f, encoding="utf-8") as stream:
        return json.load(stream)
