#pragma once
// One error path for everything a user can get wrong. Low-level code collects
// Diagnostics; the edges throw a UserError holding all of them; main catches it
// once and prints `ddpctl: error: FILE:LINE:COL: FIELD: MESSAGE` per problem.
#include <stdexcept>
#include <string>
#include <vector>

namespace ddpctl {

// Where a value came from: a file position, or a command-line override.
struct Location {
  std::string file;  // file path, or an origin such as "--set nodes=4"
  int line = 0;      // 1-based; 0 when unknown (then column is ignored)
  int column = 0;    // 1-based; 0 when unknown

  std::string str() const;  // "file:line:col", "file:line" or "file"
};

struct Diagnostic {
  Location where;
  std::string field;  // dotted path, e.g. "alternatives[1].nodes"; may be empty
  std::string message;

  std::string str() const;  // "where: field: message"
};

// Collects problems so that a user sees all of them in one pass.
class Diagnostics {
 public:
  void error(Location where, std::string field, std::string message);
  void add(Diagnostic d) { items_.push_back(std::move(d)); }
  bool empty() const { return items_.empty(); }
  size_t size() const { return items_.size(); }
  const std::vector<Diagnostic>& items() const { return items_; }
  // Throws UserError with every collected diagnostic (sorted by position) if any.
  void throw_if_any() const;

 private:
  std::vector<Diagnostic> items_;
};

class UserError : public std::runtime_error {
 public:
  explicit UserError(std::vector<Diagnostic> diags);
  UserError(Location where, std::string field, std::string message);
  explicit UserError(std::string message);  // no location: e.g. a CLI problem
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

}  // namespace ddpctl
