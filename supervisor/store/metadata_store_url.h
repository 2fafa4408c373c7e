// --metadata_store: which database the supervisor keeps its metadata in.
//
//   sqlite:///absolute/path/metadata.db     an SQLite file (the default,
//                                           <data_dir>/metadata.db)
//   postgresql://user@host:port/db?...      a PostgreSQL database
//                                           (supervisor/store/postgres_url.h)
#ifndef SLUICE_SUPERVISOR_STORE_METADATA_STORE_URL_H_
#define SLUICE_SUPERVISOR_STORE_METADATA_STORE_URL_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "supervisor/store/metadata_store.h"

namespace sluice::supervisor {

// Sets options->path or options->postgres_url from `url`; an empty `url`
// means <data_dir>/metadata.db. INVALID_ARGUMENT for any other form (and for
// a PostgreSQL URL with an inline password, without repeating it).
absl::Status ApplyMetadataStoreUrl(absl::string_view url, const std::string& data_dir,
                                   MetadataStoreOptions* options);

}  // namespace sluice::supervisor

#endif  // SLUICE_SUPERVISOR_STORE_METADATA_STORE_URL_H_
