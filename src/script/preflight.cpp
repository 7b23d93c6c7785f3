#include "script/preflight.hpp"

#include "script/preemption_note.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <set>
#include <fmt/format.h>

#include "slurm/site_limits_read.hpp"
#include "base/paths.hpp"
#include "slurm/sbatch_options.hpp"
#include "spec/spec_site.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {


// The GPUs of `node` the shape can use: of its GRES type, on a node with its
// feature; and the CPUs it needs per node.
int usable_gpus(const NodeInfo& node, const ResolvedShape& shape) {
  if (!shape.gpu_feature.empty() && !contains(node.features, shape.gpu_feature)) return 0;
  if (shape.gpu_gres.empty()) return node.total_gpus();
  auto it = node.gpus_by_type.find(shape.gpu_gres);
  return it == node.gpus_by_type.end() ? 0 : it->second;
}

int cpus_per_node(const ResolvedShape& shape) { return shape.tasks_per_node * shape.cpus_per_task.value_or(1); }

bool fits(const NodeInfo& node, const ResolvedShape& shape) {
  return usable_gpus(node, shape) >= shape.gpus_per_node && node.cpus >= cpus_per_node(shape);
}

// The nodes in the shape's partition with its GPUs (type, feature) and CPUs.
std::vector<std::string> fitting_nodes(const ResolvedShape& shape, const NodeQuery& q, const std::string& partition) {
  std::vector<std::string> out;
  for (const auto& node : q.nodes)
    if ((partition.empty() || contains(node.partitions, partition)) && fits(node, shape)) out.push_back(node.name);
  return out;
}

// A partition whose preemption cancels its jobs (profile: preemptible with
// mode cancel) ends the run there, unless ddpctl requeues the job itself
// within the grace, which it does with `requeue:` (seen on the local
// clusters: its scontrol requeue comes first, and the job is requeued, not
// cancelled).
void check_cancelled_by_preemption(const ResolvedRun& run, const ResolvedShape& shape, Diagnostics& diags) {
  if (run.spec.requeue) return;
  std::string what;
  const PreemptTerms* t = preemptible_terms(run, shape, &what);
  if (!t || t->mode != "cancel") return;
  const char* field = what.rfind("QOS", 0) == 0 ? "qos" : "partition";
  diags.error(shape.asked.where_of(field, Location{run.spec.file}), field,
              fmt::format("shape {}: {} is preemptible and a preemption cancels its jobs (PreemptMode=CANCEL "
                          "in profile {}): the run would end there, not resume. With `requeue:` ddpctl requeues the "
                          "job itself within the {} grace and it resumes from its checkpoint; or choose a partition "
                          "that is not preempted; --no-preflight submits anyway",
                          shape.label, what, run.profile.name,
                          t->grace_s ? fmt::format("{} s", *t->grace_s) : "site's"));
}

// The spec's requeue.grace is the time it gives the program to checkpoint
// and stop before the time limit. Set above a preemptible partition's
// GraceTime, the checkpoint it asks for cannot be written when the site
// takes the nodes back: SIGKILL comes first. (Left at its default, it says
// nothing of the program; gen's note states the grace.)
void check_checkpoint_within_grace(const ResolvedRun& run, const ResolvedShape& shape, Diagnostics& diags) {
  if (!run.spec.requeue || !run.spec.requeue->grace_where) return;
  std::string what;
  const PreemptTerms* t = preemptible_terms(run, shape, &what);
  if (!t || !t->grace_s) return;
  const long long grace = *t->grace_s, asked = run.spec.requeue->grace_s;
  if (asked <= grace) return;
  diags.error(*run.spec.requeue->grace_where, "requeue.grace",
              fmt::format("shape {}: {} s to checkpoint and stop, but {} is preemptible with {} s "
                          "between Slurm's SIGTERM and its SIGKILL (GraceTime, profile {}): a preemption kills "
                          "the program before such a checkpoint is written. Set requeue.grace to {} or less if "
                          "the checkpoint takes that little, or choose a partition that is not preempted; "
                          "--no-preflight submits anyway",
                          shape.label, asked, what, grace, run.profile.name, grace));
}

}  // namespace

