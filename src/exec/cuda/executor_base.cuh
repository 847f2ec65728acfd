// SPDX-License-Identifier: MIT
#pragma once
// What every CUDA executor shares, so that each adds its memory, kernels and
// loop alone: its device and stream, its control block on the device (a slot
// per state) and the pinned host copies it crosses through; and, for the grid
// executors, a rank's halo endpoint and GPU links.
#include <cuda_runtime.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.cuh"
#include "device_array.cuh"
#include "halo_kernels.cuh"
#include "rate_links.cuh"
#include "shallows/exec/cuda_backend.hpp"

namespace shallows::gpu {

// CtrlT: the time control the kernels keep on the device (Ctrl, Roe3Ctrl).
template <class CtrlT>
class ExecutorBase : public CudaBackend {
 public:
  ExecutorBase(const ExecutorBase&) = delete;
  ExecutorBase& operator=(const ExecutorBase&) = delete;
  // The executor's destructor synchronises stream_ first: its members go before these.
  ~ExecutorBase() override {
    if (host_in_) cudaFreeHost(host_in_);
    if (host_out_) cudaFreeHost(host_out_);
    if (stream_) cudaStreamDestroy(stream_);
  }

 protected:
  // Selects `device` (an ordinal the runtime sees, else throws) and describes it.
  explicit ExecutorBase(int device) : device_(device) {
    const int count = cuda_device_count();
    if (device < 0 || device >= count) {
      throw std::runtime_error("CUDA backend: device " + std::to_string(device) + " requested, " +
                               std::to_string(count) + " present");
    }
    SHALLOWS_CUDA_CHECK(cudaSetDevice(device));
    SHALLOWS_CUDA_CHECK(cudaGetDeviceProperties(&prop_, device));
    device_desc_ = std::string(prop_.name) + " (sm_" + std::to_string(prop_.major) + std::to_string(prop_.minor) +
                   ", " + std::to_string(prop_.multiProcessorCount) + " SMs)";
  }

  // The stream and the pinned control copies, once the executor's checks have passed (nothing to give back
  // before). `greatest`: the device's greatest priority.
  void open_stream(bool greatest = false) {
    int least = 0, most = 0;
    if (greatest) SHALLOWS_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &most));
    SHALLOWS_CUDA_CHECK(cudaStreamCreateWithPriority(&stream_, cudaStreamNonBlocking, greatest ? most : 0));
    SHALLOWS_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_in_), sizeof(CtrlT)));
    SHALLOWS_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&host_out_), sizeof(CtrlT)));
    *host_in_ = CtrlT{};
    *host_out_ = CtrlT{};
  }

  // The control slot of the current state, copied to the host (synchronises).
  CtrlT fetch_ctrl() const {
    SHALLOWS_CUDA_CHECK(
        cudaMemcpyAsync(host_out_, &ctrl_.get()[slot_], sizeof(CtrlT), cudaMemcpyDeviceToHost, stream_));
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return *host_out_;
  }

  // Pageable copies (DeviceArray::upload) may still be in flight on the
  // device, and stream_ does not wait for the legacy stream.
  static void settle_uploads() { SHALLOWS_CUDA_CHECK(cudaDeviceSynchronize()); }

  static std::runtime_error not_finite(double t, const char* what = "") {
    return std::runtime_error("solution is no longer finite at t = " + std::to_string(t) + " s" + what);
  }

  // What every executor's stats() says.
  CudaStats base_stats() const {
    CudaStats s;
    s.device = device_desc_;
    s.steps = steps_launched_;
    return s;
  }

  int device_;
  cudaDeviceProp prop_{};
  std::string device_desc_;
  cudaStream_t stream_ = nullptr;
  CtrlT* host_in_ = nullptr;   // pinned: what the host writes into a slot
  CtrlT* host_out_ = nullptr;  // pinned: fetch_ctrl's
  DeviceArray<CtrlT> ctrl_;
  int slot_ = 0;  // the current state's control slot
  index_t steps_launched_ = 0;
};

// A grid executor on a rank: its halo boxes packed on the device (HaloBoxes)
// through pinned host buffers, GPU memory (CUDA-aware MPI) or straight into a
// peer's GPU (CUDA IPC), and the rate all-reduced by the GPUs (RateLinks)
// where its steps allow (device_rate_possible). The executor says which
// buffers hold the current state (box_parity, box_reals, box_doubles), what
// an arrived box needs (box_arrived), and refreshes its ghosts.
template <class Real, class CtrlT>
class GridRankBase : public ExecutorBase<CtrlT>, public HaloEndpoint, public GpuLinks {
 public:
  HaloEndpoint* halo() override { return this; }
  GpuLinks* gpu_links() override { return this; }

