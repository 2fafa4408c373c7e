#include "supervisor/iceberg/iceberg_rest_routes.h"

#include <glog/logging.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include <map>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace sluice::supervisor {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;
using metrics::HttpRequest;
using metrics::HttpResponse;

constexpr char kJson[] = "application/json";

HttpResponse Json(int status, const Struct& body) {
  HttpResponse response;
  response.status = status;
  response.content_type = kJson;
  if (!google::protobuf::util::MessageToJsonString(body, &response.body).ok()) {
    // Only a string that is not UTF-8 (a catalog row another writer made)
    // cannot be printed.
    response.status = 500;
    response.body =
        R"({"error":{"message":"the answer holds a string that is not UTF-8","type":)"
        R"("InternalServerError","code":500}})";
  }
  return response;
}

// The spec's ErrorModel: {"error": {"message", "type", "code"}}.
HttpResponse Error(int status, absl::string_view type, absl::string_view message) {
  Struct body;
  Struct* error = (*body.mutable_fields())["error"].mutable_struct_value();
  (*error->mutable_fields())["message"].set_string_value(std::string(message));
  (*error->mutable_fields())["type"].set_string_value(std::string(type));
  (*error->mutable_fields())["code"].set_number_value(status);
  return Json(status, body);
}

bool IsMissingNamespace(const absl::Status& status) {
  return absl::IsNotFound(status) &&
         absl::StartsWith(status.message(), "namespace does not exist");
}

// A catalog error as the spec's status and exception type.
HttpResponse FromStatus(const absl::Status& status, bool table_endpoint) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
      return Error(400, "BadRequestException", status.message());
    case absl::StatusCode::kNotFound:
      return Error(404,
                   table_endpoint && !IsMissingNamespace(status) ? "NoSuchTableException"
                                                                 : "NoSuchNamespaceException",
                   status.message());
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kAborted:
      return Error(503, "ServiceUnavailableException", status.message());
    default:
      LOG_EVERY_N(WARNING, 20) << "[iceberg-rest] " << status << " (one in 20 is logged)";
      return Error(500, "InternalServerError", status.message());
  }
}

Value StringList(const std::vector<std::string>& parts) {
  Value v;
  for (const std::string& part : parts) v.mutable_list_value()->add_values()->set_string_value(part);
  return v;
}

// The query's parameters, decoded; nullopt for a bad escape.
std::optional<std::map<std::string, std::string>> ParseQuery(absl::string_view query) {
  std::map<std::string, std::string> params;
  for (absl::string_view pair : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(pair, absl::MaxSplits('=', 1));
    std::optional<std::string> key = PercentDecode(kv.first, true);
    std::optional<std::string> value = PercentDecode(kv.second, true);
    if (!key.has_value() || !value.has_value()) return std::nullopt;
    params[*key] = *value;
  }
  return params;
}

}  // namespace

std::optional<std::string> PercentDecode(absl::string_view in, bool plus_is_space) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    const char c = in[i];
    if (c == '+' && plus_is_space) {
      out += ' ';
    } else if (c != '%') {
      out += c;
    } else {
      int value = 0;
      if (i + 2 >= in.size()) return std::nullopt;
      for (int k = 1; k <= 2; ++k) {
        const char h = in[i + k];
        int digit = h >= '0' && h <= '9'   ? h - '0'
                    : h >= 'a' && h <= 'f' ? h - 'a' + 10
                    : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                           : -1;
        if (digit < 0) return std::nullopt;
        value = value * 16 + digit;
      }
      out += static_cast<char>(value);
      i += 2;
    }
  }
  return out;
}

HttpResponse IcebergRestHandler::Refusal(int status, absl::string_view message) {
  return Error(status, status == 401 ? "NotAuthorizedException" : "ForbiddenException", message);
}

