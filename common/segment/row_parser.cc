#include "common/segment/row_parser.h"

#include <simdjson.h>

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/segment/expression.h"
#include "common/segment/format_limits.h"
#include "common/segment/plain_json.h"
#include "common/segment/timestamp.h"
#include "common/time_util.h"

namespace sluice {
namespace segment {
namespace {

namespace od = simdjson::ondemand;

absl::string_view View(std::string_view s) { return absl::string_view(s.data(), s.size()); }

absl::string_view TrimRight(absl::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' ||
                        s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

ParseError Error(ParseErrorKind kind, std::string message) {
  ParseError e;
  e.kind = kind;
  e.message = std::move(message);
  return e;
}

ParseError NotJson(simdjson::error_code code) {
  return Error(ParseErrorKind::kNotJson,
               absl::StrCat("malformed JSON: ", simdjson::error_message(code)));
}

const char* TypeName(od::json_type type) {
  switch (type) {
    case od::json_type::array: return "an array";
    case od::json_type::object: return "an object";
    case od::json_type::number: return "a number";
    case od::json_type::string: return "a string";
    case od::json_type::boolean: return "a boolean";
    case od::json_type::null: return "null";
  }
  return "unknown";
}

// What the parser does with a field of a given name.
struct FieldAction {
  bool timestamp = false;
  int32_t dimension = -1;        // listed dimension index
  std::vector<int32_t> metrics;  // indexes of the metrics that read the field
  bool excluded = false;         // discovery: never a dimension
  int32_t capture = -1;          // transforms: slot the field's value is kept in
};

// Where a transform's output goes (a transform replaces the record field of
// its name in every role that field had).
struct TransformOutput {
  bool timestamp = false;  // the timestamp column
  bool time = false;       // named "__time": the row time in millis
  int32_t dimension = -1;
  std::vector<int32_t> metrics;
  bool discovered = false;
  std::vector<int32_t> inputs;  // capture slot of each expression field
};

// Where the filter reads one of its dimensions.
struct FilterInput {
  enum class From : uint8_t { kCapture, kTransform, kTime };
  From from = From::kCapture;
  int32_t index = 0;
};

constexpr int32_t kUnknownField = -1;

// The roles of one field of a record, as bits: what FieldAction says and
// whether discovery takes it, worked out once per field name (and kept with
// the cached key of each position) rather than per record.
enum FieldRole : uint8_t {
  kRoleTimestamp = 1,
  kRoleDimension = 2,   // a listed dimension
  kRoleMetric = 4,      // a metric input
  kRoleCapture = 8,     // read by a transform or the filter
  kRoleDiscovered = 16, // a discovered dimension
};

// A field name for an error message: at most 64 bytes of it.
absl::string_view FieldName(absl::string_view key) { return key.substr(0, 64); }

}  // namespace

const char* ParseErrorKindName(ParseErrorKind kind) {
  switch (kind) {
    case ParseErrorKind::kNone: return "";
    case ParseErrorKind::kNotJson: return "NOT_JSON";
    case ParseErrorKind::kNoTimestamp: return "NO_TIMESTAMP";
    case ParseErrorKind::kBadTimestamp: return "BAD_TIMESTAMP";
    case ParseErrorKind::kBadNumber: return "BAD_NUMBER";
    case ParseErrorKind::kValueTooLarge: return "VALUE_TOO_LARGE";
    case ParseErrorKind::kBadHeader: return "BAD_HEADER";
  }
  return "UNKNOWN";
}

absl::Status ParseError::ToStatus() const {
  if (ok()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ParseErrorKindName(kind), ": ", message));
}

// Whether the SIMDJSON_PADDING bytes after `value` can be read: memory is
// readable or not by whole pages, so bytes in the page of the value's last
// byte are. Not under AddressSanitizer, which (rightly, for its purpose)
// reports reads past an allocation even when they are harmless.
#if defined(__SANITIZE_ADDRESS__)  // gcc
#define SLUICE_ROW_PARSER_ASAN 1
#elif defined(__has_feature)  // clang before 16 defines only this
#if __has_feature(address_sanitizer)
#define SLUICE_ROW_PARSER_ASAN 1
#endif
#endif
static bool PaddingReadable(absl::string_view value) {
#if defined(SLUICE_ROW_PARSER_ASAN)
  return false;
#else
  // 4 KiB, the smallest page: pages are multiples of it, so two bytes in the
  // same 4 KiB block are in the same page whatever the page size.
  constexpr uintptr_t kBlock = 4096;
  const uintptr_t last = reinterpret_cast<uintptr_t>(value.data()) + value.size() - 1;
  return last / kBlock == (last + simdjson::SIMDJSON_PADDING) / kBlock;
#endif
}

struct RowParser::Impl {
  Schema schema;
  std::vector<FieldAction> actions;
  absl::flat_hash_map<std::string, int32_t> by_name;
  // What the one pass does with the value of a cached position, worked out
  // once from its roles: the three single roles most fields have get a
  // branch of their own (for the value types it reads there); anything else
  // takes the general one.
  enum class PlainKind : uint8_t { kGeneral, kSkip, kDimension, kMetric, kTimestamp };
  // Records of one producer usually list their fields in the same order: the
  // action of the field at each position is remembered and checked with one
  // compare before falling back to the hash lookup.
  struct Cached {
    std::string key;
    int32_t action = kUnknownField;
    uint8_t roles = 0;
    PlainKind kind = PlainKind::kGeneral;
    int32_t dimension = -1;  // kDimension: the listed dimension's index
    // The first 16 bytes of the key followed by its closing quote and the
    // colon (`key":`), zero-padded, and masks of that length: a key of up to
    // 14 bytes and what follows it compare with two loads, no memcmp call,
    // and the usual record (no whitespace around the colon) goes straight to
    // the value.
    uint64_t word[2] = {0, 0};
    uint64_t mask[2] = {0, 0};

    void Set(absl::string_view k, int32_t a, uint8_t r) {
      key.assign(k.data(), k.size());
      action = a;
      roles = r;
      const std::string with_colon = key + "\":";
      char bytes[16] = {};
      std::memcpy(bytes, with_colon.data(), std::min<size_t>(with_colon.size(), 16));
      std::memcpy(word, bytes, 16);
      for (int i = 0; i < 2; ++i) {
        const size_t n =
            with_colon.size() > 8 * i ? std::min<size_t>(with_colon.size() - 8 * i, 8) : 0;
        mask[i] = n == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * n)) - 1;
      }
    }
    // Whether the raw key at `raw` is this key directly followed by `":`;
    // needs 16 readable bytes at `raw` (the document's padding guarantees
    // them), and key.size() + 2 bytes at `raw` in the record or a NUL at the
    // record's end (no byte of `key":` is one, so a match stops there).
    bool MatchesWithColon(const char* raw) const {
      if (key.size() > 14) {
        return std::memcmp(raw, key.data(), key.size()) == 0 && raw[key.size()] == '"' &&
               raw[key.size() + 1] == ':';
      }
      uint64_t in[2];
      std::memcpy(in, raw, 16);
      return ((in[0] & mask[0]) ^ word[0]) == 0 && ((in[1] & mask[1]) ^ word[1]) == 0;
    }
    // Whether the raw key at `raw` is this key (followed by its closing
    // quote, whatever comes after); key.size() + 1 bytes at `raw` readable.
    bool Matches(const char* raw) const {
      return std::memcmp(raw, key.data(), key.size()) == 0 && raw[key.size()] == '"';
    }
  };
  std::vector<Cached> by_position;
  od::parser parser;
  std::vector<char> buffer;  // the record plus simdjson's padding

