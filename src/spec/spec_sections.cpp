#include "spec/spec_sections.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

#include "spec/job_contract.hpp"
#include "spec/metric_pattern.hpp"
#include "spec/progress_pattern.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

std::optional<std::string> check_output_dir(const std::string& s) {
  if (s.empty()) return "must not be empty";
  if (s[0] == '~') return "starts with '~', which Slurm does not expand; write the full path";
  if (s[0] == '-') return "must not start with '-'";
  for (char c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._-/+@,:").find(c) != std::string_view::npos ||
              static_cast<unsigned char>(c) >= 0x80;
    if (!ok)
      return c == '%' ? "contains '%', which Slurm reads as a filename pattern"
                      : "must be a path of letters, digits and . _ - / + @ , : (it is used in #SBATCH lines, which "
                        "Slurm splits at spaces and does not unquote)";
  }
  return std::nullopt;
}


std::optional<std::string> reserved_env_reason(const std::string& name) {
  static const std::vector<std::string> managed = {
      "MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "NODE_RANK",
      "GROUP_RANK", "NNODES", "NPROC_PER_NODE", "CUDA_VISIBLE_DEVICES"};
  for (const auto& m : managed)
    if (name == m) return "is set by ddpctl (or Slurm) for every rank and cannot be overridden in env:";
  auto starts = [&](const char* p) { return name.rfind(p, 0) == 0; };
  if (starts("SLURM_") || starts("SBATCH_") || starts("SRUN_"))
    return "is a Slurm variable; set the matching spec field instead of exporting it";
  if (starts("DDPCTL_")) return "is reserved for ddpctl";
  if (starts("NCCL_") || starts("TORCH_NCCL_"))
    return "is an NCCL setting: put it under nccl: (typed) or nccl.extra: so it is checked and shown in one place";
  return std::nullopt;
}

const std::vector<NcclOption>& nccl_options() {
  static const std::vector<NcclOption> options = {
      {"socket_ifname", {"NCCL_SOCKET_IFNAME"}, "interfaces for NCCL's bootstrap and socket transport"},
      {"ib_disable", {"NCCL_IB_DISABLE"}, "true to disable InfiniBand"},
      {"ib_hca", {"NCCL_IB_HCA"}, "InfiniBand HCAs to use, e.g. mlx5_0"},
      {"ib_timeout", {"NCCL_IB_TIMEOUT"}, "InfiniBand timeout exponent"},
      {"net_gdr_level", {"NCCL_NET_GDR_LEVEL"}, "GPUDirect RDMA distance"},
      {"p2p_level", {"NCCL_P2P_LEVEL"}, "peer-to-peer distance"},
      {"p2p_disable", {"NCCL_P2P_DISABLE"}, "true to disable peer-to-peer"},
      {"shm_disable", {"NCCL_SHM_DISABLE"}, "true to disable shared memory"},
      {"debug", {"NCCL_DEBUG"}, "log level"},
      {"debug_subsys", {"NCCL_DEBUG_SUBSYS"}, "log subsystems"},
      // Torch 2.2+ reads the TORCH_ name, 1.13-2.1 the older one: export both.
      {"async_error_handling", {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "NCCL_ASYNC_ERROR_HANDLING"},
       "abort collectives that time out instead of hanging"},
      {"blocking_wait", {"TORCH_NCCL_BLOCKING_WAIT", "NCCL_BLOCKING_WAIT"}, "wait for collectives on the host"},
      {"timeout", {"DDPCTL_COLLECTIVE_TIMEOUT"}, "collective timeout in seconds (the bundled trainer's process group)"},
  };
  return options;
}

