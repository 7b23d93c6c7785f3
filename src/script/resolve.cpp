#include "script/resolve.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "runs/job_files.hpp"
#include "base/files.hpp"
#include "spec/cluster.hpp"
#include "base/paths.hpp"
#include "spec/spec_setup.hpp"
#include "spec/spec.hpp"
#include "spec/spec_site.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// Checks one shape against the profile and computes its #SBATCH directives.
class ShapeResolver {
 public:
  ShapeResolver(const RunSpec& spec, const ClusterProfile& profile, const Shape& shape, Diagnostics& diags)
      : spec_(spec), profile_(profile), shape_(shape), diags_(diags) {}

  ResolvedShape resolve() {
    ResolvedShape r;
    r.asked = shape_;
    r.label = shape_.label;
    r.job_name = spec_.several_shapes() ? spec_.name + "-" + shape_.label : spec_.name;
    r.script_name = r.job_name + ".sbatch";
    r.nodes = shape_.nodes;
    r.spares = spec_.restart ? spec_.restart->spares : 0;
    r.gpus_per_node = shape_.gpus_per_node;
    r.ranks_per_node = shape_.ranks_per_node();
    r.tasks_per_node = spec_.launch == LaunchMode::PerGpu ? r.ranks_per_node : 1;

    const GpuType* type = resolve_gpu_type();
    r.partition = resolve_partition(type);
    const Partition* part = profile_.find_partition(r.partition);
    r.partition_requested = !r.partition.empty() && !(part && part->implicit);
    if (type && profile_.dialect == GpuDialect::Constraint) r.gpu_feature = type->constraint;
    if (type && (profile_.dialect == GpuDialect::Gres || profile_.dialect == GpuDialect::GpusPerNode))
      r.gpu_gres = type->gres;
    check_partition_limits(part, type);
    r.cpus_per_task = cpus_per_task(part, r.tasks_per_node);
    if (part && part->cpus_per_node && r.cpus_per_task && *r.cpus_per_task * r.tasks_per_node > *part->cpus_per_node) {
      std::string field = shape_.cpus_per_task ? "cpus_per_task" : "cpus_per_gpu";
      error(field, fmt::format("{} CPUs per node ({} task(s) x {}) exceed the {} CPUs per node of partition {}",
                               *r.cpus_per_task * r.tasks_per_node, r.tasks_per_node, *r.cpus_per_task,
                               *part->cpus_per_node, part->name));
    }
    r.time_s = resolve_time(part);
    r.directives = directives(r, type);
    return r;
  }

 private:
  Location where(const std::string& field) const { return shape_.where_of(field, Location{spec_.file}); }
  void error(const std::string& field, const std::string& message) {
    std::string ctx = spec_.several_shapes() ? fmt::format(" [shape {}]", shape_.label) : "";
    diags_.error(where(field), shape_.field(field), message + ctx);
  }
  std::string cluster_ctx() const { return fmt::format("cluster {}", profile_.name); }

  const GpuType* resolve_gpu_type() {
    if (shape_.gpu_type.empty()) return nullptr;
    const GpuType* t = profile_.find_gpu_type(shape_.gpu_type);
    if (!t) {
      auto names = profile_.gpu_type_names();
      error("gpu_type", fmt::format("'{}' is not a GPU type of {}{}; known types: {}", shape_.gpu_type, cluster_ctx(),
                                    did_you_mean(shape_.gpu_type, names), names.empty() ? "none" : join(names, ", ")));
    }
    return t;
  }