JobAsk job_ask(const ResolvedShape& shape, const NodeQuery& nodes, const SiteLimits& limits) {
  JobAsk j;
  j.nodes = shape.nodes + shape.spares;  // the allocation's, spares included
  j.gpus_per_node = shape.gpus_per_node;
  j.cpus_per_node = cpus_per_node(shape);
  j.mem_per_node_mib = shape.asked.mem_mib.value_or(0);
  j.time_s = shape.time_s;
  j.partition = shape.partition;
  if (j.partition.empty())
    for (const auto& [name, p] : limits.partitions)
      if (p.is_default) j.partition = name;
  j.account = shape.asked.account;
  j.qos = shape.asked.qos;
  j.reservation = shape.asked.reservation;
  j.fitting = fitting_nodes(shape, nodes, j.partition);
  return j;
}

Diagnostics preflight(const ResolvedRun& run, const ResolvedShape& shape, SlurmClient& slurm, const SiteLimits* limits,
                      Feasibility* feasibility) {
  Diagnostics diags;
  const Shape& asked = shape.asked;
  auto where = [&](const char* field) { return asked.where_of(field, Location{run.spec.file}); };
  check_cancelled_by_preemption(run, shape, diags);
  check_checkpoint_within_grace(run, shape, diags);

  NodeQuery q = slurm.nodes();
  if (!q.answered) {
    diags.error(Location{"sinfo"}, "", "cannot ask Slurm about its nodes (" + q.error + "); use --no-preflight to submit anyway");
    return diags;
  }
  // A partition the site picks itself (implicit) is not named to Slurm, so it
  // need not exist under that name.
  bool check_partition = shape.partition_requested;
  std::vector<const NodeInfo*> candidates;
  std::vector<std::string> partitions;
  for (const auto& node : q.nodes) {
    for (const auto& p : node.partitions)
      if (!contains(partitions, p)) partitions.push_back(p);
    if (!check_partition || contains(node.partitions, shape.partition)) candidates.push_back(&node);
  }
  if (check_partition && candidates.empty()) {
    diags.error(where("partition"), asked.field("partition"),
                fmt::format("partition {} does not exist on this cluster{}; Slurm has: {}", shape.partition,
                            did_you_mean(shape.partition, partitions), join(partitions, ", ")));
    return diags;
  }
  std::string in = check_partition ? "partition " + shape.partition : "this cluster";

  const std::string& gres_type = shape.gpu_gres;
  const std::string& feature = shape.gpu_feature;
  int cpus_needed = cpus_per_node(shape);
  int fitting = 0, most_gpus = 0, most_cpus = 0;
  for (const NodeInfo* node : candidates) {
    most_gpus = std::max(most_gpus, usable_gpus(*node, shape));
    most_cpus = std::max(most_cpus, node->cpus);
    if (fits(*node, shape)) ++fitting;
  }
  std::string kind = gres_type.empty() ? (feature.empty() ? "" : feature + " ") : gres_type + " ";
  if (shape.gpus_per_node > 0 && most_gpus < shape.gpus_per_node) {
    diags.error(where("gpus_per_node"), asked.field("gpus_per_node"),
                most_gpus == 0 ? fmt::format("no node in {} has {}GPUs", in, kind)
                               : fmt::format("{} {}GPUs per node asked, but nodes in {} have at most {}",
                                             shape.gpus_per_node, kind, in, most_gpus));
  } else if (most_cpus < cpus_needed) {
    diags.error(where("cpus_per_task"), asked.field("cpus_per_task"),
                fmt::format("{} CPUs per node needed ({} task(s) x {}), but nodes in {} have at most {}", cpus_needed,
                            shape.tasks_per_node, shape.cpus_per_task.value_or(1), in, most_cpus));
  } else if (fitting < shape.nodes) {
    diags.error(where("nodes"), asked.field("nodes"),
                fmt::format("{} nodes asked, but {} has {} that fit this shape", shape.nodes, in, fitting));
  }

  if (!asked.account.empty()) {
    if (auto accounts = slurm.user_accounts(); accounts && !contains(*accounts, asked.account)) {
      diags.error(where("account"), asked.field("account"),
                  fmt::format("account {} is not one you can charge on this cluster{}; yours: {}", asked.account,
                              did_you_mean(asked.account, *accounts), join(*accounts, ", ")));
      return diags;  // its limits would only repeat it
    }
  }
  if (limits && diags.empty()) {
    Feasibility f = check_limits(job_ask(shape, q, *limits), *limits, std::time(nullptr));
    for (const auto& p : f.never) {
      // The spec's field when the shape has one by that name, else the shape's own line.
      std::string field = p.field == "cpus_per_task" || p.field == "gpus_per_node" || p.field == "nodes" ||
                                  p.field == "time" || p.field == "account" || p.field == "qos" || p.field == "mem"
                              ? p.field
                              : "nodes";
      diags.error(where(field.c_str()), asked.field(field),
                  p.message + "; Slurm would queue it and it would never start (--no-preflight submits anyway)");
    }
    if (feasibility) *feasibility = f;
  }
  return diags;
}

