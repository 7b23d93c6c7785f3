#include "sweep/grid_limits.hpp"

#include <fmt/format.h>

#include "base/files.hpp"
#include "slurm/site_limits_read.hpp"
#include "script/preflight.hpp"
#include "base/text.hpp"

namespace ddpctl {

void refuse_over_submit_limits(const std::vector<SubmitAsk>& arrays, const SiteLimits& limits, SubmitWhat what,
                               const Location& where, Output& out) {
  long long total = 0;
  for (const auto& a : arrays) total += a.jobs;
  std::vector<Diagnostic> refused;
  for (const SubmitLimit& l : submit_limits(arrays, limits)) {
    if (l.over())
      refused.push_back({where, what == SubmitWhat::Grid ? "grid" : "",
                         describe_submit_limit(l, what, total) + "; nothing was submitted"});
    else if (!l.in_use)
      out.note(fmt::format("{} allows {} submitted jobs ({}): the {} cells fit it, but the jobs already queued there "
                           "were not counted (current usage unread)",
                           l.whose, l.limit, l.slurm_name, l.asked));
  }
  if (!refused.empty()) throw UserError(refused);
}

std::vector<SubmitAsk> grid_submit_asks(const std::vector<GridArray>& arrays, const SiteLimits& limits) {
  std::vector<SubmitAsk> asks;
  for (const GridArray& a : arrays)
    asks.push_back({a.label, job_ask(*a.shape, NodeQuery{}, limits), static_cast<long long>(a.cells.size())});
  return asks;
}

std::vector<std::vector<GridArray>> grid_submit_cases(const std::vector<GridArray>& arrays, bool raced, size_t cells) {
  if (!raced) return {arrays};
  std::vector<std::vector<GridArray>> cases;
  for (const GridArray& winner : arrays) {
    std::vector<GridArray> asked = arrays;
    for (GridArray& a : asked) a.cells = {0};
    GridArray rest = winner;
    rest.cells = rest_of_grid(cells);
    if (!rest.cells.empty()) asked.push_back(rest);
    cases.push_back(std::move(asked));
  }
  return cases;
}

namespace {

// What an array script's #SBATCH lines ask of where it lands.
JobAsk ask_of_script(const std::string& text, const SiteLimits& limits) {
  JobAsk j;
  for (const auto& raw : split(text, '\n')) {
    std::string line = trim(raw);
    if (line.rfind("#SBATCH ", 0) != 0) continue;
    std::string option = trim(line.substr(8));
    auto value = [&](const char* name) -> std::optional<std::string> {
      std::string prefix = std::string("--") + name + "=";
      if (option.rfind(prefix, 0) != 0) return std::nullopt;
      return option.substr(prefix.size());
    };
    if (auto v = value("account")) j.account = *v;
    if (auto v = value("qos")) j.qos = *v;
    if (auto v = value("partition")) j.partition = *v;
  }
  if (j.partition.empty())
    for (const auto& [name, p] : limits.partitions)
      if (p.is_default) j.partition = name;
  return j;
}

}  // namespace

std::vector<SubmitAsk> retry_submit_asks(const Run& run, const std::map<std::string, std::vector<int>>& cells,
                                         const SiteLimits& limits) {
  std::vector<SubmitAsk> asks;
  for (const auto& [label, indices] : cells) {
    const RunShape* shape = run.shape(label);
    if (!shape) throw UserError(Location{run.dir + "/run.json"}, "", "the sweep has no array of shape " + label);
    std::string path = run.dir + "/" + shape->script;
    std::string text;
    try {
      text = read_file(path);
    } catch (const std::exception& e) {
      throw UserError(Location{path}, "", fmt::format("cannot read the array script of shape {}: {}", label, e.what()));
    }
    asks.push_back({label, ask_of_script(text, limits), static_cast<long long>(indices.size())});
  }
  return asks;
}

void check_retry_submit_limits(const Run& run, const std::map<std::string, std::vector<int>>& cells,
                               SlurmClient& slurm, Output& out) {
  SiteLimits limits = read_site_limits(slurm);
  for (const auto& n : unread_limits(limits)) out.note(n);
  refuse_over_submit_limits(retry_submit_asks(run, cells, limits), limits, SubmitWhat::Retry, Location{run.dir}, out);
}

}  // namespace ddpctl
