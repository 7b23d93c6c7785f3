#include "spec/spec.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fmt/format.h>
#include <set>

#include "base/files.hpp"
#include "spec/grid_read.hpp"
#include "base/overrides.hpp"
#include "spec/spec_container.hpp"
#include "spec/spec_setup.hpp"
#include "spec/spec_launch.hpp"
#include "spec/spec_monitoring.hpp"
#include "spec/spec_restart.hpp"
#include "spec/spec_site.hpp"
#include "spec/spec_sites.hpp"
#include "spec/spec_snapshot.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

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

std::optional<std::string> check_constraint(const std::string& s) {
  if (is_feature_expression(s)) return std::nullopt;
  return "must be a Slurm feature expression: feature names joined by & or |, with [ ] ( ) and *N counts";
}

// Reads the fields a shape may set. Only fields present are changed, so the
// same function reads the base shape and each alternative's overrides.
void read_shape_fields(MapReader& r, Shape& s) {
  auto note = [&](const char* key) { s.where[key] = r.where(key); };
  if (auto v = r.integer("nodes", 1, 100000)) s.nodes = static_cast<int>(*v), note("nodes");
  if (auto v = r.integer("gpus_per_node", 0, 64)) s.gpus_per_node = static_cast<int>(*v), note("gpus_per_node");
  if (auto v = r.integer("procs_per_node", 1, 1024)) s.procs_per_node = static_cast<int>(*v), note("procs_per_node");
  if (auto v = r.string("gpu_type", slurm_name_problem)) s.gpu_type = *v, note("gpu_type");
  if (auto v = r.string("partition", slurm_name_problem)) s.partition = *v, note("partition");
  if (auto v = r.string("account", slurm_name_problem)) s.account = *v, note("account");
  if (auto v = r.string("qos", slurm_name_problem)) s.qos = *v, note("qos");
  if (auto v = r.string("constraint", check_constraint)) s.constraint = *v, note("constraint");
  if (auto v = r.integer("cpus_per_gpu", 1, 1024)) s.cpus_per_gpu = static_cast<int>(*v), s.cpus_per_task.reset(), note("cpus_per_gpu");
  if (auto v = r.integer("cpus_per_task", 1, 4096)) s.cpus_per_task = static_cast<int>(*v), note("cpus_per_task");
  if (r.has("cpus_per_gpu") && r.has("cpus_per_task"))
    r.error("cpus_per_task", "set either cpus_per_gpu or cpus_per_task, not both");
  if (r.has("cpus_per_task") && !r.has("cpus_per_gpu")) s.cpus_per_gpu.reset();
  if (auto v = r.memory_mib("mem")) s.mem_mib = *v, note("mem");
  if (auto v = r.slurm_time("time")) s.time_s = *v, note("time");
  if (auto v = r.boolean("exclusive")) s.exclusive = *v, note("exclusive");
  read_shape_site_fields(r, s);
}

// Checks that need the whole shape but not the cluster profile.
void check_shape(const Shape& s, const Location& fallback, Diagnostics& diags) {
  std::string ctx = s.field_prefix.empty() ? "" : fmt::format(" (shape {})", s.label);
  if (s.gpus_per_node == 0) {
    if (!s.procs_per_node)
      diags.error(s.where_of("gpus_per_node", fallback), s.field("gpus_per_node"),
                  "a CPU-only shape (gpus_per_node: 0) needs procs_per_node: the number of ranks per node" + ctx);
    if (!s.gpu_type.empty())
      diags.error(s.where_of("gpu_type", fallback), s.field("gpu_type"), "gpu_type is set but gpus_per_node is 0" + ctx);
    if (s.cpus_per_gpu)
      diags.error(s.where_of("cpus_per_gpu", fallback), s.field("cpus_per_gpu"),
                  "cpus_per_gpu needs GPUs; use cpus_per_task for a CPU-only shape" + ctx);
  } else if (s.procs_per_node && *s.procs_per_node != s.gpus_per_node) {
    diags.error(s.where_of("procs_per_node", fallback), s.field("procs_per_node"),
                fmt::format("is {} but gpus_per_node is {}: DDP runs one process per GPU; leave procs_per_node out{}",
                            *s.procs_per_node, s.gpus_per_node, ctx));
  }
  if (static_cast<long long>(s.nodes) * s.ranks_per_node() > 1000000)
    diags.error(s.where_of("nodes", fallback), s.field("nodes"), "the world size is above 1,000,000 ranks" + ctx);
}

