// A small JSON reader for artifact metadata (no third-party dependency).
//
// Parses the whole RFC 8259 grammar into a tree of Json values; errors are
// FatalError naming the source (file) and the byte offset.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace neml2::aoti
{
class Json
{
public:
  enum class Kind
  {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object
  };

  Json() = default;
  Kind kind() const { return _kind; }
  bool is(Kind k) const { return _kind == k; }

  /// Accessors throw FatalError naming `what` when the value has another kind.
  bool as_bool(const std::string & what) const;
  double as_number(const std::string & what) const;
  int64_t as_int(const std::string & what) const;
  const std::string & as_string(const std::string & what) const;
  const std::vector<Json> & as_array(const std::string & what) const;
  const std::map<std::string, Json> & as_object(const std::string & what) const;

  /// Object member `key`; throws FatalError naming `what` and `key` when absent.
  const Json & at(const std::string & key, const std::string & what) const;
  bool has(const std::string & key) const;

  /// Parse `text`; `source` names it in error messages.
  static Json parse(const std::string & text, const std::string & source);

private:
  friend class JsonParser;
  Kind _kind = Kind::Null;
  bool _bool = false;
  double _number = 0;
  std::string _string;
  std::vector<Json> _array;
  std::map<std::string, Json> _object;
};
} // namespace neml2::aoti
