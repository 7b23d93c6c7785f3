// ddpctl schema [KIND]: the published JSON Schemas of ddpctl's documents
// (docs/json.md); without KIND, the kinds there are.
#include <iostream>
#include <memory>

#include "base/json_document.hpp"
#include "cli/app.hpp"
#include "cli/common.hpp"
#include "cli/json_output.hpp"

namespace ddpctl::cli {

void setup_schema(CLI::App& app, Context&) {
  auto kind = std::make_shared<std::string>();
  CLI::App* cmd = app.add_subcommand("schema", "Print the JSON Schema of a document kind (docs/json.md), or the kinds");
  cmd->add_option("kind", *kind, "A document kind: status, event, submit, ... (status/1 for a major)");
  cmd->callback([kind] {
    if (!kind->empty()) {
      // The schema itself, as published: a document of its own standard.
      std::string text = json_schema_text(*kind);
      if (JsonCapture* c = json_capture()) c->fact("schema_document", nlohmann::json::parse(text));
      else std::cout << text;
      return;
    }
    nlohmann::json kinds = nlohmann::json::array();
    for (const auto& k : json_schema_kinds()) {
      std::cout << k << '\n';
      kinds.push_back({{"kind", k.substr(0, k.find('/'))}, {"major", std::stoi(k.substr(k.find('/') + 1))},
                       {"schema", "ddpctl." + k}});
    }
    json_fact("kinds", kinds);
    json_fact("dir", json_schema_dir());
  });
}

}  // namespace ddpctl::cli