std::string default_label(const Shape& s) { return fmt::format("{}x{}", s.nodes, s.ranks_per_node()); }

void read_shapes(MapReader& top, RunSpec& spec) {
  Diagnostics& diags = top.diagnostics();
  Shape base;
  if (!top.has("gpus_per_node"))
    diags.error(top.self(), "gpus_per_node", "required field is missing (GPUs per node; 0 for a CPU-only run)");
  read_shape_fields(top, base);
  read_shape_host(top, base, false);
  base.label = default_label(base);
  spec.shapes.push_back(base);

  if (top.has("alternatives") && top.has("sweep")) {
    top.error("sweep", "a spec has either `alternatives:` (one run, raced) or `sweep:` (one run per shape), not both");
    return;
  }
  const char* key = top.has("sweep") ? "sweep" : "alternatives";
  if (!top.has(key)) return;
  YAML::Node alts = top.node(key);
  if (!alts.IsSequence() || alts.size() == 0) {
    top.error(key, fmt::format("expected a non-empty list of shape overrides, got {}", describe_node(alts)));
    return;
  }
  // A sweep's shapes are its entries; the spec's own fields are their defaults.
  if (std::string(key) == "sweep") {
    spec.has_sweep = true;
    spec.shapes.clear();
  } else {
    spec.has_alternatives = true;
  }
  for (size_t i = 0; i < alts.size(); ++i) {
    Shape alt = base;
    alt.field_prefix = fmt::format("{}[{}].", key, i);
    MapReader r(top.document(), alts[i], fmt::format("{}[{}]", key, i), diags);
    if (!r.valid()) continue;
    read_shape_fields(r, alt);
    read_shape_host(r, alt, true);
    alt.label = default_label(alt);
    if (auto v = r.string("label", [](const std::string& s) -> std::optional<std::string> {
          if (is_run_name(s)) return std::nullopt;
          return "must be letters, digits, '.', '_' or '-'";
        }))
      alt.label = *v;
    r.finish();
    spec.shapes.push_back(alt);
  }
}

}  // namespace

