#include "spec/spec_launch.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "base/shell.hpp"
#include "base/text.hpp"
#include "base/values.hpp"
#include "../../trainer/ddptrain_bounds.hpp"

namespace ddpctl {

namespace {

enum class Kind { Int, Number, Bool, Path, Choice };

// ddp-train's bounds on its options (ddptrain_bounds.hpp).
namespace bounds = ddptrain::bounds;

// The bundled trainer's options: YAML key, trainer flag, type and bounds.
// The bounds are ddp-train's own (trainer/ddptrain_bounds.hpp): a value
// accepted here is never refused by ddp-train after the queue wait.
struct TrainerOption {
  const char* key;
  const char* flag;
  Kind kind;
  bounds::IntRange ints = {0, 0};
  bounds::NumberRange numbers = {0, 0, false};
  std::vector<std::string> choices = {};
};

const std::vector<TrainerOption>& trainer_options() {
  static const std::vector<TrainerOption> options = {
      {"model", "--model", Kind::Choice, {}, {}, {"resnet18", "resnet50", "smallcnn"}},
      {"data", "--data", Kind::Path},
      {"epochs", "--epochs", Kind::Int, bounds::kEpochs},
      {"batch_size", "--batch-size", Kind::Int, bounds::kBatchSize},
      {"lr", "--lr", Kind::Number, {}, bounds::kLr},
      {"momentum", "--momentum", Kind::Number, {}, bounds::kMomentum},
      {"weight_decay", "--weight-decay", Kind::Number, {}, bounds::kWeightDecay},
      {"step_size", "--step-size", Kind::Int, bounds::kStepSize},
      {"gamma", "--gamma", Kind::Number, {}, bounds::kGamma},
      {"amp", "--amp", Kind::Choice, {}, {}, {"off", "fp16", "bf16"}},
      {"workers", "--workers", Kind::Int, bounds::kWorkers},
      {"grad_accum", "--grad-accum", Kind::Int, bounds::kGradAccum},
      {"global_batch", "--global-batch", Kind::Int, bounds::kGlobalBatch},
      {"checkpoint_dir", "--checkpoint-dir", Kind::Path},
      {"resume", "--resume", Kind::Bool},
      {"seed", "--seed", Kind::Int, bounds::kSeed},
  };
  return options;
}

// "a finite number from 0 to 1", "a finite number above 0 (at most 1000000)".
std::string describe_range(const bounds::NumberRange& r) {
  if (r.min_open) return fmt::format("a finite number above {} (at most {})", r.min, r.max);
  return fmt::format("a finite number from {} to {}", r.min, r.max);
}

std::optional<std::string> check_path(const std::string& s) {
  if (s.empty()) return "must not be empty";
  return std::nullopt;  // quoted when rendered; control characters are refused by the reader
}

void read_trainer(MapReader& top, RunSpec& spec) {
  MapReader r(top.document(), top.node("trainer"), "trainer", top.diagnostics());
  if (!r.valid()) return;
  spec.uses_trainer = true;
  if (auto v = r.string("program", check_path)) {
    spec.trainer_program = *v;
    spec.trainer_program_given = true;
    spec.where["trainer.program"] = r.where("program");
  }
  for (const TrainerOption& o : trainer_options()) {
    if (!r.has(o.key)) continue;
    std::optional<std::string> value;
    switch (o.kind) {
      case Kind::Int:
        if (auto v = r.integer(o.key, o.ints.min, o.ints.max)) {
          value = std::to_string(*v);
          if (std::string(o.key) == "batch_size") spec.trainer_batch_size = *v;
          if (std::string(o.key) == "global_batch") spec.trainer_global_batch = *v;
        }
        break;
      case Kind::Number: {
        bounds::NumberRange range = o.numbers;
        value = r.string(o.key, [range](const std::string& s) -> std::optional<std::string> {
          char* end = nullptr;
          double v = std::strtod(s.c_str(), &end);
          bool number = !s.empty() && end && *end == '\0' && !std::isspace(static_cast<unsigned char>(s[0]));
          if (number && range.contains(v)) return std::nullopt;
          if (!number) return "must be a number such as 0.1 or 1e-4";
          return "is out of range: ddp-train takes " + describe_range(range);
        });
        break;
      }
      case Kind::Bool:
        if (auto v = r.boolean(o.key); v && *v) {
          spec.trainer_args.push_back(o.flag);
          if (std::string(o.key) == "resume") spec.trainer_resume = true;
        }
        break;
      case Kind::Path:
        value = r.string(o.key, check_path);
        if (value && std::string(o.key) == "data") spec.trainer_data = *value;
        break;
      case Kind::Choice: {
        auto choices = o.choices;
        value = r.string(o.key, [&](const std::string& s) -> std::optional<std::string> {
          for (const auto& c : choices)
            if (c == s) return std::nullopt;
          std::string problem;
          // amp: true/false read as fp16/off, as users write it.
          if (std::string(o.key) == "amp" && parse_bool(s, &problem)) return std::nullopt;
          return fmt::format("must be one of {}{}", quoted_list(choices), did_you_mean(s, choices));
        });
        if (value && std::string(o.key) == "amp") {
          std::string problem;
          if (auto b = parse_bool(*value, &problem)) value = *b ? "fp16" : "off";
        }
        break;
      }
    }
    if (value) spec.trainer_args.push_back(fmt::format("{}={}", o.flag, *value));
  }
  if (r.has("global_batch")) spec.where["trainer.global_batch"] = r.where("global_batch");
  if (r.has("data")) spec.where["trainer.data"] = r.where("data");
  if (r.has("checkpoint_dir")) spec.where["trainer.checkpoint_dir"] = r.where("checkpoint_dir");
  // What ddp-train would refuse at start, after the queue wait.
  if (spec.trainer_resume && !r.has("checkpoint_dir"))
    r.error("resume", "resume: true needs checkpoint_dir (the folder to resume from); ddp-train would refuse it at "
                      "start, after the queue wait");
  if (r.has("global_batch") && r.has("grad_accum"))
    r.error("global_batch", "set either global_batch (the accumulation follows from each shape's world size) or "
                            "grad_accum, not both");
  if (auto extra = r.string_list("extra_args")) spec.trainer_args.insert(spec.trainer_args.end(), extra->begin(), extra->end());
  r.finish();
}

void read_command(MapReader& top, RunSpec& spec) {
  YAML::Node node = top.node("command");
  if (node.IsScalar()) {
    if (auto s = read_scalar(top.document(), node, "command", top.diagnostics(), /*allow_tab=*/true)) {
      if (s->find_first_not_of(" \t") == std::string::npos) top.error("command", "must not be empty");
      else spec.command_shell = *s;
    }
  } else if (node.IsSequence()) {
    if (auto argv = top.string_list("command")) {
      if (argv->empty()) top.error("command", "must not be an empty list");
      spec.command_argv = *argv;
    }
  } else {
    top.error("command", fmt::format("expected a shell line or a list of arguments, got {}", describe_node(node)));
  }
}

}  // namespace

void check_global_batch(const RunSpec& spec, const Shape& shape, Diagnostics& diags) {
  if (!spec.trainer_global_batch) return;
  long long global = *spec.trainer_global_batch;
  long long batch = spec.trainer_batch_size.value_or(bounds::kDefaultBatchSize);
  long long world = shape.world_size();
  if (bounds::accumulation_for(global, world, batch) > 0) return;
  std::string per_micro_step = fmt::format("{} ranks x batch_size {}{} = {}", world, batch,
                                           spec.trainer_batch_size ? "" : " (ddp-train's default)", world * batch);
  std::string problem =
      global % (world * batch) != 0
          ? fmt::format("{} is not a multiple of shape {}'s {}", global, shape.label, per_micro_step)
          : fmt::format("{} needs {} micro-steps of shape {}'s {}; ddp-train accumulates at most {}", global,
                        global / (world * batch), shape.label, per_micro_step, bounds::kGradAccum.max);
  diags.error(spec.where_of("trainer.global_batch"), "trainer.global_batch",
              problem + " (ddp-train would refuse it at start, after the queue wait)");
}

void read_launch(MapReader& top, RunSpec& spec) {
  if (auto v = top.string("launch", [](const std::string& s) -> std::optional<std::string> {
        if (s == "per-node" || s == "per-gpu") return std::nullopt;
        return "must be 'per-node' (one launcher per node spawning one worker per GPU) or 'per-gpu' (one srun task "
               "per GPU)" + did_you_mean(s, {"per-node", "per-gpu"});
      }))
    spec.launch = *v == "per-gpu" ? LaunchMode::PerGpu : LaunchMode::PerNode;

  bool has_trainer = top.has("trainer"), has_command = top.has("command");
  if (has_trainer && has_command) top.error("command", "set either trainer: (the bundled trainer) or command:, not both");
  else if (!has_trainer && !has_command)
    top.diagnostics().error(top.self(), "trainer",
                            "required: set trainer: (arguments for the bundled trainer) or command: (your own program)");
  if (has_trainer) read_trainer(top, spec);
  if (has_command) read_command(top, spec);
}

void read_master(MapReader& top, RunSpec& spec) {
  if (!top.has("master")) return;
  MapReader r(top.document(), top.node("master"), "master", top.diagnostics());
  if (!r.valid()) return;
  if (r.has("interface")) {
    if (auto v = r.string("interface", [](const std::string& s) -> std::optional<std::string> {
          if (s == "none" || is_interface_name(s)) return std::nullopt;
          return "must be a network interface name such as ib0 (at most 15 characters), or 'none' to resolve the "
                 "first node's hostname";
        }))
      spec.master.interface = *v == "none" ? "" : *v;
  }
  if (r.has("port_range")) {
    YAML::Node n = r.node("port_range");
    std::vector<std::string> parts;
    if (n.IsSequence() && n.size() == 2 && n[0].IsScalar() && n[1].IsScalar()) {
      parts = {n[0].Scalar(), n[1].Scalar()};
    } else if (n.IsScalar() && n.Scalar().find('-') != std::string::npos) {
      const std::string& s = n.Scalar();
      parts = {s.substr(0, s.find('-')), s.substr(s.find('-') + 1)};
    }
    std::string p1, p2;
    auto lo = parts.size() == 2 ? parse_int(parts[0], 1024, 65535, &p1) : std::nullopt;
    auto hi = parts.size() == 2 ? parse_int(parts[1], 1024, 65535, &p2) : std::nullopt;
    if (!lo || !hi || *lo > *hi) {
      r.error("port_range", "must be two ports from 1024 to 65535, low then high: [20000, 29999] or 20000-29999");
    } else if (*hi >= 32768 && *lo <= 60999) {
      r.error("port_range", fmt::format("{}-{} overlaps Linux's ephemeral port range 32768-60999, where outgoing "
                                        "connections may already hold the port; choose ports below 32768",
                                        *lo, *hi));
    } else {
      spec.master.port_min = static_cast<int>(*lo), spec.master.port_max = static_cast<int>(*hi);
    }
  }
  r.finish();
}

}  // namespace ddpctl
