#include "base/diagnostics.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ddpctl {

std::string Location::str() const {
  if (line <= 0) return file;
  if (column <= 0) return fmt::format("{}:{}", file, line);
  return fmt::format("{}:{}:{}", file, line, column);
}

std::string Diagnostic::str() const {
  std::string out;
  std::string w = where.str();
  if (!w.empty()) out += w + ": ";
  if (!field.empty()) out += field + ": ";
  out += message;
  return out;
}

void Diagnostics::error(Location where, std::string field, std::string message) {
  items_.push_back({std::move(where), std::move(field), std::move(message)});
}

void Diagnostics::throw_if_any() const {
  if (items_.empty()) return;
  std::vector<Diagnostic> sorted = items_;
  // Reading order: by file, then position; stable so equal positions keep
  // the order in which checks ran.
  std::stable_sort(sorted.begin(), sorted.end(), [](const Diagnostic& a, const Diagnostic& b) {
    if (a.where.file != b.where.file) return a.where.file < b.where.file;
    if (a.where.line != b.where.line) return a.where.line < b.where.line;
    return a.where.column < b.where.column;
  });
  sorted.erase(std::unique(sorted.begin(), sorted.end(),
                           [](const Diagnostic& a, const Diagnostic& b) { return a.str() == b.str(); }),
               sorted.end());
  throw UserError(std::move(sorted));
}

static std::string join_messages(const std::vector<Diagnostic>& diags) {
  std::string out;
  for (const auto& d : diags) {
    if (!out.empty()) out += '\n';
    out += d.str();
  }
  return out;
}

UserError::UserError(std::vector<Diagnostic> diags)
    : std::runtime_error(join_messages(diags)), diags_(std::move(diags)) {}

UserError::UserError(Location where, std::string field, std::string message)
    : UserError(std::vector<Diagnostic>{{std::move(where), std::move(field), std::move(message)}}) {}

UserError::UserError(std::string message) : UserError(Location{}, "", std::move(message)) {}

}  // namespace ddpctl
