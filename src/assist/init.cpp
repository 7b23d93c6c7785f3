#include "assist/init.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <sstream>

#include "spec/cluster.hpp"
#include "base/files.hpp"
#include "base/paths.hpp"
#include "script/resolve.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

namespace {

// A word of a YAML flow list: plain when YAML cannot read it as anything
// but that string, else double-quoted.
std::string yaml_word(const std::string& w) {
  static const std::vector<std::string> special = {"true", "false", "yes", "no", "on", "off", "null", "y", "n"};
  bool plain = !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '/' ||
                              (w.size() > 1 && w[0] == '-' && w[1] == '-')) &&
               std::all_of(w.begin(), w.end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' || c == '-' ||
                        c == '=';
               }) &&
               std::none_of(special.begin(), special.end(), [&](const std::string& k) {
                 return k.size() == w.size() && std::equal(k.begin(), k.end(), w.begin(), [](char a, char b) {
                   return a == std::tolower(static_cast<unsigned char>(b));
                 });
               });
  if (plain) return w;
  std::string out = "\"";
  for (char c : w) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// `key: value` with its comment aligned at column 28.
std::string line(const std::string& text, const std::string& comment = "") {
  if (comment.empty()) return text + "\n";
  std::string padded = text;
  if (padded.size() < 27) padded.resize(27, ' ');
  return padded + " # " + comment + "\n";
}

const Partition* partition_for(const ClusterProfile& p, int gpus, const std::string& type) {
  for (const auto& part : p.partitions) {
    if (part.gpus_per_node < gpus) continue;
    if (!type.empty() && !part.gpu_types.empty() &&
        std::find(part.gpu_types.begin(), part.gpu_types.end(), type) == part.gpu_types.end())
      continue;
    return &part;
  }
  return nullptr;
}

// The run's name: as asked, else the output file's stem, else "train".
std::string starter_name(const InitRequest& req) {
  std::string name = req.name;
  if (name.empty()) name = req.output.empty() ? "train" : fs::path(req.output).stem().string();
  if (!is_run_name(name))
    throw UserError(Location{"--name"}, "",
                    fmt::format("'{}' cannot name a run: letters, digits, '.', '_' or '-', at most 64", name));
  return name;
}

// The shape's lines: nodes, GPUs, type, partition, time, account, output.
void write_shape(std::ostringstream& y, const InitRequest& req, const ClusterProfile& profile,
                 const StarterShape& shape) {
  const int gpus = shape.gpus;
  const Partition* chosen = shape.chosen;
  y << "\n# The shape: nodes x GPUs per node, one rank per GPU.\n";
  y << line(fmt::format("nodes: {}", req.nodes));
  y << line(fmt::format("gpus_per_node: {}", gpus), gpus == 0 ? "0: a CPU-only run" : "");
  if (gpus == 0) y << line("procs_per_node: 1", "ranks per node of a CPU-only run");
  std::string types = join(profile.gpu_type_names(), ", ");
  if (!shape.type.empty())
    y << line("gpu_type: " + shape.type, types.empty() ? "" : "this site's: " + types);
  else if (gpus > 0 && !types.empty())
    y << line("# gpu_type: " + profile.gpu_type_names().front(), "this site's: " + types);
  std::string parts = join(profile.partition_names(), ", ");
  if (!shape.partition.empty())
    y << line("partition: " + shape.partition, "this site's: " + parts);
  else if (!parts.empty())
    y << line("# partition: " + (chosen ? chosen->name : profile.partitions.front().name),
              profile.dialect == GpuDialect::Partition && gpus > 0 ? "picked from gpu_type at this site"
                                                                   : "default: " + profile.default_partition);
  std::string max_time = chosen && chosen->max_time_s ? format_slurm_time(*chosen->max_time_s) : "";
  std::string time_note = max_time.empty() ? "" : "the partition allows " + max_time;
  if (!req.time.empty())
    y << line("time: \"" + req.time + "\"", time_note);
  else if (profile.default_time_s)
    y << line("time: \"" + format_slurm_time(*profile.default_time_s) + "\"",
              "the site's default" + (time_note.empty() ? "" : "; " + time_note));
  else
    y << line("time: \"01:00:00\"", time_note.empty() ? "the site sets no default" : time_note);
  if (!req.account.empty())
    y << line("account: " + req.account);
  else
    y << line("# account: YOUR_ACCOUNT", "yours: `sacctmgr -n show assoc user=$USER format=account`");
  y << line("output_dir: logs", "%x_%j.out/.err of each job; made at submit");
}

