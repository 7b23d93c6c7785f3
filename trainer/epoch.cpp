#include "epoch.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <thread>

#include "compat.hpp"
#include "launcher.hpp"
#include "state_dump.hpp"

namespace ddptrain {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_stop(int) { g_stop = 1; }

// This process's peak: the CUDA allocator's on a GPU, else the peak RSS.
double peak_mem_mib(int cuda_device) {
  if (cuda_device >= 0) return static_cast<double>(compat::cuda_memory(cuda_device).peak) / (1 << 20);
  return peak_rss_mib();
}

// Where in the epoch a step is: `first` is the first step this run trains
// of it, `steps` its last plus one (both in this run's steps).
struct StepAt {
  int epoch;
  long step, first, steps;
  size_t offset;  // samples of the epoch trained before this run's first step
};

// This rank's sums over the epoch's steps.
struct EpochSums {
  double loss_sum = 0, correct = 0, seen = 0, step_time = 0;
};

// The step's start: every rank's stop flag and its work so far, in one
// allreduce. True when any rank was asked to stop.
bool stop_requested_anywhere(WorkerState& w, const StepAt& at) {
  // Every rank stops at the same step boundary once any was signalled.
  state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: waiting for every rank at the step's start (an allreduce)",
                        w.env.rank, at.epoch + 1, at.step + 1, at.steps);
  // The reduced tensor is the one read (NCCL: `sent`, copied back): a copy
  // made only for the allreduce would leave each rank its own stop flag.
  // The same allreduce carries every rank's work so far to rank 0's
  // progress file: each rank's speed, and no collective of its own.
  auto flags = torch::zeros({1 + w.env.world}, torch::kDouble);
  flags.data_ptr<double>()[0] = static_cast<double>(g_stop);
  flags.data_ptr<double>()[1 + w.env.rank] = w.rank_work_s;
  at::Tensor sent = w.cuda ? flags.to(w.device) : flags;
  allreduce_sum(w.d, {sent}, state_dump::Collective::StepStart);
  if (w.cuda) flags = sent.cpu();
  // On a GPU the host's clock sees kernel launches, not the GPU's work: not reported.
  if (w.r0 && !w.cuda) w.progress.set_rank_work(flags.data_ptr<double>() + 1, w.env.world);
  return flags.data_ptr<double>()[0] > 0;
}

// A stop at the step's start: rank 0 saves the position (when it has a
// checkpoint folder) and says so; then every rank meets the others.
void stop_for_requeue(WorkerState& w, const StepAt& at) {
  const Options& o = w.o;
  if (w.r0) {
    w.progress.update("checkpointing", at.epoch + 1, at.step, at.steps, 0, -1, true);
    state_dump::set_phase("rank %d: epoch %d, step %ld: saving the checkpoint", w.env.rank, at.epoch + 1, at.step);
    long trained = static_cast<long>(at.offset) + (at.step - at.first) * w.per_step;
    if (!o.checkpoint_dir.empty())
      save_checkpoint(o, *w.model, *w.opt, *w.scaler, {at.epoch, trained, w.global_step}, w.layout, w.steps_per_epoch);
    std::printf("ddp-train: stop requested: %s at epoch %d, step %ld; exiting for requeue\n",
                o.checkpoint_dir.empty() ? "no --checkpoint-dir, nothing saved" : "checkpoint saved", at.epoch + 1,
                at.step);
    // The step counter a requeue resumes from ("schedule: global step"):
    // ddpctl status counts the steps lost between them.
    std::printf("ddp-train: stopped at global step %ld\n", static_cast<long>(w.global_step));
    std::fflush(stdout);
  }
  barrier(w.d);
}

