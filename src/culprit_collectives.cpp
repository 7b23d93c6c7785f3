// The culprit by the bundled trainer's collective counters (culprit.hpp,
// trainer_state.hpp). Every rank enters the same collectives in the same
// order, and an allreduce (most of them) ends for no rank until every rank
// has entered it: while some ranks wait in #N, a rank that never entered #N
// is what they wait for. Exact where the stacks are a reading of frames.
#include <algorithm>
#include <fmt/format.h>

#include "culprit.hpp"
#include "text.hpp"

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

  // The furthest collective a rank waits in.
  const TrainerState* front = nullptr;
  for (const auto* r : counted)
    if (r->trainer->in_collective() && (!front || r->trainer->entered.seq > front->entered.seq)) front = &*r->trainer;
  if (!front) {
    v.kind = CulpritKind::NoneInCollective;
    std::uint64_t lo = counted[0]->trainer->left.seq, hi = lo;
    for (const auto* r : counted) lo = std::min(lo, r->trainer->left.seq), hi = std::max(hi, r->trainer->left.seq);
    v.text = lo == hi
                 ? fmt::format("by the trainer's counters no rank is in a collective: every rank left #{}", hi)
                 : fmt::format("by the trainer's counters no rank is in a collective: they left #{} to #{}", lo, hi);
    v.text += unheard;
    return v;
  }
  const std::uint64_t n = front->entered.seq;
  std::vector<const RankEvidence*> waiting, behind, past;
  for (const auto* r : counted) {
    const TrainerState& t = *r->trainer;
    if (t.entered.seq < n)
      behind.push_back(r);
    else if (t.in_collective() && t.entered.seq == n)
      waiting.push_back(r);
    else
      past.push_back(r);  // left #N already: nothing it waits for
  }
  if (behind.empty()) {
    v.kind = CulpritKind::AllInCollective;
    v.text =
        past.empty()
            ? fmt::format("by the trainer's counters every rank is in collective {}: none is missing from it",
                          mark(front->entered))
            : fmt::format("by the trainer's counters {} {} in collective {}, which {} left: none is missing from it",
                          describe_ranks(waiting), waiting.size() == 1 ? "is" : "are", mark(front->entered),
                          describe_ranks(past));
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
  v.text = fmt::format("{}; {} {} in #{}{}", join(each, "; "), describe_ranks(waiting),
                       waiting.size() == 1 ? "waits" : "wait", n, unheard);
  return v;
}

}  // namespace ddpctl
