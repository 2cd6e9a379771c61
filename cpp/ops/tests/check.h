// The checks of the torch-free kernel tests: CHECK(cond, printf-style message) counts a
// failure and prints where and why instead of aborting; main() returns the count.
#pragma once

#include <cstdio>

static int failures = 0;
#define CHECK(cond, ...)                                                                           \
  do                                                                                               \
  {                                                                                                \
    if (!(cond))                                                                                   \
    {                                                                                              \
      ++failures;                                                                                  \
      std::printf("FAIL %s:%d: ", __FILE__, __LINE__);                                             \
      std::printf(__VA_ARGS__);                                                                    \
      std::printf("\n");                                                                           \
    }                                                                                              \
  } while (0)
