#pragma once
// Reading a field of a JSON object that ddpctl or a job wrote, where a
// missing field or one of the wrong type (an older or newer writer, a file
// cut short) is absence, never an exception: the one field reader of the
// records (usage samples, stall records, metrics, rankings).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ddpctl::json_field {

inline std::optional<double> number(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return std::nullopt;
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

inline std::optional<long long> integer(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return std::nullopt;
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->is_number_float() ? static_cast<long long>(it->get<double>()) : it->get<long long>();
}

inline std::optional<std::string> string(const nlohmann::json& o, const char* key) {
  if (!o.is_object()) return std::nullopt;
  auto it = o.find(key);
  if (it == o.end() || !it->is_string()) return std::nullopt;
  return it->get<std::string>();
}

}  // namespace ddpctl::json_field
