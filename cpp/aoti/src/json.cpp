#include "neml2/aoti/json.h"
#include "neml2/aoti/errors.h"

#include <cmath>
#include <cstdlib>

namespace neml2::aoti
{
namespace
{
const char *
kind_name(Json::Kind k)
{
  switch (k)
  {
  case Json::Kind::Null:
    return "null";
  case Json::Kind::Bool:
    return "a boolean";
  case Json::Kind::Number:
    return "a number";
  case Json::Kind::String:
    return "a string";
  case Json::Kind::Array:
    return "an array";
  case Json::Kind::Object:
    return "an object";
  }
  return "?";
}

[[noreturn]] void
wrong_kind(const std::string & what, Json::Kind want, Json::Kind got)
{
  throw FatalError(what + " must be " + kind_name(want) + ", not " + kind_name(got));
}
} // namespace

class JsonParser
{
public:
  JsonParser(const std::string & text, const std::string & source) : _s(text), _src(source) {}

  Json document()
  {
    Json v = value(0);
    ws();
    if (_i != _s.size())
      fail("unexpected trailing characters");
    return v;
  }

private:
  const std::string & _s;
  const std::string & _src;
  std::size_t _i = 0;

  [[noreturn]] void fail(const std::string & msg) const
  {
    throw FatalError(_src + ": corrupt metadata (invalid JSON at byte " + std::to_string(_i) +
                     ": " + msg + ")");
  }

  void ws()
  {
    while (_i < _s.size() && (_s[_i] == ' ' || _s[_i] == '\n' || _s[_i] == '\r' || _s[_i] == '\t'))
      ++_i;
  }

  bool eat(char c)
  {
    ws();
    if (_i < _s.size() && _s[_i] == c)
    {
      ++_i;
      return true;
    }
    return false;
  }

  void expect(char c)
  {
    if (!eat(c))
      fail(std::string("expected '") + c + "'");
  }

  bool literal(const char * word)
  {
    const std::string w(word);
    if (_s.compare(_i, w.size(), w) == 0)
    {
      _i += w.size();
      return true;
    }
    return false;
  }

  Json value(int depth)
  {
    if (depth > 256)
      fail("nesting too deep");
    ws();
    if (_i >= _s.size())
      fail("unexpected end of input");
    Json v;
    const char c = _s[_i];
    if (c == '{')
    {
      ++_i;
      v._kind = Json::Kind::Object;
      if (eat('}'))
        return v;
      do
      {
        ws();
        if (_i >= _s.size() || _s[_i] != '"')
          fail("expected a string key");
        std::string key = string();
        expect(':');
        v._object[key] = value(depth + 1);
      } while (eat(','));
      expect('}');
    }
    else if (c == '[')
    {
      ++_i;
      v._kind = Json::Kind::Array;
      if (eat(']'))
        return v;
      do
        v._array.push_back(value(depth + 1));
      while (eat(','));
      expect(']');
    }
    else if (c == '"')
    {
      v._kind = Json::Kind::String;
      v._string = string();
    }
    else if (literal("true") || literal("false"))
    {
      v._kind = Json::Kind::Bool;
      v._bool = _s[_i - 1] == 'e' && _s[_i - 2] == 'u';
    }
    else if (literal("null"))
      v._kind = Json::Kind::Null;
    else if (c == '-' || (c >= '0' && c <= '9'))
    {
      v._kind = Json::Kind::Number;
      const char * begin = _s.c_str() + _i;
      char * end = nullptr;
      v._number = std::strtod(begin, &end);
      if (end == begin)
        fail("bad number");
      _i += static_cast<std::size_t>(end - begin);
    }
    else if (literal("NaN"))
    {
      v._kind = Json::Kind::Number;
      v._number = std::nan("");
    }
    else if (literal("Infinity"))
    {
      v._kind = Json::Kind::Number;
      v._number = HUGE_VAL;
    }
    else
      fail(std::string("unexpected character '") + c + "'");
    return v;
  }

  static void utf8(std::string & out, unsigned long cp)
  {
    if (cp < 0x80)
      out += static_cast<char>(cp);
    else if (cp < 0x800)
    {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    else if (cp < 0x10000)
    {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
    else
    {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  unsigned long hex4()
  {
    if (_i + 4 > _s.size())
      fail("truncated \\u escape");
    const std::string h = _s.substr(_i, 4);
    char * end = nullptr;
    const unsigned long cp = std::strtoul(h.c_str(), &end, 16);
    if (end != h.c_str() + 4)
      fail("bad \\u escape");
    _i += 4;
    return cp;
  }

  std::string string()
  {
    ++_i; // opening quote
    std::string out;
    while (true)
    {
      if (_i >= _s.size())
        fail("unterminated string");
      const char c = _s[_i++];
      if (c == '"')
        return out;
      if (c != '\\')
      {
        out += c;
        continue;
      }
      if (_i >= _s.size())
        fail("unterminated escape");
      const char e = _s[_i++];
      switch (e)
      {
      case '"':
      case '\\':
      case '/':
        out += e;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u':
      {
        unsigned long cp = hex4();
        if (cp >= 0xD800 && cp < 0xDC00 && _s.compare(_i, 2, "\\u") == 0)
        {
          _i += 2;
          const unsigned long lo = hex4();
          cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        utf8(out, cp);
        break;
      }
      default:
        fail(std::string("bad escape '\\") + e + "'");
      }
    }
  }
};

Json
Json::parse(const std::string & text, const std::string & source)
{
  return JsonParser(text, source).document();
}

bool
Json::as_bool(const std::string & what) const
{
  if (_kind != Kind::Bool)
    wrong_kind(what, Kind::Bool, _kind);
  return _bool;
}

double
Json::as_number(const std::string & what) const
{
  if (_kind != Kind::Number)
    wrong_kind(what, Kind::Number, _kind);
  return _number;
}

int64_t
Json::as_int(const std::string & what) const
{
  const double d = as_number(what);
  if (d != std::floor(d) || std::fabs(d) > 9.0e15)
    throw FatalError(what + " must be an integer, not " + std::to_string(d));
  return static_cast<int64_t>(d);
}

const std::string &
Json::as_string(const std::string & what) const
{
  if (_kind != Kind::String)
    wrong_kind(what, Kind::String, _kind);
  return _string;
}

const std::vector<Json> &
Json::as_array(const std::string & what) const
{
  if (_kind != Kind::Array)
    wrong_kind(what, Kind::Array, _kind);
  return _array;
}

const std::map<std::string, Json> &
Json::as_object(const std::string & what) const
{
  if (_kind != Kind::Object)
    wrong_kind(what, Kind::Object, _kind);
  return _object;
}

bool
Json::has(const std::string & key) const
{
  return _kind == Kind::Object && _object.count(key);
}

const Json &
Json::at(const std::string & key, const std::string & what) const
{
  const auto & o = as_object(what);
  const auto it = o.find(key);
  if (it == o.end())
    throw FatalError(what + " has no key '" + key + "'");
  return it->second;
}
} // namespace neml2::aoti
