#pragma once
// Sites in a run spec (docs/race.md "Across sites"): `on: HOST` names the
// login host a shape is submitted through (as --on takes it), at the top
// level (every shape's, by default) and in each alternative, with
// `remote_dir:` for the folder there. An alternative that names its site may
// also set that site's own cluster profile, account, data paths and
// environment (site_keys()): they hold for every shape of that site, as if
// the spec's top level said them, and a key not set is inherited.
//
// Read at one site (`--site HOST`, what `submit` asks each site's ddpctl),
// the spec is that site's view: its site keys merged into the top level and
// only its shapes; read without, every site's view is checked too, so a
// mistake is named here, with its line, before anything is sent.
#include <string>
#include <vector>

#include "base/diagnostics.hpp"
#include "base/yaml_document.hpp"
#include "base/yaml_reader.hpp"
#include "spec/run_spec.hpp"

namespace ddpctl {

// The keys an alternative with `on:` may set for its whole site.
const std::vector<std::string>& site_keys();

// Reads `on:` and `remote_dir:` of a shape (the top level's or an
// alternative's), and in an alternative marks its site keys as read
// (site_view reads them); a site key without `on:` is an error there.
void read_shape_host(MapReader& r, Shape& s, bool alternative);

// The document as the site `host` reads it: a copy in which the site keys of
// the alternatives at `host` are merged into the top level (maps key by key),
// keeping their lines. Two alternatives of one site that set one key to
// different values are an error in `diags`.
YamlDocument site_view(const YamlDocument& doc, const std::string& host, Diagnostics& diags);

// The hosts the shapes name, in the spec's order, each once ("" : a shape
// submitted here, without `on:`).
std::vector<std::string> spec_hosts(const RunSpec& spec);

// A site's name for rows and files: the host without the user
// ("alice@ibex.kaust.edu.sa" -> "ibex.kaust.edu.sa", a Host alias as it is),
// or the whole host where two differ only by the user; made of letters,
// digits, '.', '_' and '-' (others become '_').
std::string site_name(const std::string& host, const std::vector<std::string>& hosts);

// The most bytes a site's name may have: its files here are named after it
// (site.<name>.submit.log), and a file name has at most 255.
constexpr size_t kMaxSiteName = 128;

// Why the spec's hosts cannot be told apart by their site names, if they
// cannot: two hosts whose names are one ("h!x" and "h?x" are both h_x), or a
// name too long for a file. Checked as the spec is read, at each `on:`.
void check_site_names(const RunSpec& spec, Diagnostics& diags);

// Whether two YAML values say the same: maps key by key in any order,
// sequences item by item, scalars by their text (whatever their quoting).
bool same_yaml_value(const YAML::Node& a, const YAML::Node& b);

}  // namespace ddpctl
