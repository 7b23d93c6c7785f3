#pragma once
// `ddpctl submit SPEC` of a spec that names sites (`on:`, spec_sites.hpp):
// one run raced across sites (docs/race.md "Across sites"). Here, on the
// machine that submits (a laptop, a login node), the race's record is kept
// in runs/<id>/ (sites.json: the spec, the sites and their shapes; each
// site's submission's log and exit status; the grant), the coordinator is
// started (coordinate.hpp), and every site is submitted to at once, each
// through the cluster-side ddpctl as `--on` does (remote_submit.hpp), with
// `--site HOST --coordinator ID --gate-timeout S`: a slow site holds no
// other back, and a site that cannot be reached is named and left out.
#include <string>
#include <vector>

#include "runs/output.hpp"
#include "slurm/context.hpp"
#include "spec/run_spec.hpp"
#include "sites/site_race.hpp"

namespace ddpctl {

struct SitesSubmitRequest {
  // "submit": one run; "sweep": a grid, raced then swept (its first cell
  // races across sites, the rest runs on the winning site and shape).
  std::string verb = "submit";
  std::string spec;               // as given (in this folder or below: it goes to the same place at each site)
  std::vector<std::string> sets;  // --set
  std::string runs_root;          // here
  bool snapshot = true;           // false: --no-snapshot
  bool preflight = true;          // false: --no-preflight, passed to every site
  bool again = false;             // --again
  long long gate_s = 300;         // --gate-timeout: the longest a started job waits for the grant
  double poll_s = 5;              // the coordinator's poll
  std::string self;               // this ddpctl, run for each site's submission and as the coordinator
};

// The sites of a spec that names them, in its order.
std::vector<SiteOfRace> sites_of(const RunSpec& spec);

// The submission of one site: this ddpctl's `submit ... --on HOST` (`sweep`).
std::vector<std::string> site_submit_argv(const SitesSubmitRequest& req, const SiteOfRace& site,
                                          const std::string& coordinator);
// The coordinator, started apart from this process (setsid), its output
// appended to `log`.
std::vector<std::string> coordinator_start_argv(const std::string& self, const std::string& runs_root,
                                                const std::string& id, const std::string& log);

// Records the race, starts the coordinator, submits to every site at once and
// says each outcome; a UserError when no site could be submitted to.
void submit_across_sites(const SitesSubmitRequest& req, Context& ctx, Output& out);

}  // namespace ddpctl
