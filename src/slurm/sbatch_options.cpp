#include "slurm/sbatch_options.hpp"

#include <algorithm>
#include <cctype>

namespace ddpctl {

namespace {

// In all three versions.
const char* const kCommon[] = {
    "account", "acctg-freq", "array", "batch", "bb", "bbf", "begin", "chdir", "cluster", "cluster-constraint",
    "clusters", "comment", "constraint", "container", "context", "contiguous", "core-spec", "cores-per-socket",
    "cpu-freq", "cpus-per-gpu", "cpus-per-task", "deadline", "delay-boot", "dependency", "distribution", "error",
    "exclude", "exclusive", "export", "export-file", "extra-node-info", "get-user-env", "gid", "gpu-bind",
    "gpu-freq", "gpus", "gpus-per-node", "gpus-per-socket", "gpus-per-task", "gres", "gres-flags", "help",
    "hint", "hold", "ignore-pbs", "input", "job-name", "kill-on-invalid-dep", "licenses", "mail-type",
    "mail-user", "mcs-label", "mem", "mem-bind", "mem-per-cpu", "mem-per-gpu", "mincpus", "network", "nice",
    "no-kill", "no-requeue", "nodefile", "nodelist", "nodes", "ntasks", "ntasks-per-core", "ntasks-per-gpu",
    "ntasks-per-node", "ntasks-per-socket", "ntasks-per-tres", "open-mode", "output", "overcommit",
    "oversubscribe", "parsable", "partition", "prefer", "priority", "profile", "propagate", "qos", "quiet",
    "reboot", "requeue", "reservation", "signal", "sockets-per-node", "spread-job", "switches", "tasks-per-node",
    "test-only", "thread-spec", "threads-per-core", "time", "time-min", "tmp", "uid", "usage", "use-min-nodes",
    "verbose", "version", "wait", "wait-all-nodes", "wckey", "wrap",
};
const char* const kOnly2205[] = {"power"};
const char* const kSince2411[] = {"autocomplete", "container-id", "extra", "oom-kill-step", "resv-ports",
                                  "segment", "stepmgr", "tres-bind", "tres-per-task"};
const char* const kSince2605[] = {"consolidate-segments", "container-type", "external", "mem-update", "resources",
                                  "spread-segments"};

template <size_t N>
void add(std::vector<std::string>& v, const char* const (&names)[N]) {
  v.insert(v.end(), names, names + N);
}

}  // namespace

const std::vector<SbatchOptionSet>& sbatch_option_sets() {
  static const std::vector<SbatchOptionSet> sets = [] {
    SbatchOptionSet v22{"22.05", {}}, v24{"24.11", {}}, v26{"26.05", {}};
    add(v22.names, kCommon), add(v22.names, kOnly2205);
    add(v24.names, kCommon), add(v24.names, kSince2411);
    add(v26.names, kCommon), add(v26.names, kSince2411), add(v26.names, kSince2605);
    for (auto* s : {&v22, &v24, &v26}) std::sort(s->names.begin(), s->names.end());
    return std::vector<SbatchOptionSet>{v22, v24, v26};
  }();
  return sets;
}

SbatchName resolve_sbatch_name(const std::string& name, const std::vector<std::string>& options) {
  SbatchName r;
  if (std::find(options.begin(), options.end(), name) != options.end()) {
    r.kind = SbatchNameKind::Exact;
    r.option = name;
    return r;
  }
  for (const auto& o : options)
    if (o.size() > name.size() && o.compare(0, name.size(), name) == 0) r.candidates.push_back(o);
  if (r.candidates.size() == 1) {
    r.kind = SbatchNameKind::Prefix;
    r.option = r.candidates[0];
    r.candidates.clear();
  } else if (r.candidates.size() > 1) {
    r.kind = SbatchNameKind::Ambiguous;
  }
  return r;
}

std::string sbatch_canonical_option(const std::string& option) {
  if (option == "tasks-per-node") return "ntasks-per-node";
  return option;
}

std::set<std::string> sbatch_long_options(const std::string& help_text) {
  std::set<std::string> out;
  for (size_t at = help_text.find("--"); at != std::string::npos; at = help_text.find("--", at + 2)) {
    if (at > 0 && !std::isspace(static_cast<unsigned char>(help_text[at - 1])) && help_text[at - 1] != '[' &&
        help_text[at - 1] != ',')
      continue;
    size_t end = at + 2;
    while (end < help_text.size() &&
           (std::isalnum(static_cast<unsigned char>(help_text[end])) || help_text[end] == '-'))
      ++end;
    if (end > at + 3) out.insert(help_text.substr(at + 2, end - at - 2));
  }
  return out;
}

}  // namespace ddpctl
