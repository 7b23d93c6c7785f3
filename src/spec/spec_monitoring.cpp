#include "spec/spec_monitoring.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "spec/stall_action.hpp"
#include "spec/metric_pattern.hpp"
#include "spec/progress_pattern.hpp"
#include "base/text.hpp"

namespace ddpctl {

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
        // `job watch --action`'s words (stall_action.hpp).
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