NcclSettings read_nccl_settings(MapReader& parent, const std::string& key) {
  NcclSettings out;
  if (!parent.has(key)) return out;
  MapReader r(parent.document(), parent.node(key), parent.field(key), parent.diagnostics());
  if (!r.valid()) return out;
  auto charset = [](const char* extra, const char* what) {
    return [extra, what](const std::string& s) -> std::optional<std::string> {
      for (char c : s)
        if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr(extra, c)) return std::string("must be ") + what;
      if (s.empty()) return std::string("must not be empty");
      return std::nullopt;
    };
  };
  auto level = [](std::vector<std::string> names) {
    return [names](const std::string& s) -> std::optional<std::string> {
      std::string problem;
      for (const auto& n : names)
        if (n == s) return std::nullopt;
      if (parse_int(s, 0, 5, &problem)) return std::nullopt;
      return fmt::format("must be 0-5 or one of {}", quoted_list(names));
    };
  };
  auto set = [&](const char* k, std::optional<std::string> v) {
    if (v) out.values[k] = *v;
  };
  auto flag = [&](const char* k) {
    if (auto b = r.boolean(k)) set(k, std::string(*b ? "1" : "0"));
  };
  set("socket_ifname", r.string("socket_ifname", charset("_.,^=:-", "interface names joined by commas, optionally "
                                                                      "prefixed by ^ (exclude) or = (exact)")));
  flag("ib_disable");
  set("ib_hca", r.string("ib_hca", charset("_.,^=:-", "HCA names joined by commas, e.g. mlx5_0:1,mlx5_1")));
  if (auto v = r.integer("ib_timeout", 1, 31)) set("ib_timeout", std::to_string(*v));
  set("net_gdr_level", r.string("net_gdr_level", level({"LOC", "PIX", "PXB", "PHB", "SYS"})));
  set("p2p_level", r.string("p2p_level", level({"LOC", "NVL", "PIX", "PXB", "PHB", "SYS"})));
  flag("p2p_disable");
  flag("shm_disable");
  set("debug", r.string("debug", [](const std::string& s) -> std::optional<std::string> {
        std::vector<std::string> levels = {"VERSION", "WARN", "INFO", "TRACE"};
        for (const auto& l : levels)
          if (l == s) return std::nullopt;
        return "must be one of " + quoted_list(levels) + did_you_mean(s, levels);
      }));
  set("debug_subsys", r.string("debug_subsys", charset("_,^", "subsystem names joined by commas, e.g. INIT,NET")));
  if (r.has("async_error_handling")) {
    std::string text = r.node("async_error_handling").IsScalar() ? r.node("async_error_handling").Scalar() : "";
    std::string problem;
    if (auto b = parse_bool(text, &problem)) set("async_error_handling", std::string(*b ? "1" : "0"));
    else if (auto v = r.integer("async_error_handling", 0, 3)) set("async_error_handling", std::to_string(*v));
  }
  flag("blocking_wait");
  if (auto v = r.integer("timeout", 1, 86400)) set("timeout", std::to_string(*v));
  if (auto extra = r.string_map("extra")) {
    for (const auto& [name, value] : *extra) {
      if (!is_env_name(name) || !(name.rfind("NCCL_", 0) == 0 || name.rfind("TORCH_NCCL_", 0) == 0)) {
        r.error("extra", fmt::format("{} is not an NCCL_* or TORCH_NCCL_* variable name", printable(name)));
        continue;
      }
      out.extra.emplace_back(name, value);
    }
  }
  r.finish();
  return out;
}

