#include "spec/spec_setup.hpp"

#include <cctype>
#include <cstring>
#include <fmt/format.h>

#include "base/shell.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

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
    // Each problem at its own entry's line (one --set made may have no other).
    MapReader entries(r.document(), r.node("extra"), r.field("extra"), r.diagnostics());
    for (const auto& [name, value] : *extra) {
      if (!is_env_name(name) || !(name.rfind("NCCL_", 0) == 0 || name.rfind("TORCH_NCCL_", 0) == 0)) {
        r.diagnostics().error(entries.where(name), r.field("extra"),
                              fmt::format("{} is not an NCCL_* or TORCH_NCCL_* variable name", printable(name)));
        continue;
      }
      out.extra.emplace_back(name, value);
    }
  }
  r.finish();
  return out;
}

std::optional<std::string> env_value_problem(const std::string& name, const std::string& value) {
  if (name.size() + 1 + value.size() >= 131072)
    // The environment string is NAME=value: Linux's 128 KiB cap counts it whole.
    return fmt::format("{}=... is {} bytes with its name; Linux passes at most 128 KiB (131071 bytes) in one "
                       "environment variable, and every command of the job would fail with \"Argument list too "
                       "long\"",
                       name, name.size() + 1 + value.size());
  if ((name == "PATH" || name == "LD_LIBRARY_PATH") && !refers_to_itself(name, value))
    // Replaced wholesale, the job's own commands (srun, scontrol) or the
    // site's libraries would not be found, and the job fails after its wait.
    return fmt::format("{1} would replace {0} wholesale, and the job's own commands (srun, scontrol) or the site's "
                       "libraries would not be found; write {2} to put it first (or {3} last)",
                       name, printable(value, 60), printable(value + ":$" + name, 80),
                       printable("$" + name + ":" + value, 80));
  return std::nullopt;
}

void read_job_setup(MapReader& top, RunSpec& spec) {
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
      } else if (auto problem = env_value_problem(name, value)) {
        error(name, *problem);
      } else {
        spec.env.emplace_back(name, value);
      }
    }
  }
  spec.nccl = read_nccl_settings(top, "nccl");
  if (auto v = top.string_list("setup", {}, /*allow_tab=*/true)) spec.setup = *v;
}

}  // namespace ddpctl
