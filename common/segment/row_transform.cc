#include "common/segment/row_transform.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/segment/schema.h"
#include "common/status_macros.h"

namespace sluice {
namespace segment {

absl::StatusOr<RowTransform> RowTransform::Create(const sluice::v1::TransformSpec& spec,
                                                  absl::string_view path,
                                                  absl::string_view timestamp_column) {
  RowTransform out;
  if (spec.transforms_size() > kMaxTransforms) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".transforms: at most ", kMaxTransforms,
                                                   " transforms (got ", spec.transforms_size(),
                                                   ")"));
  }
  absl::flat_hash_set<std::string> names;
  bool replaces_time = false;
  for (int i = 0; i < spec.transforms_size(); ++i) {
    const sluice::v1::Transform& t = spec.transforms(i);
    const std::string field = absl::StrCat(path, ".transforms[", i, "]");
    if (t.type() != "expression") {
      return absl::InvalidArgumentError(
          t.type().empty()
              ? absl::StrCat(field, ".type: required; only \"expression\"")
              : absl::StrCat(field, ".type: unknown transform type \"", t.type(),
                             "\"; only \"expression\""));
    }
    if (t.name().empty()) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".name: required"));
    }
    if (!names.insert(t.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".name: \"", t.name(), "\" is the name of an earlier transform"));
    }
    absl::StatusOr<Expression> e = Expression::Compile(t.expression());
    if (!e.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ".expression: ", e.status().message()));
    }
    if (t.name() == timestamp_column || t.name() == kTimeColumn) replaces_time = true;
    out.transforms_.push_back(Named{t.name(), *std::move(e)});
  }
  if (replaces_time) {
    // __time is the record's timestamp; with the timestamp column replaced
    // the record's timestamp is not read, so there is none to give.
    for (size_t i = 0; i < out.transforms_.size(); ++i) {
      if (out.transforms_[i].expression.reads_time()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ".transforms[", i,
            "].expression: reads __time, but a transform replaces the timestamp column \"",
            timestamp_column, "\""));
      }
    }
  }
  if (spec.has_filter()) {
    SLUICE_ASSIGN_OR_RETURN(DimFilterMatcher filter,
                            DimFilterMatcher::Create(spec.filter(), absl::StrCat(path, ".filter")));
    out.filter_ = std::move(filter);
  }
  return out;
}

}  // namespace segment
}  // namespace sluice
