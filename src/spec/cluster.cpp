#include "spec/cluster.hpp"

#include <fmt/format.h>

#include "base/files.hpp"
#include "spec/spec_container.hpp"
#include "spec/spec_setup.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

namespace {

// name, description, gpu_request, default_partition, default_time, interface.
void read_profile_fields(MapReader& top, Diagnostics& diags, ClusterProfile& p) {
  if (auto v = top.string("name", slurm_name_problem)) p.name = *v;
  else if (!top.has("name")) diags.error(top.self(), "name", "required field is missing");
  if (auto v = top.string("description")) p.description = *v;
  static const std::vector<std::string> dialects = {"gres", "gpus-per-node", "constraint", "partition"};
  if (auto v = top.string("gpu_request", [](const std::string& s) -> std::optional<std::string> {
        for (const auto& d : dialects)
          if (d == s) return std::nullopt;
        return "must be one of " + quoted_list(dialects) + did_you_mean(s, dialects);
      })) {
    p.dialect = *v == "gres" ? GpuDialect::Gres
              : *v == "gpus-per-node" ? GpuDialect::GpusPerNode
              : *v == "constraint" ? GpuDialect::Constraint
                                   : GpuDialect::Partition;
  } else if (!top.has("gpu_request")) {
    diags.error(top.self(), "gpu_request", "required field is missing (" + quoted_list(dialects) + ")");
  }
  if (auto v = top.string("default_partition", slurm_name_problem)) p.default_partition = *v;
  p.default_time_s = top.slurm_time("default_time");
  if (auto v = top.string("interface", [](const std::string& s) -> std::optional<std::string> {
        if (is_interface_name(s)) return std::nullopt;
        return "must be a network interface name such as ib0";
      }))
    p.interface = *v;
}

void read_gpu_types(MapReader& top, const YamlDocument& doc, Diagnostics& diags, ClusterProfile& p) {
  for (auto& [name, node] : top.entries("gpu_types")) {
    GpuType t;
    t.name = name;
    t.gres = t.constraint = name;
    std::string field = "gpu_types." + name;
    if (auto problem = slurm_name_problem(name)) {
      diags.error(doc.locate(field, node), field, "the type name " + *problem);
      continue;
    }
    t.where = doc.locate(field, node);
    if (node.IsNull()) {
      p.gpu_types.push_back(t);
      continue;
    }
    MapReader r(doc, node, field, diags);
    if (!r.valid()) continue;
    if (auto v = r.string("gres", slurm_name_problem)) t.gres = *v;
    if (auto v = r.string("constraint", [](const std::string& s) -> std::optional<std::string> {
          if (is_feature_expression(s)) return std::nullopt;
          return "must be a Slurm feature expression such as a100 or a100&nvlink";
        }))
      t.constraint = *v;
    if (auto v = r.string("partition", slurm_name_problem)) t.partition = *v;
    if (auto v = r.integer("gpus_per_node", 1, 64)) t.gpus_per_node = static_cast<int>(*v);
    t.peak_tflops = read_peak_tflops(r, "peak_tflops");
    r.finish();
    p.gpu_types.push_back(t);
  }
}

// `preemptible:` of a partition or QOS: true (its jobs can be preempted,
// how not said), or what doctor read ({mode, grace_time, exempt_time, by}).
std::optional<PreemptTerms> read_preempt_terms(MapReader& r, const YamlDocument& doc, const std::string& field,
                                               Diagnostics& diags) {
  if (!r.has("preemptible")) return std::nullopt;
  YAML::Node node = r.node("preemptible");
  PreemptTerms t;
  t.where = r.where("preemptible");
  if (node.IsScalar()) {
    std::optional<bool> yes = r.boolean("preemptible");
    if (!yes || !*yes) return std::nullopt;
    return t;
  }
  MapReader m(doc, node, field + ".preemptible", diags);
  if (!m.valid()) return std::nullopt;
  if (auto v = m.string("mode", [](const std::string& s) -> std::optional<std::string> {
        if (s == "requeue" || s == "cancel" || s == "suspend") return std::nullopt;
        return "is one of requeue, cancel, suspend (what Slurm's PreemptMode does to the job)";
      }))
    t.mode = *v;
  if (auto v = m.integer("grace_time", 0, 100000000)) t.grace_s = *v;
  if (auto v = m.integer("exempt_time", 0, 100000000)) t.exempt_s = *v;
  if (auto v = m.string_list("by", slurm_name_problem)) t.by = *v;
  m.finish();
  return t;
}

void read_preemption(MapReader& top, const YamlDocument& doc, Diagnostics& diags, ClusterProfile& p) {
  if (top.has("preemption")) {
    MapReader m(doc, top.node("preemption"), "preemption", diags);
    if (m.valid()) {
      SitePreemption s;
      s.where = top.where("preemption");
      if (auto v = m.string("type", [](const std::string& t) -> std::optional<std::string> {
            if (t == "preempt/partition_prio" || t == "preempt/qos" || t == "preempt/none") return std::nullopt;
            return "is one of preempt/partition_prio, preempt/qos, preempt/none (Slurm's PreemptType)";
          }))
        s.type = *v;
      if (auto v = m.integer("exempt_time", 0, 100000000)) s.exempt_s = *v;
      s.user_signal = m.boolean("user_signal");
      m.finish();
      p.preemption = s;
    }
  }
  for (auto& [name, node] : top.entries("qos")) {
    QosEntry q;
    q.name = name;
    const std::string field = "qos." + name;
    q.where = doc.locate(field, node);
    MapReader r(doc, node, field, diags);
    if (!r.valid()) continue;
    q.preemptible = read_preempt_terms(r, doc, field, diags);
    r.finish();
    p.qos.push_back(q);
  }
}

// After read_gpu_types: a partition's gpu_types name the profile's.
void read_partitions(MapReader& top, const YamlDocument& doc, Diagnostics& diags, ClusterProfile& p) {
  for (auto& [name, node] : top.entries("partitions")) {
    Partition part;
    part.name = name;
    std::string field = "partitions." + name;
    if (auto problem = slurm_name_problem(name)) {
      diags.error(doc.locate(field, node), field, "the partition name " + *problem);
      continue;
    }
    part.where = doc.locate(field, node);
    MapReader r(doc, node, field, diags);
    if (!r.valid()) continue;
    if (auto v = r.integer("gpus_per_node", 0, 64)) part.gpus_per_node = static_cast<int>(*v);
    if (auto v = r.string_list("gpu_types", slurm_name_problem)) part.gpu_types = *v;
    if (auto v = r.integer("nodes", 1, 1000000)) part.nodes = static_cast<int>(*v);
    if (auto v = r.integer("cpus_per_node", 1, 100000)) part.cpus_per_node = static_cast<int>(*v);
    if (auto v = r.integer("cpus_per_gpu", 1, 10000)) part.cpus_per_gpu = static_cast<int>(*v);
    part.mem_per_node_mib = r.memory_mib("mem_per_node");
    part.max_time_s = r.slurm_time("max_time");
    if (auto v = r.boolean("implicit")) part.implicit = *v;
    part.busbw_gbs = r.positive_number("busbw_gbs", 100000);
    part.peak_tflops = read_peak_tflops(r, "peak_tflops");
    part.preemptible = read_preempt_terms(r, doc, field, diags);
    r.finish();
    for (size_t i = 0; i < part.gpu_types.size(); ++i) {
      if (!p.find_gpu_type(part.gpu_types[i]))
        diags.error(part.where, field + ".gpu_types",
                    fmt::format("'{}' is not listed under gpu_types:{}", part.gpu_types[i],
                                did_you_mean(part.gpu_types[i], p.gpu_type_names())));
    }
    p.partitions.push_back(part);
  }
}

// A partition a GPU type or default_partition names is listed under
// partitions:; with gpu_request: partition, every GPU type names one.
void check_partition_names(MapReader& top, Diagnostics& diags, const ClusterProfile& p) {
  for (const auto& t : p.gpu_types) {
    if (!t.partition.empty() && !p.partitions.empty() && !p.find_partition(t.partition))
      diags.error(t.where, "gpu_types." + t.name + ".partition",
                  fmt::format("'{}' is not listed under partitions:{}", t.partition,
                              did_you_mean(t.partition, p.partition_names())));
    if (p.dialect == GpuDialect::Partition && t.partition.empty())
      diags.error(t.where, "gpu_types." + t.name,
                  "with gpu_request: partition every GPU type needs the partition that holds it");
  }
  if (!p.default_partition.empty() && !p.partitions.empty() && !p.find_partition(p.default_partition))
    diags.error(top.where("default_partition"), "default_partition",
                fmt::format("'{}' is not listed under partitions:{}", p.default_partition,
                            did_you_mean(p.default_partition, p.partition_names())));
}

}  // namespace

