// The web console's static files (web/: index.html, console.js,
// console.css), compiled into the binary by embed_assets.py so a deployed
// supervisor serves exactly the console it was built with.
#ifndef SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ASSETS_H_
#define SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ASSETS_H_

#include "absl/strings/string_view.h"

namespace sluice::supervisor::console {

struct ConsoleAsset {
  absl::string_view name;  // "index.html"
  absl::string_view content_type;
  absl::string_view body;
};

// The asset of that file name, or null.
const ConsoleAsset* FindConsoleAsset(absl::string_view name);

}  // namespace sluice::supervisor::console

#endif  // SLUICE_SUPERVISOR_CONSOLE_CONSOLE_ASSETS_H_
