// The samples files (usage.hpp): written and read back, the job's use now
// (status) and over the whole job (report).
#include "runs/usage.hpp"

#include <algorithm>
#include <cmath>
#include <dirent.h>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

#include "base/json_fields.hpp"
#include "runs/job_files.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }
nlohmann::json opt_json(const std::optional<int>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

}  // namespace

nlohmann::json usage_sample_json(const UsageSample& s) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : s.ranks)
    ranks.push_back({{"rank", opt_json(r.rank)}, {"task", opt_json(r.task)}, {"cpu_s", r.cpu_s},
                     {"cpu_pct", opt_json(r.cpu_pct)}, {"wait_pct", opt_json(r.wait_pct)}, {"rss_bytes", r.rss_bytes},
                     {"procs", r.procs}, {"states", r.states}});
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : s.gpus)
    gpus.push_back({{"index", g.index}, {"util_pct", g.util_pct}, {"mem_used_mib", g.mem_used_mib},
                    {"mem_total_mib", g.mem_total_mib}});
  nlohmann::json j = {{"t", std::round(s.t * 1000) / 1000},
                      {"node", s.node},
                      {"job_id", s.job_id},
                      {"attempt", s.attempt},
                      {"interval_s", s.interval_s},
                      {"cpus", s.cpus},
                      {"cpu_pct", opt_json(s.cpu_pct)},
                      {"rss_bytes", s.rss_bytes},
                      {"procs", s.procs},
                      {"ranks", ranks},
                      {"gpus", gpus},
                      {"mem_total_bytes", s.mem_total_bytes},
                      {"mem_available_bytes", s.mem_available_bytes},
                      {"mem_limit_bytes", s.mem_limit_bytes}};
  if (!s.gpu_note.empty()) j["gpu_note"] = s.gpu_note;
  return j;
}

std::optional<UsageSample> parse_usage_sample(const std::string& line) {
  nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("t") || !j["t"].is_number()) return std::nullopt;
  using json_field::number;
  auto num = number;
  auto integer = [](const nlohmann::json& o, const char* k) -> std::optional<int> {
    if (auto v = json_field::integer(o, k)) return static_cast<int>(*v);
    return std::nullopt;
  };
  auto big = [](const nlohmann::json& o, const char* k) { return json_field::integer(o, k).value_or(0); };
  auto str = [](const nlohmann::json& o, const char* k) { return json_field::string(o, k).value_or(""); };
  UsageSample s;
  s.t = j["t"].get<double>();
  s.node = str(j, "node");
  s.job_id = str(j, "job_id");
  s.attempt = integer(j, "attempt").value_or(0);
  s.interval_s = num(j, "interval_s").value_or(0);
  s.cpus = integer(j, "cpus").value_or(0);
  s.cpu_pct = num(j, "cpu_pct");
  s.rss_bytes = big(j, "rss_bytes");
  s.procs = integer(j, "procs").value_or(0);
  if (j.contains("ranks") && j["ranks"].is_array())
    for (const auto& r : j["ranks"]) {
      if (!r.is_object()) continue;
      RankUsage u;
      u.rank = integer(r, "rank");
      u.task = integer(r, "task");
      u.cpu_s = num(r, "cpu_s").value_or(0);
      u.cpu_pct = num(r, "cpu_pct");
      u.wait_pct = num(r, "wait_pct");
      u.rss_bytes = big(r, "rss_bytes");
      u.procs = integer(r, "procs").value_or(0);
      u.states = str(r, "states");
      s.ranks.push_back(u);
    }
  if (j.contains("gpus") && j["gpus"].is_array())
    for (const auto& g : j["gpus"]) {
      if (!g.is_object()) continue;
      s.gpus.push_back({integer(g, "index").value_or(0), num(g, "util_pct").value_or(0),
                        num(g, "mem_used_mib").value_or(0), num(g, "mem_total_mib").value_or(0)});
    }
  s.gpu_note = str(j, "gpu_note");
  s.mem_total_bytes = big(j, "mem_total_bytes");
  s.mem_available_bytes = big(j, "mem_available_bytes");
  s.mem_limit_bytes = big(j, "mem_limit_bytes");
  return s;
}

std::string usage_path(const std::string& log_base, const std::string& node) {
  return job_files::usage(log_base, node);
}

