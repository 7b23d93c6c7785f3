#include "script/run_create.hpp"

#include <chrono>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/version.hpp"

namespace ddpctl {

namespace fs = std::filesystem;
using nlohmann::json;

Run create_run(const std::string& root, const ResolvedRun& resolved, const std::string& spec_text,
               const std::vector<std::string>& overrides, const std::string& hash,
               const std::vector<std::pair<std::string, std::string>>& scripts) {
  return create_run(root, std::vector<RunPart>{{&resolved, spec_text}}, overrides, hash, scripts);
}

namespace {

// A shape as the run keeps it (run.json): what status, logs and report read
// of it, whatever its spec says by then.
RunShape run_shape(const ResolvedRun& r, const ResolvedShape& s) {
  RunShape rs;
  rs.label = s.label;
  rs.job_name = s.job_name;
  rs.script = s.script_name;
  rs.partition = s.partition;
  rs.spec_file = absolute_path(r.spec.file);
  rs.output_dir = absolute_path(r.spec.output_dir);
  rs.nodes = s.nodes;
  rs.gpus_per_node = s.gpus_per_node;
  rs.ranks_per_node = s.ranks_per_node;
  rs.per_gpu = r.spec.launch == LaunchMode::PerGpu;
  rs.time_s = s.time_s;
  rs.max_requeues = r.spec.requeue ? r.spec.requeue->max_requeues : 0;
  rs.progress = r.spec.progress;
  rs.metric = r.spec.metric;
  rs.comment = r.spec.site.comment;
  rs.gpu_type = s.asked.gpu_type;
  if (s.gpus_per_node > 0) {
    if (const GpuType* t = r.profile.find_gpu_type(s.asked.gpu_type); t && t->peak_tflops) {
      rs.peak = t->peak_tflops;
      rs.peak_from = fmt::format("gpu_types.{}.peak_tflops in {}", t->name, r.profile.file);
    }
  } else if (const Partition* p = r.profile.find_partition(s.partition); p && p->peak_tflops) {
    rs.peak = p->peak_tflops;
    rs.peak_from = fmt::format("partitions.{}.peak_tflops in {}", p->name, r.profile.file);
  }
  return rs;
}

json peak_json(const RunShape& s) {
  if (!s.peak) return nullptr;
  json tflops = json::object();
  if (s.peak->any) tflops["any"] = *s.peak->any;
  for (const auto& [k, v] : s.peak->by_precision) tflops[k] = v;
  return {{"tflops", tflops}, {"from", s.peak_from}};
}

// run.json: the run, and each shape with the directives its script has.
json run_json(const Run& run, const std::vector<const ResolvedShape*>& resolved_shapes) {
  json shapes = json::array();
  for (size_t i = 0; i < run.shapes.size(); ++i) {
    const RunShape& s = run.shapes[i];
    json progress = nullptr;
    if (s.progress)
      progress = {{"preset", s.progress->preset}, {"pattern", s.progress->pattern}, {"file", s.progress->file},
                  {"epochs", s.progress->epochs ? json(*s.progress->epochs) : json()},
                  {"epoch_base", s.progress->epoch_base}};
    json metric = nullptr;
    if (s.metric) metric = {{"patterns", s.metric->patterns}, {"file", s.metric->file}};
    shapes.push_back({{"label", s.label},
                      {"job_name", s.job_name},
                      {"script", s.script},
                      {"partition", s.partition},
                      {"spec_file", s.spec_file},
                      {"output_dir", s.output_dir},
                      {"nodes", s.nodes},
                      {"gpus_per_node", s.gpus_per_node},
                      {"ranks_per_node", s.ranks_per_node},
                      {"per_gpu", s.per_gpu},
                      {"time_s", s.time_s},
                      {"max_restarts", s.max_requeues},  // the spec key's name, as run.json always had it
                      {"progress", progress},
                      {"metric", metric},
                      {"comment", s.comment},
                      {"gpu_type", s.gpu_type},
                      {"peak", peak_json(s)},
                      {"directives", resolved_shapes[i]->directives}});
  }
  json meta = {{"format", 1},
               {"name", run.name},
               {"cluster", run.cluster},
               {"spec_file", run.spec_file},
               {"spec_hash", run.spec_hash},
               {"overrides", run.overrides},
               {"created_at", run.created_at},
               {"created_ns", run.created_ns},
               {"cwd", run.cwd},
               {"output_dir", run.output_dir},
               {"ddpctl", ddpctl_version()},
               {"shapes", shapes}};
  return meta;
}

}  // namespace

Run create_run(const std::string& root, const std::vector<RunPart>& parts, const std::vector<std::string>& overrides,
               const std::string& hash, const std::vector<std::pair<std::string, std::string>>& scripts,
               const std::string& id) {
  const ResolvedRun& first = *parts.at(0).resolved;
  Run run;
  run.name = first.spec.name;
  run.cluster = first.profile.name;
  run.spec_file = absolute_path(first.spec.file);
  run.spec_hash = hash;
  run.created_at = utc_now_iso();
  run.created_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch()).count();
  run.cwd = fs::current_path().string();
  run.output_dir = absolute_path(first.spec.output_dir);
  run.overrides = overrides;
  run.id = id.empty() ? new_run_id(run.name, run.created_at) : id;
  run.dir = absolute_path((fs::path(root) / run.id).string());
  std::vector<const ResolvedShape*> resolved_shapes;
  for (const auto& part : parts) {
    for (const auto& s : part.resolved->shapes) {
      run.shapes.push_back(run_shape(*part.resolved, s));
      resolved_shapes.push_back(&s);
    }
  }

  std::error_code ec;
  fs::create_directories(run.dir, ec);
  if (ec) throw UserError(Location{run.dir}, "", "cannot create the run directory: " + ec.message());
  for (size_t i = 0; i < parts.size(); ++i)
    write_file_atomic(run.dir + (i == 0 ? std::string("/spec.yaml") : fmt::format("/spec.{}.yaml", i + 1)),
                      parts[i].spec_text);
  write_files_atomic(run.dir, scripts, 0755);

  write_file_atomic(run.dir + "/run.json", run_json(run, resolved_shapes).dump(2) + "\n");
  save_ledger(run);
  return run;
}

}  // namespace ddpctl
