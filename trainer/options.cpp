#include "options.hpp"

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "ddptrain_bounds.hpp"

namespace ddptrain {

namespace {

// CLI11 checks from the ranges ddpctl's spec checks share (ddptrain_bounds.hpp).
CLI::Validator int_range(bounds::IntRange r) { return CLI::Range(r.min, r.max); }

CLI::Validator number_range(bounds::NumberRange r) {
  return CLI::Validator(
      [r](std::string& value) -> std::string {
        char* end = nullptr;
        double v = std::strtod(value.c_str(), &end);
        if (end == value.c_str() || *end != '\0' || !r.contains(v))
          return "must be a finite number " + std::string(r.min_open ? "above " : "from ") + std::to_string(r.min) +
                 " to " + std::to_string(r.max);
        return "";
      },
      "NUMBER");
}

// The two flags that set the accumulation, for the check that only one did.
struct AccumulationFlags {
  CLI::Option* grad_accum = nullptr;
  CLI::Option* global_batch = nullptr;
};

// How the process starts and meets the others.
void add_launch_flags(CLI::App& app, Options& o) {
  app.add_option("--nproc-per-node", o.nproc_per_node, "Start this many workers here and supervise them")
      ->check(CLI::Range(1, 64));
  app.add_flag("--worker", o.worker, "(internal) run as a worker started by the launcher");
  app.add_option("--rendezvous-timeout", o.rendezvous_timeout_s, "Seconds to wait for every rank")->check(CLI::Range(1, 86400));
  app.add_option("--collective-timeout", o.collective_timeout_s, "Seconds a collective may stall ($DDPCTL_COLLECTIVE_TIMEOUT)")
      ->check(CLI::Range(1, 86400));
  app.add_option("--interface", o.interface, "Network interface for Gloo (default: $GLOO_SOCKET_IFNAME, else the local address that routes to MASTER_ADDR)");
  app.add_option("--device", o.device, "auto, cpu or cuda")->check(CLI::IsMember({"auto", "cpu", "cuda"}));
  app.add_option("--threads", o.threads, "Intra-op threads per worker (default 1 on CPU)")->check(CLI::Range(0, 256));
}

// What it trains and how.
AccumulationFlags add_training_flags(CLI::App& app, Options& o) {
  app.add_option("--model", o.model, "resnet18, resnet50 or smallcnn")
      ->check(CLI::IsMember({"resnet18", "resnet50", "smallcnn"}));
  app.add_option("--data", o.data, "TinyImageNet or ImageFolder directory, or 'synthetic'");
  app.add_option("--epochs", o.epochs, "Epochs")->check(int_range(bounds::kEpochs));
  app.add_option("--batch-size", o.batch_size, "Batch size per rank")->check(int_range(bounds::kBatchSize));
  app.add_option("--lr", o.lr, "Learning rate")->check(number_range(bounds::kLr));
  app.add_option("--momentum", o.momentum, "SGD momentum")->check(number_range(bounds::kMomentum));
  app.add_option("--weight-decay", o.weight_decay, "Weight decay")->check(number_range(bounds::kWeightDecay));
  app.add_option("--step-size", o.step_size, "StepLR period in epochs")->check(int_range(bounds::kStepSize));
  app.add_option("--gamma", o.gamma, "StepLR factor")->check(number_range(bounds::kGamma));
  app.add_option("--amp", o.amp, "off, fp16 or bf16 (CUDA)")->check(CLI::IsMember({"off", "fp16", "bf16", "true", "false"}));
  app.add_option("--workers", o.workers, "Data loader threads per rank")->check(int_range(bounds::kWorkers));
  AccumulationFlags f;
  f.grad_accum =
      app.add_option("--grad-accum", o.grad_accum, "Micro-steps per optimizer step")->check(int_range(bounds::kGradAccum));
  f.global_batch =
      app.add_option("--global-batch", o.global_batch,
                     "Samples per optimizer step, all ranks together: the accumulation becomes N / (world size x "
                     "--batch-size), so a resume on another world size keeps the global batch")
          ->check(int_range(bounds::kGlobalBatch));
  app.add_option("--checkpoint-dir", o.checkpoint_dir, "Folder for checkpoints (rank 0 writes)");
  app.add_flag("--resume", o.resume, "Continue from the last checkpoint in --checkpoint-dir");
  app.add_option("--seed", o.seed, "Random seed")->check(int_range(bounds::kSeed));
  app.add_option("--sync", o.sync, "Gradient sync: reducer (overlapped, c10d::Reducer), flat (after backward), auto")
      ->check(CLI::IsMember({"auto", "reducer", "flat"}));
  app.add_option("--compress", o.compress, "Gradients on the wire: none, fp16, bf16 (NCCL only)")
      ->check(CLI::IsMember({"none", "fp16", "bf16"}));
  return f;
}

// The data's shape and how much of it an epoch takes.
void add_data_flags(CLI::App& app, Options& o) {
  app.add_option("--image-size", o.image_size, "Input image side in pixels")->check(CLI::Range(16, 1024));
  app.add_option("--classes", o.classes, "Classes of synthetic data")->check(CLI::Range(2, 100000));
  app.add_option("--synthetic-size", o.synthetic_size, "Synthetic samples per epoch")->check(CLI::Range(1L, 100000000L));
  app.add_option("--max-steps", o.max_steps, "Stop each epoch after this many optimizer steps")->check(CLI::Range(0L, 100000000L));
  app.add_flag("--no-val", o.no_val, "Skip validation");
  app.add_option("--allreduce-bench", o.allreduce_bench,
                 "Measure the all-reduce across the ranks instead of training: sizes in bytes (e.g. 1M,16M,256M; "
                 "K, M, G are 1024s), one JSON line per size on rank 0 with algbw and busbw as nccl-tests gives "
                 "them (NCCL with NCCL_ALGO=Ring unless set; Gloo on CPUs)");
  app.add_option("--bench-iters", o.bench_iters, "All-reduces timed per size of --allreduce-bench")
      ->check(CLI::Range(1, 100000));
  app.add_flag("--allreduce-pairs", o.allreduce_pairs,
               "With --allreduce-bench: time node pairs instead of the whole set, at its largest size, in rounds "
               "(round k pairs node i with node i XOR 2^(k-1), every pair of a round at once); rank 0 prints "
               "one JSON line per pair with its nodes' host names (the fabric check's bisection)")
      ->needs("--allreduce-bench");
  app.add_flag("--loader-only", o.loader_only,
               "Time the data loader alone: one epoch's batches (at most --max-steps) built by --workers threads, "
               "no model; prints one JSON line");
}

// What it writes, and the flags for tests and tuning.
void add_output_flags(CLI::App& app, Options& o, std::string& hang) {
  app.add_option("--metrics", o.metrics, "JSON-lines metrics file (rank 0 writes)");
  app.add_option("--progress", o.progress, "Progress file for ddpctl status ($DDPCTL_PROGRESS_FILE)");
  app.add_option("--trace-samples", o.trace_samples,
                 "(tests) every rank appends the sample indices it trained on, one line \"EPOCH IDX...\" per "
                 "micro-batch, to PREFIX.rank<R>.<pid>");
  app.add_flag("!--no-keep-memory", o.keep_memory, "Let malloc return freed tensors to the OS");
  app.add_option("--test-hang-at", hang,
                 "(tests) RANK:STEP: that rank stops before loading step STEP's batch (of the first epoch it trains) "
                 "until SIGTERM, while the others wait for it in the gradient allreduce");
}

// --test-hang-at's value: RANK:STEP, both whole numbers; STEP counts from 1
// as the state dump does.
Options::Hang parse_hang(const std::string& hang) {
  size_t colon = hang.find(':');
  char* end = nullptr;
  long rank = colon == std::string::npos ? -1 : std::strtol(hang.c_str(), &end, 10);
  bool rank_ok = colon != std::string::npos && end == hang.c_str() + colon && colon > 0 && rank >= 0 && rank < 65536;
  long step = rank_ok ? std::strtol(hang.c_str() + colon + 1, &end, 10) : 0;
  if (!rank_ok || colon + 1 == hang.size() || *end != '\0' || step < 1)
    throw std::runtime_error("--test-hang-at: " + hang + " is not RANK:STEP (a rank from 0, a step from 1)");
  return Options::Hang{static_cast<int>(rank), step};
}

}  // namespace

Options parse_options(int argc, char** argv) {
  Options o;
  if (const char* t = std::getenv("DDPCTL_COLLECTIVE_TIMEOUT"); t && *t) o.collective_timeout_s = std::atoi(t);
  if (const char* p = std::getenv("DDPCTL_PROGRESS_FILE"); p && *p) o.progress = p;
  if (const char* m = std::getenv("DDPCTL_METRICS_FILE"); m && *m) o.metrics = m;

  CLI::App app{"ddp-train: data-parallel training with LibTorch (c10d Gloo/NCCL, Reducer)", "ddp-train"};
  // In --help's order.
  add_launch_flags(app, o);
  AccumulationFlags accumulation = add_training_flags(app, o);
  add_data_flags(app, o);
  std::string hang;
  add_output_flags(app, o, hang);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::exit(app.exit(e));
  } catch (const CLI::ParseError& e) {
    throw std::runtime_error(e.what());
  }
  // Both set the accumulation; which one meant is not for ddp-train to guess.
  if (accumulation.global_batch->count() > 0 && accumulation.grad_accum->count() > 0)
    throw std::runtime_error("--global-batch sets the accumulation itself (N / (world size x --batch-size)); "
                             "leave out --grad-accum");
  if (!hang.empty()) o.test_hang = parse_hang(hang);
  if (o.amp == "true") o.amp = "fp16";
  if (o.amp == "false") o.amp = "off";
  if (o.resume && o.checkpoint_dir.empty()) throw std::runtime_error("--resume needs --checkpoint-dir");
  if (o.data != "synthetic" && !std::filesystem::is_directory(o.data))
    throw std::runtime_error("--data: " + o.data + " is not a directory (or use --data synthetic)");
  if (o.metrics.empty() && !o.checkpoint_dir.empty()) o.metrics = o.checkpoint_dir + "/metrics.jsonl";
  return o;
}

