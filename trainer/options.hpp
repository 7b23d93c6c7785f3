#pragma once
// ddp-train's command line. The flags that `ddpctl gen` emits (docs/spec.md,
// trainer:) are the contract; the rest are for tests, benchmarks and tuning.
#include <optional>
#include <string>
#include <vector>

#include "ddptrain_bounds.hpp"

namespace ddptrain {

struct Options {
  // Launch
  int nproc_per_node = 0;  // >0: this process is the per-node launcher
  bool worker = false;     // internal: started by the launcher
  int rendezvous_timeout_s = 300;
  int collective_timeout_s = 600;  // also $DDPCTL_COLLECTIVE_TIMEOUT
  std::string interface;           // Gloo device interface; default: the master's hostname
  std::string device = "auto";     // auto | cpu | cuda
  int threads = 0;                 // intra-op threads per worker; 0: 1 on CPU
  // Training
  std::string model = "smallcnn";
  std::string data = "synthetic";
  int epochs = 1;
  int batch_size = bounds::kDefaultBatchSize;  // per rank
  double lr = 0.1, momentum = 0.9, weight_decay = 5e-4, gamma = 0.1;
  int step_size = 30;
  std::string amp = "off";  // off | fp16 | bf16
  int workers = 2;          // loader threads per rank
  int grad_accum = 1;
  long global_batch = 0;  // >0: samples per optimizer step, all ranks together; sets the accumulation
  std::string checkpoint_dir;
  bool resume = false;
  long seed = 42;
  std::string sync = "auto";  // auto | reducer | flat
  std::string compress = "none";  // none | fp16 | bf16: gradients on the wire (flat sync)
  // Data shape
  int image_size = 64;
  int classes = 200;          // synthetic data
  long synthetic_size = 2048;  // synthetic samples per epoch (global)
  long max_steps = 0;         // >0: stop each epoch after this many optimizer steps (tests, benchmarks)
  bool no_val = false;
  // Measure the all-reduce across the ranks instead of training (the
  // fabric check): sizes in bytes; --bench-iters all-reduces of each.
  std::string allreduce_bench;
  int bench_iters = 20;
  bool allreduce_pairs = false;  // --allreduce-pairs: node pairs round by round, not the whole set
  bool loader_only = false;  // time the data loader alone (bench/), no model, no process group
  // Output
  std::string metrics;   // JSON lines; default <checkpoint_dir>/metrics.jsonl if a checkpoint dir is set
  std::string progress;  // default $DDPCTL_PROGRESS_FILE
  std::string trace_samples;  // tests: each rank appends the sample indices it trained on to PREFIX.rank<R>.<pid>
  // Tests: --test-hang-at RANK:STEP: that rank stops before loading the batch
  // of that step (of the first epoch it trains) until it is told to stop
  // (SIGTERM), as a rank blocked in a read would; the others wait for it in
  // the step's gradient allreduce. A hung rank to name, for ddpctl's tests.
  struct Hang {
    int rank = 0;
    long step = 1;
  };
  std::optional<Hang> test_hang;
  bool keep_memory = true;  // mallopt so freed tensors stay mapped
};

// Parses argv; prints help and exits 0 on --help; throws std::runtime_error
// with a message naming the flag on bad input.
Options parse_options(int argc, char** argv);

// Micro-batches per optimizer step on `world` ranks: --grad-accum, or
// --global-batch / (world x --batch-size). Throws, naming the three numbers,
// when --global-batch does not divide into a whole accumulation.
int grad_accum_for(const Options& o, int world);

// argv for a worker started by the launcher: the same flags, minus
// --nproc-per-node, plus --worker.
std::vector<std::string> worker_argv(int argc, char** argv);

}  // namespace ddptrain
