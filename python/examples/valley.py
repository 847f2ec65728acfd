"""The valley example (cases/valley: a river flood and a storm on a synthetic valley) run in-process: on the
GPU where one answers, on the CPU otherwise; its largest depth mapped to a PNG.

    PYTHONPATH=build/python /usr/bin/python3 python/examples/valley.py [--end 14400] [--out valley_max_h.png]
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Optional, Sequence

import shallows

CASE = Path(__file__).resolve().parents[2] / "cases" / "valley" / "case.toml"


def simulate(end: Optional[float] = None, output_dir: Path = Path("output/valley-python")) -> shallows.Simulation:
    """Runs the valley case to `end` (default: its 4 h) with output.nc in `output_dir`, on the GPU where one
    answers."""
    case = shallows.Case.from_toml(CASE)
    if end is not None:
        case.set("time.end", end).set("time.output_every", end / 4)
    case.set("output.format", '["netcdf"]')
    case.output_dir = output_dir
    backend = "cuda" if shallows.cuda_available() else "cpu"
    sim = shallows.Simulation(case, backend=backend)
    summary = sim.run(progress=lambda t, dt: None)
    print(f"{summary['steps']} steps to t = {summary['t_end']:g} s on {summary['backend']} "
          f"in {summary['wall_seconds']:.2f} s")
    return sim


def plot(sim: shallows.Simulation, out: Path) -> Path:
    """The largest depth over the bed's contours, to a PNG (matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ds = sim.to_xarray()
    fig, ax = plt.subplots(figsize=(8, 6), constrained_layout=True)
    ds["max_h"].where(ds["max_h"] > 0.01).plot(ax=ax, cmap="Blues", vmin=0, cbar_kwargs={"label": "largest depth (m)"})
    ds["z"].plot.contour(ax=ax, levels=10, colors="0.4", linewidths=0.5)
    ax.set_title(f"valley: largest depth over {sim.time / 3600:.2g} h ({sim.backend})")
    ax.set_aspect("equal")
    fig.savefig(out, dpi=90)
    plt.close(fig)
    print(f"wrote {out}")
    return out


def main(argv: Optional[Sequence[str]] = None) -> Path:
    """Runs the valley case (outputs in --output-dir), plots its maximum depth; returns the PNG's path."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--end", type=float, default=None, help="simulated seconds (default: the case's 4 h)")
    parser.add_argument("--out", type=Path, default=Path("valley_max_h.png"), help="the PNG to write")
    parser.add_argument("--output-dir", type=Path, default=Path("output/valley-python"),
                        help="where the run's output.nc and summary.json go")
    args = parser.parse_args(argv)
    return plot(simulate(args.end, args.output_dir), args.out)


if __name__ == "__main__":
    main()