// The program: the bundled trainer, or the user's command.
void write_program(std::ostringstream& y, const InitRequest& req) {
  if (req.command.empty()) {
    y << "\n# The bundled LibTorch trainer (ddp-train) on generated data: a first run\n"
         "# that needs no dataset. Replace it with `command: [python, train.py]`\n"
         "# (or `ddpctl init ... -- python train.py`) for your own program.\n";
    y << "trainer:\n";
    y << line("  model: resnet18", "resnet18, resnet50 or smallcnn");
    y << line("  data: synthetic", "or a TinyImageNet/ImageFolder folder");
    y << line("  epochs: 1");
    return;
  }
  bool torchrun = fs::path(req.command.front()).filename() == "torchrun";
  y << "\n# Your program. ddpctl exports MASTER_ADDR, MASTER_PORT, WORLD_SIZE, NNODES,\n"
       "# NODE_RANK and, with launch: per-gpu, RANK and LOCAL_RANK (docs/spec.md \"Launch\").\n";
  y << line(torchrun ? "launch: per-node" : "launch: per-gpu",
            torchrun ? "torchrun starts one worker per GPU itself" : "one task per rank");
  std::vector<std::string> words;
  for (const auto& w : req.command) words.push_back(yaml_word(w));
  y << "command: [" << join(words, ", ") << "]\n";
}

}  // namespace

StarterShape choose_starter_shape(const InitRequest& req, const ClusterProfile& profile) {
  // The shape: GPU type, partition and GPUs per node, each as asked or as the profile suggests.
  std::string type = req.gpu_type, partition = req.partition;
  if (!type.empty() && !profile.find_gpu_type(type))
    throw UserError(Location{"--gpu-type"}, "",
                    fmt::format("cluster {} has no GPU type {}{}; it has: {}", profile.name, type,
                                did_you_mean(type, profile.gpu_type_names()), join(profile.gpu_type_names(), ", ")));
  if (!partition.empty() && !profile.partitions.empty() && !profile.find_partition(partition))
    throw UserError(Location{"--partition"}, "",
                    fmt::format("cluster {} has no partition {}{}; it has: {}", profile.name, partition,
                                did_you_mean(partition, profile.partition_names()),
                                join(profile.partition_names(), ", ")));
  const Partition* chosen = !partition.empty()                ? profile.find_partition(partition)
                            : !profile.default_partition.empty() ? profile.find_partition(profile.default_partition)
                                                                 : nullptr;
  if (const GpuType* t = type.empty() ? nullptr : profile.find_gpu_type(type); t && !t->partition.empty() && partition.empty())
    chosen = profile.find_partition(t->partition);
  int gpus = req.gpus.value_or(chosen ? chosen->gpus_per_node : 0);
  if (gpus < 0 || gpus > 64) throw UserError(Location{"--gpus"}, "", "GPUs per node are 0 to 64");
  if (req.nodes < 1) throw UserError(Location{"--nodes"}, "", "nodes are 1 or more");
  // The default partition cannot hold the GPUs asked: the first one that can.
  if (gpus > 0 && partition.empty() && (!chosen || chosen->gpus_per_node < gpus)) {
    const Partition* fits = partition_for(profile, gpus, type);
    if (!fits && !profile.partitions.empty())
      throw UserError(Location{"--gpus"}, "",
                      fmt::format("no partition of cluster {} has {} {}GPUs per node", profile.name, gpus,
                                  type.empty() ? "" : type + " "));
    chosen = fits;
    if (fits && (profile.dialect != GpuDialect::Partition || type.empty())) partition = fits->name;
  }
  // Sites that request GPUs by partition pick it from the type: name one.
  if (gpus > 0 && type.empty() && profile.dialect == GpuDialect::Partition)
    for (const auto& t : profile.gpu_types)
      if (!t.partition.empty() && (!chosen || t.partition == chosen->name)) {
        type = t.name;
        break;
      }
  return {type, partition, chosen, gpus};
}

