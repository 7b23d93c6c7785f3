#pragma once
// `ddpctl status RUN` of a race across sites (docs/race.md "Across sites"):
// every site's jobs in one table, asked as the coordinator asks them (one
// `race-gate` call per site, which only reads when told nothing), with the
// race's own row first: who holds the grant, whether the coordinator runs.
#include <optional>
#include <string>
#include <vector>

#include "sites/coordinate.hpp"
#include "status/status_watch.hpp"

namespace ddpctl {

// The folder of the race across sites `query` names under `runs_root` (its
// id, or a prefix of its id alone: not one a plain run's id has too), if it
// names one.
std::optional<std::string> find_site_race(const std::string& runs_root, const std::string& query);

struct SiteRow {
  std::string site, job, shape, state, info;
  std::string site_run;  // the site's run there (--json; `--on HOST` commands take it)
  bool ended = true;     // for good (a job), or nothing more to come (a site's row)
};

// The race's row, then one per job at each site (a site not reached: one row
// saying why), from one poll of each site.
std::vector<SiteRow> site_race_rows(const std::string& dir, SiteCaller& sites);
// As a table: RUN SITE JOB SHAPE STATE INFO.
std::vector<std::string> format_site_rows(const std::string& id, const std::vector<SiteRow>& rows);

// `status --watch` of the race: the table as a frame (status_watch.hpp),
// each row keyed by site and job; done once every row has ended.
StatusFrame site_race_frame(const std::string& id, const std::vector<SiteRow>& rows);

// Where `logs`, `report` and `fetch` of the race go: the site whose job holds
// the grant, and that site's run there (asked once, read only). Throws a
// UserError saying what to do instead when no job was granted yet, or the
// site does not answer with its run. `command` names the asking command.
struct WinnerSite {
  SiteOfRace site;
  std::string job, run;
};
WinnerSite winner_site(const std::string& dir, SiteCaller& sites, const std::string& command);

}  // namespace ddpctl
