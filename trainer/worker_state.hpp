#pragma once
// One worker's training as run_worker (train.cpp) sets it up: where the rank
// runs, its data and process group, the model, gradient sync and optimizer,
// where it resumes, and what it reports. train_epoch (epoch.hpp) advances it
// an epoch at a time.
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "amp.hpp"
#include "checkpoint.hpp"
#include "clock.hpp"
#include "data.hpp"
#include "dist.hpp"
#include "memory_sampler.hpp"
#include "model.hpp"
#include "options.hpp"
#include "progress_file.hpp"
#include "sample_trace.hpp"

namespace ddptrain {

struct WorkerState {
  // Where this rank runs and how it batches, fixed before the rendezvous.
  Options o;  // grad_accum as this world size makes it
  DistEnv env;
  BatchLayout layout;
  bool r0 = false;  // rank 0: prints, writes the metrics, progress and checkpoints
  bool cuda = false;
  torch::Device device = torch::kCPU;
  int cuda_device = -1;  // device.index() on CUDA, else -1
  ProgressFile progress{"", 0};

  // The data and the process group.
  DataSource src;
  Dist d;
  Clock::time_point process_start;
  double rendezvous_s = 0;  // from the process's start to the process group

  // The plan: whole epochs at this layout.
  std::string sync;        // "reducer" or "flat"
  size_t train_size = 0;   // samples in an epoch, all ranks together
  long per_step = 0;       // samples in an optimizer step, all ranks together
  long steps_per_epoch = 0;  // optimizer steps in a whole epoch (at most --max-steps)
  bool amp = false;
  at::ScalarType amp_dtype = at::kHalf;

  // The model and what trains it.
  std::optional<GradScaler> scaler;
  std::shared_ptr<Net> model;
  std::vector<at::Tensor> state;  // parameters and buffers, as rank 0 hands them out
  std::unique_ptr<GradSync> grad_sync;
  std::optional<torch::optim::SGD> opt;
  torch::nn::CrossEntropyLoss criterion{nullptr};
  Position pos;  // where this run starts (a resume's position, else the beginning)
  long global_step = 0;

  // What it reports besides stdout.
  SampleTrace trace{"", 0};
  std::ofstream metrics;  // rank 0, when metrics are asked for
  std::optional<MemorySampler> memory;
  // This rank's work: loading its batches and their forward passes, where no
  // rank waits for another (the gradient allreduce waits in backward).
  double rank_work_s = 0;
  double first_step_s = -1, first_step_unix = 0;  // when the first optimizer step ended
};

}  // namespace ddptrain