ClusterProfile parse_cluster_profile(const std::string& file, const std::string& text) {
  YamlDocument doc = parse_yaml_document(file, text, "cluster profile");
  ClusterProfile p;
  p.file = file;
  Diagnostics diags;
  MapReader top(doc, doc.root, "", diags);

  read_profile_fields(top, diags, p);
  read_gpu_types(top, doc, diags, p);
  read_partitions(top, doc, diags, p);
  read_preemption(top, doc, diags, p);

  p.nccl = read_nccl_settings(top, "nccl");
  if (auto v = top.string_list("modules")) p.modules = *v;
  if (auto env = top.string_map("env")) {
    for (const auto& [name, value] : *env) {
      if (!is_env_name(name)) top.error("env", fmt::format("{} is not a valid variable name", printable(name)));
      else if (auto reason = reserved_env_reason(name)) top.error("env", fmt::format("{} {}", name, *reason));
      else p.env.emplace_back(name, value);
    }
  }
  read_container_section(top, p.container, true);
  read_fabric_check(top, p.fabric_check);
  top.finish();
  check_partition_names(top, diags, p);
  diags.throw_if_any();
  return p;
}

ClusterProfile load_cluster_profile(const std::string& path) {
  return parse_cluster_profile(path, read_file(path));
}

}  // namespace ddpctl
