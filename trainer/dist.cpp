#include "dist.hpp"

#include <chrono>
#include <cstdlib>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdexcept>
#include <thread>

#include "compat.hpp"

namespace ddptrain {

namespace {

int env_int(const char* a, const char* b, int fallback) {
  for (const char* name : {a, b}) {
    if (!name) continue;
    if (const char* v = std::getenv(name); v && *v) return std::atoi(v);
  }
  return fallback;
}

void wait(const c10::intrusive_ptr<compat::Work>& work) { work->wait(); }

std::string without_backtrace(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

// This host's address on the route to `master`: Gloo must bind a local
// address, and the one the kernel would use to reach rank 0 is on the fabric
// the master address was chosen from (ib0 when MASTER_ADDR is ib0's). A UDP
// connect() sends nothing; it only picks the route.
std::string local_address_towards(const std::string& master, int port) {
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_DGRAM;
  if (getaddrinfo(master.c_str(), std::to_string(port).c_str(), &hints, &res) != 0 || !res)
    throw std::runtime_error("cannot resolve MASTER_ADDR " + master);
  int fd = socket(res->ai_family, SOCK_DGRAM, 0);
  std::string out;
  if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    char host[NI_MAXHOST];
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &len) == 0 &&
        getnameinfo(reinterpret_cast<sockaddr*>(&local), len, host, sizeof host, nullptr, 0, NI_NUMERICHOST) == 0)
      out = host;
  }
  if (fd >= 0) close(fd);
  freeaddrinfo(res);
  if (out.empty()) throw std::runtime_error("no route from this host to MASTER_ADDR " + master + " (set --interface)");
  return out;
}

}  // namespace

DistEnv read_dist_env() {
  DistEnv e;
  e.rank = env_int("RANK", "SLURM_PROCID", 0);
  e.world = env_int("WORLD_SIZE", "SLURM_NTASKS", 1);
  e.local_rank = env_int("LOCAL_RANK", "SLURM_LOCALID", 0);
  e.local_world = env_int("LOCAL_WORLD_SIZE", "SLURM_NTASKS_PER_NODE", 1);
  if (const char* a = std::getenv("MASTER_ADDR"); a && *a) e.master_addr = a;
  e.master_port = env_int("MASTER_PORT", nullptr, 29500);
  if (e.world < 1 || e.rank < 0 || e.rank >= e.world)
    throw std::runtime_error("RANK " + std::to_string(e.rank) + " is outside WORLD_SIZE " + std::to_string(e.world));
  return e;
}

Dist init_dist(const Options& o, const DistEnv& env, bool cuda) {
  Dist d;
  d.env = env;
  auto timeout = std::chrono::seconds(o.rendezvous_timeout_s);
  std::string where = env.master_addr + ":" + std::to_string(env.master_port);
  c10d::TCPStoreOptions so;
  so.port = static_cast<std::uint16_t>(env.master_port);
  so.isServer = env.rank == 0;
  so.waitWorkers = false;  // arrival is counted below, with a message that says who is missing
  so.timeout = std::chrono::duration_cast<std::chrono::milliseconds>(timeout);
  compat::plain_tcp_store(so);
  try {
    d.store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, so);
  } catch (const std::exception& e) {
    throw std::runtime_error("rendezvous: rank " + std::to_string(env.rank) + " cannot " +
                             (env.rank == 0 ? "serve" : "reach") + " the TCPStore at " + where + " within " +
                             std::to_string(o.rendezvous_timeout_s) + " s: " + without_backtrace(e));
  }
  auto start = std::chrono::steady_clock::now();
  auto deadline = start + timeout;
  auto timed_out = [&](int64_t arrived, const std::string& detail) {
    return std::runtime_error("rendezvous at " + where + " timed out after " + std::to_string(o.rendezvous_timeout_s) +
                              " s: " + std::to_string(arrived) + " of " + std::to_string(env.world) +
                              " ranks arrived" + detail);
  };
  int64_t arrived = d.store->add("ddptrain/arrived", 1);
  while (arrived < env.world) {
    if (std::chrono::steady_clock::now() > deadline) throw timed_out(arrived, "");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    try {
      arrived = d.store->add("ddptrain/arrived", 0);
    } catch (const std::exception& e) {
      // Rank 0 serves the store; it closes it when its own (equal) timeout
      // ends, which other ranks see as a broken connection.
      if (std::chrono::steady_clock::now() + std::chrono::seconds(1) > deadline)
        throw timed_out(arrived, " (seen by rank " + std::to_string(env.rank) + " as rank 0 closing the store)");
      auto waited = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start);
      throw std::runtime_error("rendezvous at " + where + ": the TCPStore on rank 0 went away after " +
                               std::to_string(waited.count()) + " s, with " + std::to_string(arrived) + " of " +
                               std::to_string(env.world) + " ranks arrived: " + without_backtrace(e));
    }
  }
  d.pg = make_group(o, d.store, env.rank, env.world, env.master_addr, env.master_port, cuda);
  d.nccl = cuda;
  return d;
}