  // The transformSpec; all empty without one.
  RowTransform transform;
  bool transforming = false;
  bool timestamp_from_transform = false;
  std::vector<TransformOutput> outputs;
  std::vector<FilterInput> filter_inputs;
  // Per row: captured record fields, transform results and their buffers.
  std::vector<ExprValue> captured;
  std::vector<ExprValue> results;
  std::vector<ExprValue> expression_inputs;
  std::vector<ExprScratch> scratches;
  std::vector<std::optional<absl::string_view>> filter_values;
  std::string time_text;
  // Per Schema::metrics entry: IsLongMetric of its type.
  std::vector<uint8_t> long_metric;
  // Where Metric and StoreMetric put the error they return false for.
  ParseError failure;

  // Caches the key at `position` with its action and roles (and its
  // PlainKind). Not past the first position not cached yet (simdjson's path
  // caches no escaped key): every entry is one that was set, never a default
  // one, whose empty masks would match any key.
  void CachePosition(size_t position, absl::string_view key, int32_t action_index,
                     uint8_t roles) {
    if (position > by_position.size()) return;
    if (position == by_position.size()) by_position.emplace_back();
    Cached& c = by_position[position];
    c.Set(key, action_index, roles);
    constexpr uint8_t kRoles = kRoleTimestamp | kRoleDimension | kRoleMetric | kRoleDiscovered;
    const uint8_t used = transforming ? (kRoles | kRoleCapture) : kRoles;
    c.kind = PlainKind::kGeneral;
    c.dimension = -1;
    if ((roles & used) == 0) {
      c.kind = PlainKind::kSkip;
    } else if (roles == kRoleDimension) {
      c.kind = PlainKind::kDimension;
      c.dimension = actions[action_index].dimension;
    } else if (roles == kRoleMetric) {
      c.kind = PlainKind::kMetric;
    } else if (roles == kRoleTimestamp) {
      c.kind = PlainKind::kTimestamp;
    }
  }

  int32_t ActionFor(absl::string_view key) {
    auto it = by_name.find(key);
    return it == by_name.end() ? kUnknownField : it->second;
  }

  // The FieldRole bits of a field named `key` whose action is `index`.
  uint8_t RolesOf(int32_t index, absl::string_view key) const {
    const FieldAction* a = index == kUnknownField ? nullptr : &actions[index];
    uint8_t roles = 0;
    // Discovery: every field not excluded (the timestamp, metric inputs and
    // outputs, "__time", "" and the listed exclusions are) is a dimension.
    if (schema.discover_dimensions() && (a == nullptr || !a->excluded) && !key.empty()) {
      roles |= kRoleDiscovered;
    }
    if (a != nullptr) {
      if (a->timestamp) roles |= kRoleTimestamp;
      if (a->dimension >= 0) roles |= kRoleDimension;
      if (!a->metrics.empty()) roles |= kRoleMetric;
      if (a->capture >= 0) roles |= kRoleCapture;
    }
    return roles;
  }

  int32_t AddAction(const std::string& name) {
    auto [it, inserted] = by_name.emplace(name, static_cast<int32_t>(actions.size()));
    if (inserted) actions.emplace_back();
    return it->second;
  }

  // The action of envelope column `i` named `name`: column names are the
  // same record after record (but for headers), so each position's last name
  // is kept and compared before the hash lookup.
  struct EnvelopeCached {
    std::string name;
    int32_t action = kUnknownField;
  };
  std::vector<EnvelopeCached> envelope_actions;
  int32_t EnvelopeActionFor(size_t i, absl::string_view name) {
    if (i < envelope_actions.size() && envelope_actions[i].name == name) {
      return envelope_actions[i].action;
    }
    if (i >= envelope_actions.size()) envelope_actions.resize(i + 1);
    envelope_actions[i].name.assign(name.data(), name.size());
    envelope_actions[i].action = ActionFor(name);
    return envelope_actions[i].action;
  }

  int32_t CaptureSlot(const std::string& name) {
    FieldAction& a = actions[AddAction(name)];
    if (a.capture < 0) a.capture = static_cast<int32_t>(captured.size());
    captured.resize(std::max<size_t>(captured.size(), a.capture + 1));
    return a.capture;
  }
  void SetUpTransform(RowTransform t);

  template <bool kTransforming>
  ParseError Parse(absl::string_view value, const RecordEnvelope* envelope, InputRow* row);
  // Empties the row (and the captured fields) for the next record.
  template <bool kTransforming>
  void Reset(InputRow* row);
  // The one-pass reading of a plain record (plain_json.h): the fields the
  // spec uses read where they are, the others stepped over and checked
  // strictly, no structural index of the record. True with the row filled
  // as Parse would fill it; false for anything else (not strictly valid
  // JSON, an escape or an array or object in a used field, a number it does
  // not read exactly as simdjson does, any parse error), which Parse then
  // reads with simdjson: errors, their classes and messages are simdjson's
  // path's alone. `input` has SIMDJSON_PADDING readable bytes past `end`,
  // and a NUL at `end` (plain_json.h's ReadNumber and ScanPlainString).
  template <bool kTransforming>
  bool ParsePlain(const char* input, const char* end, const RecordEnvelope* envelope,
                  InputRow* row);
  // Whether ParsePlain is tried (off: every record goes to simdjson), and
  // how many records it took.
  bool plain_scan = true;
  int64_t plain_records = 0;
  // The envelope hooks (kafka input format): the discovered columns go
  // first, so that a value field of the same name, later, wins; the others
  // fill what the value left absent (and what transforms read).
  ParseError DiscoverEnvelope(const RecordEnvelope& envelope, InputRow* row,
                              size_t* row_value_bytes);
  ParseError ApplyEnvelope(const RecordEnvelope& envelope, InputRow* row, bool* have_timestamp,
                           size_t* row_value_bytes);
  // Always inlined: with two instantiations of Parse calling them, the
  // compiler would otherwise call them out of line, which costs the parser
  // without a transformSpec ~8% more instructions per record.
  // They return false with *error set: a ParseError returned by value on
  // success would build and destroy its message string for every metric of
  // every record.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Metric(const FieldAction& action, od::json_type type,
                                           absl::string_view text, od::value& value,
                                           InputRow* row, ParseError* error);
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool StoreMetric(const std::vector<int32_t>& metrics,
                                                bool is_integer, int64_t integer, double real,
                                                absl::string_view text, InputRow* row,
                                                ParseError* error);
  ParseError ApplyTransform(size_t row_value_bytes, InputRow* row);
};

