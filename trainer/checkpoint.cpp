#include "checkpoint.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <utility>

namespace ddptrain {

namespace fs = std::filesystem;

std::string checkpoint_path(const Options& o) { return o.checkpoint_dir + "/checkpoint.pt"; }

namespace {

int64_t read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  torch::Tensor t;
  ar.read(key, t);
  return t.item<int64_t>();
}

std::optional<int64_t> try_read_int(torch::serialize::InputArchive& ar, const std::string& key) {
  torch::Tensor t;
  if (!ar.try_read(key, t)) return std::nullopt;
  return t.item<int64_t>();
}

torch::Tensor int_tensor(int64_t v) { return torch::tensor(v); }

}  // namespace

void save_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, const Position& pos,
                     const BatchLayout& layout, long steps_per_epoch) {
  fs::create_directories(o.checkpoint_dir);
  torch::serialize::OutputArchive ar;
  for (const auto& p : model.named_parameters()) ar.write("model/" + p.key(), p.value());
  for (const auto& b : model.named_buffers()) ar.write("model/" + b.key(), b.value(), /*is_buffer=*/true);
  torch::serialize::OutputArchive optim;
  opt.save(optim);
  ar.write("optimizer", optim);
  ar.write("epoch", int_tensor(pos.epoch));
  // The writer's layout: a resume on another world size says what changed.
  ar.write("world_size", int_tensor(layout.world));
  ar.write("sampler/batch_size", int_tensor(layout.batch_size));
  ar.write("sampler/grad_accum", int_tensor(layout.grad_accum));
  ar.write("sampler/global_batch", int_tensor(layout.global_batch()));
  // StepLR: lr = base * gamma^(epoch / step_size), recomputed from the epoch.
  // The same schedule in optimizer steps, for the record: global_step, and
  // the writer's steps per epoch (which depend on its global batch).
  ar.write("scheduler/last_epoch", int_tensor(pos.epoch));
  ar.write("scheduler/step_size", int_tensor(o.step_size));
  ar.write("scheduler/gamma", torch::tensor(o.gamma, torch::kDouble));
  ar.write("scheduler/global_step", int_tensor(pos.global_step));
  ar.write("scheduler/steps_per_epoch", int_tensor(steps_per_epoch));
  // The epoch's order is a function of seed and epoch alone (data.hpp); the
  // position is the samples of it already trained on, all ranks together.
  ar.write("sampler/seed", int_tensor(o.seed));
  ar.write("sampler/epoch", int_tensor(pos.epoch));
  ar.write("sampler/offset", int_tensor(pos.offset));
  if (scaler.enabled()) {
    ar.write("scaler/scale", scaler.scale_tensor().cpu());
    ar.write("scaler/growth_tracker", scaler.tracker_tensor().cpu());
  }
  std::string tmp = checkpoint_path(o) + ".tmp";
  ar.save_to(tmp);
  fs::rename(tmp, checkpoint_path(o));  // readers see the old checkpoint or the new one
}