  std::size_t box_bytes(const CellBox& box) const override {
    return HaloBoxes<Real>::bytes(box, box_reals(0), box_doubles(0));
  }
  void pack_box(const CellBox& box, std::byte* out) const override {
    const int p = box_parity();
    halo_.pack(grid_, box, box_reals(p), box_doubles(p), out, this->stream_);
  }
  // Unpacked in stream order: the copy reads `in` until refresh_ghosts (wait_for_boxes).
  void unpack_box(const CellBox& box, const std::byte* in) override {
    const int p = box_parity();
    halo_.unpack(grid_, box, box_reals(p), box_doubles(p), in, this->stream_);
    host_unpacked_ = true;
    box_arrived(box, p);
  }
  BoxBuffer host_buffer(std::size_t bytes) const override { return pinned_host_buffer(bytes); }

  BoxBuffer device_buffer(std::size_t bytes) const override { return device_box_buffer(bytes); }
  void pack_box_device(const CellBox& box, std::byte* out) const override {
    const int p = box_parity();
    halo_.pack_on_device(grid_, box, box_reals(p), box_doubles(p), out, this->stream_);
  }
  void unpack_box_device(const CellBox& box, const std::byte* in) override {
    const int p = box_parity();
    halo_.unpack_on_device(grid_, box, box_reals(p), box_doubles(p), in, this->stream_);
    host_unpacked_ = true;  // MPI writes `in` again at the next exchange
    box_arrived(box, p);
  }

  std::vector<std::byte> peer_link(int side, const CellBox& recv) override {
    return halo_.link(side, box_bytes(recv));
  }
  bool open_peer(int side, const CellBox& send, const std::vector<std::byte>& link) override {
    return halo_.open(side, link, box_bytes(send));
  }
  void send_box_to_peer(int side, const CellBox& box) override {
    const int p = box_parity();
    halo_.send(side, grid_, box, box_reals(p), box_doubles(p), this->stream_);
  }
  void receive_box_from_peer(int side, const CellBox& box) override {
    const int p = box_parity();
    halo_.receive(side, grid_, box, box_reals(p), box_doubles(p), this->stream_);
    box_arrived(box, p);
  }

  std::vector<std::byte> rate_link(int ranks) override {
    if (!device_rate_possible()) return {};
    return rate_links_.link(ranks);
  }
  bool open_rate_links(int rank, const std::vector<std::vector<std::byte>>& links) override {
    return rate_links_.open(rank, links, cuda_mps_running());
  }
  void start_rate_links() override { device_rate_ = true; }
  void close_links() override {
    SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
    halo_.close_peers();
    rate_links_.close();
  }

 protected:
  GridRankBase(const Grid& grid, int device) : ExecutorBase<CtrlT>(device), grid_(grid) {}

  // The buffers of the current state (0 or 1), and what a box carries of the
  // state in buffer `parity`: h, hu, hv and each scalar's h c; then the
  // infiltrated depths that follow that state.
  virtual int box_parity() const { return 0; }
  virtual BoxFields<Real> box_reals(int parity) const = 0;
  virtual BoxFields<double> box_doubles(int parity) const = 0;
  virtual void box_arrived(const CellBox& box, int parity) {
    (void)box;
    (void)parity;
  }
  // Whether each step can all-reduce its rate on the device (no other need of the host).
  virtual bool device_rate_possible() const { return false; }

  // For refresh_ghosts: the boxes unpacked from host or MPI buffers are read
  // until the stream gets here (boxes from GPU to GPU need no wait).
  void wait_for_boxes() {
    if (host_unpacked_) SHALLOWS_CUDA_CHECK(cudaStreamSynchronize(this->stream_));
    host_unpacked_ = false;
  }

  Grid grid_;
  HaloBoxes<Real> halo_;  // the halo boxes on the device
  RateLinks rate_links_;  // the rate all-reduced by the GPUs (start_rate_links)
  bool device_rate_ = false;
  bool host_unpacked_ = false;  // a box unpacked from an MPI buffer since refresh_ghosts
};

} // namespace shallows::gpu
