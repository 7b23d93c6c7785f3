#include "agent/culprit_collectives.hpp"

#include <algorithm>
#include <cstdint>
#include <fmt/format.h>

#include "base/text.hpp"

namespace ddpctl {

namespace {

// Where the rank says it is, in its own words: at "epoch 1, step 3 of 50:
// loading a batch" for 31 s.
std::string said(const TrainerState& s) {
  std::string out = fmt::format("at \"{}\"", s.phase);
  if (s.for_s) out += fmt::format(" for {} s", *s.for_s);
  return out;
}

std::string mark(const CollectiveMark& m) { return fmt::format("#{} {}", m.seq, m.name); }

}  // namespace

std::optional<CulpritVerdict> decide_by_collectives(const std::vector<RankEvidence>& ranks) {
  std::vector<const RankEvidence*> counted, silent;
  for (const auto& r : ranks) {
    if (r.trainer && r.trainer->counted)
      counted.push_back(&r);
    else if (r.rank)
      silent.push_back(&r);  // a rank's process; a launcher has none
  }
  if (counted.size() < 2) return std::nullopt;
  CulpritVerdict v;
  v.evidence = CulpritEvidence::TrainerCounters;
  std::string unheard = silent.empty() ? "" : "; " + describe_ranks(silent) + " gave no counters";

  // The furthest collective any rank has entered (#N). Those that entered it
  // wait in it, or, on a GPU, went on: NCCL's wait only orders the GPU's
  // stream, so the host leaves the collective at once and blocks later.
  const TrainerState* front = &*counted[0]->trainer;
  for (const auto* r : counted)
    if (r->trainer->entered.seq > front->entered.seq) front = &*r->trainer;
  const std::uint64_t n = front->entered.seq;
  std::vector<const RankEvidence*> waiting, went_on, behind;
  for (const auto* r : counted) {
    const TrainerState& t = *r->trainer;
    if (t.entered.seq < n)
      behind.push_back(r);
    else
      (t.in_collective() ? waiting : went_on).push_back(r);
  }
  if (n == 0 || (behind.empty() && waiting.empty())) {
    v.kind = CulpritKind::NoneInCollective;
    v.text = n == 0 ? "by the trainer's counters no rank has entered a collective yet"
                    : fmt::format("by the trainer's counters no rank is in a collective: every rank left #{}", n);
    v.text += unheard;
    return v;
  }
  if (behind.empty()) {
    v.kind = CulpritKind::AllInCollective;
    v.text =
        went_on.empty()
            ? fmt::format("by the trainer's counters every rank is in collective {}: none is missing from it",
                          mark(front->entered))
            : fmt::format("by the trainer's counters {} {} in collective {}, which {} left: none is missing from it",
                          describe_ranks(waiting), waiting.size() == 1 ? "is" : "are", mark(front->entered),
                          describe_ranks(went_on));
    v.text += unheard;
    return v;
  }
  v.kind = CulpritKind::Named;
  std::vector<std::string> each;
  for (const auto* r : behind) {
    const TrainerState& t = *r->trainer;
    std::string who = describe_ranks({r});
    if (t.in_collective())
      each.push_back(
          fmt::format("{} is still in collective {}, which the others left — {}", who, mark(t.entered), said(t)));
    else if (t.left.seq == 0)
      each.push_back(
          fmt::format("{} never entered collective {} — it has entered none, {}", who, mark(front->entered), said(t)));
    else
      each.push_back(fmt::format("{} never entered collective {} — it left #{}, {}", who, mark(front->entered),
                                 t.left.seq, said(t)));
    v.culprits.push_back({r->task, r->rank, r->node, t.phase});
  }
  std::vector<std::string> ahead;
  if (!waiting.empty())
    ahead.push_back(fmt::format("{} {} in #{}", describe_ranks(waiting), waiting.size() == 1 ? "waits" : "wait", n));
  if (!went_on.empty())
    ahead.push_back(fmt::format("{} entered #{} and went on (on a GPU it runs on after the host has left it)",
                                describe_ranks(went_on), n));
  v.text = fmt::format("{}; {}{}", join(each, "; "), join(ahead, "; "), unheard);
  return v;
}

}  // namespace ddpctl