HttpResponse IcebergRestHandler::Handle(const HttpRequest& request) {
  const bool head = request.method == "HEAD";
  if (!head && request.method != "GET") {
    return Error(403, "ForbiddenException", kIcebergRestReadOnly);
  }
  absl::string_view path = request.path;
  if (!absl::ConsumePrefix(&path, "/iceberg/v1/")) {
    return Error(404, "NotFoundException",
                 "not an endpoint of this catalog: its URI is http://<host:port>/iceberg, "
                 "endpoints under /iceberg/v1/");
  }
  std::optional<std::map<std::string, std::string>> params = ParseQuery(request.query);
  if (!params.has_value()) return Error(400, "BadRequestException", "malformed query string");
  auto param = [&](const std::string& name) {
    auto it = params->find(name);
    return it == params->end() ? std::string() : it->second;
  };
  int page_size = 0;
  if (const std::string size = param("pageSize"); !size.empty()) {
    if (!absl::SimpleAtoi(size, &page_size) || page_size < 1) {
      return Error(400, "BadRequestException", "pageSize must be a positive integer");
    }
  }
  const std::string page_token = param("pageToken");  // checked by the catalog

  std::vector<std::string> segments;
  for (absl::string_view raw : absl::StrSplit(path, '/')) {
    std::optional<std::string> decoded = PercentDecode(raw, /*plus_is_space=*/false);
    if (!decoded.has_value()) {
      return Error(400, "BadRequestException", "malformed percent-encoding in the path");
    }
    segments.push_back(*std::move(decoded));
  }
  const size_t n = segments.size();

  if (n == 1 && segments[0] == "config") {
    const std::string warehouse = param("warehouse");
    if (!warehouse.empty() && warehouse != "sluice") {
      return Error(400, "BadRequestException",
                   "this catalog serves one warehouse, \"sluice\" (or leave warehouse unset)");
    }
    Struct body;
    (*body.mutable_fields())["defaults"].mutable_struct_value();
    (*body.mutable_fields())["overrides"].mutable_struct_value();
    return Json(200, body);
  }
  if (n >= 1 && segments[0] == "namespaces") {
    if (n == 1) {
      if (const std::string parent = param("parent"); !parent.empty()) {
        // No nested namespaces: an existing parent has no children.
        absl::StatusOr<std::map<std::string, std::string>> properties =
            catalog_.NamespaceProperties(parent);
        if (!properties.ok()) return FromStatus(properties.status(), false);
        Struct body;
        (*body.mutable_fields())["namespaces"].mutable_list_value();
        return Json(200, body);
      }
      absl::StatusOr<IcebergNamePage> page = catalog_.ListNamespaces(page_token, page_size);
      if (!page.ok()) return FromStatus(page.status(), false);
      Struct body;
      ListValue* list = (*body.mutable_fields())["namespaces"].mutable_list_value();
      for (const std::string& name : page->names) *list->add_values() = StringList({name});
      if (!page->next_page_token.empty()) {
        (*body.mutable_fields())["next-page-token"].set_string_value(page->next_page_token);
      }
      return Json(200, body);
    }
    const std::string& ns = segments[1];
    if (n == 2) {
      absl::StatusOr<std::map<std::string, std::string>> properties =
          catalog_.NamespaceProperties(ns);
      if (!properties.ok()) return FromStatus(properties.status(), false);
      if (head) {
        HttpResponse response;
        response.status = 204;
        return response;
      }
      Struct body;
      *(*body.mutable_fields())["namespace"].mutable_list_value() =
          StringList({ns}).list_value();
      Struct* props = (*body.mutable_fields())["properties"].mutable_struct_value();
      for (const auto& [key, value] : *properties) {
        (*props->mutable_fields())[key].set_string_value(value);
      }
      return Json(200, body);
    }
    if (n == 3 && segments[2] == "tables") {
      absl::StatusOr<IcebergNamePage> page = catalog_.ListTables(ns, page_token, page_size);
      if (!page.ok()) return FromStatus(page.status(), false);
      Struct body;
      ListValue* list = (*body.mutable_fields())["identifiers"].mutable_list_value();
      for (const std::string& name : page->names) {
        Struct* id = list->add_values()->mutable_struct_value();
        *(*id->mutable_fields())["namespace"].mutable_list_value() = StringList({ns}).list_value();
        (*id->mutable_fields())["name"].set_string_value(name);
      }
      if (!page->next_page_token.empty()) {
        (*body.mutable_fields())["next-page-token"].set_string_value(page->next_page_token);
      }
      return Json(200, body);
    }
    if (n == 4 && segments[2] == "tables") {
      const std::string& table = segments[3];
      if (head) {
        absl::Status exists = catalog_.TableExists(ns, table);
        if (!exists.ok()) return FromStatus(exists, true);
        HttpResponse response;
        response.status = 204;
        return response;
      }
      absl::StatusOr<IcebergLoadedTable> loaded = catalog_.LoadTable(ns, table);
      if (!loaded.ok()) return FromStatus(loaded.status(), true);
      // LoadTableResult. The metadata document goes in as stored (validated
      // JSON, not re-encoded: its 64-bit ids stay exact); the rest is built
      // as a Struct and the document spliced in as one more member.
      Struct body;
      (*body.mutable_fields())["metadata-location"].set_string_value(loaded->metadata_location);
      (*body.mutable_fields())["config"].mutable_struct_value();
      HttpResponse response = Json(200, body);
      response.body.pop_back();  // the closing '}'
      absl::StrAppend(&response.body, ",\"metadata\":", loaded->metadata_json, "}");
      return response;
    }
  }
  return Error(404, "NotFoundException",
               absl::StrCat("no such endpoint in this catalog: ", request.method, " ",
                            absl::CHexEscape(request.path.substr(0, 200))));
}

}  // namespace sluice::supervisor
