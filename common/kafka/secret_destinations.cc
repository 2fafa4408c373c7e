#include "common/kafka/secret_destinations.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/file_util.h"

namespace sluice::kafka {
namespace {

bool LooksLikeReference(absl::string_view value) {
  return (absl::StartsWith(value, "${env:") || absl::StartsWith(value, "${file:")) &&
         absl::EndsWith(value, "}") && value.size() > 7;
}

// `*` matches one or more characters other than '.' and ':'.
bool HostMatches(absl::string_view pattern, absl::string_view host) {
  if (pattern.empty()) return host.empty();
  if (pattern[0] != '*') {
    return !host.empty() && pattern[0] == host[0] &&
           HostMatches(pattern.substr(1), host.substr(1));
  }
  for (size_t taken = 1; taken <= host.size(); ++taken) {
    const char c = host[taken - 1];
    if (c == '.' || c == ':') break;
    if (HostMatches(pattern.substr(1), host.substr(taken))) return true;
  }
  return false;
}

// "host" and "port" of a normalized "host:port" / "[v6]:port".
void SplitServer(absl::string_view server, std::string* host, std::string* port) {
  const size_t colon = server.rfind(':');
  *host = std::string(server.substr(0, colon));
  *port = std::string(server.substr(colon + 1));
}

}  // namespace

absl::StatusOr<std::string> NormalizeServer(absl::string_view entry,
                                            absl::string_view default_port) {
  absl::string_view s = absl::StripAsciiWhitespace(entry);
  if (const size_t scheme = s.find("://"); scheme != absl::string_view::npos) {
    s = s.substr(scheme + 3);
  }
  absl::string_view host, port;
  if (absl::StartsWith(s, "[")) {
    const size_t close = s.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\": unclosed '['"));
    }
    host = s.substr(0, close + 1);
    absl::string_view rest = s.substr(close + 1);
    if (!rest.empty() && !absl::ConsumePrefix(&rest, ":")) {
      return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\": expected [v6]:port"));
    }
    port = rest;
  } else {
    const size_t colon = s.find(':');
    if (colon != absl::string_view::npos && s.find(':', colon + 1) != absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", entry, "\": an IPv6 address goes in brackets, [v6]:port"));
    }
    host = s.substr(0, colon);
    port = colon == absl::string_view::npos ? absl::string_view() : s.substr(colon + 1);
  }
  if (port.empty()) port = default_port;
  uint32_t number = 0;
  if (port.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\": needs a port (host:port)"));
  }
  if (!absl::SimpleAtoi(port, &number) || number == 0 || number > 65535 ||
      port.find_first_not_of("0123456789") != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\": bad port \"", port, "\""));
  }
  if (host.empty() || host.find_first_of(" \t/@,") != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat("\"", entry, "\": bad host"));
  }
  return absl::StrCat(absl::AsciiStrToLower(host), ":", number);
}

absl::StatusOr<std::vector<std::string>> ConnectionDestinations(const KafkaProperties& properties) {
  std::vector<std::string> out;
  auto add = [&out](std::string server) {
    if (std::find(out.begin(), out.end(), server) == out.end()) out.push_back(std::move(server));
  };
  for (const char* name : {"bootstrap.servers", "metadata.broker.list"}) {
    auto it = properties.find(name);
    if (it == properties.end()) continue;
    for (absl::string_view entry : absl::StrSplit(it->second, ',', absl::SkipWhitespace())) {
      absl::StatusOr<std::string> server = NormalizeServer(entry, "9092");
      if (!server.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("ioConfig.consumerProperties.\"", name,
                                                       "\": ", server.status().message()));
      }
      add(*std::move(server));
    }
  }
  if (auto it = properties.find("sasl.oauthbearer.token.endpoint.url"); it != properties.end()) {
    absl::string_view url = absl::StripAsciiWhitespace(it->second);
    const std::string lower = absl::AsciiStrToLower(url);
    absl::string_view default_port = absl::StartsWith(lower, "https://") ? "443"
                                      : absl::StartsWith(lower, "http://") ? "80"
                                                                           : "";
    if (default_port.empty()) {
      return absl::InvalidArgumentError(
          "ioConfig.consumerProperties.\"sasl.oauthbearer.token.endpoint.url\": not an http(s) "
          "URL");
    }
    url = url.substr(url.find("://") + 3);
    absl::string_view authority = url.substr(0, url.find_first_of("/?#"));
    if (const size_t at = authority.rfind('@'); at != absl::string_view::npos) {
      authority = authority.substr(at + 1);
    }
    absl::StatusOr<std::string> server = NormalizeServer(authority, default_port);
    if (!server.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ioConfig.consumerProperties.\"sasl.oauthbearer.token.endpoint.url\": ",
                       server.status().message()));
    }
    add(*std::move(server));
  }
  return out;
}

absl::StatusOr<SecretDestinations> SecretDestinations::Load(const std::string& path) {
  absl::StatusOr<std::string> contents = ReadFile(path);
  if (!contents.ok()) {
    return absl::Status(contents.status().code(),
                        absl::StrCat("cannot read ", path, ": ", contents.status().message()));
  }
  return Parse(*contents, path);
}

absl::StatusOr<SecretDestinations> SecretDestinations::Parse(absl::string_view contents,
                                                             absl::string_view origin) {
  SecretDestinations out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(contents, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line[0] == '#') continue;
    auto bad = [&](absl::string_view why) {
      return absl::InvalidArgumentError(absl::StrCat(origin, ":", line_number, ": ", why));
    };
    const size_t space = line.find_first_of(" \t");
    if (space == absl::string_view::npos) {
      return bad("expected a secret reference, then the servers it may be sent to");
    }
    const absl::string_view reference = line.substr(0, space);
    if (!LooksLikeReference(reference)) {
      return bad(absl::StrCat("\"", reference, "\" is not ${env:NAME} or ${file:PATH}"));
    }
    if (out.servers_by_reference_.count(reference)) {
      return bad(absl::StrCat(reference, " is listed twice"));
    }
    std::vector<Server> servers;
    for (absl::string_view entry :
         absl::StrSplit(line.substr(space), absl::ByAnyChar(", \t"), absl::SkipEmpty())) {
      absl::StatusOr<std::string> server = NormalizeServer(entry, "");
      if (!server.ok()) return bad(server.status().message());
      Server s;
      SplitServer(*server, &s.host_pattern, &s.port);
      s.written = std::string(entry);
      servers.push_back(std::move(s));
    }
    if (servers.empty()) return bad(absl::StrCat(reference, " names no server"));
    out.servers_by_reference_.emplace(std::string(reference), std::move(servers));
  }
  return out;
}

bool SecretDestinations::Declares(absl::string_view reference) const {
  return servers_by_reference_.find(reference) != servers_by_reference_.end();
}

bool SecretDestinations::Allows(absl::string_view reference, absl::string_view server) const {
  auto it = servers_by_reference_.find(reference);
  if (it == servers_by_reference_.end()) return false;
  std::string host, port;
  SplitServer(server, &host, &port);
  host = absl::AsciiStrToLower(host);
  for (const Server& allowed : it->second) {
    if (allowed.port == port && HostMatches(allowed.host_pattern, host)) return true;
  }
  return false;
}

std::vector<std::string> SecretDestinations::ServersOf(absl::string_view reference) const {
  std::vector<std::string> out;
  auto it = servers_by_reference_.find(reference);
  if (it == servers_by_reference_.end()) return out;
  for (const Server& s : it->second) out.push_back(s.written);
  return out;
}

}  // namespace sluice::kafka
