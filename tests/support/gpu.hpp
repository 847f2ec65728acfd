// SPDX-License-Identifier: MIT
#pragma once
// The GPU tests skip where no CUDA device is present (or the build has no
// CUDA backend); tools/gpu-check.sh checks that they do run on a GPU machine.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <string>

#include "shallows/solver/backend.hpp"

#define SHALLOWS_REQUIRE_GPU()                                                                        \
  do {                                                                                                \
    if (!shallows::cuda_available())                                                                  \
      GTEST_SKIP() << "no CUDA device (or a build without CUDA): GPU test skipped";                   \
  } while (0)

namespace shallows::test_support {

// A rank's halo box of `from` (whose state is `moved`), packed into host
// memory or, with `device`, into GPU memory (the buffers a CUDA-aware MPI
// reads and writes), and unpacked into `fresh`, an executor of the same
// problem still at its initial state: the box's cells arrive bit for bit
// and no other cell changes.
inline void expect_box_travels(Backend& from, const Fields& moved, Backend& fresh, const Grid& g, const CellBox& box,
                               bool device, const std::string& what) {
  Fields initial;
  fresh.read_state(initial);
  HaloEndpoint *out = from.halo(), *in = fresh.halo();
  GpuLinks *out_gpu = from.gpu_links(), *in_gpu = fresh.gpu_links();
  ASSERT_TRUE(out && in) << what;
  if (device) {
    ASSERT_TRUE(out_gpu && in_gpu) << what;
  }
  const std::size_t bytes = out->box_bytes(box);
  BoxBuffer buffer = device ? out_gpu->device_buffer(bytes) : out->host_buffer(bytes);
  ASSERT_TRUE(buffer) << what;
  if (device) {
    out_gpu->pack_box_device(box, buffer.get());
    in_gpu->unpack_box_device(box, buffer.get());
  } else {
    out->pack_box(box, buffer.get());
    in->unpack_box(box, buffer.get());
  }
  in->refresh_ghosts();
  Fields c;
  fresh.read_state(c);
  std::size_t inside = 0, outside_changed = 0;
  for (index_t j = 0; j < g.ny; ++j) {
    for (index_t i = 0; i < g.nx; ++i) {
      const auto k = static_cast<std::size_t>(j * g.nx + i);
      if (box.contains(i, j)) {
        inside += c.h[k] == moved.h[k] && c.hu[k] == moved.hu[k] && c.hv[k] == moved.hv[k];
      } else {
        outside_changed += c.h[k] != initial.h[k] || c.hu[k] != initial.hu[k] || c.hv[k] != initial.hv[k];
      }
    }
  }
  const std::string path = device ? ", GPU memory" : ", host memory";
  EXPECT_EQ(inside, static_cast<std::size_t>(box.cells())) << what << path;
  EXPECT_EQ(outside_changed, 0u) << what << path;
}

// SHALLOWS_CUDA_MESH_KERNEL set to `layout` (unset for nullptr) while the
// scope lasts: the CUDA mesh executor's cell loop layout, read when it is made.
class MeshLayoutScope {
 public:
  explicit MeshLayoutScope(const char* layout) {
    if (layout) {
      setenv("SHALLOWS_CUDA_MESH_KERNEL", layout, 1);
    } else {
      unsetenv("SHALLOWS_CUDA_MESH_KERNEL");
    }
  }
  MeshLayoutScope(const MeshLayoutScope&) = delete;
  MeshLayoutScope& operator=(const MeshLayoutScope&) = delete;
  ~MeshLayoutScope() { unsetenv("SHALLOWS_CUDA_MESH_KERNEL"); }
};

}  // namespace shallows::test_support

#ifdef SHALLOWS_HAVE_CUDA
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shallows/exec/cuda_backend.hpp"
#include "support/measures.hpp"

namespace shallows::test_support {

// A first-order problem on the CUDA executor twice: on its default (lagged)
// kernel and on the plain kernels, the reference the lagged one is held to.
struct KernelPair {
  std::unique_ptr<CudaBackend> lagged, plain;
};

inline KernelPair lagged_and_plain(const Problem& p, const BackendOptions& o) {
  CudaOptions plain_kernels;
  plain_kernels.kernel = "plain";
  return {make_cuda_backend(p, o, CudaOptions{}), make_cuda_backend(p, o, plain_kernels)};
}

// The state (each scalar's h c too) and the maxima of the pair, bit for bit.
inline void expect_same_bits(const KernelPair& k, const std::string& what) {
  Fields fa, fb;
  k.lagged->read_state(fa);
  k.plain->read_state(fb);
  Maxima ma, mb;
  k.lagged->read_maxima(ma);
  k.plain->read_maxima(mb);
  ASSERT_EQ(fa.hc.size(), fb.hc.size()) << what;
  std::vector<std::pair<std::string, std::pair<const std::vector<double>*, const std::vector<double>*>>> fields = {
      {"h", {&fa.h, &fb.h}},
      {"hu", {&fa.hu, &fb.hu}},
      {"hv", {&fa.hv, &fb.hv}},
      {"max_h", {&ma.max_h, &mb.max_h}},
      {"max_speed", {&ma.max_speed, &mb.max_speed}},
      {"arrival_time", {&ma.arrival_time, &mb.arrival_time}}};
  for (std::size_t s = 0; s < fa.hc.size(); ++s)
    fields.push_back({"h c of scalar " + std::to_string(s), {&fa.hc[s], &fb.hc[s]}});
  for (const auto& [name, pair] : fields) {
    EXPECT_TRUE(bitwise_equal(*pair.first, *pair.second)) << what << ", " << name;
  }
}

}  // namespace shallows::test_support
#endif