std::vector<std::string> limit_warnings(const std::vector<ShapeLimits>& shapes) {
  std::vector<std::string> out;
  bool several = shapes.size() > 1;
  for (const auto& s : shapes) {
    std::string who = several ? "shape " + s.label + ": " : "";
    for (const auto& n : s.feasibility.not_now) out.push_back(who + "cannot start now: " + n);
    if (!s.feasibility.later.empty()) out.push_back(who + s.feasibility.later);
  }
  return out;
}

namespace {

// Modules, setup lines and env: PATH change what the nodes find; then only
// the job can tell (its log says "command not found").
bool path_changes(const ResolvedRun& run) {
  return !run.modules.empty() || !run.spec.setup.empty() ||
         std::any_of(run.env.begin(), run.env.end(), [](const auto& kv) { return kv.first == "PATH"; });
}

int max_nodes(const ResolvedRun& run) {
  int n = 1;
  for (const auto& s : run.shapes) n = std::max(n, s.nodes);
  return n;
}

}  // namespace

void check_program(const ResolvedRun& run, Diagnostics& diags) {
  const RunSpec& spec = run.spec;
  if (run.container) {
    // The program is the image's; the image and the runtime are checked instead.
    std::vector<std::string> warnings;
    check_container(*run.container, max_nodes(run), path_changes(run), diags, warnings);
    return;
  }
  if (path_changes(run)) return;
  std::string program, field;
  if (spec.uses_trainer) {
    program = run.trainer_program;
    field = "trainer.program";
  } else if (!spec.command_argv.empty()) {
    program = spec.command_argv.front();
    field = "command[0]";
  } else if (spec.command_shell) {
    // A shell line: its first word when that is plainly a program name (not
    // an assignment, a variable, a keyword or a builtin).
    const std::string& line = *spec.command_shell;
    size_t b = line.find_first_not_of(" \t");
    size_t e = line.find_first_of(" \t;|&<>()", b);
    program = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
    static const std::vector<std::string> shell_words = {
        "if", "for", "while", "until", "case", "function", "time", "exec", "export", "source", ".", "cd", "set",
        "eval", "command", "builtin", "declare", "local", "readonly", "unset", "ulimit", "umask", "trap", "[", "[[",
        "test", "echo", "printf", "true", "false", ":", "!", "{", "wait", "shift", "read", "type", "hash", "alias"};
    bool plain = !program.empty() && program.find_first_of("$`'\"=\\*?~{}") == std::string::npos &&
                 std::find(shell_words.begin(), shell_words.end(), program) == shell_words.end();
    if (!plain) return;
    field = "command";
  } else {
    return;
  }
  if (!find_program(program).empty()) return;
  Location where = spec.where_of(spec.uses_trainer ? (spec.where.count("trainer.program") ? "trainer.program" : "trainer")
                                                   : "command");
  if (program.find('/') != std::string::npos)
    diags.error(where, field,
                fmt::format("{} is not an executable file here; the job would fail with exit code 126 or 127 after "
                            "its wait (the nodes must see the same path; --no-preflight submits anyway)",
                            program));
  else if (spec.uses_trainer && !spec.trainer_program_given)
    diags.error(where, field,
                fmt::format("{} is not on PATH here, nor built or installed beside this ddpctl; set trainer.program "
                            "to its path (the nodes must see the same path)",
                            program));
  else
    diags.error(where, field,
                fmt::format("{} is not on PATH here; the job would fail with \"command not found\" (exit code 127) "
                            "after its wait; give its path, or load the module that provides it (modules:); "
                            "--no-preflight submits anyway",
                            program));
}

