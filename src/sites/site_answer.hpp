#pragma once
// What a site of a race across sites answers the coordinator (race-gate's
// JSON, race_gate.hpp), read as data from a host that may be wrong, old or
// hostile (docs/race.md "What a site may say"): every field's type and form
// is checked before any of it is used, recorded or printed. A job id must be
// one of Slurm's forms, a state one Slurm has, a shape's label a plain word,
// a time a finite number; text meant for people (reasons, errors) is made
// plain. An answer that is not so makes its site "not reached", with why,
// and the other sites go on.
#include <string>
#include <vector>

#include "sites/site_race.hpp"

namespace ddpctl {

// Reads a site's answer into `poll`; false with poll.error saying what is
// wrong when it is not the gate's JSON, or any field is not as the gate
// writes it.
bool read_site_answer(const std::string& text, SitePoll& poll);

// The jobs a stand-down cancelled there (the answer's "cancelled"), each a
// Slurm job id; the others are left out.
std::vector<std::string> cancelled_jobs_of(const std::string& text);

}  // namespace ddpctl
