#include "submit/calibrate.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/diagnostics.hpp"
#include "base/files.hpp"
#include "base/regex.hpp"
#include "base/text.hpp"
#include "runs/job_files.hpp"
#include "script/resolve.hpp"
#include "spec/cluster.hpp"
#include "submit/submit.hpp"

namespace ddpctl {

namespace fs = std::filesystem;

std::optional<double> busbw_of_log(const std::string& text) {
  std::optional<double> best;
  long long largest = -1;
  for (const auto& line : split(text, '\n')) {
    if (line.rfind("{\"allreduce\"", 0) != 0) continue;
    try {
      auto m = nlohmann::json::parse(line).at("allreduce");
      long long bytes = m.at("bytes").get<long long>();
      if (bytes >= largest) largest = bytes, best = m.at("busbw_gbs").get<double>();
    } catch (const std::exception&) {
      continue;  // a line cut short: the job ended mid-write
    }
  }
  return best;
}

namespace {

// The line's indentation (spaces).
size_t indent_of(const std::string& line) { return line.find_first_not_of(' ') == std::string::npos ? line.size() : line.find_first_not_of(' '); }

// A partition's name as a pattern of itself (Slurm names: letters, digits, '-', '_', '.').
std::string literal(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) out += '\\';
    out += c;
  }
  return out;
}

bool blank_or_comment(const std::string& line) {
  size_t i = line.find_first_not_of(' ');
  return i == std::string::npos || line[i] == '#';
}

}  // namespace

std::optional<std::string> profile_with_busbw(const std::string& text, const std::string& partition, double gbs) {
  std::vector<std::string> lines = split(text, '\n');
  const std::string value = fmt::format("{:.4g}", gbs);
  size_t i = 0;
  while (i < lines.size() && !Regex("partitions:[ ]*(#.*)?").full_match(lines[i])) ++i;
  if (i == lines.size()) return std::nullopt;
  const Regex entry("([ ]+)" + literal(partition) + ":[ ]*(.*)");
  const Regex key("busbw_gbs:[ ]*[^,}# ]+");
  for (size_t j = i + 1; j < lines.size(); ++j) {
    if (blank_or_comment(lines[j])) continue;
    if (indent_of(lines[j]) == 0) break;  // the next top-level key
    RegexMatch m;
    if (!entry.full_match(lines[j], &m)) continue;
    std::string rest = m.str(2);
    if (!rest.empty() && rest[0] == '{') {  // a flow mapping, on this line and maybe the next
      for (size_t k = j; k < lines.size(); ++k) {
        if (key.search(lines[k])) {
          lines[k] = key.replace_first(lines[k], "busbw_gbs: " + value);
          return join(lines, "\n");
        }
        if (lines[k].find('}') != std::string::npos) break;
      }
      size_t brace = lines[j].find('{');
      bool empty = lines[j].compare(brace, 2, "{}") == 0;
      lines[j].insert(brace + 1, "busbw_gbs: " + value + (empty ? "" : ", "));
      return join(lines, "\n");
    }
    if (!rest.empty() && rest[0] != '#') return std::nullopt;  // another form: not edited
    size_t inner = std::string::npos;
    for (size_t k = j + 1; k < lines.size(); ++k) {
      if (blank_or_comment(lines[k])) continue;
      if (indent_of(lines[k]) <= indent_of(lines[j])) break;
      if (inner == std::string::npos) inner = indent_of(lines[k]);
      if (indent_of(lines[k]) == inner && key.search(lines[k])) {
        lines[k] = key.replace_first(lines[k], "busbw_gbs: " + value);
        return join(lines, "\n");
      }
    }
    if (inner == std::string::npos) inner = indent_of(lines[j]) + 2;
    lines.insert(lines.begin() + static_cast<long>(j) + 1, std::string(inner, ' ') + "busbw_gbs: " + value);
    return join(lines, "\n");
  }
  return std::nullopt;
}

