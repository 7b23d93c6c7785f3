#pragma once
// The sbatch options sites ask their users for, besides the job's shape:
// where it may run (reservation, exclude, nodelist; per shape), when it may
// start (dependency, begin, hold), who hears of it (mail_type, mail_user),
// hint and comment; and `sbatch:`, one escape hatch for any other option,
// which never silently overrides what ddpctl computes itself.
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "spec/run_spec.hpp"
#include "base/yaml_reader.hpp"

namespace ddpctl {

// reservation, exclude and nodelist of one shape (the base or an alternative).
void read_shape_site_fields(MapReader& r, Shape& s);
// The run-level options and `sbatch:`.
void read_site_options(MapReader& top, RunSpec& spec);
// Top-level keys read_site_options reads.
const std::vector<const char*>& site_option_keys();

// The #SBATCH directives of these options ("--reservation=maint", "--hold").
std::vector<std::string> site_directives(const SiteOptions& site, const Shape& shape);

// Why `sbatch: {name: ...}` may not set this option (ddpctl computes it, or a
// spec field says it), or nullopt when it may.
std::optional<std::string> sbatch_option_refusal(const std::string& name);


}  // namespace ddpctl
