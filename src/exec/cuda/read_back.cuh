// SPDX-License-Identifier: MIT
#pragma once
// Device fields back to the host as the Backend interface gives them, shared
// by the CUDA executors. The caller synchronises its stream first.
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_array.cuh"
#include "shallows/exec/host_fields.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/fields.hpp"

namespace shallows::gpu {

// One padded device field's interior, row-major, in double.
template <class T>
void download_interior(const Grid& g, const DeviceArray<T>& field, std::vector<double>& out) {
  const auto n = static_cast<std::size_t>(g.padded_size());
  const std::unique_ptr<T[]> buf(new T[n]);  // not zeroed: the copy fills it
  field.download(buf.get(), n);
  copy_interior(g, buf.get(), out);
}

// Row-major double values into the interior of one padded device field
// (the inverse of download_interior; the padding holds zeros).
template <class T>
void upload_interior(const Grid& g, const std::vector<double>& in, DeviceArray<T>& field) {
  std::vector<T> buf(static_cast<std::size_t>(g.padded_size()), T(0));
  copy_into_interior(g, in, buf.data());
  field.upload(buf.data(), buf.size());
}

// Padded h, hu, hv to the interior, row-major, in double.
template <class Real>
void download_state(const Grid& g, const DeviceArray<Real>& h, const DeviceArray<Real>& hu,
                    const DeviceArray<Real>& hv, Fields& out) {
  download_interior(g, h, out.h);
  download_interior(g, hu, out.hu);
  download_interior(g, hv, out.hv);
}

// The values of listed cells of padded fields: out[k] = field[offsets[k]].
template <class Real>
__global__ void gather_cells_kernel(const Real* __restrict__ field, const index_t* __restrict__ offsets,
                                    std::size_t n, Real* __restrict__ out) {
  const std::size_t k = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  if (k < n) out[k] = field[offsets[k]];
}

// Backend::read_cells for padded device fields: the listed interior cells
// (row-major numbers) of each field, in double, one small copy per field
// instead of the whole state. Keeps the last list's offsets on the device.
template <class Real>
class CellGather {
 public:
  std::vector<std::vector<double>> read(const Grid& g, const std::vector<std::size_t>& cells,
                                        const std::vector<const Real*>& fields, cudaStream_t stream) {
    const std::size_t n = cells.size();
    std::vector<std::vector<double>> out(fields.size());
    if (n == 0) return out;
    if (cells != cells_) {
      std::vector<index_t> offsets;
      for (std::size_t c : cells) {
        if (c >= static_cast<std::size_t>(g.cells()))
          throw std::out_of_range("read_cells: cell " + std::to_string(c) + " of a grid of " +
                                  std::to_string(g.cells()));
        const auto k = static_cast<index_t>(c);
        offsets.push_back(g.index(k % g.nx, k / g.nx));
      }
      SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
      offsets_ = DeviceArray<index_t>(n);
      offsets_.upload(offsets.data(), n);
      cells_ = cells;
    }
    if (values_.size() < n * fields.size()) {
      SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
      values_ = DeviceArray<Real>(n * fields.size());
    }
    const auto blocks = static_cast<unsigned>((n + 127) / 128);
    for (std::size_t f = 0; f < fields.size(); ++f) {
      gather_cells_kernel<Real><<<blocks, 128, 0, stream>>>(fields[f], offsets_.get(), n, values_.get() + f * n);
      SHALLOWS_CUDA_CHECK_LAUNCH("gather_cells_kernel");
    }
    std::vector<Real> host(n * fields.size());
    SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(host.data(), values_.get(), host.size() * sizeof(Real),
                                        cudaMemcpyDeviceToHost, stream));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t f = 0; f < fields.size(); ++f) out[f].assign(host.begin() + f * n, host.begin() + (f + 1) * n);
    return out;
  }

 private:
  std::vector<std::size_t> cells_;
  DeviceArray<index_t> offsets_;
  DeviceArray<Real> values_;
};

// One double (an accumulator such as the positivity account); synchronises the stream.
inline double read_scalar(const DeviceArray<double>& value, cudaStream_t stream) {
  double out = 0;
  SHALLOWS_CUDA_CHECK(cudaMemcpyAsync(&out, value.get(), sizeof out, cudaMemcpyDeviceToHost, stream));
  SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  return out;
}

// The run's maxima (empty when they are not tracked).
inline void download_maxima(bool tracked, std::size_t cells, const DeviceArray<double>& max_h,
                            const DeviceArray<double>& max_speed, const DeviceArray<double>& arrival, Maxima& out) {
  if (!tracked) cells = 0;
  out.max_h.resize(cells);
  out.max_speed.resize(cells);
  out.arrival_time.resize(cells);
  max_h.download(out.max_h.data(), cells);
  max_speed.download(out.max_speed.data(), cells);
  arrival.download(out.arrival_time.data(), cells);
}

// The grid executor's maxima (padded as the state, depth and speed in Real)
// onto the device (load_maxima): values a run in this precision kept, so exact
// in Real. Waits for stream's work first and for the copies after.
template <class Real>
void upload_grid_maxima(const Grid& g, const Maxima& in, DeviceArray<Real>& max_h, DeviceArray<Real>& max_speed,
                        DeviceArray<double>& arrival, cudaStream_t stream) {
  check_load_size(maxima_sized(in, static_cast<std::size_t>(g.cells())), "load_maxima");
  SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  upload_interior(g, in.max_h, max_h);
  upload_interior(g, in.max_speed, max_speed);
  upload_interior(g, in.arrival_time, arrival);
  SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
}

// Maxima back onto the device (Backend::load_maxima; a no-op when they are
// not tracked). Waits for stream's work first and for the copies after.
inline void upload_maxima(bool tracked, std::size_t cells, const Maxima& in, DeviceArray<double>& max_h,
                          DeviceArray<double>& max_speed, DeviceArray<double>& arrival, cudaStream_t stream) {
  if (!tracked) return;
  check_load_size(maxima_sized(in, cells), "load_maxima");
  SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream));
  max_h.upload(in.max_h.data(), cells);
  max_speed.upload(in.max_speed.data(), cells);
  arrival.upload(in.arrival_time.data(), cells);
  SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize());
}

} // namespace shallows::gpu
