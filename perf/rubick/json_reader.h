// The strict JSON reading perf_json.cc's formats share: a Reader that keeps the first problem
// with its JSON path, and field tables that map a struct's members to keys, so each struct's keys
// are listed once for writing, checking and reading. Internal to perf/rubick.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace elastic::perf::json_detail {

using nlohmann::json;

// Reads one document; the first problem is kept in error() and every later call is a no-op, so
// a format's reads are written as plain sequences.
class Reader {
 public:
  const std::string& error() const { return error_; }
  bool ok() const { return error_.empty(); }

  bool Fail(const std::string& path, const std::string& what) {
    if (ok()) error_ = (path.empty() ? std::string("(top level)") : path) + ": " + what;
    return false;
  }

  // `object` is an object whose keys are all in `known` and include every one of `required`.
  bool Keys(const json& object, const std::string& path, const std::vector<const char*>& known,
            const std::vector<const char*>& required) {
    if (!ok()) return false;
    if (!object.is_object()) return Fail(path, "expected an object, got " + Short(object));
    std::set<std::string> names(known.begin(), known.end());
    for (const auto& item : object.items()) {
      if (!names.count(item.key())) {
        std::string list;
        for (const char* name : known) list += (list.empty() ? "" : ", ") + std::string(name);
        return Fail(Join(path, item.key()), "unknown key (expected one of: " + list + ")");
      }
    }
    for (const char* name : required) {
      if (!object.contains(name)) return Fail(Join(path, name), "missing");
    }
    return true;
  }

  // A finite number >= minimum; absent and optional: `out` keeps its value.
  void Number(const json& object, const std::string& path, const char* key, double minimum,
              double& out) {
    if (!ok() || !object.contains(key)) return;
    const json& value = object.at(key);
    if (!value.is_number() || !std::isfinite(value.get<double>()) ||
        value.get<double>() < minimum) {
      Fail(Join(path, key),
           "expected a number >= " + FormatDouble(minimum) + ", got " + Short(value));
      return;
    }
    out = value.get<double>();
  }

  void Integer(const json& object, const std::string& path, const char* key, int minimum,
               int& out) {
    if (!ok() || !object.contains(key)) return;
    const json& value = object.at(key);
    if (!value.is_number_integer() || value.get<long long>() < minimum ||
        value.get<long long>() > std::numeric_limits<int>::max()) {
      Fail(Join(path, key),
           "expected an integer >= " + std::to_string(minimum) + ", got " + Short(value));
      return;
    }
    out = static_cast<int>(value.get<long long>());
  }

  void Bool(const json& object, const std::string& path, const char* key, bool& out) {
    if (!ok() || !object.contains(key)) return;
    const json& value = object.at(key);
    if (!value.is_boolean()) {
      Fail(Join(path, key), "expected true or false, got " + Short(value));
      return;
    }
    out = value.get<bool>();
  }

  void String(const json& object, const std::string& path, const char* key, std::string& out) {
    if (!ok() || !object.contains(key)) return;
    const json& value = object.at(key);
    if (!value.is_string() || value.get<std::string>().empty()) {
      Fail(Join(path, key), "expected a non-empty string, got " + Short(value));
      return;
    }
    out = value.get<std::string>();
  }

  void Format(const json& root, std::string_view expected) {
    std::string format;
    String(root, "", "format", format);
    if (ok() && format != expected) {
      Fail("format", "expected \"" + std::string(expected) + "\", got \"" + format + "\"");
    }
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

 private:
  static std::string Short(const json& value) {
    std::string text = value.dump();
    return text.size() > 60 ? text.substr(0, 57) + "..." : text;
  }
  static std::string FormatDouble(double value) { return json(value).dump(); }

  std::string error_;
};

// One member of a struct as one key of its JSON object, with the least value a reader accepts
// (bools have none). A struct's table is its only list of keys: the writer, the key check and
// the reader all walk it.
template <typename S>
struct Field {
  const char* key;
  std::variant<int S::*, double S::*, bool S::*> member;
  double minimum = 0;
};

template <typename S, std::size_t N>
json FieldsToJson(const S& value, const std::array<Field<S>, N>& fields) {
  json object = json::object();
  for (const Field<S>& field : fields) {
    std::visit([&](auto member) { object[field.key] = value.*member; }, field.member);
  }
  return object;
}

template <typename S, std::size_t N>
std::vector<const char*> FieldKeys(const std::array<Field<S>, N>& fields) {
  std::vector<const char*> keys;
  for (const Field<S>& field : fields) keys.push_back(field.key);
  return keys;
}

// Reads the keys `object` has; absent ones keep `out`'s values (the caller checked the keys).
template <typename S, std::size_t N>
void ReadFields(Reader& reader, const json& object, const std::string& path,
                const std::array<Field<S>, N>& fields, S& out) {
  for (const Field<S>& field : fields) {
    if (auto* member = std::get_if<int S::*>(&field.member)) {
      reader.Integer(object, path, field.key, static_cast<int>(field.minimum), out.**member);
    } else if (auto* number = std::get_if<double S::*>(&field.member)) {
      reader.Number(object, path, field.key, field.minimum, out.**number);
    } else {
      reader.Bool(object, path, field.key, out.*std::get<bool S::*>(field.member));
    }
  }
}

}  // namespace elastic::perf::json_detail
