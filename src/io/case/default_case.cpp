// SPDX-License-Identifier: MIT
// The built-in case, run when no case file is given.
#include "shallows/io/case.hpp"

namespace shallows::io {

std::string_view default_case_toml() {
  static constexpr std::string_view text = R"toml(# shallows built-in case: a dam break onto a dry, gently rising floodplain
# with a round hill. The reservoir behind the dam line x = 8 m has its
# surface at 2 m; the dam is gone at t = 0, so the water floods east over
# dry ground, climbs the slope and splits around the hill.
# Every key is described in docs/case-file.md.

[domain]
nx = 200
ny = 100
x = [0.0, 40.0]   # m
y = [0.0, 20.0]   # m

[bathymetry]
# Bed rising 2 cm per metre towards +x, with a hill 1 m high at (24, 10).
z = "0.02 * x + exp(-((x - 24)^2 + (y - 10)^2) / 8)"

[initial]
# Water surface at 2 m behind the dam; downstream eta = 0 lies below the
# bed (z >= 0.16 m there), so those cells start dry.
eta = "x < 8 ? 2 : 0"

[boundary]
west = "wall"
south = "wall"
north = "wall"
east = "open"

[physics]
g = 9.81
manning = 0.02         # s/m^(1/3)
dry_tolerance = 1e-6   # m

[numerics]
scheme = "roe1"
cfl = 0.9
precision = "double"

[time]
end = 6.0             # s
output_every = 1.0    # s

[output]
dir = "output"
format = ["netcdf", "vtk", "png"]
arrival_threshold = 0.01   # m
gauges = [
  { name = "downstream", x = 14.0, y = 10.0 },
  { name = "behind_hill", x = 30.0, y = 10.0 },
]
)toml";
  return text;
}

} // namespace shallows::io