// One micro-batch: load, forward, backward (the gradient sync on the last
// micro-batch of the step). False when the loader has no batch left.
bool train_micro_batch(WorkerState& w, Loader& loader, const StepAt& at, int micro, EpochSums& sums) {
  const Options& o = w.o;
  const int rank = w.env.rank;
  state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: loading a batch", rank, at.epoch + 1, at.step + 1, at.steps);
  if (o.test_hang && o.test_hang->rank == rank && o.test_hang->step == at.step + 1 && at.epoch == w.pos.epoch && micro == 0)
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // --test-hang-at
  auto t_load = Clock::now();
  auto batch = loader.next();
  if (!batch) return false;
  auto x = batch->images.to(w.device, /*non_blocking=*/true);
  if (w.cuda) x = x.contiguous(torch::MemoryFormat::ChannelsLast);
  auto y = batch->labels.to(w.device, true);
  w.rank_work_s += seconds_since(t_load);
  bool sync_now = micro == o.grad_accum - 1;
  state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: forward", rank, at.epoch + 1, at.step + 1, at.steps);
  w.grad_sync->before_forward();  // collective once, when the buckets are rebuilt: not this rank's work
  auto t_forward = Clock::now();
  torch::Tensor out, loss;
  {
    AutocastGuard autocast(w.amp, w.cuda, w.amp_dtype);
    out = w.model->forward(x);
    loss = w.criterion(out, y) / o.grad_accum;
  }
  w.rank_work_s += seconds_since(t_forward);
  state_dump::set_phase("rank %d: epoch %d, step %ld of %ld: backward%s", rank, at.epoch + 1, at.step + 1, at.steps,
                        sync_now ? " and the gradient allreduce" : "");
  w.grad_sync->before_backward(sync_now);
  w.scaler->scale(loss).backward();
  w.grad_sync->after_backward(sync_now);
  sums.loss_sum += loss.item<double>() * o.grad_accum * static_cast<double>(y.size(0));
  w.trace.add(at.epoch + 1, batch->indices);
  sums.correct += out.argmax(1).eq(y).sum().item<double>();
  sums.seen += static_cast<double>(y.size(0));
  return true;
}

// One optimizer step: its micro-batches, then the step itself.
void train_step(WorkerState& w, Loader& loader, const StepAt& at, EpochSums& sums) {
  auto t0 = Clock::now();
  for (auto& p : w.model->parameters())
    if (p.grad().defined()) p.mutable_grad().zero_();
  for (int micro = 0; micro < w.o.grad_accum; ++micro)
    if (!train_micro_batch(w, loader, at, micro, sums)) break;
  // With fp16 a step whose gradients overflowed is skipped (on every rank
  // alike: the gradients are already averaged) and the scale backs off.
  if (w.scaler->unscale(w.model->parameters())) w.opt->step();
  w.scaler->update();
  ++w.global_step;
  w.trace.step_done();
  if (w.first_step_s < 0) {
    w.first_step_s = seconds_since(w.process_start);
    w.first_step_unix = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  }
  sums.step_time += seconds_since(t0);
}

// The epoch's numbers over every rank: sums, and the slowest rank's time.
struct EpochStats {
  at::Tensor train;  // loss sum, correct, seen
  at::Tensor step_times, peak_mems;  // each rank's
  double epoch_s = 0;  // the slowest rank's
};

EpochStats reduce_epoch_stats(WorkerState& w, const EpochSums& sums, int epoch, long done_steps, double elapsed) {
  const int rank = w.env.rank, world = w.env.world;
  // Global numbers: sums over every rank (and the slowest rank's time).
  state_dump::set_phase("rank %d: end of epoch %d: the epoch's statistics (allreduces)", rank, epoch + 1);
  auto train_stats = torch::tensor({sums.loss_sum, sums.correct, sums.seen}, torch::kDouble);
  allreduce_sum(w.d, {train_stats}, state_dump::Collective::EpochStats);
  auto times = torch::zeros({world}, torch::kDouble), mems = torch::zeros({world}, torch::kDouble);
  times[rank] = sums.step_time / static_cast<double>(std::max(1L, done_steps));
  mems[rank] = peak_mem_mib(w.cuda_device);
  allreduce_sum(w.d, {times}, state_dump::Collective::EpochStats);
  allreduce_sum(w.d, {mems}, state_dump::Collective::EpochStats);
  auto max_elapsed = torch::tensor({elapsed}, torch::kDouble);
  allreduce_max(w.d, max_elapsed, state_dump::Collective::EpochStats);
  return {train_stats, times, mems, max_elapsed.item<double>()};
}

struct Validation {
  bool done = false;  // false with --no-val or no validation images
  double loss = 0, acc = 0;
};

