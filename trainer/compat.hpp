#pragma once
// Everything that differs between LibTorch 1.13 (Debian's package) and 2.x
// (e.g. the one inside a pip torch): in 1.13 ProcessGroupGloo/NCCL *are*
// c10d::ProcessGroup; in 2.x they are
// c10d::Backend, wrapped in a ProcessGroup.
#include <chrono>
#include <string>

#include <ATen/autocast_mode.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/version.h>
#ifdef DDPTRAIN_WITH_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#ifdef DDPTRAIN_WITH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace ddptrain::compat {

// c10d::Work exists in both (Debian's 1.13 already has Work.hpp).
using Work = c10d::Work;

inline c10::intrusive_ptr<c10d::ProcessGroup> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, const std::string& interface,
                                                        const std::string& hostname,
                                                        std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->timeout = timeout;
  opts->devices.push_back(interface.empty() ? c10d::ProcessGroupGloo::createDeviceForHostname(hostname)
                                            : c10d::ProcessGroupGloo::createDeviceForInterface(interface));
#if TORCH_VERSION_MAJOR >= 2
  auto backend = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
  auto pg = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size,
                                                    c10::make_intrusive<c10d::ProcessGroup::Options>("gloo", timeout));
  pg->setBackend(c10::DeviceType::CPU, c10d::ProcessGroup::BackendType::GLOO, backend);
  return pg;
#else
  return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
#endif
}

#ifdef DDPTRAIN_WITH_NCCL
inline c10::intrusive_ptr<c10d::ProcessGroup> make_nccl(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
#if TORCH_VERSION_MAJOR >= 2
  auto backend = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
  auto pg = c10::make_intrusive<c10d::ProcessGroup>(store, rank, size,
                                                    c10::make_intrusive<c10d::ProcessGroup::Options>("nccl", timeout));
  pg->setBackend(c10::DeviceType::CUDA, c10d::ProcessGroup::BackendType::NCCL, backend);
  return pg;
#else
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts);
#endif
}
#endif

// Autocast on or off for the CUDA or CPU dispatch key (2.4 replaced the
// per-device functions with ones taking the device type).
inline void set_autocast(bool cuda, bool enabled, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::DeviceType type = cuda ? at::kCUDA : at::kCPU;
  at::autocast::set_autocast_enabled(type, enabled);
  if (enabled) at::autocast::set_autocast_dtype(type, dtype);
#else
  if (cuda) {
    at::autocast::set_enabled(enabled);
    if (enabled) at::autocast::set_autocast_gpu_dtype(dtype);
  } else {
    at::autocast::set_cpu_enabled(enabled);
    if (enabled) at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
  if (!enabled) at::autocast::clear_cache();
}

// CUDA caching allocator: bytes allocated now and at the peak on `device`.
struct CudaMemory {
  int64_t current = 0, peak = 0;
};
inline CudaMemory cuda_memory(int device) {
#ifdef DDPTRAIN_WITH_CUDA
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  const auto& s = stats.allocated_bytes[static_cast<size_t>(c10::cuda::CUDACachingAllocator::StatType::AGGREGATE)];
  return {s.current, s.peak};
#else
  (void)device;
  return {};
#endif
}

}  // namespace ddptrain::compat