int grad_accum_for(const Options& o, int world) {
  if (o.global_batch <= 0) return o.grad_accum;
  long long accum = bounds::accumulation_for(o.global_batch, world, o.batch_size);
  if (accum > 0) return static_cast<int>(accum);
  long long micro_batch = static_cast<long long>(world) * o.batch_size;
  std::string shape = std::to_string(world) + " ranks x --batch-size " + std::to_string(o.batch_size) + " = " +
                      std::to_string(micro_batch);
  if (o.global_batch % micro_batch != 0)
    throw std::runtime_error("--global-batch " + std::to_string(o.global_batch) + " is not a multiple of " + shape +
                             " samples per micro-step, so the accumulation would not be a whole number");
  throw std::runtime_error("--global-batch " + std::to_string(o.global_batch) + " needs " +
                           std::to_string(o.global_batch / micro_batch) + " micro-steps of " + shape +
                           " samples; ddp-train accumulates at most " + std::to_string(bounds::kGradAccum.max) +
                           " (raise --batch-size)");
}

std::vector<std::string> worker_argv(int argc, char** argv) {
  std::vector<std::string> out = {"--worker"};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nproc-per-node") {
      ++i;  // and its value
      continue;
    }
    if (a.rfind("--nproc-per-node=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace ddptrain