// Validation on every rank's shard, reduced over all of them.
Validation validate(WorkerState& w, int epoch, long steps) {
  Validation v;
  v.done = !w.o.no_val && w.src.val_size() > 0;
  if (!v.done) return v;
  w.progress.update("validating", epoch + 1, steps, steps, 0, -1, true);
  state_dump::set_phase("rank %d: epoch %d: validating", w.env.rank, epoch + 1);
  w.model->eval();
  torch::NoGradGuard no_grad;
  Loader vl(w.src, false, val_shard(w.src.val_size(), w.env.world, w.env.rank), w.o.batch_size, w.o.workers, w.o.seed,
            epoch, false);
  double vs = 0, vc = 0, vn = 0;
  while (auto b = vl.next()) {
    torch::Tensor out;
    {
      AutocastGuard autocast(w.amp, w.cuda, w.amp_dtype);
      out = w.model->forward(b->images.to(w.device)).to(torch::kFloat);
    }
    auto y = b->labels.to(w.device);
    vs += torch::nn::functional::cross_entropy(out, y, torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum)).item<double>();
    vc += out.argmax(1).eq(y).sum().item<double>();
    vn += static_cast<double>(y.size(0));
  }
  auto t = torch::tensor({vs, vc, vn}, torch::kDouble);
  allreduce_sum(w.d, {t}, state_dump::Collective::Validation);
  if (t[2].item<double>() > 0) {
    v.loss = t[0].item<double>() / t[2].item<double>();
    v.acc = 100.0 * t[1].item<double>() / t[2].item<double>();
  }
  return v;
}

// The epoch as rank 0 reports it: the line on stdout and the metrics record.
struct EpochReport {
  int epoch;
  double lr;
  long steps;
  double train_loss, train_acc, throughput;
};

EpochReport summarize(int epoch, double lr, long steps, const EpochStats& st) {
  double n = std::max(1.0, st.train[2].item<double>());
  double train_loss = st.train[0].item<double>() / n, train_acc = 100.0 * st.train[1].item<double>() / n;
  double throughput = st.train[2].item<double>() / std::max(1e-9, st.epoch_s);
  return {epoch, lr, steps, train_loss, train_acc, throughput};
}

// Rank 0's metrics line for the epoch (JSON lines, docs/running.md).
nlohmann::json metrics_record(WorkerState& w, const EpochReport& r, const EpochStats& st, const Validation& v) {
  const Options& o = w.o;
  auto mem = w.memory->stats();
  nlohmann::json step_times = nlohmann::json::array(), peaks = nlohmann::json::array();
  for (int rank = 0; rank < w.env.world; ++rank) {
    step_times.push_back(st.step_times[rank].item<double>());
    peaks.push_back(st.peak_mems[rank].item<double>());
  }
  int64_t params = 0;  // what each step all-reduces: report's communication floor
  for (const auto& p : w.model->parameters()) params += p.numel();
  nlohmann::json rec = {
      {"epoch", r.epoch + 1},
      {"epochs", o.epochs},
      {"lr", r.lr},
      {"train_loss", r.train_loss},
      {"val_loss", v.done ? nlohmann::json(v.loss) : nlohmann::json(nullptr)},
      {"train_acc", r.train_acc},
      {"val_acc", v.done ? nlohmann::json(v.acc) : nlohmann::json(nullptr)},
      {"val_scope", v.done ? "global" : "none"},  // reduced over every rank's shard
      {"img_per_s", r.throughput},
      {"epoch_s", st.epoch_s},
      {"steps", r.steps},
      {"world_size", w.env.world},
      {"local_world_size", w.env.local_world},
      {"batch_size", o.batch_size},
      {"grad_accum", o.grad_accum},
      {"global_batch", w.layout.global_batch()},
      {"global_step", w.global_step},
      {"model", o.model},
      {"params", params},
      {"flops_per_sample", 3 * forward_flops(o.model, w.src.classes, w.src.image_size)},  // report's MFU
      {"device", w.cuda ? "cuda" : "cpu"},
      {"amp", w.amp ? o.amp : "off"},
      {"sync", w.grad_sync->name()},
      {"step_time_s", step_times},
      {"peak_mem_mib", peaks},
      {"mem_kind", w.cuda ? "cuda_allocated" : "rss"},
      {"rank0_mem_mib", {{"peak", mem.peak_mib}, {"avg", mem.avg_mib}, {"mode", mem.mode_mib}}},
      {"rendezvous_s", w.rendezvous_s},
      {"first_step_s", w.first_step_s},
      {"first_step_unix", w.first_step_unix},  // wall clock, for timing from outside
      {"time", static_cast<long>(std::time(nullptr))},
  };
  if (w.scaler->enabled()) rec["loss_scale"] = w.scaler->value();
  return rec;
}