  std::string resolve_partition(const GpuType* type) {
    std::string partition = shape_.partition;
    if (type && !type->partition.empty()) {
      if (partition.empty()) {
        partition = type->partition;
      } else if (partition != type->partition && profile_.dialect == GpuDialect::Partition) {
        error("partition", fmt::format("is {}, but GPU type {} lives in partition {} on {} (GPUs are requested by "
                                       "partition there); drop partition: or change gpu_type",
                                       partition, type->name, type->partition, cluster_ctx()));
      }
    }
    if (partition.empty()) partition = profile_.default_partition;
    if (partition.empty() && profile_.dialect == GpuDialect::Partition && shape_.gpus_per_node > 0)
      error("gpu_type", fmt::format("{} chooses GPUs by partition: set gpu_type ({}) or partition",
                                    cluster_ctx(), join(profile_.gpu_type_names(), ", ")));
    if (!partition.empty() && !profile_.partitions.empty() && !profile_.find_partition(partition)) {
      auto names = profile_.partition_names();
      error("partition", fmt::format("'{}' is not a partition of {}{}; known partitions: {}", partition, cluster_ctx(),
                                     did_you_mean(partition, names), join(names, ", ")));
    }
    return partition;
  }

  void check_partition_limits(const Partition* part, const GpuType* type) {
    int gpus = shape_.gpus_per_node;
    if (type && type->gpus_per_node && gpus > *type->gpus_per_node)
      error("gpus_per_node", fmt::format("{} exceeds the {} {} GPUs per node of {}", gpus, *type->gpus_per_node,
                                         type->name, cluster_ctx()));
    if (!part) return;
    if (gpus > 0 && part->gpus_per_node == 0)
      error("gpus_per_node", fmt::format("partition {} has no GPUs ({}); use a GPU partition or gpus_per_node: 0",
                                         part->name, cluster_ctx()));
    else if (gpus > part->gpus_per_node)
      error("gpus_per_node", fmt::format("{} exceeds the {} GPUs per node of partition {} ({})", gpus,
                                         part->gpus_per_node, part->name, cluster_ctx()));
    if (type && !part->gpu_types.empty() &&
        std::find(part->gpu_types.begin(), part->gpu_types.end(), type->name) == part->gpu_types.end())
      error("gpu_type", fmt::format("partition {} of {} has no {} GPUs; it has {}", part->name, cluster_ctx(),
                                    type->name, join(part->gpu_types, ", ")));
    int spares = spec_.restart ? spec_.restart->spares : 0;
    if (part->nodes && shape_.nodes > *part->nodes)
      error("nodes", fmt::format("{} exceeds the {} nodes of partition {} ({})", shape_.nodes, *part->nodes,
                                 part->name, cluster_ctx()));
    else if (part->nodes && shape_.nodes + spares > *part->nodes)
      diags_.error(spec_.restart->where, "restart.spares",
                   fmt::format("{} node(s) and {} spare(s) exceed the {} nodes of partition {} ({})", shape_.nodes,
                               spares, *part->nodes, part->name, cluster_ctx()));
    if (part->mem_per_node_mib && shape_.mem_mib && *shape_.mem_mib > *part->mem_per_node_mib)
      error("mem", fmt::format("{} exceeds the {} per node of partition {} ({})", format_memory(*shape_.mem_mib),
                               format_memory(*part->mem_per_node_mib), part->name, cluster_ctx()));
  }

  std::optional<int> cpus_per_task(const Partition* part, int tasks_per_node) {
    if (shape_.cpus_per_task) return shape_.cpus_per_task;
    std::optional<int> per_gpu = shape_.cpus_per_gpu;
    if (!per_gpu && part && shape_.gpus_per_node > 0) per_gpu = part->cpus_per_gpu;
    if (!per_gpu) return std::nullopt;
    // Per-node launch: one task holds all of the node's GPUs and their CPUs.
    return *per_gpu * (shape_.gpus_per_node / tasks_per_node);
  }

