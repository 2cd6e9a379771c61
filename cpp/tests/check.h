// A minimal self-checking harness for the C++ tests: each CHECK records a
// failure with file:line instead of aborting, and main() returns the count.
#pragma once

#include <iostream>
#include <string>

namespace neml2::test
{
inline int &
failures()
{
  static int n = 0;
  return n;
}

inline void
report(bool ok, const char * expr, const char * file, int line)
{
  if (!ok)
  {
    ++failures();
    std::cerr << file << ":" << line << ": CHECK failed: " << expr << "\n";
  }
}

/// Run `f`, expect it to throw `E` whose what() contains `needle`.
template <typename E, typename F>
void
expect_throw(F && f, const std::string & needle, const char * file, int line)
{
  try
  {
    f();
  }
  catch (const E & e)
  {
    if (std::string(e.what()).find(needle) == std::string::npos)
    {
      ++failures();
      std::cerr << file << ":" << line << ": message '" << e.what() << "' lacks '" << needle
                << "'\n";
    }
    return;
  }
  catch (const std::exception & e)
  {
    ++failures();
    std::cerr << file << ":" << line << ": wrong exception type: " << e.what() << "\n";
    return;
  }
  ++failures();
  std::cerr << file << ":" << line << ": no exception thrown\n";
}

inline int
finish(const char * name)
{
  std::cout << name << ": " << (failures() ? "FAILED" : "ok") << " (" << failures()
            << " failures)\n";
  return failures() ? 1 : 0;
}
} // namespace neml2::test

#define CHECK(expr) ::neml2::test::report(static_cast<bool>(expr), #expr, __FILE__, __LINE__)
#define CHECK_THROWS(E, stmt, needle)                                                              \
  ::neml2::test::expect_throw<E>(                                                                  \
      [&]()                                                                                        \
      {                                                                                            \
        stmt;                                                                                      \
      },                                                                                           \
      needle,                                                                                      \
      __FILE__,                                                                                    \
      __LINE__)
