#pragma once
// The process environment as the core sees it: its variables, the programs
// on its PATH, the host's name. The CLI passes the real one
// (SystemEnvironment, made in src/cli/app.cpp); unit tests pass a map of
// their own (tests/unit/fake_runner.hpp), so no test changes the process's
// PATH and the job agent's reading of Slurm's variables is testable.
#include <optional>
#include <string>

namespace ddpctl {

class Environment {
 public:
  virtual ~Environment() = default;
  virtual std::optional<std::string> get(const std::string& name) const = 0;
  // This host's name, without its domain.
  virtual std::string hostname() const = 0;
  // get(name), or `fallback` when it is unset or empty.
  std::string value(const std::string& name, const std::string& fallback = "") const;
  // A program as exec finds it: a name without '/' on this environment's
  // PATH, a path as it is; "" when there is none.
  std::string find_program(const std::string& name) const;
};

class SystemEnvironment : public Environment {
 public:
  std::optional<std::string> get(const std::string& name) const override;
  std::string hostname() const override;
};

}  // namespace ddpctl
