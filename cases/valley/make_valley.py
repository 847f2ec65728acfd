#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the inputs of the valley example (Python 3 standard library only).

    cd cases/valley && python3 make_valley.py

A synthetic valley 2 km long (west to east, downhill) and 1.5 km wide at 10 m
cells, in UTM zone 33N (EPSG:32633), south-west corner (500000, 5200000):

  dem.asc            bed elevation (m), ESRI ASCII, 200 x 150 cells
  dem.tif            the same grid as a GeoTIFF with its coordinate system
                     (made by gdal_translate when GDAL is installed)
  manning.asc        Manning n: 0.03 in the river channel, 0.08 on the land
  initial_depth.asc  the river at its base flow: 0.25 m on the channel bed, dry elsewhere
  hydrograph.csv     the river entering at the west side (m^3/s)
  hyetograph.csv     the storm on the whole valley (mm/h)

Every value is computed from the constants below, so running the script again
gives the same files.
"""
import math
import shutil
import subprocess
import sys
from pathlib import Path

NX, NY, CELL = 200, 150, 10.0          # cells along x (down-valley) and y, cell size (m)
X0, Y0 = 500000.0, 5200000.0           # south-west corner, UTM 33N (m)
EPSG = 32633

FLOOR_WEST = 320.0                     # valley floor on its axis at the west side (m)
FLOOR_SLOPE = 0.002                    # down-valley slope: 4 m over 2 km
AXIS = 750.0                           # valley axis, m north of Y0
FLOODPLAIN = 350.0                     # half-width of the flat floodplain (m)
FLOODPLAIN_SLOPE = 0.002               # gentle rise of the floodplain away from the axis
SIDE_SLOPE, SIDE_CURVE = 0.12, 2e-4    # valley sides: z rises by s*d + c*d^2 beyond the floodplain (a U)
MEANDER_AMPLITUDE = 120.0              # channel centre line: AXIS + A sin(2 pi x / L) (m)
MEANDER_LENGTH = 1000.0
CHANNEL_HALF_BED = 20.0                # flat channel bed within 20 m of the centre line (measured along y)
CHANNEL_HALF_TOP = 30.0                # banks from 20 m to 30 m
CHANNEL_DEPTH = 1.5                    # channel bed below the valley floor (m)
BASE_DEPTH = 0.25                      # river depth at the base flow of 5 m^3/s (Manning, n = 0.03, S ~ 0.0017)
N_CHANNEL, N_LAND = 0.03, 0.08


def centre_line(x):
    return AXIS + MEANDER_AMPLITUDE * math.sin(2.0 * math.pi * x / MEANDER_LENGTH)


def ground(x, y):
    """The land without the channel: a floor falling down-valley, a U across."""
    floor = FLOOR_WEST - FLOOR_SLOPE * x
    a = abs(y - AXIS)
    z = floor + FLOODPLAIN_SLOPE * min(a, FLOODPLAIN)
    if a > FLOODPLAIN:
        d = a - FLOODPLAIN
        z += SIDE_SLOPE * d + SIDE_CURVE * d * d
    return z


def bed(x, y):
    """Ground with the channel cut in; the channel bed falls steadily down-valley (no pools)."""
    z = ground(x, y)
    channel_bed = FLOOR_WEST - FLOOR_SLOPE * x - CHANNEL_DEPTH
    d = abs(y - centre_line(x))
    if d <= CHANNEL_HALF_BED:
        return channel_bed
    if d < CHANNEL_HALF_TOP:
        s = (d - CHANNEL_HALF_BED) / (CHANNEL_HALF_TOP - CHANNEL_HALF_BED)
        return channel_bed + s * (z - channel_bed)
    return z


def in_channel(x, y):
    return abs(y - centre_line(x)) < CHANNEL_HALF_TOP


def write_asc(path, value, fmt):
    """ESRI ASCII grid of value(x, y) at the cell centres (local metres), first row northernmost."""
    lines = [f"ncols {NX}", f"nrows {NY}", f"xllcorner {X0:.1f}", f"yllcorner {Y0:.1f}",
             f"cellsize {CELL:g}", "NODATA_value -9999"]
    for j in reversed(range(NY)):
        y = (j + 0.5) * CELL
        lines.append(" ".join(fmt.format(value((i + 0.5) * CELL, y)) for i in range(NX)))
    path.write_text("\n".join(lines) + "\n")


def write_series(path, header, rows):
    path.write_text(header + "\n" + "".join(f"{t:g},{v:g}\n" for t, v in rows))


def main():
    here = Path(__file__).resolve().parent
    # Elevations on a 1/128 m step: exact in float32, so dem.tif holds the same numbers as dem.asc.
    write_asc(here / "dem.asc", lambda x, y: round(bed(x, y) * 128) / 128, "{:.10g}")
    write_asc(here / "manning.asc", lambda x, y: N_CHANNEL if in_channel(x, y) else N_LAND, "{:g}")
    write_asc(here / "initial_depth.asc",
              lambda x, y: BASE_DEPTH if abs(y - centre_line(x)) <= CHANNEL_HALF_BED else 0.0, "{:g}")
    # The river: 5 m^3/s for 30 min, up to 150 m^3/s in 1 h, back to 5 m^3/s in 3 h, on to 6 h.
    write_series(here / "hydrograph.csv", "time_s,discharge_m3s",
                 [(0, 5), (1800, 5), (5400, 150), (16200, 5), (21600, 5)])
    # The storm: 0 -> 40 mm/h at 1 h -> 0 at 2 h (40 mm in all), then dry until 6 h.
    write_series(here / "hyetograph.csv", "time_s,rain_mm_per_h",
                 [(0, 0), (3600, 40), (7200, 0), (21600, 0)])

    if shutil.which("gdal_translate") is None:
        print("make_valley.py: gdal_translate not found; dem.tif not rewritten (dem.asc is the same grid)",
              file=sys.stderr)
        return
    (here / "dem.tif").unlink(missing_ok=True)
    subprocess.run(["gdal_translate", "-q", "-a_srs", f"EPSG:{EPSG}", "-of", "GTiff", "dem.asc", "dem.tif"],
                   cwd=here, check=True)


if __name__ == "__main__":
    main()
