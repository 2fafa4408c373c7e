// The one-pass reading of plain records (plain_json.h) against simdjson's
// path: a parser with it and one without (set_plain_scan(false)) give the
// same row or the same error, class and message, for hand-picked records
// (escapes, arrays, nested values, numbers at the edges of exact reading,
// malformed fields used and unused) and for random mutations of them;
// plain records take the one pass, records that need simdjson do not.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "common/segment/row_parser.h"
#include "common/segment/row_transform.h"
#include "sluice/v1/spec.pb.h"

namespace sluice {
namespace segment {
namespace {

Schema WikiLike() {
  Schema s;
  s.timestamp_column = "timestamp";
  s.timestamp_format = TimestampFormat::kIso;
  s.dimensions = {"channel", "page", "user", "isRobot"};
  s.metrics = {{MetricType::kCount, "count", ""},
               {MetricType::kLongSum, "added", "added"},
               {MetricType::kDoubleSum, "delta", "delta"},
               {MetricType::kDoubleSum, "delta2", "delta"}};
  return s;
}

Schema Discovering() {
  Schema s = WikiLike();
  s.dimensions.clear();
  s.dimension_exclusions = {"page"};
  return s;
}

Schema MillisTime() {
  Schema s = WikiLike();
  s.timestamp_column = "ms";
  s.timestamp_format = TimestampFormat::kMillis;
  return s;
}

// The row as text, everything Parse fills.
std::string Describe(const ParseError& e, const InputRow& row) {
  if (!e.ok()) return std::string(ParseErrorKindName(e.kind)) + ": " + e.message;
  std::string out = "t=" + std::to_string(row.timestamp_ms) +
                    (row.thrown_away ? " thrown away" : "") + " dims:";
  for (const DimValue& d : row.dims) {
    out += d.present ? "[" + std::string(d.text) + "]" : "null";
  }
  out += " discovered:";
  for (const auto& [k, v] : row.discovered) out += std::string(k) + "=" + std::string(v) + ";";
  out += " metrics:";
  for (const MetricInput& m : row.metrics) {
    char bits[8];
    std::memcpy(bits, &m.double_value, 8);
    out += m.present ? std::to_string(m.long_value) + "/" +
                           std::to_string(*reinterpret_cast<const uint64_t*>(bits)) + ";"
                     : "null;";
  }
  return out;
}

struct Pair {
  std::unique_ptr<RowParser> plain;
  std::unique_ptr<RowParser> simdjson;
  Schema schema;
  RowTransform transform;
};

Pair MakePair(const Schema& schema, const RowTransform& transform = RowTransform()) {
  auto a = RowParser::Create(schema, transform);
  auto b = RowParser::Create(schema, transform);
  EXPECT_TRUE(a.ok() && b.ok());
  (*b)->set_plain_scan(false);
  return {std::move(*a), std::move(*b), schema, transform};
}

// Parses `record` with both; returns whether the one pass took it. A record
// the one pass took gives what simdjson gives, always. One it left to
// simdjson does too, but simdjson's reading of some malformed records (seen
// with an unbalanced one, `{"a":"b"]"x":01}`) depends on what the same
// simdjson parser read before, and the two parsers' simdjson have read
// different records: where they differ, two new parsers must agree.
bool Same(Pair& p, const std::string& record) {
  InputRow a, b;
  const int64_t before = p.plain->plain_records();
  const std::string da = Describe(p.plain->Parse(record, &a), a);
  const std::string db = Describe(p.simdjson->Parse(record, &b), b);
  const bool took = p.plain->plain_records() > before;
  EXPECT_EQ(p.simdjson->plain_records(), 0);
  if (da == db) return took;
  EXPECT_FALSE(took) << record << "\n" << da << "\n" << db;
  Pair fresh = MakePair(p.schema, p.transform);
  const std::string fa = Describe(fresh.plain->Parse(record, &a), a);
  const std::string fb = Describe(fresh.simdjson->Parse(record, &b), b);
  EXPECT_EQ(fa, fb) << record;
  return took;
}

const char* kGood =
    R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"#en.wikipedia","page":"Main_Page",)"
    R"("user":"Editor7","isRobot":false,"added":12,"deleted":0,"delta":12.25,"ms":1796004944123})";

std::vector<std::string> Records() {
  std::vector<std::string> r = {
      kGood,
      // Unused fields of every kind, nested, with escapes, non-ASCII.
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":{"a":[1,2,{"b":null}],"c":"\u00e9\n"},"added":1})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":[],"y":{},"z":[[[]]],"added":1})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","note":"say \"hi\"\n\u00e9","added":1})",
      "{\"timestamp\":\"2026-11-30T02:15:44.123Z\",\"channel\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"}",
      // Used fields that the one pass leaves to simdjson.
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"a\"b"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":["a","b"]})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":{"a":1}})",
      R"({"time\u0073tamp":"2026-11-30T02:15:44.123Z"})",
      // Numbers at the edges of exact reading.
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":-0,"delta":-0.0})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":999999999999999999,"delta":1e22})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":9223372036854775807,"delta":1e23})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":9223372036854775808})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":-9223372036854775808})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":18446744073709551616})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":1.5e3,"delta":0.1})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":-2.9,"delta":123456789.123456789})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":1e19})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":1e-400,"added":0e5})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":5e-324})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":1e400})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":9007199254740993})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":9007199254740993.0})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":0.30000000000000004441})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":"17","delta":"NaN"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":"1e3","delta":" 5"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":"lots"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":true})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":null,"channel":null})",
      // Dimension values that are not strings.
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":12.50,"page":-0,"isRobot":true})",
      // Timestamps.
      R"({"timestamp":"2026-11-30T02:15:44.123"})",
      R"({"timestamp":"2026-11-31T02:15:44.123Z"})",
      R"({"timestamp":1796004944123})",
      R"({"timestamp":null})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","timestamp":null})",
      R"({"channel":"a"})",
      // Malformed, used or not.
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":tru})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":"\q"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":01})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x":-})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":12abc})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":-})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","added":01})",
      "{\"timestamp\":\"2026-11-30T02:15:44.123Z\",\"x\":\"\xff\"}",
      "{\"timestamp\":\"2026-11-30T02:15:44.123Z\",\"x\":\"\xed\xa0\x80\"}",
      "{\"timestamp\":\"2026-11-30T02:15:44.123Z\",\"x\":\"\x01\"}",
      R"({"timestamp":"2026-11-30T02:15:44.123Z"} x)",
      R"(  {"timestamp":"2026-11-30T02:15:44.123Z"}  )",
      R"({ "timestamp" : "2026-11-30T02:15:44.123Z" , "added" : 3 })",
      R"({"timestamp":"2026-11-30T02:15:44.123Z",})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z")",
      R"([1,2])",
      R"({})",
      R"(null)",
      std::string(100, '['),
      "{\"timestamp\":\"2026-11-30T02:15:44.123Z\",\"x\":" + std::string(100, '[') +
          std::string(100, ']') + "}",
  };
  return r;
}

