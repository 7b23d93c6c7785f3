#include "train.hpp"

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <malloc.h>
#include <nlohmann/json.hpp>
#include <thread>

#include "amp.hpp"
#include "checkpoint.hpp"
#include "clock.hpp"
#include "compat.hpp"
#include "data.hpp"
#include "dist.hpp"
#include "launcher.hpp"
#include "memory_sampler.hpp"
#include "model.hpp"
#include "progress_file.hpp"
#include "sample_trace.hpp"
#include "state_dump.hpp"

namespace ddptrain {

namespace {

namespace fs = std::filesystem;
// When this process started (static initialisation, before main).
const Clock::time_point g_process_start = Clock::now();

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

// This process's peak: the CUDA allocator's on a GPU, else the peak RSS.
double peak_mem_mib(int cuda_device) {
  if (cuda_device >= 0) return static_cast<double>(compat::cuda_memory(cuda_device).peak) / (1 << 20);
  return peak_rss_mib();
}

}  // namespace

int run_worker(const Options& opts) {
  Options o = opts;
  if (o.keep_memory) {
    // Keep freed tensors mapped: returning them to the OS makes every step
    // page-fault them back in (bench/ measures the difference).
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
  // SIGQUIT: say where this worker is (the job agent asks before a stall's cancel).
  state_dump::install();

  DistEnv env = read_dist_env();
  // Refused here, before the rendezvous, when --global-batch does not divide
  // into a whole accumulation on this world size.
  o.grad_accum = grad_accum_for(opts, env.world);
  const BatchLayout layout{env.world, o.batch_size, o.grad_accum};
  bool cuda = o.device == "cuda" || (o.device == "auto" && torch::cuda::is_available());
  if (cuda && !torch::cuda::is_available()) throw std::runtime_error("--device cuda, but CUDA is not available here");
  torch::Device device = cuda ? torch::Device(torch::kCUDA, env.local_rank % std::max(1, (int)torch::cuda::device_count()))
                              : torch::Device(torch::kCPU);
  torch::set_num_threads(o.threads > 0 ? o.threads : (cuda ? 4 : 1));
  torch::manual_seed(o.seed);
  bool r0 = env.rank == 0;
  ProgressFile progress(r0 ? o.progress : "", o.epochs);
  progress.update("rendezvous", 0, 0, 0, 0, -1, true);
  state_dump::set_phase("rank %d of %d: in the rendezvous", env.rank, env.world);

  DataSource src = open_data(o);
  Dist d = init_dist(o, env, cuda);
  double rendezvous_s = seconds_since(g_process_start), first_step_s = -1, first_step_unix = 0;
  // The Reducer unless bf16 compression needs flat buckets. On CPU the two
  // measured within noise of each other on 2 cores (bench/RESULTS.md), so
  // the overlapping engine that multi-node runs profit from is the default
  // there too.
  std::string sync = o.sync;
  if (sync == "auto") sync = o.compress == "bf16" ? "flat" : "reducer";
  if (r0)
    std::printf("ddp-train: %d rank(s), %s on %s, %s data (%zu train, %zu val images, %d classes), sync %s\n",
                env.world, o.model.c_str(), cuda ? "CUDA/NCCL" : "CPU/Gloo", src.layout.c_str(), src.train_size(),
                src.val_size(), src.classes, sync.c_str());
  if (r0 && o.global_batch > 0)
    std::printf("ddp-train: --global-batch %ld = %d ranks x --batch-size %d x accumulation %d\n", o.global_batch,
                env.world, o.batch_size, o.grad_accum);
  // Whole epochs at this layout: micro-batches per rank, then optimizer steps
  // (the leftover micro-batches of an epoch are dropped).
  const size_t train_size = src.train_size();
  const long per_step = layout.global_batch();
  long steps_per_epoch = static_cast<long>(train_size) / (env.world * o.batch_size) / o.grad_accum;
  if (o.max_steps > 0) steps_per_epoch = std::min(steps_per_epoch, o.max_steps);
  // AMP: fp16 autocast with a loss scaler, or bf16 autocast (no scaler: bf16
  // has fp32's range). On CPU only bf16 is offered, and it is slow unless the
  // CPU has bf16 instructions.
  bool amp = o.amp != "off" && (cuda || o.amp == "bf16");
  if (r0 && o.amp == "fp16" && !cuda) std::printf("ddp-train: warning: --amp fp16 needs CUDA; training in fp32\n");
  at::ScalarType amp_dtype = o.amp == "bf16" ? at::kBFloat16 : at::kHalf;
  GradScaler scaler(amp && o.amp == "fp16", device);
  int cuda_device = cuda ? device.index() : -1;

  auto model = make_model(o.model, src.classes);
  model->to(device);
  if (cuda) {
    // channels_last: convolution weights (4-D) in NHWC, as Tensor Cores like them.
    torch::NoGradGuard no_grad;
    for (auto& p : model->parameters())
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
  }
  std::vector<at::Tensor> state;
  for (auto& p : model->parameters()) state.push_back(p);
  for (auto& b : model->buffers()) state.push_back(b);
  sync_from_rank0(d, state, "model parameters");
  auto grad_sync = make_grad_sync(sync, d, model->parameters(), o.compress);

  torch::optim::SGD opt(model->parameters(),
                        torch::optim::SGDOptions(o.lr).momentum(o.momentum).weight_decay(o.weight_decay));
  Position pos;
  if (o.resume) {
    std::optional<Resume> resume = load_checkpoint(o, *model, opt, scaler, train_size);
    sync_from_rank0(d, state, "model parameters");
    if (resume) {
      pos = resume->pos;
      if (r0) report_resume(o, *resume, layout, train_size, steps_per_epoch);
    }
  }
  long global_step = pos.global_step;
  SampleTrace trace(o.trace_samples, env.rank);

  std::ofstream metrics;
  if (r0 && !o.metrics.empty()) {
    fs::path mp(o.metrics);
    if (mp.has_parent_path()) fs::create_directories(mp.parent_path());
    metrics.open(o.metrics, std::ios::app);
  }
  // On CPU the resident set; on CUDA the caching allocator's allocated bytes.
  std::function<long()> read_mib = rss_mib;
  if (cuda_device >= 0)
    read_mib = [cuda_device] { return static_cast<long>(compat::cuda_memory(cuda_device).current >> 20); };
  MemorySampler memory(std::move(read_mib));
  auto criterion = torch::nn::CrossEntropyLoss();
  // This rank's work: loading its batches and their forward passes, where no
  // rank waits for another (the gradient allreduce waits in backward).
  double rank_work_s = 0;

  for (int epoch = pos.epoch; epoch < o.epochs; ++epoch) {
    double lr = o.lr * std::pow(o.gamma, epoch / o.step_size);
    for (auto& g : opt.param_groups()) static_cast<torch::optim::SGDOptions&>(g.options()).lr(lr);
    model->train();
    // A resumed epoch starts at the checkpoint's offset into its order.
    size_t offset = epoch == pos.epoch ? static_cast<size_t>(pos.offset) : 0;
    Loader loader(src, true, train_shard(train_size, env.world, env.rank, o.seed, epoch, offset, o.batch_size),
                  o.batch_size, o.workers, o.seed, epoch, true, cuda);
    // `first`: this epoch's steps already done, counted in this run's steps.
    // Exact when the offset is a whole number of them (always, unless the
    // global batch changed mid-epoch); otherwise the steps before the resume
    // were of another size and we count from the resume point: --max-steps
    // then allows that many more, and the progress file shows the rest of
    // the epoch as its steps.
    long first = static_cast<long>(offset) % per_step == 0 ? static_cast<long>(offset) / per_step : 0;
    long steps = first + static_cast<long>(loader.size()) / o.grad_accum;
    if (o.max_steps > 0) steps = std::max(first, std::min(steps, o.max_steps));
    double loss_sum = 0, correct = 0, seen = 0, step_time = 0;
    auto epoch_start = Clock::now();
    for (long step = first; step < steps; ++step) {
      // Every rank stops at the same step boundary once any was signalled.
      state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: waiting for every rank at the step's start (an allreduce)",
                            env.rank, epoch + 1, step + 1, steps);
      // The reduced tensor is the one read (NCCL: `sent`, copied back): a copy
      // made only for the allreduce would leave each rank its own stop flag.
      // The same allreduce carries every rank's work so far to rank 0's
      // progress file: each rank's speed, and no collective of its own.
      auto flags = torch::zeros({1 + env.world}, torch::kDouble);
      flags.data_ptr<double>()[0] = static_cast<double>(g_stop);
      flags.data_ptr<double>()[1 + env.rank] = rank_work_s;
      at::Tensor sent = cuda ? flags.to(device) : flags;
      allreduce_sum(d, {sent}, state_dump::Collective::StepStart);
      if (cuda) flags = sent.cpu();
      // On a GPU the host's clock sees kernel launches, not the GPU's work: not reported.
      if (r0 && !cuda) progress.set_rank_work(flags.data_ptr<double>() + 1, env.world);
      if (flags.data_ptr<double>()[0] > 0) {
        if (r0) {
          progress.update("checkpointing", epoch + 1, step, steps, 0, -1, true);
          state_dump::set_phase("rank %d: epoch %d, step %ld: saving the checkpoint", env.rank, epoch + 1, step);
          long trained = static_cast<long>(offset) + (step - first) * per_step;
          if (!o.checkpoint_dir.empty())
            save_checkpoint(o, *model, opt, scaler, {epoch, trained, global_step}, layout, steps_per_epoch);
          std::printf("ddp-train: stop requested: %s at epoch %d, step %ld; exiting for requeue\n",
                      o.checkpoint_dir.empty() ? "no --checkpoint-dir, nothing saved" : "checkpoint saved",
                      epoch + 1, step);
          std::fflush(stdout);
        }
        barrier(d);
        return kStoppedForRequeue;
      }
      auto t0 = Clock::now();
      for (auto& p : model->parameters())
        if (p.grad().defined()) p.mutable_grad().zero_();
      for (int micro = 0; micro < o.grad_accum; ++micro) {
        state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: loading a batch", env.rank, epoch + 1, step + 1, steps);
        if (o.test_hang && o.test_hang->rank == env.rank && o.test_hang->step == step + 1 && epoch == pos.epoch && micro == 0)
          while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // --test-hang-at
        auto t_load = Clock::now();
        auto batch = loader.next();
        if (!batch) break;
        auto x = batch->images.to(device, /*non_blocking=*/true);
        if (cuda) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
        auto y = batch->labels.to(device, true);
        rank_work_s += seconds_since(t_load);
        bool sync_now = micro == o.grad_accum - 1;
        state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: forward", env.rank, epoch + 1, step + 1, steps);
        grad_sync->before_forward();  // collective once, when the buckets are rebuilt: not this rank's work
        auto t_forward = Clock::now();
        torch::Tensor out, loss;
        {
          AutocastGuard autocast(amp, cuda, amp_dtype);
          out = model->forward(x);
          loss = criterion(out, y) / o.grad_accum;
        }
        rank_work_s += seconds_since(t_forward);
        state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: backward%s", env.rank, epoch + 1, step + 1, steps,
                              sync_now ? " and the gradient allreduce" : "");
        grad_sync->before_backward(sync_now);
        scaler.scale(loss).backward();
        grad_sync->after_backward(sync_now);
        loss_sum += loss.item<double>() * o.grad_accum * static_cast<double>(y.size(0));
        trace.add(epoch + 1, batch->indices);
        correct += out.argmax(1).eq(y).sum().item<double>();
        seen += static_cast<double>(y.size(0));
      }
      // With fp16 a step whose gradients overflowed is skipped (on every rank
      // alike: the gradients are already averaged) and the scale backs off.
      if (scaler.unscale(model->parameters())) opt.step();
      scaler.update();
      ++global_step;
      trace.step_done();
      if (first_step_s < 0) {
        first_step_s = seconds_since(g_process_start);
        first_step_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      }
      step_time += seconds_since(t0);
      double rate = seen * env.world / std::max(1e-9, seconds_since(epoch_start));
      // Later epochs are whole ones at this layout, whatever this one was.
      double left = (steps - step - 1) + static_cast<double>(steps_per_epoch) * (o.epochs - epoch - 1);
      progress.update("training", epoch + 1, step + 1, steps, rate, left * seconds_since(epoch_start) / (step - first + 1));
    }
    double elapsed = seconds_since(epoch_start);
    // Global numbers: sums over every rank (and the slowest rank's time).
    state_dump::set_phase("rank %d: end of epoch %d: the epoch's statistics (allreduces)", env.rank, epoch + 1);
    auto train_stats = torch::tensor({loss_sum, correct, seen}, torch::kDouble);
    allreduce_sum(d, {train_stats}, state_dump::Collective::EpochStats);
    auto times = torch::zeros({env.world}, torch::kDouble), mems = torch::zeros({env.world}, torch::kDouble);
    long done_steps = std::max(1L, steps - first);
    times[env.rank] = step_time / static_cast<double>(done_steps);
    mems[env.rank] = peak_mem_mib(cuda_device);
    allreduce_sum(d, {times}, state_dump::Collective::EpochStats);
    allreduce_sum(d, {mems}, state_dump::Collective::EpochStats);
    auto max_elapsed = torch::tensor({elapsed}, torch::kDouble);
    std::vector<at::Tensor> me{max_elapsed};
    allreduce_max(d, me[0], state_dump::Collective::EpochStats);

    double val_loss = 0, val_acc = 0;
    bool validated = !o.no_val && src.val_size() > 0;
    if (validated) {
      progress.update("validating", epoch + 1, steps, steps, 0, -1, true);
      state_dump::set_phase("rank %d: epoch %d: validating", env.rank, epoch + 1);
      model->eval();
      torch::NoGradGuard no_grad;
      Loader vl(src, false, val_shard(src.val_size(), env.world, env.rank), o.batch_size, o.workers, o.seed, epoch, false);
      double vs = 0, vc = 0, vn = 0;
      while (auto b = vl.next()) {
        torch::Tensor out;
        {
          AutocastGuard autocast(amp, cuda, amp_dtype);
          out = model->forward(b->images.to(device)).to(torch::kFloat);
        }
        auto y = b->labels.to(device);
        vs += torch::nn::functional::cross_entropy(out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)).item<double>();
        vc += out.argmax(1).eq(y).sum().item<double>();
        vn += static_cast<double>(y.size(0));
      }
      auto v = torch::tensor({vs, vc, vn}, torch::kDouble);
      allreduce_sum(d, {v}, state_dump::Collective::Validation);
      if (v[2].item<double>() > 0) {
        val_loss = v[0].item<double>() / v[2].item<double>();
        val_acc = 100.0 * v[1].item<double>() / v[2].item<double>();
      }
    }
    double n = std::max(1.0, train_stats[2].item<double>());
    double train_loss = train_stats[0].item<double>() / n, train_acc = 100.0 * train_stats[1].item<double>() / n;
    double throughput = train_stats[2].item<double>() / std::max(1e-9, me[0].item<double>());
    if (r0) {
      std::printf("Epoch [%d/%d] LR: %.6f | Loss (train, val): %.3f, %.3f | Accuracy (train, val): %.2f%%, %.2f%% | "
                  "Throughput: %.1f img/s\n",
                  epoch + 1, o.epochs, lr, train_loss, val_loss, train_acc, val_acc, throughput);
      std::fflush(stdout);
      if (metrics) {
        auto mem = memory.stats();
        nlohmann::json step_times = nlohmann::json::array(), peaks = nlohmann::json::array();
        for (int r = 0; r < env.world; ++r) {
          step_times.push_back(times[r].item<double>());
          peaks.push_back(mems[r].item<double>());
        }
        nlohmann::json rec = {
            {"epoch", epoch + 1},
            {"epochs", o.epochs},
            {"lr", lr},
            {"train_loss", train_loss},
            {"val_loss", validated ? nlohmann::json(val_loss) : nlohmann::json(nullptr)},
            {"train_acc", train_acc},
            {"val_acc", validated ? nlohmann::json(val_acc) : nlohmann::json(nullptr)},
            {"val_scope", validated ? "global" : "none"},  // reduced over every rank's shard
            {"img_per_s", throughput},
            {"epoch_s", me[0].item<double>()},
            {"steps", steps},
            {"world_size", env.world},
            {"local_world_size", env.local_world},
            {"batch_size", o.batch_size},
            {"grad_accum", o.grad_accum},
            {"global_batch", layout.global_batch()},
            {"global_step", global_step},
            {"model", o.model},
            {"device", cuda ? "cuda" : "cpu"},
            {"amp", amp ? o.amp : "off"},
            {"sync", grad_sync->name()},
            {"step_time_s", step_times},
            {"peak_mem_mib", peaks},
            {"mem_kind", cuda ? "cuda_allocated" : "rss"},
            {"rank0_mem_mib", {{"peak", mem.peak_mib}, {"avg", mem.avg_mib}, {"mode", mem.mode_mib}}},
            {"rendezvous_s", rendezvous_s},
            {"first_step_s", first_step_s},
            {"first_step_unix", first_step_unix},  // wall clock, for timing from outside
            {"time", static_cast<long>(std::time(nullptr))},
        };
        if (scaler.enabled()) rec["loss_scale"] = scaler.value();
        metrics << rec.dump() << "\n";
        metrics.flush();
      }
      if (!o.checkpoint_dir.empty()) {
        progress.update("checkpointing", epoch + 1, steps, steps, throughput, -1, true);
        state_dump::set_phase("rank %d: end of epoch %d: saving the checkpoint", env.rank, epoch + 1);
        save_checkpoint(o, *model, opt, scaler, {epoch + 1, 0, global_step}, layout, steps_per_epoch);
      }
    }
  }
  progress.update("done", o.epochs, 0, 0, 0, 0, true);
  // Every replica must hold exactly the same parameters: a cheap proof that
  // gradient synchronisation did its job.
  std::vector<at::Tensor> flat_params;
  for (auto& p : model->parameters()) flat_params.push_back(p.detach().reshape({-1}).to(torch::kFloat));
  int64_t numel = 0;
  if (!replicas_identical(d, torch::cat(flat_params), &numel))
    throw std::runtime_error("parameters differ across ranks after training; gradient synchronisation failed");
  if (r0) std::printf("ddp-train: parameters identical on all %d ranks (%lld values)\n", env.world, (long long)numel);
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