RowParser::RowParser(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RowParser::~RowParser() = default;

const Schema& RowParser::schema() const { return impl_->schema; }

bool RowParser::ReadsColumnText(absl::string_view name) const {
  const bool discovered = impl_->schema.discover_dimensions() && !name.empty();
  auto it = impl_->by_name.find(name);
  if (it == impl_->by_name.end()) return discovered;
  const FieldAction& a = impl_->actions[it->second];
  if (a.dimension >= 0 || !a.metrics.empty() || a.capture >= 0) return true;
  return discovered && !a.excluded;
}

void RowParser::set_plain_scan(bool on) { impl_->plain_scan = on; }
int64_t RowParser::plain_records() const { return impl_->plain_records; }

absl::StatusOr<std::unique_ptr<RowParser>> RowParser::Create(const Schema& schema) {
  return Create(schema, RowTransform());
}

absl::StatusOr<std::unique_ptr<RowParser>> RowParser::Create(const Schema& schema,
                                                             const RowTransform& transform) {
  if (absl::Status s = ValidateSchema(schema); !s.ok()) return s;
  auto impl = std::make_unique<Impl>();
  impl->schema = schema;
  for (const MetricSpec& m : schema.metrics) impl->long_metric.push_back(IsLongMetric(m.type));
  impl->actions[impl->AddAction(schema.timestamp_column)].timestamp = true;
  for (size_t i = 0; i < schema.dimensions.size(); ++i) {
    impl->actions[impl->AddAction(schema.dimensions[i])].dimension = static_cast<int32_t>(i);
  }
  for (size_t i = 0; i < schema.metrics.size(); ++i) {
    const MetricSpec& m = schema.metrics[i];
    if (m.type == MetricType::kCount) continue;
    impl->actions[impl->AddAction(m.field)].metrics.push_back(static_cast<int32_t>(i));
  }
  if (schema.discover_dimensions()) {
    for (const std::string& name : schema.dimension_exclusions) {
      impl->actions[impl->AddAction(name)].excluded = true;
    }
    // Metric outputs and the time column never become discovered dimensions.
    for (const MetricSpec& m : schema.metrics) impl->actions[impl->AddAction(m.name)].excluded = true;
    impl->actions[impl->AddAction(kTimeColumn)].excluded = true;
    for (FieldAction& a : impl->actions) {
      if (a.timestamp || !a.metrics.empty()) a.excluded = true;
    }
  }
  if (!transform.empty()) impl->SetUpTransform(transform);
  return std::unique_ptr<RowParser>(new RowParser(std::move(impl)));
}

void RowParser::Impl::SetUpTransform(RowTransform t) {
  transform = std::move(t);
  transforming = true;
  const bool discover = schema.discover_dimensions();
  // Roles first: a transform output takes the roles of the record field of
  // its name, which then keeps none (it can still be an expression input).
  for (const RowTransform::Named& named : transform.transforms()) {
    TransformOutput out;
    FieldAction& a = actions[AddAction(named.name)];
    out.timestamp = a.timestamp;
    out.time = named.name == kTimeColumn;
    out.dimension = a.dimension;
    out.metrics = a.metrics;
    out.discovered = discover && !a.excluded && !out.time;
    if (out.timestamp) timestamp_from_transform = true;
    a.timestamp = false;
    a.dimension = -1;
    a.metrics.clear();
    a.excluded = true;
    outputs.push_back(std::move(out));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (const std::string& field : transform.transforms()[i].expression.fields()) {
      outputs[i].inputs.push_back(CaptureSlot(field));
    }
  }
  if (transform.filter().has_value()) {
    for (const std::string& dim : transform.filter()->dimensions()) {
      FilterInput in;
      const auto& named = transform.transforms();
      auto it = std::find_if(named.begin(), named.end(),
                             [&](const RowTransform::Named& n) { return n.name == dim; });
      if (it != named.end()) {
        in.from = FilterInput::From::kTransform;
        in.index = static_cast<int32_t>(it - named.begin());
      } else if (dim == kTimeColumn) {
        in.from = FilterInput::From::kTime;
      } else {
        in.index = CaptureSlot(dim);
      }
      filter_inputs.push_back(in);
    }
  }
  results.resize(outputs.size());
  scratches.resize(outputs.size());
  filter_values.resize(filter_inputs.size());
  // Cached positions hold roles worked out from the actions, which changed.
  by_position.clear();
}

ParseError RowParser::Parse(absl::string_view value, InputRow* row) {
  // Two instantiations, so the parser without a transformSpec runs the loop
  // it always ran.
  return impl_->transforming ? impl_->Parse<true>(value, nullptr, row)
                             : impl_->Parse<false>(value, nullptr, row);
}

ParseError RowParser::Parse(absl::string_view value, const RecordEnvelope& envelope,
                            InputRow* row) {
  return impl_->transforming ? impl_->Parse<true>(value, &envelope, row)
                             : impl_->Parse<false>(value, &envelope, row);
}

inline bool RowParser::Impl::Metric(const FieldAction& action, od::json_type type,
                                    absl::string_view text, od::value& value, InputRow* row,
                                    ParseError* error) {
  // A number token is parsed by simdjson once; a string's text by absl.
  bool is_integer = false;
  int64_t integer = 0;
  double real = 0;
  if (type == od::json_type::number) {
    od::number number;
    if (value.get_number().get(number) == simdjson::SUCCESS) {
      switch (number.get_number_type()) {
        case od::number_type::signed_integer:
          is_integer = true;
          integer = number.get_int64();
          break;
        case od::number_type::unsigned_integer:
          real = static_cast<double>(number.get_uint64());
          break;
        case od::number_type::floating_point_number:
          real = number.get_double();
          break;
      }
    } else if (!absl::SimpleAtod(text, &real) || !std::isfinite(real)) {
      const MetricSpec& m = schema.metrics[action.metrics[0]];
      *error = Error(ParseErrorKind::kBadNumber,
                     absl::StrCat("metric \"", m.name, "\" (field \"", m.field,
                                  "\"): malformed number ", text.substr(0, 40)));
      return false;
    }
  } else if (type == od::json_type::string) {
    if (absl::SimpleAtoi(text, &integer)) {
      is_integer = true;
    } else if (!absl::SimpleAtod(text, &real)) {
      const MetricSpec& m = schema.metrics[action.metrics[0]];
      *error = Error(ParseErrorKind::kBadNumber,
                     absl::StrCat("metric \"", m.name, "\" (field \"", m.field,
                                  "\"): not a number: \"", text.substr(0, 40), "\""));
      return false;
    }
  } else {
    const MetricSpec& m = schema.metrics[action.metrics[0]];
    *error = Error(ParseErrorKind::kBadNumber,
                   absl::StrCat("metric \"", m.name, "\" (field \"", m.field,
                                "\"): expected a number, got ", TypeName(type)));
    return false;
  }
  return StoreMetric(action.metrics, is_integer, integer, real, text, row, error);
}

inline bool RowParser::Impl::StoreMetric(const std::vector<int32_t>& metrics, bool is_integer,
                                         int64_t integer, double real, absl::string_view text,
                                         InputRow* row, ParseError* error) {
  for (int32_t index : metrics) {
    MetricInput& in = row->metrics[index];
    if (long_metric[index]) {
      if (is_integer) {
        in.long_value = integer;
      } else {
        // Truncate toward zero, as a cast would; refuse what does not fit.
        if (!(real > -9223372036854775808.0 && real < 9223372036854775808.0)) {
          const MetricSpec& m = schema.metrics[index];
          *error = Error(ParseErrorKind::kBadNumber,
                         absl::StrCat("metric \"", m.name, "\" (field \"", m.field, "\"): ",
                                      text.substr(0, 40), " is outside the int64 range"));
          return false;
        }
        in.long_value = static_cast<int64_t>(real);
      }
    } else {
      in.double_value = is_integer ? static_cast<double>(integer) : real;
    }
    in.present = true;
  }
  return true;
}

template <bool kTransforming>
void RowParser::Impl::Reset(InputRow* row) {
  row->thrown_away = false;
  if constexpr (kTransforming) {
    for (ExprValue& v : captured) v = ExprValue::Null();
  }
  // Every byte zero is each value's default (absent, empty): one memset per
  // vector rather than a loop of member stores.
  static_assert(std::is_trivially_copyable_v<DimValue> &&
                std::is_trivially_copyable_v<MetricInput>);
  // (Not on an empty vector, whose data() may be null.)
  if (row->dims.size() != schema.dimensions.size()) row->dims.resize(schema.dimensions.size());
  if (!row->dims.empty()) {
    std::memset(static_cast<void*>(row->dims.data()), 0, row->dims.size() * sizeof(DimValue));
  }
  row->discovered.clear();
  if (row->metrics.size() != schema.metrics.size()) row->metrics.resize(schema.metrics.size());
  if (!row->metrics.empty()) {
    std::memset(static_cast<void*>(row->metrics.data()), 0,
                row->metrics.size() * sizeof(MetricInput));
  }
}

template <bool kTransforming>
bool RowParser::Impl::ParsePlain(const char* input, const char* end,
                                 const RecordEnvelope* envelope, InputRow* row) {
  namespace pj = plain_json;
  const char* p = pj::SkipSpace(input, end);
  if (p >= end || *p != '{') return false;
  p = pj::SkipSpace(p + 1, end);
  if (p >= end) return false;
  const bool iso_timestamps = schema.timestamp_format == TimestampFormat::kIso ||
                              schema.timestamp_format == TimestampFormat::kAuto;
  bool have_timestamp = false;
  size_t row_value_bytes = 0;
  if (envelope != nullptr && schema.discover_dimensions()) {
    if (!DiscoverEnvelope(*envelope, row, &row_value_bytes).ok()) return false;
  }
  if (*p == '}') {
    ++p;
  } else {
    size_t position = 0;
    DimValue* const dims = row->dims.data();
    const Cached* cached = by_position.data();
    size_t cached_positions = by_position.size();
    for (;;) {
      if (*p != '"') return false;
      // The key: the one this position had last time, compared in place, or
      // scanned (one with an escape goes to simdjson).
      const char* raw = p + 1;
      size_t key_size;  // the key is (raw, key_size)
      int32_t action_index;
      uint8_t roles;
      PlainKind kind = PlainKind::kGeneral;
      int32_t dimension = -1;
      // No bounds check: a match past `end` would have to match the NUL
      // there, and no byte of a cached key (no control character) nor the
      // quote and colon is one.
      if (position < cached_positions && cached[position].MatchesWithColon(raw)) {
        const Cached& c = cached[position];
        key_size = c.key.size();
        action_index = c.action;
        roles = c.roles;
        kind = c.kind;
        dimension = c.dimension;
        p = raw + key_size + 2;
      } else {
        bool escaped = false;
        const char* close = pj::ScanString(raw, end, &escaped);
        if (close == nullptr || escaped) return false;
        key_size = static_cast<size_t>(close - raw);
        const absl::string_view key(raw, key_size);
        action_index = ActionFor(key);
        roles = RolesOf(action_index, key);
        CachePosition(position, key, action_index, roles);
        cached = by_position.data();
        cached_positions = by_position.size();
        p = pj::SkipSpace(close + 1, end);
        if (p >= end || *p != ':') return false;
        ++p;
      }
      ++position;
      // A byte above ' ' is no whitespace, and not the NUL at `end`.
      if (static_cast<unsigned char>(*p) <= ' ') {
        p = pj::SkipSpace(p, end);
        if (p >= end) return false;
      }

      constexpr uint8_t kRoles = kRoleTimestamp | kRoleDimension | kRoleMetric | kRoleDiscovered;
      constexpr uint8_t kUsed = kTransforming ? (kRoles | kRoleCapture) : kRoles;
      // The usual fields first, each as the general branch below reads it:
      // a listed dimension's string, a metric input's number, an ISO
      // timestamp string.
      if (kind == PlainKind::kDimension && *p == '"') {
        const char* close = pj::ScanPlainString(p + 1, end);
        if (close == nullptr) return false;
        const size_t size = static_cast<size_t>(close - p - 1);
        if (size > kMaxValueBytes) return false;
        row_value_bytes += size;
        if (row_value_bytes > kMaxRowValueBytes) return false;
        DimValue& d = dims[dimension];
        d.present = true;
        d.text = absl::string_view(p + 1, size);
        p = close + 1;
      } else if (kind == PlainKind::kMetric && (pj::IsDigit(*p) || *p == '-')) {
        const char* start = p;
        bool is_integer = false;
        bool exact = false;
        int64_t integer = 0;
        double real = 0;
        p = pj::ReadNumber(p, end, &is_integer, &exact, &integer, &real);
        if (p == nullptr || !exact) return false;
        if (!StoreMetric(actions[action_index].metrics, is_integer, integer, real,
                         absl::string_view(start, static_cast<size_t>(p - start)), row,
                         &failure)) {
          return false;
        }
      } else if (kind == PlainKind::kTimestamp && *p == '"' && iso_timestamps) {
        const char* close = pj::ScanPlainString(p + 1, end);
        if (close == nullptr) return false;
        const absl::string_view text(p + 1, static_cast<size_t>(close - p - 1));
        p = close + 1;
        if (!ParseCanonicalIsoInstant(text, &row->timestamp_ms) ||
            row->timestamp_ms < kMinTimestampMs || row->timestamp_ms > kMaxTimestampMs) {
          absl::StatusOr<int64_t> ms = TimestampFromString(text, schema.timestamp_format);
          if (!ms.ok()) return false;
          row->timestamp_ms = *ms;
        }
        have_timestamp = true;
      } else if (kind == PlainKind::kDimension && (*p == 't' || *p == 'f')) {
        // As the general branch reads a boolean: its literal's text.
        // (Each literal a constant, so the compare is no memcmp call.)
        const bool is_true = *p == 't';
        const absl::string_view text =
            is_true ? absl::string_view("true", 4) : absl::string_view("false", 5);
        p = is_true ? pj::ScanLiteral(p, end, "true", 4) : pj::ScanLiteral(p, end, "false", 5);
        if (p == nullptr) return false;
        row_value_bytes += text.size();
        if (row_value_bytes > kMaxRowValueBytes) return false;
        DimValue& d = dims[dimension];
        d.present = true;
        d.text = text;
      } else if ((roles & kUsed) == 0) {
        // An unused string without escapes (the usual one) in line, any
        // other value by SkipValue.
        const char* close = *p == '"' ? pj::ScanPlainString(p + 1, end) : nullptr;
        p = close != nullptr ? close + 1 : pj::SkipValue(p, end, 1);
        if (p == nullptr) return false;
      } else {
        // The value, as the simdjson path reads it: a string's content (no
        // escapes here), a number's token, "true"/"false", null absent.
        const bool discovered = (roles & kRoleDiscovered) != 0;
        const bool is_dimension = (roles & (kRoleDimension | kRoleDiscovered)) != 0;
        od::json_type type;
        absl::string_view text;
        bool present = true;
        bool is_integer = false;
        // A number token's value where it is read exactly (ReadNumber).
        bool exact_number = false;
        int64_t number_integer = 0;
        double number_real = 0;
        switch (*p) {
          case '"': {
            const char* close = pj::ScanPlainString(p + 1, end);
            if (close == nullptr) return false;
            type = od::json_type::string;
            text = absl::string_view(p + 1, static_cast<size_t>(close - p - 1));
            p = close + 1;
            break;
          }
          case 't':
            p = pj::ScanLiteral(p, end, "true", 4);
            type = od::json_type::boolean;
            text = absl::string_view("true", 4);
            break;
          case 'f':
            p = pj::ScanLiteral(p, end, "false", 5);
            type = od::json_type::boolean;
            text = absl::string_view("false", 5);
            break;
          case 'n':
            p = pj::ScanLiteral(p, end, "null", 4);
            type = od::json_type::null;
            present = false;
            break;
          case '[':
          case '{':
            return false;
          default: {
            const char* start = p;
            p = pj::ReadNumber(p, end, &is_integer, &exact_number, &number_integer,
                               &number_real);
            if (p == nullptr) return false;
            type = od::json_type::number;
            text = absl::string_view(start, static_cast<size_t>(p - start));
            break;
          }
        }
        if (p == nullptr) return false;

        bool only_captured = false;
        if constexpr (kTransforming) {
          if (roles & kRoleCapture) {
            captured[actions[action_index].capture] =
                !present                        ? ExprValue::Null()
                : type == od::json_type::number ? ExprValue::Number(text)
                                                : ExprValue::String(text);
            only_captured = (roles & kRoles) == 0;
          }
        }
        if (!only_captured) {
          if (is_dimension && present) {
            if (text.size() > kMaxValueBytes) return false;
            row_value_bytes += text.size();
            if (row_value_bytes > kMaxRowValueBytes) return false;
          }
          if (discovered) {
            if (present) {
              if (row->discovered.size() >= kMaxDiscoveredDimensions) return false;
              row->discovered.emplace_back(absl::string_view(raw, key_size), text);
            }
          } else {
            const FieldAction& action = actions[action_index];
            if (roles & kRoleTimestamp) {
              if (!present) {
                have_timestamp = false;
              } else if (type == od::json_type::string && iso_timestamps &&
                         ParseCanonicalIsoInstant(text, &row->timestamp_ms) &&
                         row->timestamp_ms >= kMinTimestampMs &&
                         row->timestamp_ms <= kMaxTimestampMs) {
                have_timestamp = true;
              } else {
                absl::StatusOr<int64_t> ms;
                if (type == od::json_type::string) {
                  ms = TimestampFromString(text, schema.timestamp_format);
                } else if (type == od::json_type::number) {
                  ms = TimestampFromNumber(text, schema.timestamp_format);
                } else {
                  return false;
                }
                if (!ms.ok()) return false;
                row->timestamp_ms = *ms;
                have_timestamp = true;
              }
            } else {
              if (roles & kRoleDimension) {
                DimValue& d = row->dims[action.dimension];
                d.present = present;
                d.text = present ? text : absl::string_view();
              }
              if (roles & kRoleMetric) {
                if (!present) {
                  for (int32_t index : action.metrics) row->metrics[index] = MetricInput();
                } else {
                  // A number token where ReadNumber reads it exactly (as
                  // simdjson does); any other goes to simdjson (whose own
                  // reading of long decimals is what rows have today). A
                  // string as the simdjson path reads it.
                  int64_t integer = 0;
                  double real = 0;
                  if (type == od::json_type::number) {
                    if (!exact_number) return false;
                    integer = number_integer;
                    real = number_real;
                  } else if (type == od::json_type::string) {
                    if (absl::SimpleAtoi(text, &integer)) {
                      is_integer = true;
                    } else if (!absl::SimpleAtod(text, &real)) {
                      return false;
                    }
                  } else {
                    return false;
                  }
                  if (!StoreMetric(action.metrics, is_integer, integer, real, text, row,
                                   &failure)) {
                    return false;
                  }
                }
              }
            }
          }
        }
      }
      // The usual separator first: a comma and the next key's quote (the
      // NUL at `end` is neither).
      if (*p == ',' && p[1] == '"') {
        ++p;
        continue;
      }
      p = pj::SkipSpace(p, end);
      if (p >= end) return false;
      if (*p == '}') {
        ++p;
        break;
      }
      if (*p != ',') return false;
      p = pj::SkipSpace(p + 1, end);
      if (p >= end) return false;
    }
  }
  if (pj::SkipSpace(p, end) != end) return false;
  if (envelope != nullptr) {
    if (!ApplyEnvelope(*envelope, row, &have_timestamp, &row_value_bytes).ok()) return false;
  }
  if (!have_timestamp && !(kTransforming && timestamp_from_transform)) return false;
  if constexpr (kTransforming) {
    if (!ApplyTransform(row_value_bytes, row).ok()) return false;
  }
  return true;
}

template <bool kTransforming>
ParseError RowParser::Impl::Parse(absl::string_view value, const RecordEnvelope* envelope,
                                  InputRow* row) {
  Reset<kTransforming>(row);
  if (value.empty()) return Error(ParseErrorKind::kNotJson, "empty record value");

  if (plain_scan) {
    // Read from the parser's own padded copy: the row's strings then stay
    // valid until the next Parse whatever becomes of `value`, as simdjson's
    // unescaped strings (in its own buffers) do.
    const size_t needed = value.size() + simdjson::SIMDJSON_PADDING;
    if (buffer.size() < needed) buffer.resize(needed);
    std::memcpy(buffer.data(), value.data(), value.size());
    buffer[value.size()] = '\0';  // the sentinel ParsePlain's readers stop at
    if (ParsePlain<kTransforming>(buffer.data(), buffer.data() + value.size(), envelope, row)) {
      ++plain_records;
      return ParseError();
    }
    Reset<kTransforming>(row);
  }

  // simdjson reads up to SIMDJSON_PADDING bytes past the document (their
  // content does not matter). A record whose padding lies in the page of its
  // last byte is parsed where it is, the rest from a padded copy.
  const char* input = value.data();
  if (!PaddingReadable(value)) {
    const size_t needed = value.size() + simdjson::SIMDJSON_PADDING;
    if (buffer.size() < needed) buffer.resize(needed);
    std::memcpy(buffer.data(), value.data(), value.size());
    input = buffer.data();
  }
  od::document doc;
  if (auto err = parser.iterate(input, value.size(), value.size() + simdjson::SIMDJSON_PADDING)
                     .get(doc)) {
    return NotJson(err);
  }
  od::object object;
  if (auto err = doc.get_object().get(object)) {
    if (err == simdjson::INCORRECT_TYPE) {
      return Error(ParseErrorKind::kNotJson, "record value is not a JSON object");
    }
    return NotJson(err);
  }

  const char* const document_end = input + value.size();
  const bool iso_timestamps = schema.timestamp_format == TimestampFormat::kIso ||
                              schema.timestamp_format == TimestampFormat::kAuto;
  bool have_timestamp = false;
  size_t row_value_bytes = 0;
  if (envelope != nullptr && schema.discover_dimensions()) {
    ParseError e = DiscoverEnvelope(*envelope, row, &row_value_bytes);
    if (!e.ok()) return e;
  }
  size_t position = 0;
  for (auto field_result : object) {
    // Used in place: moving it out (get) copies the field for every field.
    if (auto err = field_result.error()) return NotJson(err);
    od::field& field = field_result.value_unsafe();

    // The key. Fast path: the key this position had last time, compared in
    // place (a cached key has no escapes, so matching bytes followed by the
    // closing quote are the whole key).
    const char* raw = field.key().raw();
    absl::string_view key;
    int32_t action_index;
    uint8_t roles;
    // (The usual `key":` in two loads; the key with whitespace after it by
    // a memcmp.)
    const size_t in_document = static_cast<size_t>(document_end - raw);
    if (position < by_position.size() &&
        ((by_position[position].key.size() + 2 <= in_document &&
          by_position[position].MatchesWithColon(raw)) ||
         (by_position[position].key.size() < in_document && by_position[position].Matches(raw)))) {
      key = absl::string_view(raw, by_position[position].key.size());
      action_index = by_position[position].action;
      roles = by_position[position].roles;
    } else {
      size_t length = 0;
      bool escaped = false;
      while (raw[length] != '"') {
        if (raw[length] == '\\') {
          escaped = true;
          break;
        }
        ++length;
      }
      if (escaped) {
        std::string_view unescaped;
        if (auto err = field.unescaped_key().get(unescaped)) return NotJson(err);
        key = View(unescaped);
      } else {
        key = absl::string_view(raw, length);
      }
      action_index = ActionFor(key);
      roles = RolesOf(action_index, key);
      if (!escaped) {
        CachePosition(position, key, action_index, roles);
      }
    }
    ++position;

    // Only what the spec uses is read: the object iterator skips the rest
    // (checking only its structure).
    constexpr uint8_t kRoles = kRoleTimestamp | kRoleDimension | kRoleMetric | kRoleDiscovered;
    constexpr uint8_t kUsed = kTransforming ? (kRoles | kRoleCapture) : kRoles;
    if ((roles & kUsed) == 0) continue;
    const bool discovered = (roles & kRoleDiscovered) != 0;
    const bool is_dimension = (roles & (kRoleDimension | kRoleDiscovered)) != 0;
    od::value v = field.value();
    od::json_type type;
    if (auto err = v.type().get(type)) return NotJson(err);
    absl::string_view text;
    bool present = true;
    switch (type) {
      case od::json_type::string: {
        std::string_view s;
        if (auto err = v.get_string().get(s)) return NotJson(err);
        text = View(s);
        break;
      }
      case od::json_type::number:
        text = TrimRight(View(v.raw_json_token()));
        break;
      case od::json_type::boolean: {
        bool b;
        if (auto err = v.get_bool().get(b)) return NotJson(err);
        text = b ? absl::string_view("true", 4) : absl::string_view("false", 5);
        break;
      }
      case od::json_type::null: {
        bool is_null;
        if (auto err = v.is_null().get(is_null)) return NotJson(err);
        if (!is_null) return Error(ParseErrorKind::kNotJson, "malformed JSON literal");
        present = false;
        break;
      }
      case od::json_type::array: {
        od::array array;
        std::string_view raw_json;
        if (auto err = v.get_array().get(array)) return NotJson(err);
        if (is_dimension) {
          // The values of a multi-value row (format_limits.h). Counting
          // rewinds the array, so its raw text is still there to take.
          size_t elements = 0;
          if (auto err = array.count_elements().get(elements)) return NotJson(err);
          if (elements > kMaxValuesPerRow) {
            return Error(ParseErrorKind::kValueTooLarge,
                         absl::StrCat("dimension \"", FieldName(key), "\": an array of ",
                                      elements, " values, beyond the limit of ", kMaxValuesPerRow));
          }
        }
        if (auto err = array.raw_json().get(raw_json)) return NotJson(err);
        text = TrimRight(View(raw_json));
        break;
      }
      case od::json_type::object: {
        od::object inner;
        std::string_view raw_json;
        if (auto err = v.get_object().get(inner)) return NotJson(err);
        if (auto err = inner.raw_json().get(raw_json)) return NotJson(err);
        text = TrimRight(View(raw_json));
        break;
      }
    }

    if constexpr (kTransforming) {
      if (roles & kRoleCapture) {
        captured[actions[action_index].capture] =
            !present                        ? ExprValue::Null()
            : type == od::json_type::number ? ExprValue::Number(text)
                                            : ExprValue::String(text);
        if ((roles & kRoles) == 0) continue;  // read by transforms or the filter only
      }
    }
    if (is_dimension && present) {
      // The format's limits (format_limits.h): a row beyond them is refused
      // here, so every row that parses fits in a segment file.
      if (text.size() > kMaxValueBytes) {
        return Error(ParseErrorKind::kValueTooLarge,
                     absl::StrCat("dimension \"", FieldName(key), "\": a value of ", text.size(),
                                  " bytes, beyond the limit of ", kMaxValueBytes));
      }
      row_value_bytes += text.size();
      if (row_value_bytes > kMaxRowValueBytes) {
        return Error(ParseErrorKind::kValueTooLarge,
                     absl::StrCat("the dimension values of the row take more than ",
                                  kMaxRowValueBytes, " bytes (the limit) at field \"",
                                  FieldName(key), "\""));
      }
    }
    if (discovered) {
      if (present) {
        if (row->discovered.size() >= kMaxDiscoveredDimensions) {
          return Error(ParseErrorKind::kValueTooLarge,
                       absl::StrCat("more than ", kMaxDiscoveredDimensions,
                                    " discovered dimensions in the row (the limit)"));
        }
        row->discovered.emplace_back(key, text);
      }
      continue;
    }
    // Not discovered: the field has an action.
    const FieldAction& action = actions[action_index];
    if (roles & kRoleTimestamp) {
      if (!present) {
        have_timestamp = false;
        continue;
      }
      // The canonical ISO form without a Status (TimestampFromString gives
      // the same value for it; anything else goes there).
      if (type == od::json_type::string && iso_timestamps &&
          ParseCanonicalIsoInstant(text, &row->timestamp_ms) &&
          row->timestamp_ms >= kMinTimestampMs && row->timestamp_ms <= kMaxTimestampMs) {
        have_timestamp = true;
        continue;
      }
      absl::StatusOr<int64_t> ms;
      if (type == od::json_type::string) {
        ms = TimestampFromString(text, schema.timestamp_format);
      } else if (type == od::json_type::number) {
        ms = TimestampFromNumber(text, schema.timestamp_format);
      } else {
        return Error(ParseErrorKind::kBadTimestamp,
                     absl::StrCat("timestamp field \"", schema.timestamp_column, "\" is ",
                                  TypeName(type)));
      }
      if (!ms.ok()) {
        return Error(ParseErrorKind::kBadTimestamp,
                     absl::StrCat("timestamp field \"", schema.timestamp_column,
                                  "\": ", ms.status().message()));
      }
      row->timestamp_ms = *ms;
      have_timestamp = true;
      continue;
    }
    if (roles & kRoleDimension) {
      DimValue& d = row->dims[action.dimension];
      d.present = present;
      d.text = present ? text : absl::string_view();
    }
    if (roles & kRoleMetric) {
      if (!present) {
        for (int32_t index : action.metrics) row->metrics[index] = MetricInput();
        continue;
      }
      if (!Metric(action, type, text, v, row, &failure)) return std::move(failure);
    }
  }
  // Past the object there must be nothing left.
  if (doc.current_location().error() != simdjson::OUT_OF_BOUNDS) {
    return Error(ParseErrorKind::kNotJson, "trailing characters after the JSON object");
  }
  if (envelope != nullptr) {
    ParseError e = ApplyEnvelope(*envelope, row, &have_timestamp, &row_value_bytes);
    if (!e.ok()) return e;
  }
  if (!have_timestamp && !(kTransforming && timestamp_from_transform)) {
    return Error(ParseErrorKind::kNoTimestamp,
                 absl::StrCat("no timestamp field \"", schema.timestamp_column, "\""));
  }
  if constexpr (kTransforming) return ApplyTransform(row_value_bytes, row);
  return ParseError();
}

ParseError RowParser::Impl::ApplyTransform(size_t row_value_bytes, InputRow* row) {
  const std::vector<RowTransform::Named>& named = transform.transforms();
  // What all transforms of the row build together, intermediate values
  // included: the most a row's dimension values may take.
  size_t build_budget = kMaxRowValueBytes;
  for (size_t i = 0; i < outputs.size(); ++i) {
    expression_inputs.clear();
    for (int32_t slot : outputs[i].inputs) expression_inputs.push_back(captured[slot]);
    absl::StatusOr<ExprValue> result =
        named[i].expression.Eval(expression_inputs, row->timestamp_ms, &scratches[i],
                                 &build_budget);
    if (!result.ok()) {
      return Error(ParseErrorKind::kValueTooLarge,
                   absl::StrCat("transform \"", FieldName(named[i].name),
                                "\": ", result.status().message()));
    }
    results[i] = *result;
  }
  // The time first: the filter may read it.
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].timestamp) continue;
    const ExprValue& v = results[i];
    if (v.is_null()) {
      return Error(ParseErrorKind::kNoTimestamp,
                   absl::StrCat("the timestamp column \"", schema.timestamp_column,
                                "\" (a transform) is null"));
    }
    absl::StatusOr<int64_t> ms = v.type == ExprValue::Type::kNumber
                                     ? TimestampFromNumber(v.text, schema.timestamp_format)
                                     : TimestampFromString(v.text, schema.timestamp_format);
    if (!ms.ok()) {
      return Error(ParseErrorKind::kBadTimestamp,
                   absl::StrCat("timestamp column \"", schema.timestamp_column,
                                "\" (a transform): ", ms.status().message()));
    }
    row->timestamp_ms = *ms;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!outputs[i].time) continue;
    int64_t ms = 0;
    if (!ExprValueToLong(results[i], &ms)) {
      return Error(ParseErrorKind::kBadTimestamp,
                   absl::StrCat("transform \"", kTimeColumn, "\" is not a number of millis: ",
                                results[i].is_null() ? "null" : results[i].text.substr(0, 40)));
    }
    row->timestamp_ms = ms;
  }
  if (transform.filter().has_value()) {
    for (size_t i = 0; i < filter_inputs.size(); ++i) {
      const FilterInput& in = filter_inputs[i];
      std::optional<absl::string_view>& out = filter_values[i];
      switch (in.from) {
        case FilterInput::From::kCapture: {
          const ExprValue& v = captured[in.index];
          out = v.is_null() ? std::nullopt : std::optional<absl::string_view>(v.text);
          break;
        }
        case FilterInput::From::kTransform: {
          const ExprValue& v = results[in.index];
          out = v.is_null() ? std::nullopt : std::optional<absl::string_view>(v.text);
          break;
        }
        case FilterInput::From::kTime:
          time_text = absl::StrCat(row->timestamp_ms);
          out = time_text;
          break;
      }
    }
    if (!transform.filter()->Matches(filter_values)) {
      // Thrown away: what the row holds is not looked at.
      row->thrown_away = true;
      return ParseError();
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const TransformOutput& out = outputs[i];
    const ExprValue& v = results[i];
    const absl::string_view name = named[i].name;
    if ((out.dimension >= 0 || out.discovered) && !v.is_null()) {
      if (v.text.size() > kMaxValueBytes) {
        return Error(ParseErrorKind::kValueTooLarge,
                     absl::StrCat("dimension \"", FieldName(name), "\" (a transform): a value of ",
                                  v.text.size(), " bytes, beyond the limit of ", kMaxValueBytes));
      }
      row_value_bytes += v.text.size();
      if (row_value_bytes > kMaxRowValueBytes) {
        return Error(ParseErrorKind::kValueTooLarge,
                     absl::StrCat("the dimension values of the row take more than ",
                                  kMaxRowValueBytes, " bytes (the limit) at transform \"",
                                  FieldName(name), "\""));
      }
    }
    if (out.dimension >= 0) {
      DimValue& d = row->dims[out.dimension];
      d.present = !v.is_null();
      d.text = v.is_null() ? absl::string_view() : v.text;
    }
    if (out.discovered && !v.is_null()) {
      if (row->discovered.size() >= kMaxDiscoveredDimensions) {
        return Error(ParseErrorKind::kValueTooLarge,
                     absl::StrCat("more than ", kMaxDiscoveredDimensions,
                                  " discovered dimensions in the row (the limit)"));
      }
      row->discovered.emplace_back(name, v.text);
    }
    if (!out.metrics.empty()) {
      if (v.is_null()) {
        for (int32_t index : out.metrics) row->metrics[index] = MetricInput();
        continue;
      }
      int64_t integer = 0;
      double real = 0;
      const bool is_integer = absl::SimpleAtoi(v.text, &integer);
      if (!is_integer && !absl::SimpleAtod(v.text, &real)) {
        const MetricSpec& m = schema.metrics[out.metrics[0]];
        return Error(ParseErrorKind::kBadNumber,
                     absl::StrCat("metric \"", m.name, "\" (transform \"", FieldName(name),
                                  "\"): not a number: \"", v.text.substr(0, 40), "\""));
      }
      if (!StoreMetric(out.metrics, is_integer, integer, real, v.text, row, &failure)) {
        return std::move(failure);
      }
    }
  }
  return ParseError();
}