std::optional<Resume> load_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler,
                                      size_t train_size) {
  std::string path = checkpoint_path(o);
  if (!fs::exists(path)) return std::nullopt;  // nothing to resume: start from the beginning
  torch::serialize::InputArchive ar;
  ar.load_from(path);
  // Refused before anything is loaded. Another per-rank batch would train a
  // different model (batch norm sees per-rank batches), another seed a
  // different sample order.
  for (auto [key, now] : {std::pair<const char*, int64_t>{"sampler/batch_size", o.batch_size}, {"sampler/seed", o.seed}}) {
    int64_t then = read_int(ar, key);
    if (then != now)
      throw std::runtime_error(path + " has " + key + " " + std::to_string(then) + "; this run has " +
                               std::to_string(now) + " (resume needs the same value to continue the same training)");
  }
  torch::NoGradGuard no_grad;
  for (auto& p : model.named_parameters()) {
    torch::Tensor t;
    ar.read("model/" + p.key(), t);
    p.value().copy_(t);
  }
  for (auto& b : model.named_buffers()) {
    torch::Tensor t;
    ar.read("model/" + b.key(), t, /*is_buffer=*/true);
    b.value().copy_(t);
  }
  torch::serialize::InputArchive optim;
  ar.read("optimizer", optim);
  opt.load(optim);
  if (scaler.enabled()) {
    try {
      torch::Tensor scale, tracker;
      ar.read("scaler/scale", scale);
      ar.read("scaler/growth_tracker", tracker);
      scaler.scale_tensor().copy_(scale);
      scaler.tracker_tensor().copy_(tracker);
    } catch (const c10::Error&) {
      // Written without fp16 AMP: start from the default scale.
    }
  }

  Resume r;
  r.pos.epoch = static_cast<int>(read_int(ar, "epoch"));
  r.writer.world = static_cast<int>(read_int(ar, "world_size"));
  r.writer.batch_size = static_cast<int>(read_int(ar, "sampler/batch_size"));
  r.writer.grad_accum = static_cast<int>(read_int(ar, "sampler/grad_accum"));
  if (auto offset = try_read_int(ar, "sampler/offset")) {
    r.pos.offset = static_cast<long>(*offset);
    r.pos.global_step = static_cast<long>(read_int(ar, "scheduler/global_step"));
    r.steps_per_epoch = static_cast<long>(read_int(ar, "scheduler/steps_per_epoch"));
    return r;
  }
  // An older checkpoint: {epoch, step} in the writer's world size, whose
  // order came from torch's DistributedRandomSampler. Its step is that many
  // global batches into the epoch; at step 0 nothing of the old order is left.
  long step = static_cast<long>(read_int(ar, "step"));
  long per_step = r.writer.global_batch();
  r.steps_per_epoch = static_cast<long>(train_size) / (r.writer.world * r.writer.batch_size) / r.writer.grad_accum;
  if (o.max_steps > 0) r.steps_per_epoch = std::min(r.steps_per_epoch, o.max_steps);
  r.pos.offset = step * per_step;
  r.pos.global_step = r.pos.epoch * r.steps_per_epoch + step;
  r.older_order = step > 0;
  return r;
}

void report_resume(const Options& o, const Resume& r, const BatchLayout& now, size_t train_size,
                   long steps_per_epoch) {
  std::string path = checkpoint_path(o);
  if (r.older_order)
    std::printf("ddp-train: warning: %s was written mid-epoch by an older ddp-train; the rest of epoch %d follows "
                "this version's sample order, so that epoch may repeat or miss some samples\n",
                path.c_str(), r.pos.epoch + 1);
  long g0 = r.writer.global_batch(), g1 = now.global_batch();
  std::printf("ddp-train: resumed from %s at epoch %d, sample %ld of %zu (written by %d ranks, now %d); "
              "global batch %ld -> %ld\n",
              path.c_str(), r.pos.epoch + 1, r.pos.offset, train_size, r.writer.world, now.world, g0, g1);
  if (g0 != g1 && o.global_batch == 0)
    std::printf("ddp-train: warning: the global batch changed from %ld to %ld: set trainer.global_batch "
                "(--global-batch) to keep it\n", g0, g1);
  // StepLR runs on epochs; in steps its period depends on the global batch.
  double lr = o.lr * std::pow(o.gamma, r.pos.epoch / o.step_size);
  std::string was = r.steps_per_epoch == steps_per_epoch && g0 == g1
                        ? ""
                        : ", was " + std::to_string(r.steps_per_epoch * o.step_size) + " steps of " + std::to_string(g0);
  std::printf("ddp-train: schedule: global step %ld, lr %g (StepLR x%g every %d epochs: every %ld steps of %ld "
              "samples%s)\n",
              r.pos.global_step, lr, o.gamma, o.step_size, steps_per_epoch * o.step_size, g1, was.c_str());
}

}  // namespace ddptrain