std::map<std::string, std::vector<UsageSample>> read_usage(const std::string& log_base, int attempt,
                                                           long long tail_bytes) {
  std::map<std::string, std::vector<UsageSample>> out;
  size_t slash = log_base.rfind('/');
  std::string dir = slash == std::string::npos ? "." : log_base.substr(0, slash);
  std::string prefix = job_files::usage_prefix(slash == std::string::npos ? log_base : log_base.substr(slash + 1));
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  std::vector<std::string> files;
  while (dirent* e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name.rfind(prefix, 0) == 0 && name.size() > prefix.size() + job_files::kUsageSuffix.size() &&
        name.compare(name.size() - job_files::kUsageSuffix.size(), job_files::kUsageSuffix.size(), job_files::kUsageSuffix) == 0)
      files.push_back(name);
  }
  ::closedir(d);
  for (const auto& name : files) {
    std::ifstream in(dir + "/" + name);
    std::string line;
    if (tail_bytes > 0) {
      in.seekg(0, std::ios::end);
      long long size = static_cast<long long>(in.tellg());
      // From the byte before the tail: the partial line (or the newline
      // before a tail that starts on a line) is read and dropped.
      if (size > tail_bytes) {
        in.seekg(size - tail_bytes - 1);
        std::getline(in, line);
      } else {
        in.seekg(0);
      }
    }
    while (std::getline(in, line)) {
      auto s = parse_usage_sample(line);
      if (!s || (attempt >= 0 && s->attempt != attempt)) continue;
      out[s->node].push_back(*s);
    }
  }
  for (auto& [node, v] : out)
    std::stable_sort(v.begin(), v.end(), [](const UsageSample& a, const UsageSample& b) { return a.t < b.t; });
  return out;
}

std::optional<UsageNow> usage_now(const std::map<std::string, std::vector<UsageSample>>& samples) {
  UsageNow u;
  double util_sum = 0;
  bool any = false;
  for (const auto& [node, v] : samples) {
    if (v.empty()) continue;
    const UsageSample& s = v.back();
    u.t = any ? std::min(u.t, s.t) : s.t;
    any = true;
    u.nodes[node] = s;
    if (s.cpu_pct) u.cpu_pct = u.cpu_pct.value_or(0) + *s.cpu_pct;
    u.cpus += s.cpus;
    u.rss_bytes += s.rss_bytes;
    for (const auto& g : s.gpus) {
      u.gpus++;
      util_sum += g.util_pct;
      u.gpu_mem_used_mib += g.mem_used_mib;
      u.gpu_mem_total_mib += g.mem_total_mib;
    }
  }
  if (!any) return std::nullopt;
  if (u.gpus > 0) u.gpu_util_pct = util_sum / u.gpus;
  return u;
}

std::string format_usage(const UsageNow& u) {
  std::vector<std::string> parts;
  if (u.gpu_util_pct)
    parts.push_back(fmt::format("GPU {:.0f}% {:.0f}/{:.0f} GiB", *u.gpu_util_pct, u.gpu_mem_used_mib / 1024,
                                u.gpu_mem_total_mib / 1024));
  // CPU use is measured between two samples: none yet at the first.
  std::string cpu = u.cpu_pct ? fmt::format("CPU {:.0f}% ", *u.cpu_pct) : std::string();
  parts.push_back(cpu + "RSS " + format_bytes(u.rss_bytes));
  return join(parts, " · ");
}

nlohmann::json usage_json(const UsageNow& u, double now) {
  nlohmann::json nodes = nlohmann::json::object();
  for (const auto& [node, s] : u.nodes) nodes[node] = usage_sample_json(s);
  return {{"t", u.t},
          {"age_s", std::max(0.0, std::round(now - u.t))},
          {"total",
           {{"cpu_pct", opt_json(u.cpu_pct)},
            {"cpus", u.cpus},
            {"rss_bytes", u.rss_bytes},
            {"gpus", u.gpus},
            {"gpu_util_pct", opt_json(u.gpu_util_pct)},
            {"gpu_mem_used_mib", u.gpu_mem_used_mib},
            {"gpu_mem_total_mib", u.gpu_mem_total_mib}}},
          {"nodes", nodes}};
}

UsageSummary summarize_usage(const std::map<std::string, std::vector<UsageSample>>& samples) {
  UsageSummary out;
  double util_sum = 0, mem_sum = 0;
  long gpu_points = 0;
  std::map<long long, long> mem_counts;  // MiB -> samples
  // The job's CPU: the sum over nodes of each node's mean.
  for (const auto& [node, v] : samples) {
    double cpu_sum = 0;
    int cpu_points = 0;
    for (const auto& s : v) {
      out.samples++;
      out.rss_peak_bytes = std::max(out.rss_peak_bytes, s.rss_bytes);
      if (s.cpu_pct) cpu_sum += *s.cpu_pct, cpu_points++;
      for (const auto& g : s.gpus) {
        gpu_points++;
        util_sum += g.util_pct;
        mem_sum += g.mem_used_mib;
        out.gpu_mem_peak_mib = std::max(out.gpu_mem_peak_mib.value_or(0), g.mem_used_mib);
        mem_counts[std::llround(g.mem_used_mib)]++;
      }
    }
    if (cpu_points > 0) out.cpu_pct_mean = out.cpu_pct_mean.value_or(0) + cpu_sum / cpu_points;
  }
  if (gpu_points > 0) {
    out.gpu_util_mean = util_sum / gpu_points;
    out.gpu_mem_mean_mib = mem_sum / gpu_points;
    // The most frequent value; the largest of equally frequent ones (a job sits at its peak).
    long best = 0;
    for (const auto& [mib, n] : mem_counts)
      if (n >= best) best = n, out.gpu_mem_mode_mib = static_cast<double>(mib);
  }
  return out;
}

}  // namespace ddpctl
