"""The overhead of Python: the same case run by `shallows run` and by `shallows.Simulation.run()`, alternately,
each timed from outside (process start to end for the command line; Case, Simulation and run for Python, the
interpreter's start and `import shallows` left out and reported apart) and by its own summary.json (the time
loop alone, stepping_seconds); then the time to copy the state of a large grid to numpy.

    PYTHONPATH=build/python /usr/bin/python3 tools/python_overhead.py [--backend cpu|cuda] [--n 512] [--end 2]
        [--repeat 3] [--copy-n 8192] [--format netcdf|vtk|ascii]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import List, Optional, Sequence

ROOT = Path(__file__).resolve().parents[1]
# A circular dam break on n x n cells, all wet, walls: every cell works every step.
CASE = """name = "python-overhead"
[domain]
nx = {n}
ny = {n}
x = [0.0, 100.0]
y = [0.0, 100.0]
[bathymetry]
z = 0.0
[initial]
eta = "(x-50)^2 + (y-50)^2 < 400 ? 2 : 1"
[time]
end = {end}
output_every = {end}
[output]
format = ["{fmt}"]
"""


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Prints the wall times of each run, their medians and the Python overhead."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    parser.add_argument("--n", type=int, default=512, help="cells along x and y")
    parser.add_argument("--end", type=float, default=2.0, help="simulated seconds")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0: all cores)")
    parser.add_argument("--cli", type=Path, default=ROOT / "build" / "shallows")
    parser.add_argument("--format", default="netcdf", help="the case's output format (a build without NetCDF: vtk)")
    parser.add_argument("--copy-n", type=int, default=0, help="also time a copy of an n x n state to numpy")
    args = parser.parse_args(argv)

    # output.nc's history holds the time of the run: the same in both, so that their bytes can be compared.
    os.environ["SOURCE_DATE_EPOCH"] = "0"
    t0 = time.perf_counter()
    import shallows

    import_seconds = time.perf_counter() - t0
    work = Path(tempfile.mkdtemp(prefix="shallows-overhead-"))
    toml = work / "case.toml"
    toml.write_text(CASE.format(n=args.n, end=args.end, fmt=args.format))
    cli_times: List[float] = []
    py_times: List[float] = []
    cli_loop: List[float] = []
    py_loop: List[float] = []
    steps = 0
    for k in range(args.repeat):
        command = [str(args.cli), "run", str(toml), "-q", "-o", str(work / "cli"), "--backend", args.backend]
        if args.threads:
            command += ["--threads", str(args.threads)]
        start = time.perf_counter()
        subprocess.run(command, check=True)
        cli_times.append(time.perf_counter() - start)
        cli_loop.append(json.loads((work / "cli" / "summary.json").read_text())["stepping_seconds"])

        start = time.perf_counter()
        case = shallows.Case.from_toml(toml)
        case.output_dir = work / "python"
        sim = shallows.Simulation(case, backend=args.backend, threads=args.threads or None)
        summary = sim.run()
        py_times.append(time.perf_counter() - start)
        steps = summary["steps"]
        py_loop.append(summary["stepping_seconds"])
        del sim
        print(f"run {k + 1}: shallows run {cli_times[-1]:.3f} s (time loop {cli_loop[-1]:.3f} s), "
              f"Python {py_times[-1]:.3f} s (time loop {py_loop[-1]:.3f} s)", flush=True)
    # Every output file but summary.json (which holds wall times) the same bytes.
    files = sorted(f.relative_to(work / "cli") for f in (work / "cli").rglob("*") if f.is_file())
    same = bool(files) and all((work / "python" / f).is_file() and (work / "cli" / f).read_bytes() ==
                               (work / "python" / f).read_bytes() for f in files if f.name != "summary.json")
    cli, py = statistics.median(cli_times), statistics.median(py_times)
    cl, pl = statistics.median(cli_loop), statistics.median(py_loop)
    print(f"{args.n}x{args.n} cells, {steps} steps to t = {args.end:g} s on {args.backend}; the output files the same bytes: {same}")
    print(f"median of {args.repeat}: shallows run {cli:.3f} s, Python {py:.3f} s: Python {100 * (py / cli - 1):+.1f}%"
          f" (import shallows: {import_seconds:.3f} s, once per process)")
    print(f"time loops (summary.json): shallows run {cl:.3f} s, Python {pl:.3f} s: Python {100 * (pl / cl - 1):+.1f}%")

    if args.copy_n:
        n = args.copy_n
        case = shallows.Case({"domain": {"nx": n, "ny": n, "x": [0.0, 1.0], "y": [0.0, 1.0]},
                              "initial": {"h": 1.0}, "time": {"end": 1.0}})
        sim = shallows.Simulation(case, backend=args.backend, threads=args.threads or None)
        sim.h  # the first copy allocates
        copies = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            sim.h
            copies.append(time.perf_counter() - start)
        print(f"copy of h ({n}x{n}, to a float64 numpy array) on {args.backend}: median {statistics.median(copies):.3f} s"
              f" of {args.repeat}")


if __name__ == "__main__":
    main(sys.argv[1:])