void check_trainer_data(const ResolvedRun& run, Diagnostics& diags) {
  const RunSpec& spec = run.spec;
  if (!spec.uses_trainer || !spec.trainer_data || *spec.trainer_data == "synthetic") return;
  // The job starts in the folder ddpctl runs in (--chdir), and the nodes see
  // the same file system: a folder missing here is missing there.
  std::error_code ec;
  if (std::filesystem::is_directory(*spec.trainer_data, ec)) return;
  bool exists = std::filesystem::exists(*spec.trainer_data, ec);
  diags.error(spec.where_of("trainer.data"), "trainer.data",
              fmt::format("{} {} (from {}); ddp-train would refuse it at start, after the queue wait (use "
                          "data: synthetic for generated data; --no-preflight submits anyway)",
                          *spec.trainer_data, exists ? "is not a directory" : "does not exist",
                          std::filesystem::current_path().string()));
}

void check_sbatch_options(const ResolvedRun& run, SlurmClient& slurm, Diagnostics& diags) {
  const SiteOptions& site = run.spec.site;
  if (site.sbatch.empty()) return;
  CommandResult help = slurm.raw({"sbatch", "--help"});
  std::set<std::string> known = sbatch_long_options(help.out);
  if (!help.ok() || known.empty()) {
    diags.error(Location{"sbatch --help"}, "sbatch",
                fmt::format("cannot ask this cluster's sbatch which options it has ({}), so the `sbatch:` entries "
                            "cannot be checked; --no-preflight submits anyway",
                            help.ok() ? "it listed none" : help.describe()));
    return;
  }
  std::vector<std::string> names(known.begin(), known.end());
  for (const auto& [name, value] : site.sbatch) {
    if (known.count(name)) continue;
    // --help leaves some out (--hint, on every version): sbatch's own parser
    // has the last word. It reads options in order and stops at --help, so
    // an option it knows is followed by the help text and exit 0.
    std::string option = value.empty() ? "--" + name : "--" + name + "=" + value;
    CommandResult tried = slurm.raw({"sbatch", option, "--help"});
    if (tried.ok()) continue;
    auto it = site.where.find("sbatch." + name);
    Location where = it == site.where.end() ? run.spec.where_of("sbatch") : it->second;
    if (tried.err.find("unrecognized option") != std::string::npos)
      diags.error(where, "sbatch." + name,
                  fmt::format("this cluster's sbatch has no option --{}{}; it would refuse the script", name,
                              did_you_mean(name, names)));
    else
      diags.error(where, "sbatch." + name,
                  fmt::format("this cluster's sbatch refuses {}: {}", option, plain_line(tried.err, 200)));
  }
}

void check_pyxis(const ResolvedRun& run, SlurmClient& slurm, Diagnostics& diags) {
  if (!run.container || run.container->runtime != ContainerRuntime::Pyxis) return;
  // Pyxis adds its options to srun's own; its --help lists them.
  CommandResult help = slurm.raw({"srun", "--help"});
  if (help.ok() && help.out.find("--container-image") != std::string::npos) return;
  diags.error(run.container->runtime_where, "container.runtime",
              help.ok() ? "this cluster's srun has no --container-image: Pyxis is not installed here (srun --help); "
                          "ask the site which container runtime it has (apptainer, podman, charliecloud)"
                        : "cannot ask this cluster's srun whether it has Pyxis (srun --help: " + help.describe() + ")");
}

std::vector<std::string> container_warnings(const ResolvedRun& run) {
  std::vector<std::string> warnings;
  if (!run.container) return warnings;
  Diagnostics ignored;
  check_container(*run.container, max_nodes(run), path_changes(run), ignored, warnings);
  return warnings;
}

std::vector<ShapeLimits> preflight_all(const ResolvedRun& run, const std::vector<const ResolvedShape*>& shapes,
                                       SlurmClient& slurm, SiteLimits* limits_out) {
  Diagnostics all;
  check_program(run, all);
  check_pyxis(run, slurm, all);
  check_trainer_data(run, all);
  check_sbatch_options(run, slurm, all);
  SiteLimits limits = read_site_limits(slurm);
  std::vector<ShapeLimits> verdicts;
  for (const ResolvedShape* s : shapes) {
    ShapeLimits v{s->label, {}};
    Diagnostics one = preflight(run, *s, slurm, &limits, &v.feasibility);  // a named value: items() refers into it
    for (const auto& d : one.items()) all.add(d);
    verdicts.push_back(v);
  }
  all.throw_if_any();
  if (limits_out) *limits_out = limits;
  return verdicts;
}

}  // namespace ddpctl
