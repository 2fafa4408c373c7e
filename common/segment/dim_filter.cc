#include "common/segment/dim_filter.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace sluice {
namespace segment {
namespace {

constexpr char kTypes[] = "selector, in, bound, and, or, not";

absl::Status Bad(absl::string_view path, absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": ", message));
}

// The fields a filter of each type may set; anything else set is refused so
// that a misspelt type or a misplaced field does not silently match all rows.
struct UsedFields {
  bool dimension = false;
  bool value = false;
  bool values = false;
  bool fields = false;
  bool field = false;
  bool bound = false;
};

absl::Status CheckUnusedFields(const sluice::v1::DimFilter& f, absl::string_view path,
                               const UsedFields& used) {
  auto unused = [&](absl::string_view field) {
    return Bad(path, field, absl::StrCat("not used by a \"", f.type(), "\" filter"));
  };
  if (!used.dimension && !f.dimension().empty()) return unused("dimension");
  if (!used.value && f.has_value()) return unused("value");
  if (!used.values && f.values_size() > 0) return unused("values");
  if (!used.fields && f.fields_size() > 0) return unused("fields");
  if (!used.field && f.has_field()) return unused("field");
  if (!used.bound) {
    if (f.has_lower()) return unused("lower");
    if (f.has_upper()) return unused("upper");
    if (f.lower_strict()) return unused("lowerStrict");
    if (f.upper_strict()) return unused("upperStrict");
    if (!f.ordering().empty()) return unused("ordering");
  }
  return absl::OkStatus();
}

}  // namespace

std::optional<double> ParseFilterNumber(absl::string_view text) {
  if (text.empty()) return std::nullopt;
  double value = 0;
  const char* end = text.data() + text.size();
  std::from_chars_result result = std::from_chars(text.data(), end, value);
  if (result.ec != std::errc() || result.ptr != end || std::isnan(value)) return std::nullopt;
  return value;
}

// Builds the node list of one matcher, counting depth and values.
class DimFilterMatcher::Compiler {
 public:
  explicit Compiler(DimFilterMatcher* out) : out_(out) {}

  absl::StatusOr<int> Compile(const sluice::v1::DimFilter& f, const std::string& path,
                              int depth) {
    if (depth > kMaxDimFilterDepth) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": filters nested more than ", kMaxDimFilterDepth, " levels deep"));
    }
    const std::string& type = f.type();
    Node node;
    UsedFields used;
    if (type == "selector") {
      used.dimension = used.value = true;
      SLUICE_RETURN_IF_ERROR(CheckUnusedFields(f, path, used));
      SLUICE_ASSIGN_OR_RETURN(node.dimension, Dimension(f, path));
      node.kind = Kind::kSelector;
      if (f.has_value()) {
        SLUICE_RETURN_IF_ERROR(CountValues(1, path, "value"));
        node.value = f.value();
      }
    } else if (type == "in") {
      used.dimension = used.values = true;
      SLUICE_RETURN_IF_ERROR(CheckUnusedFields(f, path, used));
      SLUICE_ASSIGN_OR_RETURN(node.dimension, Dimension(f, path));
      SLUICE_RETURN_IF_ERROR(CountValues(f.values_size(), path, "values"));
      node.kind = Kind::kIn;
      node.in_set = static_cast<int>(out_->in_sets_.size());
      out_->in_sets_.emplace_back(f.values().begin(), f.values().end());
    } else if (type == "bound") {
      used.dimension = used.bound = true;
      SLUICE_RETURN_IF_ERROR(CheckUnusedFields(f, path, used));
      SLUICE_ASSIGN_OR_RETURN(node.dimension, Dimension(f, path));
      SLUICE_RETURN_IF_ERROR(Bound(f, path, &node));
    } else if (type == "and" || type == "or") {
      used.fields = true;
      SLUICE_RETURN_IF_ERROR(CheckUnusedFields(f, path, used));
      if (f.fields_size() == 0) {
        return Bad(path, "fields", absl::StrCat("an \"", type, "\" filter needs at least one field"));
      }
      node.kind = type == "and" ? Kind::kAnd : Kind::kOr;
      std::vector<int> children;
      for (int i = 0; i < f.fields_size(); ++i) {
        SLUICE_ASSIGN_OR_RETURN(
            int child, Compile(f.fields(i), absl::StrCat(path, ".fields[", i, "]"), depth + 1));
        children.push_back(child);
      }
      node.first_child = static_cast<int>(out_->children_.size());
      node.num_children = static_cast<int>(children.size());
      out_->children_.insert(out_->children_.end(), children.begin(), children.end());
    } else if (type == "not") {
      used.field = true;
      SLUICE_RETURN_IF_ERROR(CheckUnusedFields(f, path, used));
      if (!f.has_field()) return Bad(path, "field", "a \"not\" filter needs a field");
      node.kind = Kind::kNot;
      SLUICE_ASSIGN_OR_RETURN(int child, Compile(f.field(), path + ".field", depth + 1));
      node.first_child = static_cast<int>(out_->children_.size());
      node.num_children = 1;
      out_->children_.push_back(child);
    } else if (type.empty()) {
      return Bad(path, "type", absl::StrCat("required; one of ", kTypes));
    } else {
      return Bad(path, "type",
                 absl::StrCat("unknown filter type \"", type, "\"; one of ", kTypes));
    }
    out_->nodes_.push_back(std::move(node));
    return static_cast<int>(out_->nodes_.size()) - 1;
  }

 private:
  absl::StatusOr<int> Dimension(const sluice::v1::DimFilter& f, absl::string_view path) {
    if (f.dimension().empty()) {
      return Bad(path, "dimension", absl::StrCat("a \"", f.type(), "\" filter needs a dimension"));
    }
    auto [it, inserted] =
        index_.try_emplace(f.dimension(), static_cast<int>(out_->dimensions_.size()));
    if (inserted) out_->dimensions_.push_back(f.dimension());
    return it->second;
  }

  absl::Status CountValues(int n, absl::string_view path, absl::string_view field) {
    values_ += n;
    if (values_ > kMaxDimFilterValues) {
      return Bad(path, field,
                 absl::StrCat("the filter holds more than ", kMaxDimFilterValues, " values in all"));
    }
    return absl::OkStatus();
  }

  absl::Status Bound(const sluice::v1::DimFilter& f, absl::string_view path, Node* node) {
    if (!f.has_lower() && !f.has_upper()) {
      return Bad(path, "lower", "a \"bound\" filter needs lower or upper (or both)");
    }
    bool numeric = false;
    if (f.ordering() == "numeric") {
      numeric = true;
    } else if (!f.ordering().empty() && f.ordering() != "lexicographic") {
      return Bad(path, "ordering",
                 absl::StrCat("unknown ordering \"", f.ordering(),
                              "\"; one of lexicographic (the default), numeric"));
    }
    node->kind = numeric ? Kind::kNumericBound : Kind::kLexBound;
    node->has_lower = f.has_lower();
    node->has_upper = f.has_upper();
    node->lower_strict = f.lower_strict();
    node->upper_strict = f.upper_strict();
    if (f.has_lower()) {
      SLUICE_RETURN_IF_ERROR(CountValues(1, path, "lower"));
      node->lower = f.lower();
    }
    if (f.has_upper()) {
      SLUICE_RETURN_IF_ERROR(CountValues(1, path, "upper"));
      node->upper = f.upper();
    }
    if (numeric) {
      if (f.has_lower()) {
        std::optional<double> n = ParseFilterNumber(f.lower());
        if (!n) return Bad(path, "lower", "not a number, and the ordering is numeric");
        node->lower_number = *n;
      }
      if (f.has_upper()) {
        std::optional<double> n = ParseFilterNumber(f.upper());
        if (!n) return Bad(path, "upper", "not a number, and the ordering is numeric");
        node->upper_number = *n;
      }
    }
    return absl::OkStatus();
  }

  DimFilterMatcher* out_;
  absl::flat_hash_map<std::string, int> index_;
  int values_ = 0;
};

