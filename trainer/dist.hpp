#pragma once
// Rendezvous, the process group, and gradient synchronisation.
#include <memory>
#include <string>
#include <vector>

#include "pch.hpp"
#include "options.hpp"
#include "state_dump.hpp"

namespace ddptrain {

struct DistEnv {
  int rank = 0, world = 1, local_rank = 0, local_world = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
};

// RANK/WORLD_SIZE/LOCAL_RANK as the launcher or torchrun set them, else
// SLURM_PROCID/SLURM_NTASKS/SLURM_LOCALID (one srun task per GPU).
DistEnv read_dist_env();

struct Dist {
  DistEnv env;
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  bool nccl = false;
};

// Meets every rank at MASTER_ADDR:MASTER_PORT (rank 0 serves a TCPStore) within
// --rendezvous-timeout, then creates NCCL (CUDA) or Gloo (CPU) with
// --collective-timeout. Throws with the address, port and arrival count.
Dist init_dist(const Options& o, const DistEnv& env, bool cuda);
// A process group of `size` ranks over `store` (a PrefixStore for a group
// of some ranks: the fabric check's node pairs), NCCL or Gloo as init_dist's.
c10::intrusive_ptr<c10d::ProcessGroup> make_group(const Options& o, const c10::intrusive_ptr<c10d::Store>& store,
                                                  int rank, int size, const std::string& master_addr, int master_port,
                                                  bool cuda);

// Every collective here is counted for the state dump as `what`
// (state_dump::CollectiveScope), so that ranks can be compared by how far
// they got; the gradient synchronisation counts its own.
void allreduce_sum(Dist& d, std::vector<at::Tensor> tensors, state_dump::Collective what);
// The largest value on any rank, in place.
void allreduce_max(Dist& d, at::Tensor& t, state_dump::Collective what);
void barrier(Dist& d);
// Broadcasts every tensor from rank 0 (flattened per dtype), after checking
// that all ranks hold the same number of tensors with the same shapes.
void sync_from_rank0(Dist& d, const std::vector<at::Tensor>& tensors, const std::string& what);

// One size of --allreduce-bench: `iters` all-reduces (sum) of `bytes` of
// fp32 on `device`, after 2 to warm up, between barriers; the mean seconds
// of one, as the slowest rank measured it (every rank gets it).
double time_allreduce(Dist& d, int64_t bytes, int iters, const torch::Device& device);

// True when `flat` is bitwise the same on every rank (compared by min and max).
bool replicas_identical(Dist& d, const at::Tensor& flat, int64_t* numel = nullptr);

// How gradients are averaged across ranks.
class GradSync {
 public:
  virtual ~GradSync() = default;
  virtual void before_forward() {}
  // `sync` is false on the micro-steps of gradient accumulation but the last.
  virtual void before_backward(bool sync) { (void)sync; }
  virtual void after_backward(bool sync) { (void)sync; }
  virtual std::string name() const = 0;
};

// True when the process group can allreduce fp16 tensors. Collective (every
// rank gets the same answer). NCCL can; some Gloo builds cannot (Debian's
// LibTorch 2.14 says "Invalid scalar type").
bool allreduces_half(Dist& d);

// "reducer": c10d::Reducer, PyTorch DDP's engine (25 MB buckets, 1 MB first,
// rebuilt after the first step, allreduce overlapped with backward).
// "flat": ~25 MB flattened buckets allreduced after backward, optionally
// compressed to fp16/bf16 on the wire.
// Compression the process group cannot carry is refused here, before
// training, not where the Reducer's hook would fail (in Gloo's thread, which
// ends the process without a word).
std::unique_ptr<GradSync> make_grad_sync(const std::string& kind, Dist& d, const std::vector<at::Tensor>& params,
                                         const std::string& compress);

}  // namespace ddptrain