std::string starter_spec(const InitRequest& req, const ClusterProfile& profile, const std::string& profile_ref,
                         const std::string& today) {
  StarterShape shape = choose_starter_shape(req, profile);
  std::string name = starter_name(req);
  if (!req.time.empty()) {
    std::string problem;
    if (!parse_slurm_time(req.time, &problem)) throw UserError(Location{"--time"}, "", "'" + req.time + "' " + problem);
  }

  std::ostringstream y;
  y << fmt::format("# A run spec for ddpctl, started by `ddpctl init` on {} for cluster {}\n", today, profile.name);
  if (!profile.description.empty()) y << "# (" << profile.description << ").\n";
  y << "# Check it with `ddpctl gen " << (req.output.empty() ? name + ".yaml" : fs::path(req.output).filename().string())
    << " --stdout` (the sbatch script it makes), then `ddpctl submit`.\n"
       "# Every field: `man 5 ddpctl-spec` (docs/spec.md).\n";
  y << line("name: " + name, "the run's and the job's name");
  y << line("cluster: " + profile_ref, "the site profile (`ddpctl doctor` drafts one for a new site)");
  write_shape(y, req, profile, shape);
  write_program(y, req);
  y << "\n# On a time limit or preemption, Slurm requeues the job; your program gets\n"
       "# SIGUSR1 300 s before, to checkpoint (docs/spec.md \"Requeue\").\n"
       "# requeue: {signal: USR1, grace: 300, max_restarts: 3}\n";
  return y.str();
}

std::string write_starter_spec(InitRequest req, const std::string& today) {
  if (req.cluster.empty())
    throw UserError(Location{"--cluster"}, "", "name the cluster profile (e.g. --cluster local); `ddpctl doctor` drafts one for a new site");
  if (req.output.empty()) req.output = (req.name.empty() ? "train" : req.name) + ".yaml";
  std::error_code ec;
  if (fs::exists(req.output, ec) || fs::is_symlink(req.output, ec))
    throw UserError(Location{req.output}, "", "exists already: init never replaces a file (choose another -o, or remove it)");
  std::string where = fs::absolute(req.output).string();
  std::string profile_path = find_cluster_profile(req.cluster, where, Location{"--cluster"});
  ClusterProfile profile = load_cluster_profile(profile_path);
  std::string text = starter_spec(req, profile, req.cluster, today);
  // Valid as written: resolved from a scratch copy in the same folder (so a
  // relative profile path means the same), its problems named at the
  // options' file.
  fs::path dir = fs::path(where).parent_path();
  std::string scratch = (dir / ("." + fs::path(where).filename().string() + ".init")).string();
  write_file_atomic(scratch, text);
  try {
    load_and_resolve(scratch, {});
  } catch (const UserError& e) {
    fs::remove(scratch, ec);
    std::vector<Diagnostic> diags = e.diagnostics();
    for (auto& d : diags)
      if (d.where.file == scratch) d.where.file = req.output;
    throw UserError(diags);
  } catch (...) {
    fs::remove(scratch, ec);
    throw;
  }
  fs::remove(scratch, ec);
  // "x": created here or not at all, never a replacement of a file that appeared meanwhile.
  std::FILE* f = std::fopen(where.c_str(), "wx");
  if (!f) throw UserError(Location{req.output}, "", std::string("cannot create it: ") + std::strerror(errno));
  bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw UserError(Location{req.output}, "", std::string("cannot write it: ") + std::strerror(errno));
  return req.output;
}

}  // namespace ddpctl
