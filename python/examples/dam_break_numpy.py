"""A dam break built entirely from numpy arrays: the bed, the reservoir and a rough strip are arrays on the
grid; the run is stepped from Python and its depth plotted with matplotlib to a PNG.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/dam_break_numpy.py [--end 4] [--out dam_break.png]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import numpy as np

import shallows


def build_case(nx: int = 200, ny: int = 100) -> shallows.Case:
    """A 40 m x 20 m basin: a 2 m reservoir behind a dam with a 4 m breach, a mound downstream, a rough strip."""
    x = (np.arange(nx) + 0.5) * 40.0 / nx  # cell centres (m)
    y = (np.arange(ny) + 0.5) * 20.0 / ny
    X, Y = np.meshgrid(x, y)  # (ny, nx), row 0 the southern row
    bed = 0.4 * np.exp(-((X - 28.0) ** 2 + (Y - 6.0) ** 2) / 8.0)
    dam = (np.abs(X - 15.0) < 0.5) & (np.abs(Y - 10.0) > 2.0)
    bed[dam] = 3.0  # the dam's walls, above the water
    eta = np.where(X < 15.0, 2.0, 0.0)
    manning = np.where(np.abs(Y - 16.0) < 2.0, 0.08, 0.02)
    case = shallows.Case({
        "name": "dam-break-numpy",
        "domain": {"nx": nx, "ny": ny, "x": [0.0, 40.0], "y": [0.0, 20.0]},
        "bathymetry": {"z": bed},
        "initial": {"eta": eta},
        "physics": {"manning": manning},
        "boundary": {"west": "wall", "east": "open", "south": "wall", "north": "wall"},
        "time": {"end": 4.0},
    })
    return case


def simulate(end: float = 4.0, nx: int = 200) -> shallows.Simulation:
    """Builds the case on nx x nx/2 cells and steps it to `end` from Python, printing the volume on the way."""
    case = build_case(nx, nx // 2).set("time.end", end)
    sim = shallows.Simulation(case, backend="auto")
    for t in np.linspace(0.0, end, 5)[1:]:
        sim.advance(t)
        print(f"t = {sim.time:5.2f} s  steps {sim.steps:5d}  volume {sim.volume:8.2f} m^3")
    return sim


def plot(sim: shallows.Simulation, out: Path) -> Path:
    """The depth at the end and the largest depth, over the bed's contours, to a PNG (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = sim.to_xarray()
    fig, axes = plt.subplots(2, 1, figsize=(8, 7), constrained_layout=True)
    ds["h"].where(ds["h"] > 1e-3).plot(ax=axes[0], cmap="Blues", vmin=0)
    axes[0].set_title(f"depth at t = {sim.time:g} s ({sim.backend})")
    ds["max_h"].where(ds["max_h"] > 1e-3).plot(ax=axes[1], cmap="viridis", vmin=0)
    axes[1].set_title("largest depth")
    for ax in axes:
        ds["z"].plot.contour(ax=ax, levels=[0.1, 0.3, 2.9], colors="k", linewidths=0.6)
        ax.set_aspect("equal")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    print(f"wrote {out}")
    return out


def main(argv: Optional[Sequence[str]] = None) -> Path:
    """Runs the dam break, plots the depth at the end and the largest depth; returns the PNG's path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=float, default=4.0, help="simulated seconds")
    parser.add_argument("--nx", type=int, default=200, help="cells along x (ny = nx / 2)")
    parser.add_argument("--out", type=Path, default=Path("dam_break.png"), help="the PNG to write")
    args = parser.parse_args(argv)
    return plot(simulate(args.end, args.nx), args.out)


if __name__ == "__main__":
    main()
