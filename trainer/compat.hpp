#pragma once
// Everything that differs between the LibTorch generations the trainer builds
// against, from Debian bookworm's 1.13 to Debian forky's 2.14 (both compiled
// and tested: the suite, and scripts/trainer-libtorch2). In 1.13
// ProcessGroupGloo/NCCL *are* c10d::ProcessGroup; in 2.x they are
// c10d::Backend, wrapped in a ProcessGroup. Within 2.x the ProcessGroup lost
// its Options (2.14: store, rank and size only) and the Reducer lost its
// per-bucket limits and gained flags after first_bucket_bytes_cap, one at a
// time (2.14: skip_all_reduce_unused_params, use_python_reducer,
// bucket_bytes_cap_list). The 2.x side asks the headers which constructor
// they have (requires, C++20) rather than trusting a version number, so the
// releases in between (a pip torch on a GPU machine) take the matching branch.
#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include <ATen/autocast_mode.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#include <torch/csrc/distributed/c10d/reducer.hpp>
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

#if TORCH_VERSION_MAJOR >= 2
namespace detail {
// A ProcessGroup whose one backend serves `device`. Templates, so that the
// branch for the other headers is never instantiated.
template <class PG = c10d::ProcessGroup>
c10::intrusive_ptr<PG> wrap(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size, const char* name,
                            std::chrono::milliseconds timeout, c10::DeviceType device,
                            typename PG::BackendType type, c10::intrusive_ptr<c10d::Backend> backend) {
  c10::intrusive_ptr<PG> pg;
  if constexpr (requires { typename PG::Options; }) {
    // Early 2.x: the group's own options name the backend and its timeout.
    pg = c10::make_intrusive<PG>(store, rank, size, c10::make_intrusive<typename PG::Options>(name, timeout));
  } else {
    (void)name;
    (void)timeout;  // the backend's own options carry it
    pg = c10::make_intrusive<PG>(store, rank, size);
  }
  pg->setBackend(device, type, backend);
  if constexpr (requires { pg->setDefaultBackend(type); }) pg->setDefaultBackend(type);
  return pg;
}

template <class O = c10d::TCPStoreOptions>
void without_libuv(O& so) {
  if constexpr (requires { so.useLibUV; }) so.useLibUV = false;
}
}  // namespace detail
#endif

inline c10::intrusive_ptr<c10d::ProcessGroup> make_gloo(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, const std::string& interface,
                                                        const std::string& hostname,
                                                        std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupGloo::Options::create();
  opts->timeout = timeout;
  opts->devices.push_back(interface.empty() ? c10d::ProcessGroupGloo::createDeviceForHostname(hostname)
                                            : c10d::ProcessGroupGloo::createDeviceForInterface(interface));
#if TORCH_VERSION_MAJOR >= 2
  return detail::wrap(store, rank, size, "gloo", timeout, c10::DeviceType::CPU,
                      c10d::ProcessGroup::BackendType::GLOO,
                      c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts));
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
  return detail::wrap(store, rank, size, "nccl", timeout, c10::DeviceType::CUDA,
                      c10d::ProcessGroup::BackendType::NCCL,
                      c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rank, size, opts));
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

// The rendezvous store's options. Later 2.x releases serve the TCPStore with
// libuv by default, and a LibTorch built without it (Debian's 2.14) refuses
// to start one: the classic server, as in 1.13, on every version. It serves
// a rendezvous of thousands of ranks; ddp-train's few keys are no load.
inline void plain_tcp_store(c10d::TCPStoreOptions& so) {
#if TORCH_VERSION_MAJOR >= 2
  detail::without_libuv(so);
#else
  (void)so;
#endif
}

// PyTorch DDP's gradient engine over `pg`: the buckets and their limits from
// c10d::compute_bucket_assignment_by_size, `cap` bytes a bucket after the
// first `first_cap`; no unused parameters, gradients copied into the buckets.
template <class R = c10d::Reducer>
std::unique_ptr<R> make_reducer(std::vector<at::Tensor> params, std::vector<std::vector<size_t>> buckets,
                                std::vector<size_t> per_bucket_limits, c10::intrusive_ptr<c10d::ProcessGroup> pg,
                                int64_t cap, int64_t first_cap) {
  using Names = std::unordered_map<size_t, std::string>;
  std::vector<bool> sparse(params.size(), false);
  constexpr bool find_unused = false, as_view = false;
#if TORCH_VERSION_MAJOR < 2
  return std::make_unique<R>(std::move(params), std::move(buckets), std::move(per_bucket_limits), std::move(pg),
                             std::move(sparse), cap, find_unused, as_view, Names{}, first_cap);
#else
  if constexpr (std::is_constructible_v<R, std::vector<at::Tensor>, std::vector<std::vector<size_t>>,
                                        std::vector<size_t>, c10::intrusive_ptr<c10d::ProcessGroup>, std::vector<bool>,
                                        int64_t, bool, bool, Names, int64_t>) {
    // Early 2.x, as 1.13: the limits third.
    return std::make_unique<R>(std::move(params), std::move(buckets), std::move(per_bucket_limits), std::move(pg),
                               std::move(sparse), cap, find_unused, as_view, Names{}, first_cap);
  } else {
    (void)per_bucket_limits;  // rebuilt from `cap` and `first_cap` by the Reducer itself
    // Later: flags after first_cap, each new one last. An empty
    // bucket_bytes_cap_list keeps the two caps.
    if constexpr (requires { R(params, buckets, pg, sparse, cap, find_unused, as_view, Names{}, first_cap, false, false,
                               std::vector<int64_t>{}); })
      return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), std::move(sparse), cap,
                                 find_unused, as_view, Names{}, first_cap, /*skip_all_reduce_unused_params=*/false,
                                 /*use_python_reducer=*/false, std::vector<int64_t>{});
    else if constexpr (requires { R(params, buckets, pg, sparse, cap, find_unused, as_view, Names{}, first_cap, false,
                                    false); })
      return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), std::move(sparse), cap,
                                 find_unused, as_view, Names{}, first_cap, false, false);
    else if constexpr (requires { R(params, buckets, pg, sparse, cap, find_unused, as_view, Names{}, first_cap, false); })
      return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), std::move(sparse), cap,
                                 find_unused, as_view, Names{}, first_cap, false);
    else
      return std::make_unique<R>(std::move(params), std::move(buckets), std::move(pg), std::move(sparse), cap,
                                 find_unused, as_view, Names{}, first_cap);
  }
#endif
}

// CUDA caching allocator: bytes allocated now and at the peak on `device`.
struct CudaMemory {
  int64_t current = 0, peak = 0;
};
inline CudaMemory cuda_memory(int device) {
#ifdef DDPTRAIN_WITH_CUDA
  auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(device));
  // Index 0 is StatType::AGGREGATE (all pools) in every version; the enum
  // itself moved (1.13: c10::cuda::CUDACachingAllocator, 2.14: c10).
  const auto& s = stats.allocated_bytes[0];
  return {s.current, s.peak};
#else
  (void)device;
  return {};
#endif
}

}  // namespace ddptrain::compat