  long long resolve_time(const Partition* part) {
    std::optional<long long> t = shape_.time_s ? shape_.time_s : profile_.default_time_s;
    if (!t) {
      diags_.error(Location{spec_.file}, shape_.field("time"),
                   fmt::format("required field is missing (the time limit, e.g. 04:00:00), and {} has no default_time",
                               cluster_ctx()));
      return 0;
    }
    if (part && part->max_time_s && *t > *part->max_time_s)
      error("time", fmt::format("{} exceeds the {} time limit of partition {} ({})", format_slurm_time(*t),
                                format_slurm_time(*part->max_time_s), part->name, cluster_ctx()));
    if (spec_.requeue && spec_.requeue->grace_s >= *t)
      diags_.error(spec_.requeue->where, "requeue.grace",
                   fmt::format("{} s is not shorter than the time limit {}", spec_.requeue->grace_s, format_slurm_time(*t)));
    return *t;
  }

  std::vector<std::string> directives(const ResolvedShape& r, const GpuType* type) {
    std::vector<std::string> d;
    d.push_back("--job-name=" + r.job_name);
    if (!shape_.account.empty()) d.push_back("--account=" + shape_.account);
    if (r.partition_requested) d.push_back("--partition=" + r.partition);
    if (!shape_.qos.empty()) d.push_back("--qos=" + shape_.qos);
    // Spares (restart.spares) are in the allocation, idle until a node fails;
    // --no-kill keeps the job, and its batch shell, when one of them does.
    d.push_back(fmt::format("--nodes={}", r.nodes + r.spares));
    if (spec_.restart) d.push_back("--no-kill");
    d.push_back(fmt::format("--ntasks-per-node={}", r.tasks_per_node));
    if (r.cpus_per_task) d.push_back(fmt::format("--cpus-per-task={}", *r.cpus_per_task));
    std::string constraint = shape_.constraint;
    if (r.gpus_per_node > 0) {
      std::string gres = type ? type->gres : "";
      switch (profile_.dialect) {
        case GpuDialect::Gres:
          d.push_back(gres.empty() ? fmt::format("--gres=gpu:{}", r.gpus_per_node)
                                   : fmt::format("--gres=gpu:{}:{}", gres, r.gpus_per_node));
          break;
        case GpuDialect::GpusPerNode:
          d.push_back(gres.empty() ? fmt::format("--gpus-per-node={}", r.gpus_per_node)
                                   : fmt::format("--gpus-per-node={}:{}", gres, r.gpus_per_node));
          break;
        case GpuDialect::Constraint:
          d.push_back(fmt::format("--gres=gpu:{}", r.gpus_per_node));
          if (type) {
            // The user's own expression is kept whole: (a|b) stays grouped.
            std::string user = constraint.find('|') != std::string::npos ? "(" + constraint + ")" : constraint;
            constraint = user.empty() ? type->constraint : type->constraint + "&" + user;
          }
          break;
        case GpuDialect::Partition:
          d.push_back(fmt::format("--gres=gpu:{}", r.gpus_per_node));
          break;
      }
    }
    if (shape_.mem_mib) d.push_back("--mem=" + format_memory(*shape_.mem_mib));
    if (r.time_s > 0) d.push_back("--time=" + format_slurm_time(r.time_s));
    if (!constraint.empty()) d.push_back("--constraint=" + constraint);
    if (shape_.exclusive) d.push_back("--exclusive");
    for (auto& line : site_directives(spec_.site, shape_)) d.push_back(std::move(line));
    d.push_back("--output=" + job_files::batch_out_pattern(spec_.output_dir));
    d.push_back("--error=" + job_files::batch_err_pattern(spec_.output_dir));
    // Requeued attempts append, so the first attempt's log is not lost.
    d.push_back("--open-mode=append");
    if (spec_.requeue) {
      d.push_back("--requeue");
      // B: signal only the batch shell, which forwards it to the training step.
      d.push_back(fmt::format("--signal=B:{}@{}", spec_.requeue->signal, spec_.requeue->grace_s));
    }
    return d;
  }

  const RunSpec& spec_;
  const ClusterProfile& profile_;
  const Shape& shape_;
  Diagnostics& diags_;
};

