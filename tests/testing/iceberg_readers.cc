#include "tests/testing/iceberg_readers.h"

#include <pwd.h>
#include <unistd.h>

#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace sluice::testing {

std::string IcebergReadersCache() {
  if (const char* cache = std::getenv("SLUICE_ICEBERG_READERS_CACHE")) return cache;
  const passwd* pw = getpwuid(getuid());
  const char* home = pw != nullptr ? pw->pw_dir : std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "", "/.cache/sluice/iceberg-readers");
}

std::string IcebergReadersPython() { return IcebergReadersCache() + "/venv/bin/python"; }

}  // namespace sluice::testing
