#include "iceberg/expire_snapshots.h"

#include <simdjson.h>

#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "iceberg/limits.h"
#include "iceberg/table_schema.h"

namespace sluice {
namespace iceberg {
namespace {

absl::Status Invalid(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("table metadata: ", what));
}

// The array of `doc[key]`, or nullopt when the key is absent.
absl::StatusOr<std::optional<simdjson::dom::array>> ArrayOf(simdjson::dom::object doc,
                                                           absl::string_view key) {
  simdjson::dom::element e;
  if (doc.at_key(std::string_view(key.data(), key.size())).get(e) != simdjson::SUCCESS) {
    return std::nullopt;
  }
  simdjson::dom::array a;
  if (e.get(a) != simdjson::SUCCESS) return Invalid(absl::StrCat(key, " is not a list"));
  return a;
}

std::optional<int64_t> IdOf(simdjson::dom::element e, const char* key) {
  int64_t id = 0;
  if (e[key].get(id) != simdjson::SUCCESS) return std::nullopt;
  return id;
}

}  // namespace

absl::StatusOr<ExpiredSnapshots> ExpireSnapshots(absl::string_view metadata_json,
                                                 const ExpireSnapshotsOptions& options) {
  if (options.retain_last < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("retain_last is ", options.retain_last, "; at least the current snapshot stays"));
  }
  if (metadata_json.size() > kMaxMetadataJsonBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("table metadata of ", metadata_json.size(),
                                                     " bytes, more than the limit of ",
                                                     kMaxMetadataJsonBytes));
  }
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  simdjson::padded_string padded(metadata_json.data(), metadata_json.size());
  if (auto err = parser.parse(padded).get(root); err != simdjson::SUCCESS) {
    return Invalid(simdjson::error_message(err));
  }
  simdjson::dom::object doc;
  if (root.get(doc) != simdjson::SUCCESS) return Invalid("not a JSON object");

  // 1. What stays.
  ExpiredSnapshots out;
  std::optional<simdjson::dom::array> snapshots;
  {
    auto a = ArrayOf(doc, "snapshots");
    if (!a.ok()) return a.status();
    snapshots = *a;
  }
  if (!snapshots.has_value()) {
    out.metadata_json = std::string(metadata_json);
    return out;
  }
  std::map<int64_t, std::optional<int64_t>> parent;
  std::set<int64_t> keep;
  for (simdjson::dom::element s : *snapshots) {
    const std::optional<int64_t> id = IdOf(s, "snapshot-id");
    if (!id.has_value()) return Invalid("a snapshot without a snapshot-id");
    parent[*id] = IdOf(s, "parent-snapshot-id");
    int64_t ts = 0;
    if (s["timestamp-ms"].get(ts) == simdjson::SUCCESS && ts >= options.older_than_ms) {
      keep.insert(*id);
    }
  }
  const std::optional<int64_t> current = IdOf(root, "current-snapshot-id");
  if (current.has_value() && *current >= 0) {
    if (parent.count(*current) == 0) {
      return Invalid(absl::StrCat("the current snapshot ", *current, " is not in the document"));
    }
    std::optional<int64_t> at = current;
    for (int32_t n = 0; n < options.retain_last && at.has_value() && parent.count(*at) > 0; ++n) {
      keep.insert(*at);
      at = parent[*at];
    }
  }
  simdjson::dom::element refs_element;
  if (doc.at_key("refs").get(refs_element) == simdjson::SUCCESS) {
    simdjson::dom::object refs;
    if (refs_element.get(refs) != simdjson::SUCCESS) return Invalid("refs is not an object");
    for (auto field : refs) {
      const std::optional<int64_t> id = IdOf(field.value, "snapshot-id");
      if (id.has_value()) keep.insert(*id);
    }
  }
  std::set<int64_t> expired;
  for (const auto& [id, p] : parent) {
    if (keep.count(id) == 0) expired.insert(id);
  }
  if (expired.empty()) {
    out.metadata_json = std::string(metadata_json);
    return out;
  }
  for (simdjson::dom::element s : *snapshots) {
    const int64_t id = *IdOf(s, "snapshot-id");
    if (expired.count(id) > 0) out.expired.push_back(id);
  }

  // 2. The next document, field by field in the document's order.
  int64_t previous_updated = 0;
  if (doc["last-updated-ms"].get(previous_updated) != simdjson::SUCCESS) previous_updated = 0;
  auto filtered = [&](simdjson::dom::array a) {
    std::string json = "[";
    bool first = true;
    for (simdjson::dom::element e : a) {
      const std::optional<int64_t> id = IdOf(e, "snapshot-id");
      if (id.has_value() && expired.count(*id) > 0) continue;
      absl::StrAppend(&json, first ? "" : ",", simdjson::minify(e));
      first = false;
    }
    return json + "]";
  };
  std::string next = "{";
  bool first = true;
  bool have_metadata_log = false;
  for (auto field : doc) {
    const absl::string_view key(field.key.data(), field.key.size());
    std::string value;
    if (key == "snapshots" || key == "statistics" || key == "partition-statistics") {
      simdjson::dom::array a;
      if (field.value.get(a) != simdjson::SUCCESS) return Invalid(absl::StrCat(key, " is not a list"));
      value = filtered(a);
    } else if (key == "snapshot-log") {
      simdjson::dom::array a;
      if (field.value.get(a) != simdjson::SUCCESS) return Invalid("snapshot-log is not a list");
      // The entries after the last one of an expired snapshot.
      std::vector<std::string> entries;
      for (simdjson::dom::element e : a) {
        const std::optional<int64_t> id = IdOf(e, "snapshot-id");
        if (!id.has_value() || expired.count(*id) > 0 || parent.count(*id) == 0) {
          entries.clear();
          continue;
        }
        entries.push_back(simdjson::minify(e));
      }
      value = "[";
      for (size_t i = 0; i < entries.size(); ++i) absl::StrAppend(&value, i ? "," : "", entries[i]);
      value += "]";
    } else if (key == "metadata-log") {
      simdjson::dom::array a;
      if (field.value.get(a) != simdjson::SUCCESS) return Invalid("metadata-log is not a list");
      std::vector<std::string> entries;
      for (simdjson::dom::element e : a) entries.push_back(simdjson::minify(e));
      if (options.metadata_location.has_value()) {
        entries.push_back(absl::StrCat("{\"timestamp-ms\":", previous_updated,
                                       ",\"metadata-file\":", JsonQuote(*options.metadata_location),
                                       "}"));
      }
      const size_t from = entries.size() > kMaxMetadataLog ? entries.size() - kMaxMetadataLog : 0;
      value = "[";
      for (size_t i = from; i < entries.size(); ++i) {
        absl::StrAppend(&value, i > from ? "," : "", entries[i]);
      }
      value += "]";
      have_metadata_log = true;
    } else if (key == "last-updated-ms") {
      value = absl::StrCat(std::max(options.now_ms, previous_updated));
    } else {
      value = simdjson::minify(field.value);
    }
    absl::StrAppend(&next, first ? "" : ",", JsonQuote(key), ":", value);
    first = false;
  }
  if (!have_metadata_log && options.metadata_location.has_value()) {
    absl::StrAppend(&next, first ? "" : ",", "\"metadata-log\":[{\"timestamp-ms\":",
                    previous_updated, ",\"metadata-file\":", JsonQuote(*options.metadata_location),
                    "}]");
  }
  next += "}";
  if (next.size() > kMaxMetadataJsonBytes) {
    return absl::ResourceExhaustedError(absl::StrCat("table metadata of ", next.size(),
                                                     " bytes, more than the limit of ",
                                                     kMaxMetadataJsonBytes));
  }
  out.metadata_json = std::move(next);
  return out;
}

}  // namespace iceberg
}  // namespace sluice