// ---- Envelope columns (kafka input format) -------------------------------

namespace {

// The limits a value field's dimension value is held to (format_limits.h).
ParseError CheckEnvelopeValue(const EnvelopeColumn& column, size_t* row_value_bytes) {
  if (column.value.size() > kMaxValueBytes) {
    return Error(ParseErrorKind::kValueTooLarge,
                 absl::StrCat("envelope column \"", FieldName(column.name), "\": a value of ",
                              column.value.size(), " bytes, beyond the limit of ", kMaxValueBytes));
  }
  *row_value_bytes += column.value.size();
  if (*row_value_bytes > kMaxRowValueBytes) {
    return Error(ParseErrorKind::kValueTooLarge,
                 absl::StrCat("the dimension values of the row take more than ", kMaxRowValueBytes,
                              " bytes (the limit) at envelope column \"", FieldName(column.name),
                              "\""));
  }
  return ParseError();
}

}  // namespace

ParseError RowParser::Impl::DiscoverEnvelope(const RecordEnvelope& envelope, InputRow* row,
                                             size_t* row_value_bytes) {
  for (size_t i = 0; i < envelope.columns.size(); ++i) {
    const EnvelopeColumn& column = envelope.columns[i];
    if (!column.present || column.name.empty()) continue;
    const int32_t index = EnvelopeActionFor(i, column.name);
    if (index != kUnknownField && actions[index].excluded) continue;
    ParseError e = CheckEnvelopeValue(column, row_value_bytes);
    if (!e.ok()) return e;
    if (row->discovered.size() >= kMaxDiscoveredDimensions) {
      return Error(ParseErrorKind::kValueTooLarge,
                   absl::StrCat("more than ", kMaxDiscoveredDimensions,
                                  " discovered dimensions in the row (the limit)"));
    }
    row->discovered.emplace_back(column.name, column.value);
  }
  return ParseError();
}