c10::intrusive_ptr<c10d::ProcessGroup> make_group(const Options& o, const c10::intrusive_ptr<c10d::Store>& store,
                                                  int rank, int size, const std::string& master_addr, int master_port,
                                                  bool cuda) {
  auto collective = std::chrono::milliseconds(std::chrono::seconds(o.collective_timeout_s));
  if (cuda) {
#ifdef DDPTRAIN_WITH_NCCL
    return compat::make_nccl(store, rank, size, collective);
#else
    throw std::runtime_error("this ddp-train was built without NCCL; use --device cpu");
#endif
  }
  // --interface, else GLOO_SOCKET_IFNAME as PyTorch reads it, else the
  // local address that routes to the master.
  std::string iface = o.interface;
  if (const char* g = std::getenv("GLOO_SOCKET_IFNAME"); iface.empty() && g && *g) iface = g;
  return compat::make_gloo(store, rank, size, iface, iface.empty() ? local_address_towards(master_addr, master_port) : "",
                           collective);
}

using state_dump::Collective;
using state_dump::CollectiveScope;

void allreduce_sum(Dist& d, std::vector<at::Tensor> tensors, Collective what) {
  CollectiveScope counted(what);
  wait(d.pg->allreduce(tensors));
}

void allreduce_max(Dist& d, at::Tensor& t, Collective what) {
  CollectiveScope counted(what);
  c10d::AllreduceOptions mx;
  mx.reduceOp = c10d::ReduceOp::MAX;
  std::vector<at::Tensor> one{t};
  wait(d.pg->allreduce(one, mx));
}

double time_allreduce(Dist& d, int64_t bytes, int iters, const torch::Device& device) {
  auto opts = torch::TensorOptions().dtype(torch::kFloat32).device(device);
  std::vector<at::Tensor> data{torch::ones({std::max<int64_t>(1, bytes / 4)}, opts)};
  auto settle = [&] {
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
    std::vector<at::Tensor> one{torch::zeros({1}, opts)};
    wait(d.pg->allreduce(one));  // a barrier every backend can do (NCCL's tensors are on the GPU)
    if (device.is_cuda()) torch::cuda::synchronize(device.index());
  };
  for (int i = 0; i < 2; ++i) wait(d.pg->allreduce(data));
  settle();
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i) wait(d.pg->allreduce(data));
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
  double mean = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
  std::vector<at::Tensor> slowest{torch::full({1}, mean, torch::TensorOptions().dtype(torch::kFloat64).device(device))};
  c10d::AllreduceOptions mx;
  mx.reduceOp = c10d::ReduceOp::MAX;
  wait(d.pg->allreduce(slowest, mx));
  return slowest[0].to(torch::kCPU).item<double>();
}

void barrier(Dist& d) {
  auto t = torch::zeros({1});
  allreduce_sum(d, {t}, Collective::Barrier);
}

