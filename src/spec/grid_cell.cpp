#include "spec/grid_cell.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/format.h>

#include "base/overrides.hpp"
#include "base/shell.hpp"
#include "base/text.hpp"

namespace ddpctl {

namespace {

bool is_placeholder_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '[' || c == ']';
}

// What `{name}` stands for: the cell's name, or a key; nullptr and false
// when it names neither.
struct Named {
  bool cell = false;
  const GridKey* key = nullptr;
};
Named named(const Grid& grid, const std::string& name) {
  if (name == "cell") return {true, nullptr};
  for (const auto& k : grid.keys)
    if (k.name == name || k.path == name) return {false, &k};
  return {};
}

}  // namespace

std::optional<std::string> replace_placeholders(const std::string& text, const Grid& grid, const GridCell& cell,
                                                std::string* problem, PlaceholderUse use,
                                                std::vector<std::string>* inserted) {
  std::vector<ShellQuoting> quoting;
  std::vector<bool> arithmetic;
  if (use == PlaceholderUse::ShellLine) quoting = shell_quoting_of(text), arithmetic = shell_arithmetic_of(text);
  std::string out;
  bool changed = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if ((c == '{' || c == '}') && i + 1 < text.size() && text[i + 1] == c) {
      out += c;
      ++i;
      changed = true;
      continue;
    }
    if (c != '{' || (i > 0 && text[i - 1] == '$')) {
      out += c;
      continue;
    }
    size_t close = i + 1;
    while (close < text.size() && is_placeholder_char(text[close])) ++close;
    if (close == i + 1 || close >= text.size() || text[close] != '}') {
      out += c;  // not a placeholder: JSON, awk, a lone brace
      continue;
    }
    std::string name = text.substr(i + 1, close - i - 1);
    Named n = named(grid, name);
    if (!n.cell && !n.key) {
      std::vector<std::string> known{"cell"};
      for (const auto& k : grid.keys) known.push_back(k.name);
      *problem = fmt::format("{{{}}} names no key of the grid{}; placeholders: {}", name, did_you_mean(name, known),
                             join(known, ", "));
      return std::nullopt;
    }
    const std::string variable = n.cell ? "DDPCTL_CELL" : n.key->variable;
    if (use == PlaceholderUse::ShellLine) {
      // Where bash evaluates arithmetic, a variable's value is an expression
      // it evaluates (and a subscript in it runs commands): only a number.
      const std::string value = n.cell ? cell.name : cell.value_of(n.key->path);
      if (arithmetic[i] && !value.empty() && !plain_number(value)) {
        *problem = fmt::format("{{{}}} stands where bash evaluates arithmetic or an array's subscript ($(( )), (( )), "
                               "[[ -gt ]], let, declare -i, a[...]), where a value is run as an expression, not read "
                               "as text; only a plain number may stand there, and cell {} gives it {}",
                               name, cell.name, printable(value, 60));
        return std::nullopt;
      }
      // The shell reads the value from the cell's variable: it never parses it.
      auto word = shell_variable_at(quoting[i], variable);
      if (!word) {
        *problem = fmt::format("{{{}}} stands inside ${{...}}, where no value can be put in as exactly the bytes "
                               "it holds; write ${} there (the cell's variable)",
                               name, variable);
        return std::nullopt;
      }
      out += *word;
    } else {
      std::string value = n.cell ? cell.name : cell.value_of(n.key->path);
      if (inserted) inserted->push_back(value);
      out += value;
    }
    changed = true;
    i = close;
  }
  if (!changed) return std::nullopt;
  return out;
}

CellDocuments::CellDocuments(const YamlDocument& spec) : rest_(spec) {
  rest_.root.reset(copy_with_marks(spec.root));  // reset: operator= would write into spec's own node
  rest_.root.remove("grid");
}

YamlDocument cell_document(const std::string& file, const std::string& text, const std::vector<std::string>& overrides,
                           const Grid& grid, const GridCell& cell) {
  YamlDocument spec = parse_yaml_document(file, text, "run spec");
  apply_overrides(spec, overrides);
  return CellDocuments(spec).of(grid, cell);
}