TEST(RowParserPlain, SameRowsAndErrorsAsSimdjson) {
  std::vector<Pair> pairs;
  pairs.push_back(MakePair(WikiLike()));
  pairs.push_back(MakePair(Discovering()));
  pairs.push_back(MakePair(MillisTime()));
  for (Pair& p : pairs) {
    for (const std::string& r : Records()) Same(p, r);
  }
}

// Random mutations of records (bytes replaced, inserted, deleted, cut),
// each through both parsers: the same row or error every time.
TEST(RowParserPlain, SameOnMutatedRecords) {
  std::vector<Pair> pairs;
  pairs.push_back(MakePair(WikiLike()));
  pairs.push_back(MakePair(Discovering()));
  const std::vector<std::string> seeds = Records();
  const char kBytes[] = "{}[]\",:\\ 0123456789.eE-+tfnulrsa\x01\xc3\xa9\xff";
  std::mt19937 rng(35);
  int plain = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string r = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 3);
    for (int e = 0; e < edits && !r.empty(); ++e) {
      const size_t at = rng() % r.size();
      const char b = kBytes[rng() % (sizeof(kBytes) - 1)];
      switch (rng() % 4) {
        case 0: r[at] = b; break;
        case 1: r.insert(r.begin() + static_cast<long>(at), b); break;
        case 2: r.erase(at, 1); break;
        default: r.resize(at); break;
      }
    }
    for (Pair& p : pairs) plain += Same(p, r) ? 1 : 0;
  }
  // Some mutations leave a plain record: the one pass was exercised too.
  EXPECT_GT(plain, 1000);
}

// A record whose key at some position has an escape (read by simdjson's
// path, which caches no such key) and a later one cached: the next records
// read their keys at those positions as they are, on either path, as a new
// parser reads them.
TEST(RowParserPlain, KeysAfterAnUncachedPositionReadAsTheyAre) {
  const std::string escaped =
      R"({"timestamp":"2026-11-30T02:15:44.123Z","x\"y":1,"channel":"a","user":"u"})";
  const std::vector<std::string> next = {
      R"({"timestamp":"2026-11-30T02:15:44.123Z","page":"p","channel":"c","user":"v"})",
      R"({"timestamp":"2026-11-30T02:15:44.123Z","page":"p\n","channel":"c","user":"v"})",
  };
  for (bool plain : {true, false}) {
    for (const std::string& record : next) {
      auto used = RowParser::Create(WikiLike());
      auto fresh = RowParser::Create(WikiLike());
      ASSERT_TRUE(used.ok() && fresh.ok());
      (*used)->set_plain_scan(plain);
      (*fresh)->set_plain_scan(plain);
      InputRow a, b;
      ASSERT_TRUE((*used)->Parse(escaped, &a).ok());
      EXPECT_EQ(Describe((*used)->Parse(record, &a), a), Describe((*fresh)->Parse(record, &b), b))
          << record << (plain ? " (one pass on)" : " (simdjson only)");
    }
  }
}