void put_env(EnvList& env, const std::string& name, const std::string& value) {
  auto it = std::find_if(env.begin(), env.end(), [&](const auto& kv) { return kv.first == name; });
  if (it != env.end()) it->second = value;
  else env.emplace_back(name, value);
}

EnvList nccl_environment(const NcclSettings& site, const NcclSettings& run) {
  EnvList env;
  for (const NcclOption& o : nccl_options()) {
    const std::map<std::string, std::string>& from = run.values.count(o.key) ? run.values : site.values;
    auto v = from.find(o.key);
    if (v == from.end()) continue;
    for (const char* name : o.env) put_env(env, name, v->second);
  }
  for (const auto& [name, value] : site.extra) put_env(env, name, value);
  for (const auto& [name, value] : run.extra) put_env(env, name, value);
  return env;
}

}  // namespace

ResolvedRun resolve_run(RunSpec spec, ClusterProfile profile) {
  ResolvedRun run{std::move(spec), std::move(profile), {}, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  Diagnostics diags;
  for (const Shape& shape : run.spec.shapes) run.shapes.push_back(ShapeResolver(run.spec, run.profile, shape, diags).resolve());
  run.container = resolve_container(run.spec, run.profile, diags);
  diags.throw_if_any();

  run.modules = run.profile.modules;
  run.modules.insert(run.modules.end(), run.spec.modules.begin(), run.spec.modules.end());
  run.env = run.profile.env;
  for (const auto& [name, value] : run.spec.env) put_env(run.env, name, value);
  run.nccl_env = nccl_environment(run.profile.nccl, run.spec.nccl);
  run.master_interface = run.spec.master.interface.value_or(run.profile.interface);
  if (run.spec.uses_trainer)
    run.trainer_program = run.spec.trainer_program_given ? run.spec.trainer_program : default_trainer_program();
  return run;
}

ResolvedRun load_and_resolve(const std::string& spec_path, const std::vector<std::string>& overrides,
                             const std::string& site) {
  // The path reaches the scripts (ddpctl's own comments, the run record).
  if (auto problem = script_value_problem(spec_path))
    throw UserError(Location{printable(spec_path)}, "", "the spec's path " + *problem);
  RunSpec spec = load_run_spec(spec_path, overrides, site);
  if (spec.has_grid)
    throw UserError(spec.where_of("grid"), "grid",
                    "this spec is a grid of runs: `ddpctl sweep SPEC` submits its cells (`ddpctl sweep SPEC "
                    "--dry-run` checks them, `ddpctl gen SPEC` writes their scripts)");
  std::string profile_path = find_cluster_profile(spec.cluster, spec.file, spec.where_of("cluster"));
  return resolve_run(std::move(spec), load_cluster_profile(profile_path));
}

std::vector<std::string> launch_argv(const ResolvedRun& run, const ResolvedShape& shape) {
  const RunSpec& spec = run.spec;
  std::vector<std::string> argv;
  if (spec.uses_trainer) {
    argv.push_back(run.trainer_program.empty() ? spec.trainer_program : run.trainer_program);
    if (spec.launch == LaunchMode::PerNode) argv.push_back(fmt::format("--nproc-per-node={}", shape.ranks_per_node));
    argv.insert(argv.end(), spec.trainer_args.begin(), spec.trainer_args.end());
  } else if (spec.command_shell) {
    argv = {"bash", "-c", *spec.command_shell};
  } else {
    argv = spec.command_argv;
  }
  return argv;
}

void set_time_limit(ResolvedShape& shape, long long seconds) {
  shape.time_s = seconds;
  for (auto& d : shape.directives)
    if (d.rfind("--time=", 0) == 0) d = "--time=" + format_slurm_time(seconds);
}

void apply_snapshot(ResolvedRun& run, const SnapshotDecision& decision, const std::string& cwd) {
  run.snapshot = decision.snapshot;
  run.snapshot_off = decision.off_reason;
  if (!run.snapshot) return;
  // In a container the snapshot and the run's view of it are bound, and the
  // runtimes' bind lists have no quoting (container.cpp's check_bound_folders).
  if (run.container && run.snapshot->dir.find_first_of(",:") != std::string::npos)
    throw UserError(run.spec.where_of("container"), "container",
                    fmt::format("the code snapshot {} is bound into the container, and bind lists split at ',' and "
                                "':': use a runs folder (--runs, DDPCTL_RUNS) whose path has neither, or --no-snapshot",
                                printable(run.snapshot->dir, 200)));
  if (!run.spec.uses_trainer && !run.spec.command_argv.empty())
    run.spec.command_argv = snapshot_argv(run.spec.command_argv, *run.snapshot, cwd);
  // The job works in the run's view of the snapshot (make_workdir): the
  // folders ddpctl knows to be outputs and data are the submit folder's,
  // named absolute, so that they are where they would be without a snapshot
  // (`../logs` too, which the view could not resolve).
  auto in_submit_folder = [&cwd](const std::string& path) {
    return path.empty() || path[0] == '/' ? path : (std::filesystem::path(cwd) / path).lexically_normal().string();
  };
  std::string old_output = run.spec.output_dir;
  run.spec.output_dir = in_submit_folder(old_output);
  for (auto& shape : run.shapes)
    for (auto& d : shape.directives)
      for (const char* option : {"--output=", "--error="})
        if (d.rfind(option + old_output + "/", 0) == 0)
          d = option + run.spec.output_dir + d.substr(std::string(option).size() + old_output.size());
  if (run.spec.trainer_data && *run.spec.trainer_data != "synthetic")
    run.spec.trainer_data = in_submit_folder(*run.spec.trainer_data);
  for (auto& a : run.spec.trainer_args)
    for (const char* option : {"--data=", "--checkpoint-dir="})
      if (a.rfind(option, 0) == 0 && !(a == "--data=synthetic"))
        a = option + in_submit_folder(a.substr(std::string(option).size()));
}

std::string checkpoint_folder(const ResolvedRun& run, const std::string& run_folder, bool* chosen) {
  std::string folder;
  for (const auto& a : run.spec.trainer_args)
    if (a.rfind("--checkpoint-dir=", 0) == 0) folder = a.substr(17);
  // The job's working folder is the submit folder: a relative trainer folder
  // is that folder's, named absolute where the run's folder is.
  if (!folder.empty() && folder[0] != '/' && !run_folder.empty() && run_folder[0] == '/')
    folder = (std::filesystem::current_path() / folder).lexically_normal().string();
  *chosen = folder.empty();
  if (folder.empty()) folder = (std::filesystem::path(run_folder) / "checkpoint").lexically_normal().string();
  return folder;
}

void set_run_dir(ResolvedRun& run, const std::string& run_dir) {
  constexpr std::string_view kName = "DDPCTL_RUN_DIR";
  if (std::any_of(run.env.begin(), run.env.end(), [&](const auto& e) { return e.first == kName; })) return;
  run.env.emplace_back(kName, run_dir);
}

std::string set_checkpoint_folder(ResolvedRun& run, const std::string& run_folder) {
  constexpr std::string_view kName = "DDPCTL_CHECKPOINT_DIR";
  if (std::any_of(run.env.begin(), run.env.end(), [&](const auto& e) { return e.first == kName; })) return "";
  bool chosen = false;
  run.env.emplace_back(kName, checkpoint_folder(run, run_folder, &chosen));
  return chosen ? run.env.back().second : "";
}

void create_checkpoint_folder(const ResolvedRun& run, const std::string& folder) {
  if (folder.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(folder, ec);
  if (ec)
    throw UserError(run.spec.where_of("output_dir"), "output_dir",
                    "cannot create the run's checkpoint folder " + folder + " (DDPCTL_CHECKPOINT_DIR): " + ec.message());
}

}  // namespace ddpctl