namespace {

RunSpec parse_one_view(const YamlDocument& doc) {
  const std::string& file = doc.file;
  RunSpec spec;
  spec.file = file;
  Diagnostics diags;
  MapReader top(doc, doc.root, "", diags);

  if (auto v = top.string("name", slurm_name_problem)) spec.name = *v;
  else if (!top.has("name")) diags.error(top.self(), "name", "required field is missing (the run's name, e.g. resnet50-4gpu)");
  if (auto v = top.string("cluster")) spec.cluster = *v;
  else if (!top.has("cluster"))
    diags.error(top.self(), "cluster", "required field is missing (a profile name from configs/clusters/, or a path)");
  if (auto v = top.string("output_dir", check_output_dir)) spec.output_dir = *v;

  read_shapes(top, spec);
  read_launch(top, spec);
  read_job_setup(top, spec);
  read_master(top, spec);
  read_requeue(top, spec);
  read_progress_section(top, spec);
  read_metric_section(top, spec);
  read_running_sections(top, spec);
  read_fabric_check(top, spec.fabric_check);
  read_restart(top, spec);
  read_snapshot_section(top, spec);
  read_container_section(top, spec.container, false);
  read_site_options(top, spec);

  for (const char* key : {"name", "cluster", "output_dir", "launch", "trainer", "command", "modules", "env", "nccl",
                          "setup", "master", "requeue", "restart", "progress", "metric", "monitor", "watchdog", "fabric_check", "alternatives", "sweep", "container",
                          "on", "remote_dir"})
    if (top.has(key)) spec.where[key] = top.where(key);
  for (const char* key : site_option_keys())
    if (top.has(key)) spec.where[key] = top.where(key);
  // The grid is read by grid.hpp, cell by cell; here it is only seen.
  if (top.has("grid")) spec.where["grid"] = top.where("grid");
  spec.has_grid = top.has("grid");
  refuse_old_grid_spelling(top);
  if (spec.has_grid && spec.has_sweep)
    top.error("sweep", "a spec has either a `grid:` or `sweep:`, not both; a list of shapes is a grid's `include:` "
                       "list now (docs/sweeps.md)");
  top.finish();

  // Labels derive from nodes and GPUs: compare them only when those read
  // cleanly, or one typo would also report a confusing label clash.
  bool shapes_read = diags.empty();
  std::set<std::string> labels;
  for (const Shape& s : spec.shapes) {
    check_shape(s, Location{file}, diags);
    if (shapes_read) check_global_batch(spec, s, diags);
    if (shapes_read) check_restart(spec, s, diags);
    if (spec.several_shapes() && shapes_read && !labels.insert(s.label).second)
      diags.error(s.field_prefix.empty() ? top.self() : spec.where_of(spec.has_sweep ? "sweep" : "alternatives"),
                  s.field("label"),
                  fmt::format("two shapes are both labelled '{}'; give each {} its own `label`", s.label,
                              spec.has_sweep ? "sweep entry" : "alternative"));
  }
  check_site_names(spec, diags);
  diags.throw_if_any();
  return spec;
}

}  // namespace

RunSpec parse_run_spec(const std::string& file, const std::string& text, const std::vector<std::string>& overrides,
                       const std::string& site) {
  YamlDocument doc = parse_yaml_document(file, text, "run spec");
  apply_overrides(doc, overrides);
  return parse_run_spec_document(doc, site);
}

namespace {

// Every site's view is read too: a mistake in a site's keys is named here.
void check_site_views(const YamlDocument& doc, const RunSpec& spec) {
  for (const auto& host : spec_hosts(spec)) parse_run_spec_document(doc, host.empty() ? kHereSite : host);
}

// Keeps the shapes at `site` (kHereSite: those without `on:`).
void keep_site(RunSpec& spec, const std::string& site, const Location& where) {
  const std::string host = site == kHereSite ? "" : site;
  std::vector<std::string> hosts = spec_hosts(spec);
  spec.shapes.erase(std::remove_if(spec.shapes.begin(), spec.shapes.end(),
                                   [&](const Shape& s) { return s.host != host; }),
                    spec.shapes.end());
  if (spec.shapes.empty())
    throw UserError(where, "on",
                    fmt::format("no shape of this spec is at site {} (--site); its sites: {}", printable(site),
                                join(hosts, ", ")));
  spec.at_site = site;
}

}  // namespace

RunSpec parse_run_spec_document(const YamlDocument& doc, const std::string& site) {
  if (!site.empty()) {
    Diagnostics diags;
    YamlDocument view = site_view(doc, site == kHereSite ? "" : site, diags);
    diags.throw_if_any();
    RunSpec spec = parse_one_view(view);
    spec.names_sites = true;
    keep_site(spec, site, Location{doc.file});
    return spec;
  }
  RunSpec spec = parse_one_view(doc);
  spec.names_sites = std::any_of(spec.shapes.begin(), spec.shapes.end(), [](const Shape& s) { return !s.host.empty(); });
  if (spec.names_sites) check_site_views(doc, spec);
  return spec;
}

RunSpec load_run_spec(const std::string& path, const std::vector<std::string>& overrides, const std::string& site) {
  return parse_run_spec(path, read_file(path), overrides, site);
}

}  // namespace ddpctl
