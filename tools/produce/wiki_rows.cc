#include "tools/produce/wiki_rows.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "common/time_util.h"

namespace sluice {
namespace bench {
namespace {

const char* const kChannels[] = {
    "#en.wikipedia", "#de.wikipedia", "#fr.wikipedia", "#ja.wikipedia", "#es.wikipedia",
    "#ru.wikipedia", "#it.wikipedia", "#zh.wikipedia", "#pt.wikipedia", "#pl.wikipedia",
    "#nl.wikipedia", "#sv.wikipedia", "#ko.wikipedia", "#uk.wikipedia", "#fa.wikipedia",
    "#he.wikipedia", "#ca.wikipedia", "#cs.wikipedia", "#ar.wikipedia", "#vi.wikipedia"};
const char* const kNamespaces[] = {"Main", "Talk", "User", "User talk", "Wikipedia",
                                   "File", "Template", "Category", "Portal", "Draft"};
const char* const kCountries[] = {
    "",          "",        "",          "United States", "Germany",     "France",
    "Japan",     "Spain",   "Russia",    "Italy",         "China",       "Brazil",
    "Poland",    "Sweden",  "Korea",     "Ukraine",       "Iran",        "Israel",
    "Canada",    "Mexico",  "India",     "Australia",     "Netherlands", "Argentina",
    "Chile",     "Norway",  "Finland",   "Denmark",       "Austria",     "Switzerland",
    "Belgium",   "Czechia", "Portugal",  "Greece",        "Turkey",      "Egypt",
    "Indonesia", "Vietnam", "Colombia",  "Peru"};
const char* const kTitleWords[] = {"History", "List", "of", "the", "Battle", "River",
                                   "Station", "Album", "Season", "Church", "University",
                                   "Café", "Zürich", "São", "Paulo", "Mountain"};

}  // namespace

WikiRowGenerator::WikiRowGenerator(const WikiRowOptions& options)
    : options_(options), rng_(options.seed), time_ms_(options.start_ms) {}

size_t WikiRowGenerator::Skewed(size_t n) {
  // Squaring a uniform draw favours small indexes (a few hot pages and users).
  const double u = std::uniform_real_distribution<double>(0, 1)(rng_);
  return static_cast<size_t>(u * u * static_cast<double>(n)) % n;
}

std::string WikiRowGenerator::Next() {
  std::string out;
  AppendNext(&out);
  return out;
}

void WikiRowGenerator::AppendNext(std::string* out) {
  ++count_;
  const int64_t step = static_cast<int64_t>(rng_() % (2 * options_.mean_step_ms + 1));
  time_ms_ = options_.live_clock_ms ? options_.live_clock_ms() : time_ms_ + step;
  const size_t page = Skewed(options_.pages);
  const size_t user = Skewed(options_.users);
  const int added = static_cast<int>(rng_() % 400);
  const int deleted = rng_() % 3 == 0 ? static_cast<int>(rng_() % 100) : 0;
  const double delta = (added - deleted) + static_cast<double>(rng_() % 4) * 0.25;
  const std::string title = absl::StrCat(kTitleWords[page % 16], "_", kTitleWords[(page / 16) % 16],
                                         "_", page);
  std::string timestamp = FormatIsoInstant(time_ms_);
  if (options_.malformed_fraction > 0 &&
      std::uniform_real_distribution<double>(0, 1)(rng_) < options_.malformed_fraction) {
    ++malformed_;
    switch (rng_() % 4) {
      case 0:  // truncated JSON
        absl::StrAppend(out, "{\"timestamp\":\"", timestamp, "\",\"channel\":\"#en.wiki");
        return;
      case 1:  // no timestamp
        absl::StrAppend(out, "{\"channel\":\"#en.wikipedia\",\"added\":1}");
        return;
      case 2:  // bad timestamp
        timestamp = "yesterday";
        break;
      default:  // a metric that is not a number
        absl::StrAppend(out, "{\"timestamp\":\"", timestamp, "\",\"added\":\"lots\"}");
        return;
    }
  }
  absl::StrAppend(out, "{\"timestamp\":\"", timestamp, "\",\"channel\":\"",
                  kChannels[Skewed(20)], "\",\"page\":\"", title, "\",\"user\":\"");
  if (user % 5 == 0) {
    absl::StrAppend(out, user % 256, ".", (user * 7) % 256, ".", (user * 13) % 256, ".",
                    user % 100);
  } else {
    absl::StrAppend(out, "Editor", user);
  }
  absl::StrAppend(out, "\",\"namespace\":\"", kNamespaces[Skewed(10)], "\",\"countryName\":\"",
                  kCountries[rng_() % 40], "\",\"isRobot\":", rng_() % 7 == 0 ? "true" : "false",
                  ",\"added\":", added, ",\"deleted\":", deleted, ",\"delta\":", delta, "}");
}

segment::Schema WikiSchema(bool rollup, Granularity query_granularity) {
  using segment::MetricType;
  segment::Schema s;
  s.timestamp_format = segment::TimestampFormat::kIso;
  s.dimensions = {"channel", "page", "user", "namespace", "countryName", "isRobot"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kLongSum, "deleted", "deleted"},
               {MetricType::kDoubleSum, "delta", "delta"}};
  s.query_granularity = query_granularity;
  s.rollup = rollup;
  return s;
}

std::vector<std::string> WikiRecords(size_t n, const WikiRowOptions& options) {
  WikiRowGenerator gen(options);
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(gen.Next());
  return out;
}

}  // namespace bench
}  // namespace sluice