ParseError RowParser::Impl::ApplyEnvelope(const RecordEnvelope& envelope, InputRow* row,
                                          bool* have_timestamp, size_t* row_value_bytes) {
  for (size_t i = 0; i < envelope.columns.size(); ++i) {
    const EnvelopeColumn& column = envelope.columns[i];
    if (!column.present) continue;
    const int32_t index = EnvelopeActionFor(i, column.name);
    if (index == kUnknownField) continue;
    const FieldAction& action = actions[index];
    // A transform may read it (unless the value had the field).
    if (transforming && action.capture >= 0 && captured[action.capture].is_null()) {
      captured[action.capture] = static_cast<int32_t>(i) == envelope.timestamp_column
                                     ? ExprValue::Number(column.value)
                                     : ExprValue::String(column.value);
    }
    if (action.timestamp && !*have_timestamp) {
      const bool is_number = static_cast<int32_t>(i) == envelope.timestamp_column;
      // The Kafka timestamp from its number when the envelope has it, not
      // from its text.
      absl::StatusOr<int64_t> ms =
          is_number && envelope.timestamp_ms.has_value()
              ? TimestampFromInteger(*envelope.timestamp_ms, schema.timestamp_format)
          : is_number ? TimestampFromNumber(column.value, schema.timestamp_format)
                      : TimestampFromString(column.value, schema.timestamp_format);
      if (!ms.ok()) {
        return Error(ParseErrorKind::kBadTimestamp,
                     absl::StrCat("timestamp column \"", schema.timestamp_column,
                                  "\" (from the record envelope): ", ms.status().message()));
      }
      row->timestamp_ms = *ms;
      *have_timestamp = true;
    }
    if (action.dimension >= 0 && !row->dims[action.dimension].present) {
      ParseError e = CheckEnvelopeValue(column, row_value_bytes);
      if (!e.ok()) return e;
      row->dims[action.dimension] = DimValue{column.value, true};
    }
    if (!action.metrics.empty() && !row->metrics[action.metrics[0]].present) {
      od::value unused;
      if (!Metric(action, od::json_type::string, column.value, unused, row, &failure)) {
        return std::move(failure);
      }
    }
  }
  return ParseError();
}

}  // namespace segment
}  // namespace sluice