namespace {

const Partition& checked_partition(const CalibrateRequest& r, const ClusterProfile& p) {
  const Partition* part = p.find_partition(r.partition);
  if (!part)
    throw UserError(Location{r.profile}, "partitions",
                    fmt::format("no partition {} in this profile{}", printable(r.partition),
                                did_you_mean(r.partition, p.partition_names())));
  if (r.nodes < 2)
    throw UserError(Location{"--nodes"}, "",
                    fmt::format("{}: an all-reduce across nodes needs 2 nodes or more", r.nodes));
  if (part->nodes && r.nodes > *part->nodes)
    throw UserError(Location{"--nodes"}, "",
                    fmt::format("{}: partition {} has {} node(s) (the profile's partitions.{}.nodes)", r.nodes,
                                r.partition, *part->nodes, r.partition));
  return *part;
}

// The measuring run's spec, written into the work folder.
std::string write_spec(const CalibrateRequest& r, const Partition& part, const std::string& name, int nodes) {
  std::string file = (fs::path(r.work_dir) / (name + ".yaml")).string();
  nlohmann::json args = {"--allreduce-bench", r.size, "--bench-iters", std::to_string(r.iters)};
  std::string text = fmt::format(
      "# ddpctl calibrate {}: the all-reduce across {} node(s), measured by ddp-train --allreduce-bench\n"
      "name: {}\ncluster: {}\npartition: {}\nnodes: {}\ngpus_per_node: {}\n{}exclusive: true\ntime: \"00:10:00\"\n"
      "trainer:\n  extra_args: {}\n",
      r.partition, nodes, name, nlohmann::json(fs::absolute(r.profile).string()).dump(),
      nlohmann::json(r.partition).dump(), nodes, part.gpus_per_node,
      part.gpus_per_node == 0 ? "procs_per_node: 1\n" : "", args.dump());
  fs::create_directories(r.work_dir);
  write_file_atomic(file, text);
  return file;
}

struct Submitted {
  SubmitResult result;
  int nodes = 0;
};

FabricMeasure read_measure(const Submitted& s, Context& ctx) {
  FabricMeasure m;
  m.run_id = s.result.run.id;
  m.node_count = s.nodes;
  const Attempt& a = s.result.attempt;
  const RunShape* shape = s.result.run.shape(a.shape);
  JobQuery q = ctx.slurm.accounting({a.job_id});
  for (const auto& j : q.jobs)
    if (j.id == a.job_id) m.nodes = j.nodes;
  std::string log = shape ? job_files::step_log(job_files::log_base(shape->output_dir, shape->job_name, a.job_id), 0, 0)
                          : "";
  std::error_code ec;
  if (log.empty() || !fs::exists(log, ec)) {
    m.problem = "no rank-0 log at " + log;
    return m;
  }
  m.busbw_gbs = busbw_of_log(read_file(log));
  if (!m.busbw_gbs) m.problem = "no measurement line in " + log;
  return m;
}

}  // namespace

Calibration calibrate(const CalibrateRequest& r, Context& ctx, Output& out) {
  ClusterProfile profile = load_cluster_profile(r.profile);
  const Partition& part = checked_partition(r, profile);
  std::vector<std::pair<std::string, int>> runs;  // name, nodes
  runs.emplace_back(fmt::format("calibrate-{}", r.partition), r.nodes);
  for (int k = 0; r.nodes >= 4 && k < r.nodes / 2; ++k) runs.emplace_back(fmt::format("calibrate-{}-pair{}", r.partition, k), 2);
  std::vector<Submitted> submitted;
  for (const auto& [name, nodes] : runs) {
    SubmitRequest req;
    req.spec = write_spec(r, part, name, nodes);
    req.runs_root = r.runs_root;
    req.templates_dir = r.templates_dir;
    req.again = true;
    req.snapshot = false;
    ResolvedRun resolved = load_and_resolve(req.spec, {});
    submitted.push_back({submit_one(resolved, req, ctx, out), nodes});
  }
  Calibration c;
  for (const auto& s : submitted) {
    wait_for_job(ctx, s.result.run, s.result.attempt, true, out);
    FabricMeasure m = read_measure(s, ctx);
    if (s.nodes == r.nodes && !c.whole) c.whole = m;
    else c.pairs.push_back(m);
  }
  if (c.pairs.empty() && c.whole) c.pairs.push_back(*c.whole);  // 2 or 3 nodes: the whole set is the pair
  std::vector<double> v;
  for (const auto& m : c.pairs)
    if (m.busbw_gbs) v.push_back(*m.busbw_gbs);
  if (v.empty()) return c;
  std::sort(v.begin(), v.end());
  c.median_gbs = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  c.min_gbs = v.front();
  c.max_gbs = v.back();
  if (!r.write) return c;
  std::optional<std::string> edited = profile_with_busbw(read_file(r.profile), r.partition, *c.median_gbs);
  if (!edited)
    throw UserError(Location{r.profile}, "partitions." + r.partition,
                    fmt::format("could not place busbw_gbs in its entry: add `busbw_gbs: {:.4g}` there by hand",
                                *c.median_gbs));
  ClusterProfile check = parse_cluster_profile(r.profile, *edited);  // refuses a profile the edit broke
  if (!check.find_partition(r.partition) || !check.find_partition(r.partition)->busbw_gbs)
    throw UserError(Location{r.profile}, "partitions." + r.partition, "the edit did not take: add busbw_gbs by hand");
  write_file_atomic(r.profile, *edited);
  c.written = true;
  return c;
}

}  // namespace ddpctl