absl::StatusOr<DimFilterMatcher> DimFilterMatcher::Create(const sluice::v1::DimFilter& filter,
                                                          absl::string_view path) {
  DimFilterMatcher matcher;
  Compiler compiler(&matcher);
  SLUICE_ASSIGN_OR_RETURN(int root, compiler.Compile(filter, std::string(path), 1));
  // Children are appended before their parent, so the root is the last node;
  // move it to the front so that Eval starts at 0.
  std::swap(matcher.nodes_[root], matcher.nodes_[0]);
  for (int& child : matcher.children_) {
    if (child == root) {
      child = 0;
    } else if (child == 0) {
      child = root;
    }
  }
  return matcher;
}

bool DimFilterMatcher::Matches(
    absl::Span<const std::optional<absl::string_view>> values) const {
  return Eval(0, values);
}

bool DimFilterMatcher::Eval(int index,
                            absl::Span<const std::optional<absl::string_view>> values) const {
  const Node& node = nodes_[index];
  switch (node.kind) {
    case Kind::kSelector: {
      const std::optional<absl::string_view>& v = values[node.dimension];
      if (!node.value.has_value()) return !v.has_value();
      return v.has_value() && *v == *node.value;
    }
    case Kind::kIn: {
      const std::optional<absl::string_view>& v = values[node.dimension];
      return v.has_value() && in_sets_[node.in_set].contains(*v);
    }
    case Kind::kLexBound: {
      const std::optional<absl::string_view>& v = values[node.dimension];
      if (!v.has_value()) return false;
      if (node.has_lower) {
        int c = v->compare(node.lower);
        if (c < 0 || (c == 0 && node.lower_strict)) return false;
      }
      if (node.has_upper) {
        int c = v->compare(node.upper);
        if (c > 0 || (c == 0 && node.upper_strict)) return false;
      }
      return true;
    }
    case Kind::kNumericBound: {
      const std::optional<absl::string_view>& v = values[node.dimension];
      if (!v.has_value()) return false;
      std::optional<double> n = ParseFilterNumber(*v);
      if (!n) return false;
      if (node.has_lower &&
          (*n < node.lower_number || (node.lower_strict && *n == node.lower_number))) {
        return false;
      }
      if (node.has_upper &&
          (*n > node.upper_number || (node.upper_strict && *n == node.upper_number))) {
        return false;
      }
      return true;
    }
    case Kind::kAnd:
      for (int i = 0; i < node.num_children; ++i) {
        if (!Eval(children_[node.first_child + i], values)) return false;
      }
      return true;
    case Kind::kOr:
      for (int i = 0; i < node.num_children; ++i) {
        if (Eval(children_[node.first_child + i], values)) return true;
      }
      return false;
    case Kind::kNot:
      return !Eval(children_[node.first_child], values);
  }
  return false;
}

}  // namespace segment
}  // namespace sluice