// Numbers of every shape the one pass reads itself (ReadNumber: integers of
// up to 18 digits, decimals of up to 18 digits times 10^-22..10^22) and
// around its limits, as a long metric, two double metrics and a dimension:
// the same bits as simdjson's reading, every one.
TEST(RowParserPlain, SameNumbersAsSimdjson) {
  Pair p = MakePair(WikiLike());
  std::mt19937_64 rng(1500);
  auto digits = [&](int n) {
    std::string d;
    for (int i = 0; i < n; ++i) d += static_cast<char>('0' + rng() % 10);
    if (n > 1 && d[0] == '0') d[0] = static_cast<char>('1' + rng() % 9);
    return d;
  };
  std::vector<std::string> numbers = {
      "0", "-0", "0.0", "-0.0", "0e0", "0E+0", "1e-0", "9007199254740992", "9007199254740993",
      "9007199254740992.0", "9007199254740993.0", "900719925474099.3", "1e22", "1e23", "-1e22",
      "1e-22", "1e-23", "123456789012345678", "1234567890123456789", "999999999999999999",
      "0.000000000000000001", "1.7976931348623157e308", "5e-324", "2.2250738585072014e-308",
      "4.9406564584124654e-324", "1e0000000000000000000000000005", "1e1000000000000000",
      "0.1", "0.2", "0.3", "1.1", "2.675", "1.005", "100.25", "-7.75", "3.14159265358979",
  };
  for (int i = 0; i < 40000; ++i) {
    const int integer_digits = 1 + static_cast<int>(rng() % 19);
    std::string n = (rng() % 4 == 0 ? "-" : "") + digits(integer_digits);
    if (rng() % 2 == 0) n += "." + digits(1 + static_cast<int>(rng() % (20 - integer_digits)));
    if (rng() % 3 == 0) {
      n += (rng() % 2 ? "e" : "E");
      const int e = static_cast<int>(rng() % 61) - 30;
      n += e < 0 ? std::to_string(e) : (rng() % 2 ? "+" : "") + std::to_string(e);
    }
    numbers.push_back(n);
  }
  int took = 0;
  for (const std::string& n : numbers) {
    const std::string record = R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":)" + n +
                               R"(,"added":)" + n + R"(,"delta":)" + n + "}";
    took += Same(p, record) ? 1 : 0;
    took += Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","delta":)" + n + "}") ? 1 : 0;
  }
  // Most take the one pass (the rest are beyond exact reading or the long
  // metric's range, or errors): its reading was compared, not only simdjson's.
  EXPECT_GT(took, static_cast<int>(numbers.size()));
}

TEST(RowParserPlain, PlainRecordsTakeTheOnePass) {
  Pair p = MakePair(WikiLike());
  EXPECT_TRUE(Same(p, kGood));
  EXPECT_TRUE(Same(p, kGood));
  EXPECT_TRUE(Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","x":{"a":["\n"]},"added":1})"));
  // An escape, an array in a used field, an error: simdjson reads them.
  EXPECT_FALSE(Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":"a\nb"})"));
  EXPECT_FALSE(Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","channel":["a"]})"));
  EXPECT_FALSE(Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","added":"lots"})"));
  EXPECT_FALSE(Same(p, R"({"timestamp":"2026-11-30T02:15:44.123Z","x":tru})"));
  EXPECT_EQ(p.plain->plain_records(), 3);
}

// With a transformSpec (captured inputs, a filter) and with a record
// envelope beside the value.
TEST(RowParserPlain, SameWithTransformsAndEnvelopes) {
  v1::TransformSpec spec;
  v1::Transform* t = spec.add_transforms();
  t->set_type("expression");
  t->set_name("channel");
  t->set_expression("concat(channel, '/', user)");
  spec.mutable_filter()->set_type("selector");
  spec.mutable_filter()->set_dimension("isRobot");
  spec.mutable_filter()->set_value("false");
  auto transform = RowTransform::Create(spec, "transformSpec", "timestamp");
  ASSERT_TRUE(transform.ok()) << transform.status();
  Pair p = MakePair(WikiLike(), *transform);
  for (const std::string& r : Records()) Same(p, r);
  EXPECT_TRUE(Same(p, kGood));

  Schema s = WikiLike();
  s.timestamp_column = "kafka.timestamp";
  s.timestamp_format = TimestampFormat::kMillis;
  s.dimensions.push_back("kafka.key");
  Pair e = MakePair(s);
  RecordEnvelope envelope;
  envelope.columns = {{"kafka.key", "k1", true}, {"kafka.timestamp", "1796004944123", true}};
  envelope.timestamp_column = 1;
  envelope.timestamp_ms = 1796004944123;
  for (const std::string& r : Records()) {
    InputRow a, b;
    EXPECT_EQ(Describe(e.plain->Parse(r, envelope, &a), a),
              Describe(e.simdjson->Parse(r, envelope, &b), b))
        << r;
  }
  EXPECT_GT(e.plain->plain_records(), 10);
}

}  // namespace
}  // namespace segment
}  // namespace sluice
