#pragma once
// Hybrid mode (docs/race.md): a race group, the shapes of one or more specs
// that race for one run, and what `ddpctl race` (or `submit` of a spec with
// alternatives) is asked. race.hpp holds the group's records; ranking its
// shapes is race_rank.hpp, submitting them race_submit.hpp, the command as a
// whole race_command.hpp, re-racing a requeued winner race_again.hpp.
#include <string>
#include <vector>

#include "script/render.hpp"
#include "script/resolve.hpp"
#include "runs/run_store.hpp"
#include "submit/submit.hpp"

namespace ddpctl {

// Every spec of the race, resolved, with the shapes' labels made unique
// across specs. entries[i] is the i-th shape of the group.
struct RaceGroup {
  std::vector<ResolvedRun> parts;
  std::vector<SpecSource> specs;  // parts[k]'s file as given, and its text
  struct Entry {
    size_t part, shape;
  };
  std::vector<Entry> entries;
  std::string identity;  // run_identity of every spec, racing (and the site, across sites)
  AcrossSites across;

  const ResolvedShape& shape(const Entry& e) const { return parts[e.part].shapes[e.shape]; }
  std::vector<std::string> labels() const;
};

// Loads and resolves each spec and checks they can race together: one
// cluster, no sweep, no spec twice, labels unique (a label used by two specs
// is prefixed with the spec's name), at least two shapes (one, at a site of
// a race across sites: its shapes at that site).
RaceGroup load_race_group(const std::vector<std::string>& specs, const std::vector<std::string>& sets,
                          const AcrossSites& across = {});

// Every shape's script of the group, rendered to claim the race in
// `race_folder` ("" for scripts that are only looked at: race --plan).
std::vector<RenderedScript> render_group(const RaceGroup& g, const std::string& templates,
                                         const std::string& race_folder);

struct RaceRequest {
  std::vector<std::string> specs, sets;
  std::string runs_root, templates_dir;
  bool dry_run = false, preflight = true, again = false;
  bool snapshot = true;  // false: --no-snapshot
  std::string snapshot_from;  // --snapshot-from (take_snapshot's `given`)
  // "" (submit every shape), "start" (drop shapes that cannot run, submit the
  // rest earliest start first) or "finish" (also drop shapes that cannot
  // finish first; earliest predicted finish first).
  std::string rank_by;
  AcrossSites across;  // one site of a race across sites (submit.hpp)
};

// `ddpctl submit` of a spec with alternatives (submits_as_race) races them:
// the submit's options for the race; --fit-time, which fits one shape's time
// limit, is refused.
RaceRequest race_of_submit(const SubmitRequest& req);

}  // namespace ddpctl