void read_environment(MapReader& top, RunSpec& spec) {
  if (auto v = top.string_list("modules", [](const std::string& s) -> std::optional<std::string> {
        for (char c : s)
          if (!std::isalnum(static_cast<unsigned char>(c)) && !std::strchr("_./+:@-", c))
            return "must be a module name such as cuda/12.1 (letters, digits and _ . / + : @ -)";
        if (s.empty() || s[0] == '-') return "must be a module name, not an option";
        return std::nullopt;
      }))
    spec.modules = *v;
  if (auto env = top.string_map("env")) {
    // Each problem at its own entry's line, as env.NAME.
    MapReader entries(top.document(), top.node("env"), "env", top.diagnostics());
    auto error = [&](const std::string& name, const std::string& message) {
      top.diagnostics().error(entries.where(name), "env." + name, message);
    };
    for (const auto& [name, value] : *env) {
      // At the entry, as env: (a grid's cell may have made env: itself, at no line).
      if (!is_env_name(name)) {
        top.diagnostics().error(entries.where(name), "env",
                                fmt::format("{} is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)", printable(name)));
      } else if (auto reason = reserved_env_reason(name)) {
        top.diagnostics().error(entries.where(name), "env", fmt::format("{} {}", name, *reason));
      } else if (name.size() + 1 + value.size() >= 131072) {
        // The environment string is NAME=value: Linux's 128 KiB cap counts it whole.
        error(name, fmt::format("{}=... is {} bytes with its name; Linux passes at most 128 KiB (131071 bytes) in "
                                "one environment variable, and every command of the job would fail with \"Argument "
                                "list too long\"",
                                name, name.size() + 1 + value.size()));
      } else if ((name == "PATH" || name == "LD_LIBRARY_PATH") && !refers_to_itself(name, value)) {
        // Replaced wholesale, the job's own commands (srun, scontrol) or the
        // site's libraries would not be found, and the job fails after its wait.
        error(name, fmt::format("{1} would replace {0} wholesale, and the job's own commands (srun, scontrol) or the "
                                "site's libraries would not be found; write {2} to put it first (or {3} last)",
                                name, printable(value, 60), printable(value + ":$" + name, 80),
                                printable("$" + name + ":" + value, 80)));
      } else {
        spec.env.emplace_back(name, value);
      }
    }
  }
  spec.nccl = read_nccl_settings(top, "nccl");
  if (auto v = top.string_list("setup", {}, /*allow_tab=*/true)) spec.setup = *v;
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

void read_requeue(MapReader& top, RunSpec& spec) {
  if (!top.has("requeue")) return;
  MapReader r(top.document(), top.node("requeue"), "requeue", top.diagnostics());
  if (!r.valid()) return;
  RequeueSettings q;
  q.where = top.where("requeue");
  static const std::vector<std::string> signals = {"USR1", "USR2", "TERM", "INT", "HUP", "URG"};
  if (auto v = r.string("signal", [](const std::string& s) -> std::optional<std::string> {
        std::string name = s.rfind("SIG", 0) == 0 ? s.substr(3) : s;
        for (const auto& sig : signals)
          if (sig == name) return std::nullopt;
        return "must be one of " + quoted_list(signals) + did_you_mean(name, signals);
      }))
    q.signal = v->rfind("SIG", 0) == 0 ? v->substr(3) : *v;
  if (auto v = r.integer("grace", 10, 65535)) q.grace_s = static_cast<int>(*v);
  if (auto v = r.integer("max_restarts", 0, 1000)) q.max_restarts = static_cast<int>(*v);
  r.finish();
  spec.requeue = q;
}

void read_restart(MapReader& top, RunSpec& spec) {
  if (!top.has("restart")) return;
  MapReader r(top.document(), top.node("restart"), "restart", top.diagnostics());
  if (!r.valid()) return;
  RestartSettings s;
  s.where = top.where("restart");
  bool ok = true;
  if (!r.has("in_job")) {
    top.diagnostics().error(s.where, "restart.in_job",
                            "required: how many times the training step may start again inside the job, e.g. 3");
    ok = false;
  } else if (auto v = r.integer("in_job", 1, 100)) {
    s.in_job = static_cast<int>(*v);
  } else {
    ok = false;
  }
  if (auto v = r.integer("spares", 0, 64)) s.spares = static_cast<int>(*v);
  else if (r.has("spares")) ok = false;
  if (auto v = r.integer("min_nodes", 1, 100000)) s.min_nodes = static_cast<int>(*v);
  else if (r.has("min_nodes")) ok = false;
  if (r.has("min_nodes")) spec.where["restart.min_nodes"] = r.where("min_nodes");
  r.finish();
  // The batch shell asks the job agent which node failed and what to do.
  if (!spec.monitor.enabled) {
    top.diagnostics().error(s.where, "restart",
                            "in-job restarts are decided by the job agent, which `monitor: false` turns off");
    ok = false;
  }
  // A race's winner restarts inside its job like any job: its claim is the
  // job's, for all its steps (docs/race.md); so does a grid's array task,
  // each in its own allocation.
  if (ok) spec.restart = s;
}

void read_progress_section(MapReader& top, RunSpec& spec) {
  if (!top.has("progress")) return;
  auto preset_check = [](const std::string& s) -> std::optional<std::string> {
    if (progress_preset(s)) return std::nullopt;
    auto names = progress_preset_names();
    return fmt::format("is not a bundled pattern; the presets are {}{} (or write pattern: with named groups)",
                       quoted_list(names), did_you_mean(s, names));
  };
  YAML::Node node = top.node("progress");
  if (node.IsScalar()) {  // progress: lightning
    if (auto name = top.string("progress", preset_check)) spec.progress = progress_preset(*name);
    return;
  }
  MapReader r(top.document(), node, "progress", top.diagnostics());
  if (!r.valid()) return;
  ProgressSpec p;
  bool has_preset = r.has("preset"), has_pattern = r.has("pattern");
  if (has_preset && has_pattern) {
    r.error("pattern", "set either preset: (a bundled pattern) or pattern: (your own), not both");
  } else if (!has_preset && !has_pattern) {
    top.diagnostics().error(top.where("progress"), "progress.pattern",
                            fmt::format("required: set pattern: (a regular expression with named groups such as "
                                        "(?<epoch>\\d+)) or preset: (one of {})",
                                        quoted_list(progress_preset_names())));
  }
  bool ok = true;
  if (has_preset) {
    if (auto name = r.string("preset", preset_check)) p = *progress_preset(*name);
    else ok = false;
  }
  if (has_pattern) {
    if (auto v = r.string("pattern", [](const std::string& s) -> std::optional<std::string> {
          std::string problem;
          if (compile_progress_pattern(s, &problem)) return std::nullopt;
          return problem;
        }))
      p.pattern = *v;
    else ok = false;
  }
  if (auto v = r.string("file", [](const std::string& s) -> std::optional<std::string> {
        if (s == "rank0" || s == "batch") return std::nullopt;
        return "must be 'rank0' (task 0's output, where torchrun and most programs print) or 'batch' (the job's "
               "batch log)" + did_you_mean(s, {"rank0", "batch"});
      }))
    p.file = *v;
  if (auto v = r.integer("epochs", 1, 1000000)) p.epochs = static_cast<int>(*v);
  if (auto v = r.integer("epoch_base", 0, 1)) p.epoch_base = static_cast<int>(*v);
  r.finish();
  if (ok && (has_preset || has_pattern)) spec.progress = p;
}

void read_metric_section(MapReader& top, RunSpec& spec) {
  if (!top.has("metric")) return;
  auto check = [](const std::string& s) { return metric_pattern_problem(s); };
  MetricSpec m;
  bool ok = true;
  auto read_patterns = [&](MapReader& r, const std::string& key) {
    YAML::Node node = r.node(key);
    if (node.IsSequence()) {
      auto v = r.string_list(key, check);
      if (v && v->empty()) r.error(key, "an empty list: name at least one pattern");
      if (v && !v->empty()) m.patterns = *v;
      else ok = false;
    } else if (auto v = r.string(key, check)) {
      m.patterns = {*v};
    } else {
      ok = false;
    }
  };
  YAML::Node node = top.node("metric");
  if (!node.IsMap()) {
    read_patterns(top, "metric");
  } else {
    MapReader r(top.document(), node, "metric", top.diagnostics());
    if (!r.has("pattern")) {
      top.diagnostics().error(top.where("metric"), "metric.pattern",
                              "required: a regular expression whose named groups are the metrics, e.g. "
                              "'val_loss=(?P<val_loss>[0-9.eE+-]+)' (or a list of them)");
      ok = false;
    } else {
      read_patterns(r, "pattern");
    }
    if (auto v = r.string("file", [](const std::string& s) -> std::optional<std::string> {
          if (s == "rank0" || s == "batch") return std::nullopt;
          return "must be 'rank0' (task 0's output) or 'batch' (the job's batch log)" + did_you_mean(s, {"rank0", "batch"});
        }))
      m.file = *v;
    r.finish();
  }
  if (ok) spec.metric = m;
}

// monitor: false | {interval, node_check, check_timeout}
// watchdog: false | {stall_after, action, slow_after, exclude_slow}
void read_running_sections(MapReader& top, RunSpec& spec) {
  if (top.has("monitor")) {
    YAML::Node node = top.node("monitor");
    if (node.IsScalar()) {
      if (auto on = top.boolean("monitor")) spec.monitor.enabled = *on;
    } else {
      MapReader r(top.document(), node, "monitor", top.diagnostics());
      if (r.valid()) {
        if (auto v = r.span("interval")) {
          if (*v < 1 || *v > 300) r.error("interval", "must be between 1s and 5m");
          else spec.monitor.interval_s = static_cast<int>(*v);
        }
        if (auto v = r.boolean("node_check")) spec.monitor.node_check = *v;
        if (auto v = r.span("check_timeout")) {
          if (*v < 2 || *v > 300) r.error("check_timeout", "must be between 2s and 5m");
          else spec.monitor.check_timeout_s = static_cast<int>(*v);
        }
        r.finish();
      }
    }
  }
  if (top.has("watchdog")) {
    spec.watchdog.where = top.where("watchdog");
    YAML::Node node = top.node("watchdog");
    if (node.IsScalar()) {
      if (auto on = top.boolean("watchdog")) spec.watchdog.enabled = *on;
    } else {
      MapReader r(top.document(), node, "watchdog", top.diagnostics());
      if (r.valid()) {
        if (auto v = r.span("stall_after")) spec.watchdog.stall_after_s = *v;
        // `job watch --action`'s words (job_contract.hpp).
        static const std::vector<std::string> actions = [] {
          std::vector<std::string> names;
          for (StallAction a : stall_actions()) names.push_back(stall_action_name(a));
          return names;
        }();
        if (auto v = r.string("action", [](const std::string& a) -> std::optional<std::string> {
              if (std::find(actions.begin(), actions.end(), a) != actions.end()) return std::nullopt;
              return "must be one of " + quoted_list(actions) + did_you_mean(a, actions);
            }))
          spec.watchdog.action = *v;
        // Three observations at least, so that one late sample is no stall.
        long long least = std::max<long long>(10, 3LL * spec.monitor.interval_s);
        if (spec.watchdog.stall_after_s < least)
          r.error("stall_after", fmt::format("must be at least {}s (three monitor intervals, and 10s)", least));
        if (spec.watchdog.action == "requeue" && !top.has("requeue"))
          r.error("action", "requeue needs a requeue: section (max_restarts), and the program resuming from its "
                            "checkpoint; or use cancel");
        if (spec.watchdog.action == "restart" && !top.has("restart"))
          r.error("action", "restart starts the stalled step again inside the job, which needs a restart: section "
                            "(in_job, spares); or use requeue or cancel");
        // Slow ranks (docs/running.md "Stragglers"): named after minutes, not one look.
        if (auto v = r.span("slow_after")) {
          long long least_slow = std::max<long long>(30, 6LL * spec.monitor.interval_s);
          if (*v < least_slow)
            r.error("slow_after", fmt::format("must be at least {}s (six monitor intervals, and 30s)", least_slow));
          else
            spec.watchdog.slow_after_s = *v;
        }
        if (auto v = r.boolean("exclude_slow")) {
          spec.watchdog.exclude_slow = *v;
          if (*v && !top.has("requeue") && !top.has("restart"))
            r.error("exclude_slow", "leaves a slow node out of the job's next attempt or in-job restart, which needs a "
                                    "requeue: section (max_restarts) or a restart: section (in_job)");
        }
        r.finish();
      }
    }
  }
  if (!spec.monitor.enabled && top.has("watchdog") && spec.watchdog.enabled)
    top.diagnostics().error(top.where("watchdog"), "watchdog",
                            "the watchdog observes through the monitor, which `monitor: false` turns off");
}

}  // namespace ddpctl
