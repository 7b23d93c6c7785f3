#include "agent/culprit.hpp"

#include "agent/culprit_collectives.hpp"
#include "agent/culprit_stacks.hpp"

namespace ddpctl {

CulpritVerdict decide_culprit(const std::vector<RankEvidence>& ranks) {
  CulpritVerdict by_stacks = decide_by_stacks(ranks);
  std::optional<CulpritVerdict> by_counters = decide_by_collectives(ranks);
  if (!by_counters) return by_stacks;
  if (by_counters->kind == CulpritKind::Named) return *by_counters;
  if (by_stacks.kind == CulpritKind::Named) {
    by_stacks.text += "; " + by_counters->text;
    return by_stacks;
  }
  by_counters->text += "; " + by_stacks.text;
  return *by_counters;
}

}  // namespace ddpctl
