// ddpctl doctor: what this site's Slurm can do, and a cluster profile draft.
#include <algorithm>
#include <ctime>
#include <fmt/format.h>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "app.hpp"
#include "common.hpp"
#include "files.hpp"
#include "slurm.hpp"
#include "text.hpp"
#include "values.hpp"

namespace ddpctl::cli {

namespace {

struct DoctorOptions {
  std::string output;
  std::string name;
};

struct PartitionFacts {
  int nodes = 0;
  int min_cpus = 0;
  long long min_mem = 0;
  int min_gpus = -1;
  std::set<std::string> gpu_types, features;
  std::string max_time, default_time;
  bool is_default = false;
};

void check(const std::string& what, bool ok, const std::string& detail) {
  std::cerr << fmt::format("{:<28} {} {}\n", what, ok ? paint("ok  ", "32") : paint("FAIL", "31"), detail);
}

std::string yaml_key(const std::string& s) {
  bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
  return plain ? s : "\"" + s + "\"";
}

void run_doctor(const DoctorOptions& o) {
  SystemCommandRunner runner;
  SlurmClient slurm(runner);
  std::string error;
  std::string version = slurm.version(&error);
  check("Slurm version", !version.empty(), version.empty() ? error : version);
  if (version.empty()) throw UserError("Slurm's commands do not work here (" + error + "); is this a login node?");

  CommandResult sq = slurm.raw({"squeue", "--json"});
  bool json_ok = false;
  if (sq.ok()) try {
      parse_squeue_json(sq.out);
      json_ok = true;
    } catch (const std::exception&) {
    }
  check("squeue --json", json_ok, json_ok ? "readable" : "not available; status uses squeue -o instead");
  JobQuery acct = slurm.accounting({}, static_cast<long long>(std::time(nullptr)) - 60);
  check("sacct (accounting)", acct.answered,
        acct.answered ? "available: finished jobs stay visible" : "unavailable (" + acct.error + ")");
  auto config = slurm.config();
  std::string min_job_age = config.count("MinJobAge") ? config["MinJobAge"] : "?";
  check("MinJobAge", !config.empty(), min_job_age + (acct.answered ? "" : " (how long squeue remembers ended jobs)"));
  std::string cluster_name = config.count("ClusterName") ? config["ClusterName"] : "";
  if (!o.name.empty()) cluster_name = o.name;
  if (cluster_name.empty()) cluster_name = "mysite";

  NodeQuery nodes = slurm.nodes();
  check("sinfo --json", nodes.answered, nodes.answered ? fmt::format("{} nodes", nodes.nodes.size()) : nodes.error);
  if (!nodes.answered) throw UserError("cannot list the nodes: " + nodes.error);

  std::map<std::string, PartitionFacts> parts;
  std::set<std::string> all_types;
  for (const auto& n : nodes.nodes)
    for (const auto& p : n.partitions) {
      PartitionFacts& f = parts[p];
      f.nodes++;
      f.min_cpus = f.min_cpus == 0 ? n.cpus : std::min(f.min_cpus, n.cpus);
      f.min_mem = f.min_mem == 0 ? n.memory_mib : std::min(f.min_mem, n.memory_mib);
      f.min_gpus = f.min_gpus < 0 ? n.total_gpus() : std::min(f.min_gpus, n.total_gpus());
      for (const auto& [type, count] : n.gpus_by_type)
        if (!type.empty() && count > 0) f.gpu_types.insert(type), all_types.insert(type);
      for (const auto& feat : n.features) f.features.insert(feat);
    }
  CommandResult limits = slurm.raw({"sinfo", "-h", "-o", "%P|%l|%L"});
  std::istringstream lines(limits.out);
  for (std::string line; std::getline(lines, line);) {
    auto bar = line.find('|');
    if (bar == std::string::npos) continue;
    std::string name = line.substr(0, bar);
    bool is_default = !name.empty() && name.back() == '*';
    if (is_default) name.pop_back();
    if (!parts.count(name)) continue;
    parts[name].is_default = is_default;
    std::string rest = line.substr(bar + 1), max_time = rest.substr(0, rest.find('|'));
    std::string default_time = rest.find('|') == std::string::npos ? "" : rest.substr(rest.find('|') + 1);
    std::string problem;
    if (parse_slurm_time(max_time, &problem)) parts[name].max_time = max_time;
    if (parse_slurm_time(default_time, &problem)) parts[name].default_time = default_time;
  }
  for (const auto& [name, f] : parts)
    check("partition " + name, true,
          fmt::format("{} nodes, {} CPUs, {} GPUs{}{}", f.nodes, f.min_cpus, std::max(f.min_gpus, 0),
                      f.gpu_types.empty() ? "" : " (" + join({f.gpu_types.begin(), f.gpu_types.end()}, ",") + ")",
                      f.features.empty() ? "" : ", features " + join({f.features.begin(), f.features.end()}, ",")));
  auto accounts = slurm.user_accounts();
  check("accounts", accounts.has_value(), accounts ? join(*accounts, ", ") : "sacctmgr cannot list them");

  std::ostringstream y;
  y << fmt::format("# Cluster profile drafted by `ddpctl doctor` from Slurm {} on {}.\n", version, utc_now_iso());
  y << "# Check it: node sizes are the smallest node of each partition, and the\n"
       "# fabric interface cannot be seen from here (run `ip -4 addr` on a compute node).\n";
  y << "name: " << yaml_key(cluster_name) << "\n";
  y << "description: " << yaml_key(cluster_name) << " (drafted by ddpctl doctor)\n";
  y << "gpu_request: gres\n";
  for (const auto& [name, f] : parts)
    if (f.is_default) {
      y << "default_partition: " << yaml_key(name) << "\n";
      if (!f.default_time.empty())
        y << "default_time: \"" << f.default_time << "\"\n";
      else
        y << "# default_time: \"01:00:00\"  (Slurm sets none; without it every spec needs time:)\n";
    }
  y << "# interface: ib0\n";
  if (!all_types.empty()) {
    y << "gpu_types:\n";
    for (const auto& t : all_types) y << fmt::format("  {}: {{gres: {}}}\n", yaml_key(t), yaml_key(t));
  }
  y << "partitions:\n";
  for (const auto& [name, f] : parts) {
    int gpus = std::max(f.min_gpus, 0);
    y << fmt::format("  {}: {{nodes: {}, gpus_per_node: {}", yaml_key(name), f.nodes, gpus);
    if (gpus > 0 && !f.gpu_types.empty())
      y << ", gpu_types: [" << join({f.gpu_types.begin(), f.gpu_types.end()}, ", ") << "]";
    if (f.min_cpus > 0) y << ", cpus_per_node: " << f.min_cpus;
    if (f.min_mem > 0) y << ", mem_per_node: " << f.min_mem << "M";
    if (!f.max_time.empty()) y << ", max_time: \"" << f.max_time << "\"";
    y << "}\n";
  }
  if (o.output.empty()) {
    std::cout << y.str();
  } else {
    write_file_atomic(o.output, y.str());
    std::cerr << "wrote " << o.output << "\n";
  }
}

}  // namespace

void setup_doctor(CLI::App& app) {
  auto opts = std::make_shared<DoctorOptions>();
  CLI::App* cmd = app.add_subcommand("doctor", "Probe this site's Slurm and draft a cluster profile for it");
  cmd->add_option("-o,--output", opts->output, "Write the profile draft to this file instead of stdout");
  cmd->add_option("--name", opts->name, "Name of the profile (default: Slurm's ClusterName)");
  cmd->callback([opts] { run_doctor(*opts); });
}

}  // namespace ddpctl::cli
