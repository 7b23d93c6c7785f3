#include "train.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <malloc.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

#include "compat.hpp"
#include "epoch.hpp"
#include "launcher.hpp"
#include "state_dump.hpp"
#include "worker_state.hpp"

namespace ddptrain {

namespace {

namespace fs = std::filesystem;
// When this process started (static initialisation, before main).
const Clock::time_point g_process_start = Clock::now();

// Before anything else: how malloc keeps memory, the stop signals, SIGQUIT.
void prepare_process(const Options& o) {
  if (o.keep_memory) {
    // Keep freed tensors mapped: returning them to the OS makes every step
    // page-fault them back in (bench/ measures the difference).
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  catch_stop_signals();
  // SIGQUIT: say where this worker is (the job agent asks before a stall's cancel).
  state_dump::install();
}

// Where this rank runs: its place in the world and its batch layout, the
// device, its threads and the seed.
void place(WorkerState& w, const Options& opts) {
  w.o = opts;
  w.env = read_dist_env();
  // Refused here, before the rendezvous, when --global-batch does not divide
  // into a whole accumulation on this world size.
  w.o.grad_accum = grad_accum_for(opts, w.env.world);
  const Options& o = w.o;
  w.layout = BatchLayout{w.env.world, o.batch_size, o.grad_accum};
  bool cuda = o.device == "cuda" || (o.device == "auto" && torch::cuda::is_available());
  if (cuda && !torch::cuda::is_available()) throw std::runtime_error("--device cuda, but CUDA is not available here");
  w.cuda = cuda;
  w.device = cuda ? torch::Device(torch::kCUDA, w.env.local_rank % std::max(1, (int)torch::cuda::device_count()))
                  : torch::Device(torch::kCPU);
  w.cuda_device = cuda ? w.device.index() : -1;
  torch::set_num_threads(o.threads > 0 ? o.threads : (cuda ? 4 : 1));
  torch::manual_seed(o.seed);
  w.r0 = w.env.rank == 0;
  w.progress = ProgressFile(w.r0 ? o.progress : "", o.epochs);
}

// The data, and the process group: every rank meets the others here.
void connect(WorkerState& w) {
  w.progress.update("rendezvous", 0, 0, 0, 0, -1, true);
  state_dump::set_phase("rank %d of %d: in the rendezvous", w.env.rank, w.env.world);
  w.src = open_data(w.o);
  w.d = init_dist(w.o, w.env, w.cuda);
  w.process_start = g_process_start;
  w.rendezvous_s = seconds_since(g_process_start);
}

// The plan, and rank 0's account of it: the gradient sync, the world and the
// global batch, whole epochs at this layout, mixed precision.
void plan(WorkerState& w) {
  const Options& o = w.o;
  const DistEnv& env = w.env;
  // The Reducer unless bf16 compression needs flat buckets. On CPU the two
  // measured within noise of each other on 2 cores (bench/RESULTS.md), so
  // the overlapping engine that multi-node runs profit from is the default
  // there too.
  w.sync = o.sync;
  if (w.sync == "auto") w.sync = o.compress == "bf16" ? "flat" : "reducer";
  if (w.r0)
    std::printf("ddp-train: %d rank(s), %s on %s, %s data (%zu train, %zu val images, %d classes), sync %s\n",
                env.world, o.model.c_str(), w.cuda ? "CUDA/NCCL" : "CPU/Gloo", w.src.layout.c_str(),
                w.src.train_size(), w.src.val_size(), w.src.classes, w.sync.c_str());
  if (w.r0 && o.global_batch > 0)
    std::printf("ddp-train: --global-batch %ld = %d ranks x --batch-size %d x accumulation %d\n", o.global_batch,
                env.world, o.batch_size, o.grad_accum);
  // Whole epochs at this layout: micro-batches per rank, then optimizer steps
  // (the leftover micro-batches of an epoch are dropped).
  w.train_size = w.src.train_size();
  w.per_step = w.layout.global_batch();
  w.steps_per_epoch = static_cast<long>(w.train_size) / (env.world * o.batch_size) / o.grad_accum;
  if (o.max_steps > 0) w.steps_per_epoch = std::min(w.steps_per_epoch, o.max_steps);
  // AMP: fp16 autocast with a loss scaler, or bf16 autocast (no scaler: bf16
  // has fp32's range). On CPU only bf16 is offered, and it is slow unless the
  // CPU has bf16 instructions.
  w.amp = o.amp != "off" && (w.cuda || o.amp == "bf16");
  if (w.r0 && o.amp == "fp16" && !w.cuda) std::printf("ddp-train: warning: --amp fp16 needs CUDA; training in fp32\n");
  w.amp_dtype = o.amp == "bf16" ? at::kBFloat16 : at::kHalf;
}

// The model on its device with rank 0's weights, its gradient sync, the loss
// scaler and the optimizer.
void build_model(WorkerState& w) {
  const Options& o = w.o;
  w.scaler.emplace(w.amp && o.amp == "fp16", w.device);
  w.model = make_model(o.model, w.src.classes);
  w.model->to(w.device);
  if (w.cuda) {
    // channels_last: convolution weights (4-D) in NHWC, as Tensor Cores like them.
    torch::NoGradGuard no_grad;
    for (auto& p : w.model->parameters())
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
  }
  for (auto& p : w.model->parameters()) w.state.push_back(p);
  for (auto& b : w.model->buffers()) w.state.push_back(b);
  sync_from_rank0(w.d, w.state, "model parameters");
  w.grad_sync = make_grad_sync(w.sync, w.d, w.model->parameters(), o.compress);
  w.opt.emplace(w.model->parameters(),
                torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
}

// --resume: the checkpoint's weights, optimizer state and position (when
// there is one), the same on every rank.
void resume(WorkerState& w) {
  if (w.o.resume) {
    std::optional<Resume> r = load_checkpoint(w.o, *w.model, *w.opt, *w.scaler, w.train_size);
    sync_from_rank0(w.d, w.state, "model parameters");
    if (r) {
      w.pos = r->pos;
      if (w.r0) report_resume(w.o, *r, w.layout, w.train_size, w.steps_per_epoch);
    }
  }
  w.global_step = w.pos.global_step;
}

// What the run writes besides stdout: the sample trace, rank 0's metrics,
// the memory sampler; and the loss.
void open_outputs(WorkerState& w) {
  const Options& o = w.o;
  w.trace = SampleTrace(o.trace_samples, w.env.rank);
  if (w.r0 && !o.metrics.empty()) {
    fs::path mp(o.metrics);
    if (mp.has_parent_path()) fs::create_directories(mp.parent_path());
    w.metrics.open(o.metrics, std::ios::app);
  }
  // On CPU the resident set; on CUDA the caching allocator's allocated bytes.
  std::function<long()> read_mib = rss_mib;
  if (int device = w.cuda_device; device >= 0)
    read_mib = [device] { return static_cast<long>(compat::cuda_memory(device).current >> 20); };
  w.memory.emplace(std::move(read_mib));
  w.criterion = torch::nn::CrossEntropyLoss();
}

// The end: every replica must hold exactly the same parameters, a cheap
// proof that gradient synchronisation did its job.
void check_replicas(WorkerState& w) {
  w.progress.update("done", w.o.epochs, 0, 0, 0, 0, true);
  std::vector<at::Tensor> flat_params;
  for (auto& p : w.model->parameters()) flat_params.push_back(p.detach().reshape({-1}).to(torch::kFloat));
  int64_t numel = 0;
  if (!replicas_identical(w.d, torch::cat(flat_params), &numel))
    throw std::runtime_error("parameters differ across ranks after training; gradient synchronisation failed");
  if (w.r0) std::printf("ddp-train: parameters identical on all %d ranks (%lld values)\n", w.env.world, (long long)numel);
}

}  // namespace

int run_worker(const Options& opts) {
  prepare_process(opts);
  WorkerState w;
  place(w, opts);
  connect(w);
  plan(w);
  build_model(w);
  resume(w);
  open_outputs(w);
  for (int epoch = w.pos.epoch; epoch < w.o.epochs; ++epoch)
    if (!train_epoch(w, epoch)) return kStoppedForRequeue;
  check_replicas(w);
  return 0;
}

std::vector<int64_t> parse_bench_sizes(const std::string& text) {
  std::vector<int64_t> sizes;
  std::stringstream words(text);
  std::string w;
  while (std::getline(words, w, ',')) {
    size_t digits = 0;
    while (digits < w.size() && std::isdigit(static_cast<unsigned char>(w[digits]))) ++digits;
    std::string unit = w.substr(digits);
    int64_t scale = unit.empty() ? 1 : unit == "K" ? 1LL << 10 : unit == "M" ? 1LL << 20 : unit == "G" ? 1LL << 30 : 0;
    if (digits == 0 || digits > 12 || scale == 0)
      throw std::runtime_error("--allreduce-bench: '" + w + "' is not a size in bytes (e.g. 1M, 16M, 1G)");
    int64_t bytes = std::stoll(w.substr(0, digits)) * scale;
    if (bytes < 4) throw std::runtime_error("--allreduce-bench: '" + w + "' is below one fp32 value (4 bytes)");
    sizes.push_back(bytes);
  }
  if (sizes.empty()) throw std::runtime_error("--allreduce-bench: give sizes in bytes, e.g. 1M,16M,256M");
  return sizes;
}

namespace {

// --allreduce-pairs (the fabric check's bisection): round k pairs node i
// with node i XOR 2^(k-1), each pair's ranks a group of their own over the
// rendezvous store, every pair of a round at once; rank 0 prints each
// pair's figures with its nodes' host names.
void bench_pairs(const Options& o, Dist& d, int64_t bytes, const torch::Device& device, bool cuda) {
  const DistEnv& e = d.env;
  int per = std::max(1, e.local_world);
  if (e.world % per != 0)
    throw std::runtime_error("--allreduce-pairs: WORLD_SIZE " + std::to_string(e.world) +
                             " is not a whole number of nodes of " + std::to_string(per) + " rank(s)");
  int nodes = e.world / per, node = e.rank / per;
  if (nodes < 2)
    throw std::runtime_error("--allreduce-pairs needs 2 nodes or more (all " + std::to_string(e.world) +
                             " ranks are on one node)");
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  if (e.local_rank == 0) d.store->set("ddptrain/host/" + std::to_string(node), std::vector<uint8_t>(host, host + strlen(host)));
  auto host_of = [&](int n) {
    auto v = d.store->get("ddptrain/host/" + std::to_string(n));
    return std::string(v.begin(), v.end());
  };
  for (int round = 1, bit = 1; bit < nodes; ++round, bit <<= 1) {
    int partner = node ^ bit;
    double seconds = 0;
    if (partner < nodes) {
      int lo = std::min(node, partner);
      c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::PrefixStore>(
          "ddptrain/pair/" + std::to_string(round) + "/" + std::to_string(lo), d.store);
      Dist pair{e, store,
                make_group(o, store, (node == lo ? 0 : per) + e.local_rank, 2 * per, e.master_addr, e.master_port, cuda),
                cuda};
      seconds = time_allreduce(pair, bytes, o.bench_iters, device);
    }
    // Rank 0 learns every pair's time from the pair's lower node.
    at::Tensor times = torch::zeros({nodes}, torch::TensorOptions().dtype(torch::kFloat64));
    if (partner > node && partner < nodes && e.local_rank == 0) times[node] = seconds;
    at::Tensor sum = times.to(device);
    allreduce_sum(d, {sum}, state_dump::Collective::Barrier);
    times = sum.to(torch::kCPU);
    if (e.rank != 0) continue;
    for (int lo = 0; lo < nodes; ++lo) {
      int hi = lo ^ bit;
      if (hi < lo || hi >= nodes) continue;
      double s = times[lo].item<double>();
      double algbw = static_cast<double>(bytes) / s / 1e9;
      nlohmann::json j = {{"allreduce_pair", {{"round", round}, {"nodes", {lo, hi}}, {"hosts", {host_of(lo), host_of(hi)}},
                                              {"bytes", bytes}, {"ranks", 2 * per}, {"iters", o.bench_iters},
                                              {"seconds", s}, {"algbw_gbs", algbw},
                                              {"busbw_gbs", algbw * 2.0 * (2 * per - 1) / (2 * per)},
                                              {"backend", cuda ? "nccl" : "gloo"}}}};
      std::printf("%s\n", j.dump().c_str());
    }
  }
}

}  // namespace

int run_allreduce_bench(const Options& o) {
  std::vector<int64_t> sizes = parse_bench_sizes(o.allreduce_bench);
  DistEnv env = read_dist_env();
  if (env.world < 2)
    throw std::runtime_error("--allreduce-bench needs 2 ranks or more (WORLD_SIZE is 1): an all-reduce on one rank "
                             "moves nothing");
  bool cuda = o.device == "cuda" || (o.device == "auto" && torch::cuda::is_available());
  if (cuda && !torch::cuda::is_available()) throw std::runtime_error("--device cuda, but CUDA is not available here");
  // Ring, as the fabric check's formula assumes: on two nodes NCCL's tree or
  // NVLS would measure the node's NVLink, not the network.
  if (cuda) setenv("NCCL_ALGO", "Ring", 0);
  int64_t largest = *std::max_element(sizes.begin(), sizes.end());
  if (!cuda) {
    // The buffer and Gloo's own copy of it, on each of the node's ranks.
    double free_bytes = static_cast<double>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
    if (2.0 * static_cast<double>(largest) * env.local_world > free_bytes)
      throw std::runtime_error("--allreduce-bench: " + std::to_string(largest) + " bytes, twice on each of this node's " +
                               std::to_string(env.local_world) + " rank(s), is more than its free memory (" +
                               std::to_string(static_cast<long long>(free_bytes / (1 << 20))) + " MiB)");
  }
  torch::set_num_threads(o.threads > 0 ? o.threads : 1);
  torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank % std::max(1, (int)torch::cuda::device_count()))
                              : torch::Device(torch::kCPU);
  Dist d = init_dist(o, env, cuda);
  if (o.allreduce_pairs) {
    bench_pairs(o, d, largest, device, cuda);
    return 0;
  }
  const char* algo = std::getenv("NCCL_ALGO");
  for (int64_t bytes : sizes) {
    double s = 0;
    try {
      s = time_allreduce(d, bytes, o.bench_iters, device);
    } catch (const c10::Error& e) {
      throw std::runtime_error("--allreduce-bench: " + std::to_string(bytes) + " bytes on " + device.str() + ": " +
                               e.what_without_backtrace());
    }
    double algbw = static_cast<double>(bytes) / s / 1e9;
    double busbw = algbw * 2.0 * (env.world - 1) / env.world;
    if (env.rank == 0) {
      nlohmann::json j = {{"allreduce", {{"bytes", bytes}, {"ranks", env.world}, {"ranks_per_node", env.local_world},
                                         {"iters", o.bench_iters}, {"seconds", s}, {"algbw_gbs", algbw},
                                         {"busbw_gbs", busbw}, {"backend", d.nccl ? "nccl" : "gloo"},
                                         {"algo", d.nccl && algo ? algo : ""}}}};
      std::printf("%s\n", j.dump().c_str());
    }
  }
  return 0;
}

int run_loader_only(const Options& o) {
  torch::set_num_threads(o.threads > 0 ? o.threads : 1);
  DataSource src = open_data(o);
  Loader loader(src, true, train_shard(src.train_size(), 1, 0, o.seed, 0, 0, o.batch_size), o.batch_size, o.workers,
                o.seed, 0, true);
  size_t batches = loader.size();
  if (o.max_steps > 0) batches = std::min(batches, static_cast<size_t>(o.max_steps));
  if (batches < 2) throw std::runtime_error("--loader-only needs at least 2 batches: more images, or a smaller --batch-size");
  // The first batch pays for starting the threads; time the rest.
  auto first = loader.next();
  Clock::time_point t0 = Clock::now();
  long images = 0;
  for (size_t b = 1; b < batches; ++b) {
    auto batch = loader.next();
    if (!batch) break;
    images += batch->images.size(0);
  }
  double s = seconds_since(t0);
  nlohmann::json j = {{"loader_img_per_s", static_cast<double>(images) / s}, {"images", images}, {"seconds", s},
                      {"workers", o.workers}, {"batch_size", o.batch_size}, {"image_size", src.image_size},
                      {"layout", src.layout}, {"first_batch_images", first ? first->images.size(0) : 0}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}

}  // namespace ddptrain
