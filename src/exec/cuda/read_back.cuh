// SPDX-License-Identifier: MIT
#pragma once
// Device fields back to the host as the Backend interface gives them, shared
// by the CUDA executors. The caller synchronises its stream first.
#include <cstddef>
#include <vector>

#include "device_array.cuh"
#include "shallows/exec/host_fields.hpp"
#include "shallows/solver/backend.hpp"
#include "shallows/solver/fields.hpp"

namespace shallows::cudax {

// One padded device field's interior, row-major, in double.
template <class T>
void download_interior(const Grid& g, const DeviceArray<T>& field, std::vector<double>& out) {
  std::vector<T> buf(static_cast<std::size_t>(g.padded_size()));
  field.download(buf.data(), buf.size());
  copy_interior(g, buf.data(), out);
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

} // namespace shallows::cudax
