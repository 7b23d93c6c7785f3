#include "sweep/grid_array_submit.hpp"

#include <fmt/format.h>
#include <limits>

#include "slurm/job_array.hpp"
#include "base/values.hpp"
#include "submit/submit_attempt.hpp"

namespace ddpctl {

std::vector<ArrayPart> split_array(const std::vector<int>& cells, long long max_array_size) {
  std::vector<ArrayPart> parts;
  if (max_array_size <= 0) max_array_size = std::numeric_limits<int>::max();
  for (int cell : cells) {
    // Each part's tasks are its cells less its offset, all below the limit.
    int offset = static_cast<int>((cell / max_array_size) * max_array_size);
    if (parts.empty() || parts.back().offset != offset) parts.push_back({offset, {}});
    parts.back().tasks.push_back(cell - offset);
  }
  return parts;
}

long long max_array_size(SlurmClient& slurm) {
  auto config = slurm.config();
  auto it = config.find("MaxArraySize");
  if (it == config.end()) return 0;
  std::string problem;
  auto v = parse_int(it->second, 1, 1LL << 31, &problem);
  return v ? *v : 0;
}

int submit_grid_cells(Run& run, const RunShape& shape, const std::vector<int>& cells, std::optional<int> max_parallel,
                 long long max_size, SlurmClient& slurm, Output& out, const std::string& verb,
                 std::string* after) {
  int failed = 0;
  std::vector<ArrayPart> parts = split_array(cells, max_size);
  for (const ArrayPart& part : parts) {
    std::string spec = format_array(part.tasks, max_parallel);
    std::string split = parts.size() > 1 ? fmt::format(", cells {}-{} (MaxArraySize {}: task N is cell N+{})",
                                                       part.offset + part.tasks.front(), part.offset + part.tasks.back(),
                                                       max_size, part.offset)
                                         : "";
    std::vector<std::string> args = {"--array=" + spec};
    std::string waits = after && !after->empty() ? *after : "";
    if (!waits.empty()) args.push_back("--dependency=afterany:" + waits);
    Attempt at = submit_attempt(run, shape, slurm, args, spec, part.offset);
    if (at.outcome == Outcome::Submitted) {
      if (after) *after = at.job_id;
      out.line(fmt::format("shape {}: {} job array {} ({} cell(s), --array={}{}{})", shape.label, verb, at.job_id,
                           part.tasks.size(), spec, split,
                           waits.empty() ? "" : ", starts after job array " + waits + " ends"));
    } else {
      ++failed;
      out.error(fmt::format("shape {}: {}: {} (recorded in {}/ledger.json)", shape.label,
                            at.outcome == Outcome::Rejected ? "sbatch rejected the array" : "sbatch's answer was unclear",
                            at.reason, run.dir));
    }
  }
  return failed;
}

}  // namespace ddpctl
