#include "neml2/aoti/errors.h"

#include <algorithm>

// The exception classes are header-only; this translation unit anchors their
// vtables in libneml2 so that typeid/catch works across shared-library
// boundaries (host <-> libneml2 <-> Python binding).
namespace neml2::aoti
{
namespace
{
[[maybe_unused]] void
anchor()
{
  FatalError f("");
  ConvergenceError c("");
  (void)f.recoverable();
  (void)c.recoverable();
}

/// Optimal-string-alignment distance: insertions, deletions, substitutions and
/// transpositions of neighbours ("strian" -> "strain") cost one each.
std::size_t
edit_distance(const std::string & a, const std::string & b)
{
  const auto n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1, 0));
  for (std::size_t i = 0; i <= n; ++i)
    d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j)
    d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j)
    {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}
} // namespace

std::string
did_you_mean(const std::string & name, const std::vector<std::string> & known)
{
  const std::string * best = nullptr;
  std::size_t best_d = 0;
  for (const auto & k : known)
  {
    const auto d = edit_distance(name, k);
    // similar enough: at most 40% of the longer name edited (difflib's cutoff 0.6)
    if (10 * d > 4 * std::max(name.size(), k.size()))
      continue;
    if (!best || d < best_d)
      best = &k, best_d = d;
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}
} // namespace neml2::aoti