// Rank 0 at the end of an epoch: the epoch's line, its metrics record, and
// the checkpoint at the start of the next epoch.
void finish_epoch_on_rank0(WorkerState& w, const EpochReport& r, const EpochStats& st, const Validation& v) {
  const Options& o = w.o;
  std::printf("Epoch [%d/%d] LR: %.6f | Loss (train, val): %.3f, %.3f | Accuracy (train, val): %.2f%%, %.2f%% | "
              "Throughput: %.1f img/s\n",
              r.epoch + 1, o.epochs, r.lr, r.train_loss, v.loss, r.train_acc, v.acc, r.throughput);
  std::fflush(stdout);
  if (w.metrics) {
    w.metrics << metrics_record(w, r, st, v).dump() << "\n";
    w.metrics.flush();
  }
  if (!o.checkpoint_dir.empty()) {
    w.progress.update("checkpointing", r.epoch + 1, r.steps, r.steps, r.throughput, -1, true);
    state_dump::set_phase("rank %d: end of epoch %d: saving the checkpoint", w.env.rank, r.epoch + 1);
    save_checkpoint(o, *w.model, *w.opt, *w.scaler, {r.epoch + 1, 0, w.global_step}, w.layout, w.steps_per_epoch);
  }
}

}  // namespace

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  for (int sig : kStopSignals) sigaction(sig, &sa, nullptr);
}

bool train_epoch(WorkerState& w, int epoch) {
  const Options& o = w.o;
  double lr = o.lr * std::pow(o.gamma, epoch / o.step_size);
  for (auto& g : w.opt->param_groups()) static_cast<torch::optim::SGDOptions&>(g.options()).lr(lr);
  w.model->train();
  // A resumed epoch starts at the checkpoint's offset into its order.
  size_t offset = epoch == w.pos.epoch ? static_cast<size_t>(w.pos.offset) : 0;
  Loader loader(w.src, true, train_shard(w.train_size, w.env.world, w.env.rank, o.seed, epoch, offset, o.batch_size),
                o.batch_size, o.workers, o.seed, epoch, true, w.cuda);
  // `first`: this epoch's steps already done, counted in this run's steps.
  // Exact when the offset is a whole number of them (always, unless the
  // global batch changed mid-epoch); otherwise the steps before the resume
  // were of another size and we count from the resume point: --max-steps
  // then allows that many more, and the progress file shows the rest of
  // the epoch as its steps.
  long first = static_cast<long>(offset) % w.per_step == 0 ? static_cast<long>(offset) / w.per_step : 0;
  long steps = first + static_cast<long>(loader.size()) / o.grad_accum;
  if (o.max_steps > 0) steps = std::max(first, std::min(steps, o.max_steps));
  EpochSums sums;
  auto epoch_start = Clock::now();
  for (long step = first; step < steps; ++step) {
    StepAt at{epoch, step, first, steps, offset};
    if (stop_requested_anywhere(w, at)) {
      stop_for_requeue(w, at);
      return false;
    }
    train_step(w, loader, at, sums);
    double rate = sums.seen * w.env.world / std::max(1e-9, seconds_since(epoch_start));
    // Later epochs are whole ones at this layout, whatever this one was.
    double left = (steps - step - 1) + static_cast<double>(w.steps_per_epoch) * (o.epochs - epoch - 1);
    w.progress.update("training", epoch + 1, step + 1, steps, rate, left * seconds_since(epoch_start) / (step - first + 1));
  }
  double elapsed = seconds_since(epoch_start);
  EpochStats st = reduce_epoch_stats(w, sums, epoch, steps - first, elapsed);
  Validation v = validate(w, epoch, steps);
  EpochReport r = summarize(epoch, lr, steps, st);
  if (w.r0) finish_epoch_on_rank0(w, r, st, v);
  return true;
}

}  // namespace ddptrain