void sync_from_rank0(Dist& d, const std::vector<at::Tensor>& tensors, const std::string& what) {
  // Same count and shapes everywhere: compare a signature's min and max.
  int64_t sig = static_cast<int64_t>(tensors.size());
  for (const auto& t : tensors) {
    sig = sig * 1000003 + t.numel();
    for (auto s : t.sizes()) sig = sig * 31 + s;
    sig = sig * 7 + static_cast<int64_t>(t.scalar_type());
  }
  auto lo = torch::tensor({sig}, torch::kLong), hi = lo.clone();
  c10d::AllreduceOptions mn, mx;
  mn.reduceOp = c10d::ReduceOp::MIN;
  mx.reduceOp = c10d::ReduceOp::MAX;
  std::vector<at::Tensor> vlo{d.nccl ? lo.cuda() : lo}, vhi{d.nccl ? hi.cuda() : hi};
  {
    CollectiveScope counted(Collective::ModelCheck);
    wait(d.pg->allreduce(vlo, mn));
  }
  {
    CollectiveScope counted(Collective::ModelCheck);
    wait(d.pg->allreduce(vhi, mx));
  }
  if (vlo[0].item<int64_t>() != vhi[0].item<int64_t>())
    throw std::runtime_error(what + " differ across ranks (count, shapes or dtypes); every rank must build the same model");
  std::map<at::ScalarType, std::vector<at::Tensor>> by_type;
  for (const auto& t : tensors) by_type[t.scalar_type()].push_back(t);
  for (auto& [type, group] : by_type) {
    std::vector<at::Tensor> flat_views;
    for (auto& t : group) flat_views.push_back(t.detach().reshape({-1}));
    std::vector<at::Tensor> flat{torch::cat(flat_views)};
    {
      CollectiveScope counted(Collective::ModelBroadcast);
      wait(d.pg->broadcast(flat));
    }
    int64_t offset = 0;
    torch::NoGradGuard no_grad;
    for (auto& t : group) {
      t.copy_(flat[0].narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
}

bool replicas_identical(Dist& d, const at::Tensor& flat, int64_t* numel) {
  if (numel) *numel = flat.numel();
  std::vector<at::Tensor> lo{flat.clone()}, hi{flat.clone()};
  c10d::AllreduceOptions mn, mx;
  mn.reduceOp = c10d::ReduceOp::MIN;
  mx.reduceOp = c10d::ReduceOp::MAX;
  {
    CollectiveScope counted(Collective::ReplicaCheck);
    wait(d.pg->allreduce(lo, mn));
  }
  {
    CollectiveScope counted(Collective::ReplicaCheck);
    wait(d.pg->allreduce(hi, mx));
  }
  return torch::equal(lo[0], hi[0]);
}

namespace {

constexpr int64_t kBucketBytes = 25 * 1024 * 1024;
constexpr int64_t kFirstBucketBytes = 1024 * 1024;

class ReducerSync : public GradSync {
 public:
  ReducerSync(Dist& d, const std::vector<at::Tensor>& params, bool fp16) : fp16_(fp16) {
    std::vector<bool> sparse(params.size(), false);
    std::vector<size_t> limits = {static_cast<size_t>(kFirstBucketBytes), static_cast<size_t>(kBucketBytes)};
    // Reverse order, as DDP does: gradients arrive roughly last layer first.
    std::vector<int64_t> order(params.size());
    for (size_t i = 0; i < params.size(); ++i) order[i] = static_cast<int64_t>(params.size() - 1 - i);
    std::vector<at::Tensor> reversed;
    for (auto i : order) reversed.push_back(params[static_cast<size_t>(i)]);
    auto [buckets, per_bucket_limits] = c10d::compute_bucket_assignment_by_size(reversed, limits, sparse, order);
    reducer_ = compat::make_reducer(params, buckets, per_bucket_limits, d.pg, kBucketBytes, kFirstBucketBytes);
    // PyTorch DDP's fp16_compress_hook, built into the Reducer.
    if (fp16) reducer_->register_builtin_comm_hook(c10d::BuiltinCommHookType::FP16_COMPRESS);
  }
  void before_forward() override {
    // Collective on every rank alike: after the first step, buckets follow the
    // order in which gradients actually became ready. That happens once, at
    // the first forward after a synchronised backward (before it, the Reducer
    // has no order to rebuild from; after it, nothing to do): counted there.
    if (synced_ && !rebuilt_) {
      CollectiveScope counted(Collective::BucketRebuild);
      rebuilt_ = reducer_->rebuild_buckets();
    } else {
      reducer_->rebuild_buckets();
    }
    reducer_->prepare_for_forward();
  }
  // The Reducer allreduces each bucket from an autograd hook as its gradients
  // become ready and waits for them all at backward's end: its collectives
  // are counted as one, entered before backward and left after it.
  void before_backward(bool sync) override {
    if (!sync) return;
    reducer_->prepare_for_backward({});
    state_dump::enter(Collective::ReducerBackward);
  }
  void after_backward(bool sync) override {
    if (!sync) return;
    state_dump::leave();
    synced_ = true;
  }
  std::string name() const override { return fp16_ ? "reducer+fp16" : "reducer"; }

 private:
  bool fp16_;
  bool synced_ = false, rebuilt_ = false;
  std::unique_ptr<c10d::Reducer> reducer_;
};

class FlatSync : public GradSync {
 public:
  FlatSync(Dist& d, const std::vector<at::Tensor>& params, const std::string& compress) : d_(d), params_(params) {
    if (compress == "fp16") wire_ = at::kHalf;
    if (compress == "bf16") wire_ = at::kBFloat16;
    int64_t bytes = 0;
    at::ScalarType type = at::kFloat;
    for (size_t i = params.size(); i-- > 0;) {  // last layer first, like the Reducer
      const auto& p = params[i];
      int64_t b = p.numel() * static_cast<int64_t>(p.element_size());
      if (buckets_.empty() || bytes + b > kBucketBytes || p.scalar_type() != type) {
        buckets_.emplace_back();
        bytes = 0;
        type = p.scalar_type();
      }
      buckets_.back().push_back(i);
      bytes += b;
    }
  }
  void after_backward(bool sync) override {
    if (!sync || d_.env.world == 1) return;
    CollectiveScope counted(Collective::Gradients);  // every bucket in flight, then waited for
    std::vector<at::Tensor> flats;
    std::vector<c10::intrusive_ptr<compat::Work>> works;
    for (const auto& bucket : buckets_) {
      std::vector<at::Tensor> grads;
      for (size_t i : bucket) {
        auto& g = params_[i].mutable_grad();
        if (!g.defined()) g = torch::zeros_like(params_[i]);
        grads.push_back(g.reshape({-1}));
      }
      at::Tensor flat = torch::cat(grads);
      if (wire_ != at::ScalarType::Undefined) flat = flat.to(wire_);
      flats.push_back(flat);
      std::vector<at::Tensor> one{flat};
      works.push_back(d_.pg->allreduce(one));  // all buckets in flight, then wait
    }
    torch::NoGradGuard no_grad;
    for (size_t b = 0; b < buckets_.size(); ++b) {
      works[b]->wait();
      at::Tensor flat = flats[b].to(params_[buckets_[b][0]].scalar_type()).div_(d_.env.world);
      int64_t offset = 0;
      for (size_t i : buckets_[b]) {
        auto& g = params_[i].mutable_grad();
        g.copy_(flat.narrow(0, offset, g.numel()).view_as(g));
        offset += g.numel();
      }
    }
  }
  std::string name() const override {
    if (wire_ == at::kHalf) return "flat+fp16";
    if (wire_ == at::kBFloat16) return "flat+bf16";
    return "flat";
  }

 private:
  Dist& d_;
  std::vector<at::Tensor> params_;
  std::vector<std::vector<size_t>> buckets_;
  at::ScalarType wire_ = at::ScalarType::Undefined;
};

}  // namespace

bool allreduces_half(Dist& d) {
  if (d.nccl) return true;
  // Gloo checks the type before it sends anything, on every rank alike.
  std::vector<at::Tensor> probe{torch::zeros({1}, torch::kHalf)};
  try {
    CollectiveScope counted(Collective::HalfProbe);
    wait(d.pg->allreduce(probe));
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::unique_ptr<GradSync> make_grad_sync(const std::string& kind, Dist& d, const std::vector<at::Tensor>& params,
                                         const std::string& compress) {
  if (compress == "fp16" && !allreduces_half(d))
    throw std::runtime_error("--compress fp16: this LibTorch's Gloo cannot allreduce fp16 (LibTorch " TORCH_VERSION
                             "); use --compress none on CPU, or NCCL");
  if (compress == "bf16" && kind == "reducer")
    throw std::runtime_error("--compress bf16 needs --sync flat (the Reducer's built-in hook compresses to fp16 only)");
  if (compress == "bf16" && !d.nccl)
    throw std::runtime_error("--compress bf16 needs NCCL: Gloo has no bf16 allreduce; use --compress fp16 on CPU");
  if (kind == "reducer") return std::make_unique<ReducerSync>(d, params, compress == "fp16");
  return std::make_unique<FlatSync>(d, params, compress);
}

}  // namespace ddptrain
