#include "slurm/slurm_parse_nodes.hpp"

#include <fmt/format.h>
#include <sstream>

#include "slurm/slurm_json.hpp"
#include "base/text.hpp"
#include "base/values.hpp"

namespace ddpctl {

using namespace slurm_json;

namespace {

NodeInfo read_node(const Reader& r, const json& n, const std::string& where) {
  NodeInfo node;
  node.name = r.str(n, "name", where);
  node.partitions = r.strings(n, "partitions", where);
  node.features = r.strings(n, "active_features", where);
  if (node.features.empty()) node.features = r.strings(n, "features", where);
  node.gpus_by_type = parse_gres(r.str(n, "gres", where));
  node.cpus = static_cast<int>(r.integer(n, "cpus", where));
  node.memory_mib = r.integer(n, "real_memory", where);
  std::vector<std::string> state = r.flag_arrays() ? r.strings(n, "state", where)
                                                    : std::vector<std::string>{r.str(n, "state", where)};
  for (const auto& s : state) node.state += (node.state.empty() ? "" : "+") + s;
  return node;
}

}  // namespace

std::map<std::string, int> parse_gres(const std::string& gres) {
  std::map<std::string, int> out;
  // Split on commas outside parentheses: "gpu:a100:4(S:0-1),gpu:v100:2".
  std::vector<std::string> items;
  std::string cur;
  int depth = 0;
  for (char c : gres) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      items.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  items.push_back(cur);
  for (std::string item : items) {
    if (auto paren = item.find('('); paren != std::string::npos) item.erase(paren);
    // squeue -o %b: "gres:gpu:a100:4" (22.05), "gres/gpu:a100:4" (24.11).
    if (item.rfind("gres:", 0) == 0 || item.rfind("gres/", 0) == 0) item.erase(0, 5);
    auto parts = split(item, ':');
    if (parts.empty() || parts[0] != "gpu") continue;
    if (parts.size() == 1) {
      out[""] += 1;
    } else if (parts.size() == 2) {
      if (is_decimal_number(parts[1]))
        out[""] += to_int(parts[1]);
      else
        out[parts[1]] += 1;
    } else {
      out[parts[1]] += to_int(parts[2]);
    }
  }
  return out;
}

std::string tres_value(const std::string& tres, const std::string& key) {
  for (const auto& item : split(tres, ','))
    if (item.rfind(key + "=", 0) == 0) return item.substr(key.size() + 1);
  return "";
}

int gpus_in_tres(const std::string& tres) {
  int n = 0;
  for (const auto& item : split(tres, ',')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string key = item.substr(0, eq);
    // "gres/gpu=4" counts; "gres/gpu:a100=4" repeats it by type.
    if (key == "gres/gpu") n = to_int(item.substr(eq + 1));
  }
  return n;
}

std::vector<NodeInfo> parse_sinfo_json(const std::string& text) {
  json doc = parse_document(text, "sinfo --json");
  throw_json_errors(doc);
  Reader r(doc, "sinfo --json");
  if (!sinfo_lists_nodes(r.source()))
    throw SlurmFormatError(fmt::format("sinfo --json of {} lists node groups, not nodes: ask `scontrol show nodes "
                                       "--json` for them",
                                       r.source().describe()));
  std::vector<NodeInfo> nodes;
  const json& list = r.list(doc, "nodes");
  for (size_t i = 0; i < list.size(); ++i) nodes.push_back(read_node(r, list[i], fmt::format("nodes[{}]", i)));
  return nodes;
}

std::vector<NodeInfo> parse_scontrol_nodes_json(const std::string& text) {
  json doc = parse_document(text, "scontrol show nodes --json");
  throw_json_errors(doc);
  Reader r(doc, "scontrol show nodes --json");
  std::vector<NodeInfo> nodes;
  const json& list = r.list(doc, "nodes");
  for (size_t i = 0; i < list.size(); ++i) nodes.push_back(read_node(r, list[i], fmt::format("nodes[{}]", i)));
  return nodes;
}

std::vector<std::string> job_node_list(const std::string& show, const std::string& key) {
  std::vector<std::string> out;
  size_t at = show.find(" " + key + "=");
  if (at == std::string::npos) return out;
  std::string v = show.substr(at + key.size() + 2);
  v = v.substr(0, v.find_first_of(" \n"));
  if (v != "(null)" && !v.empty()) out = expand_hostlist(v);
  return out;
}

}  // namespace ddpctl
