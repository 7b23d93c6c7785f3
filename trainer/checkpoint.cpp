#include "checkpoint.hpp"

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

}  // namespace

void save_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, const Position& pos,
                     int world) {
  fs::create_directories(o.checkpoint_dir);
  torch::serialize::OutputArchive ar;
  for (const auto& p : model.named_parameters()) ar.write("model/" + p.key(), p.value());
  for (const auto& b : model.named_buffers()) ar.write("model/" + b.key(), b.value(), /*is_buffer=*/true);
  torch::serialize::OutputArchive optim;
  opt.save(optim);
  ar.write("optimizer", optim);
  ar.write("epoch", torch::tensor(static_cast<int64_t>(pos.epoch)));
  ar.write("step", torch::tensor(static_cast<int64_t>(pos.step)));
  ar.write("world_size", torch::tensor(static_cast<int64_t>(world)));
  // StepLR: lr = base * gamma^(epoch / step_size), recomputed from the epoch.
  ar.write("scheduler/last_epoch", torch::tensor(static_cast<int64_t>(pos.epoch)));
  ar.write("scheduler/step_size", torch::tensor(static_cast<int64_t>(o.step_size)));
  ar.write("scheduler/gamma", torch::tensor(o.gamma, torch::kDouble));
  // DistributedRandomSampler: the order is a function of seed and epoch; the
  // position is the batches already taken.
  ar.write("sampler/seed", torch::tensor(static_cast<int64_t>(o.seed)));
  ar.write("sampler/epoch", torch::tensor(static_cast<int64_t>(pos.epoch)));
  ar.write("sampler/batches_taken", torch::tensor(static_cast<int64_t>(pos.step * o.grad_accum)));
  ar.write("sampler/batch_size", torch::tensor(static_cast<int64_t>(o.batch_size)));
  ar.write("sampler/grad_accum", torch::tensor(static_cast<int64_t>(o.grad_accum)));
  if (scaler.enabled()) {
    ar.write("scaler/scale", scaler.scale_tensor().cpu());
    ar.write("scaler/growth_tracker", scaler.tracker_tensor().cpu());
  }
  std::string tmp = checkpoint_path(o) + ".tmp";
  ar.save_to(tmp);
  fs::rename(tmp, checkpoint_path(o));  // readers see the old checkpoint or the new one
}

Position load_checkpoint(const Options& o, Net& model, torch::optim::SGD& opt, GradScaler& scaler, int world) {
  std::string path = checkpoint_path(o);
  if (!fs::exists(path)) return {};  // nothing to resume: start from the beginning
  torch::serialize::InputArchive ar;
  ar.load_from(path);
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
  int64_t w = read_int(ar, "world_size");
  if (w != world)
    throw std::runtime_error(path + " was written by " + std::to_string(w) + " ranks; this run has " +
                             std::to_string(world) + " (resume needs the same world size, any shape)");
  for (auto [key, now] : {std::pair<const char*, int64_t>{"sampler/batch_size", o.batch_size},
                          {"sampler/grad_accum", o.grad_accum}, {"sampler/seed", o.seed}}) {
    int64_t then = read_int(ar, key);
    if (then != now)
      throw std::runtime_error(path + " has " + key + " " + std::to_string(then) + "; this run has " +
                               std::to_string(now) + " (resume needs the same value to continue the same sample order)");
  }
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
  return {static_cast<int>(read_int(ar, "epoch")), static_cast<long>(read_int(ar, "step"))};
}

}  // namespace ddptrain