YamlDocument CellDocuments::of(const Grid& grid, const GridCell& cell) const {
  YamlDocument out = rest_;
  out.root.reset(copy_with_marks(rest_.root));
  const YamlDocument& doc = out;
  // The cell's values, as the grid wrote them (their lines stay theirs).
  for (const auto& v : cell.values)
    if (auto problem = set_field_path(out.root, v.key, copy_with_marks(v.node)))
      throw UserError(grid.where, v.key, fmt::format("cell {}: {}", cell.name, *problem));

  // A value the cell set is the grid's, put in as it is: a `{B}` in it is
  // its own text, not a placeholder.
  auto set_by_cell = [&](const std::string& field) {
    for (const auto& v : cell.values)
      if (v.key == field) return true;
    return false;
  };
  Diagnostics diags;
  auto replace = [&](YAML::Node node, const std::string& field, PlaceholderUse use,
                     std::vector<std::string>* inserted = nullptr) {
    if (!node.IsScalar() || set_by_cell(field) || set_by_cell(field.substr(0, field.find('[')))) return;
    std::string problem;
    auto replaced = replace_placeholders(node.Scalar(), grid, cell, &problem, use, inserted);
    if (!problem.empty())
      diags.error(doc.locate(field, node), field, problem);
    else if (replaced)
      node = *replaced;  // in place: the scalar keeps its line
  };
  YAML::Node root = out.root;
  if (YAML::Node command = root["command"]; command.IsDefined()) {
    if (command.IsSequence())
      for (size_t i = 0; i < command.size(); ++i)
        replace(command[i], fmt::format("command[{}]", i), PlaceholderUse::Literal);
    else
      replace(command, "command", PlaceholderUse::ShellLine);
  }
  if (YAML::Node trainer = root["trainer"]; trainer.IsMap()) {
    if (YAML::Node extra = trainer["extra_args"]; extra.IsSequence())
      for (size_t i = 0; i < extra.size(); ++i)
        replace(extra[i], fmt::format("trainer.extra_args[{}]", i), PlaceholderUse::Literal);
    if (YAML::Node dir = trainer["checkpoint_dir"]; dir.IsScalar()) {
      std::string before = dir.Scalar();
      replace(dir, "trainer.checkpoint_dir", PlaceholderUse::Literal);
      // No placeholder: each cell its own checkpoint folder.
      if (dir.Scalar() == before && !before.empty())
        dir = before + (before.back() == '/' ? "" : "/") + cell.dir_name;
    }
  }
  if (YAML::Node env = root["env"]; env.IsMap())
    for (auto it = env.begin(); it != env.end(); ++it) {
      std::string name = it->first.IsScalar() ? it->first.Scalar() : std::string("?");
      std::vector<std::string> inserted;
      replace(it->second, "env." + name, PlaceholderUse::Literal, &inserted);
      // env: reads $NAME in its own value as the variable's earlier value
      // (shell.hpp): a value put in that holds it could not stay as it is.
      for (const auto& v : inserted)
        if (refers_to_itself(name, v)) {
          diags.error(doc.locate("env." + name, it->second), "env." + name,
                      fmt::format("the cell's value {} holds ${}, which env: reads as {}'s earlier value, so it "
                                  "cannot reach {} as it is; put the value in another variable",
                                  printable(v, 60), name, name, name));
          break;
        }
    }
  diags.throw_if_any();
  return out;
}

std::vector<std::pair<std::string, std::string>> cell_environment(const Grid& grid, const GridCell& cell) {
  std::vector<std::pair<std::string, std::string>> env{{"DDPCTL_CELL", cell.name}};
  for (const auto& k : grid.keys) {
    auto v = std::find_if(cell.values.begin(), cell.values.end(), [&](const GridValue& gv) { return gv.key == k.path; });
    if (v != cell.values.end()) env.emplace_back(k.variable, v->text);
  }
  return env;
}

}  // namespace ddpctl
