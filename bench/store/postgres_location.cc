#include "bench/store/postgres_location.h"

#include <libpq-fe.h>

#include <cctype>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

namespace dlbench::store {
namespace {

constexpr const char* kUriPrefixes[] = {"postgresql://", "postgres://"};

std::string uri_prefix(const std::string& location) {
  for (const char* prefix : kUriPrefixes)
    if (location.rfind(prefix, 0) == 0) return prefix;
  return {};
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// libpq ends a URI's credentials at the first '@' (or at the first '/' when none comes before),
// so a password holding an unencoded '@' or '/' spills into the host, port or database name,
// where the display form would show it. Such a URI is refused instead of parsed.
bool credentials_are_ambiguous(const std::string& location) {
  std::string prefix = uri_prefix(location);
  if (prefix.empty()) return false;
  std::string authority_and_path = location.substr(prefix.size());
  authority_and_path = authority_and_path.substr(0, authority_and_path.find('?'));
  std::size_t at = authority_and_path.find('@');
  if (at == std::string::npos) return false;
  return authority_and_path.find('@', at + 1) != std::string::npos ||
         authority_and_path.find('/') < at;
}

// What can be shown of a URI libpq did not parse: the scheme, and what follows the last '@'
// when it looks like a host (and database). Credentials run up to that '@'; a '?' before it
// leaves no telling whether the '@' belongs to a password or to a query value.
std::string safe_form(const std::string& location) {
  std::string prefix = uri_prefix(location);
  if (prefix.empty()) return kUnparsablePostgresLocation;
  std::string rest = location.substr(prefix.size());
  std::size_t at = rest.rfind('@');
  if (at != std::string::npos) {
    if (rest.find('?') < at) return kUnparsablePostgresLocation;
    rest = rest.substr(at + 1);
  }
  rest = rest.substr(0, rest.find('?'));
  for (char c : rest)
    if (!is_word_char(c) && std::strchr(".-:[]/%,", c) == nullptr)
      return kUnparsablePostgresLocation;
  return prefix + rest;
}

// Percent-encodes all but the unreserved characters and `keep`, so the display form of a URI
// reads as one.
std::string percent_encoded(const std::string& value, const char* keep = "") {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || std::strchr("-._~", c) != nullptr ||
        (c != '\0' && std::strchr(keep, c) != nullptr)) {
      out.push_back(char(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// libpq's key=value quoting: single quotes, with \ before ' and \.
std::string conninfo_value(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value)
    plain &= !std::isspace(static_cast<unsigned char>(c)) && c != '\'' && c != '\\';
  if (plain) return value;
  std::string out = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "'";
}

using Setting = std::pair<std::string, std::string>;  // keyword, value

std::string as_uri(const std::string& prefix, std::vector<Setting> settings) {
  std::string user, host, port, dbname;
  std::vector<Setting> query;
  for (Setting& s : settings) {
    if (s.first == "user")
      user = s.second;
    else if (s.first == "host")
      host = s.second;
    else if (s.first == "port")
      port = s.second;
    else if (s.first == "dbname")
      dbname = s.second;
    else
      query.push_back(std::move(s));
  }
  // One host name or address goes in the authority; several hosts, a socket folder or anything
  // unusual go in the query, where libpq reads them as well.
  bool simple_host = !host.empty();
  for (char c : host) simple_host &= is_word_char(c) || c == '.' || c == '-' || c == ':';
  bool simple_port = simple_host && !port.empty();
  for (char c : port) simple_port &= std::isdigit(static_cast<unsigned char>(c)) != 0;
  if (!port.empty() && !simple_port) query.insert(query.begin(), {"port", port});
  if (!host.empty() && !simple_host) query.insert(query.begin(), {"host", host});
  std::string out = prefix;
  if (!user.empty()) out += percent_encoded(user) + "@";
  if (simple_host) out += host.find(':') != std::string::npos ? "[" + host + "]" : host;
  if (simple_port) out += ":" + port;
  if (!dbname.empty()) out += "/" + percent_encoded(dbname);
  for (std::size_t i = 0; i < query.size(); ++i)
    out += (i ? "&" : "?") + query[i].first + "=" + percent_encoded(query[i].second, "/,:@");
  return out;
}

std::string as_conninfo(const std::vector<Setting>& settings) {
  std::string out;
  for (const Setting& s : settings)
    out += (out.empty() ? "" : " ") + s.first + "=" + conninfo_value(s.second);
  return out;
}

std::string first_line(const char* text) {
  std::string s = text ? text : "";
  return s.substr(0, s.find('\n'));
}

const std::set<std::string>& option_names() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    char* error = nullptr;
    PQconninfoOption* options = PQconninfoParse("", &error);
    PQfreemem(error);
    for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o)
      out.insert(o->keyword);
    PQconninfoFree(options);
    return out;
  }();
  return names;
}

}  // namespace

bool is_postgres_location(const std::string& location) {
  if (!uri_prefix(location).empty()) return true;
  std::size_t i = location.find_first_not_of(" \t\n");
  if (i == std::string::npos || !is_word_char(location[i])) return false;
  while (i < location.size() && is_word_char(location[i])) ++i;
  i = location.find_first_not_of(" \t\n", i);
  return i != std::string::npos && location[i] == '=';
}

bool is_other_url(const std::string& location) {
  if (location.empty() || !std::isalpha(static_cast<unsigned char>(location[0]))) return false;
  std::size_t i = 1;
  while (i < location.size() && (std::isalnum(static_cast<unsigned char>(location[i])) ||
                                 std::strchr("+.-", location[i]) != nullptr))
    ++i;
  return location.compare(i, 2, ":/") == 0 && uri_prefix(location).empty();
}

PostgresLocation parse_postgres_location(const std::string& location) {
  PostgresLocation out;
  if (credentials_are_ambiguous(location)) {
    out.display = safe_form(location);
    out.problem = "the user name or password holds an unencoded '@' or '/'";
    return out;
  }
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(location.c_str(), &error);
  if (options == nullptr) {
    out.display = safe_form(location);
    out.problem = scrub_libpq_message(first_line(error));
    PQfreemem(error);
    return out;
  }
  std::vector<Setting> settings;
  for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    bool secret = o->dispchar != nullptr && std::strchr(o->dispchar, '*') != nullptr;
    if (o->val == nullptr) continue;
    if (secret)
      out.secrets.emplace_back(o->val);
    else
      settings.emplace_back(o->keyword, o->val);
  }
  PQconninfoFree(options);
  std::string prefix = uri_prefix(location);
  out.parsed = true;
  out.display = prefix.empty() ? as_conninfo(settings) : as_uri(prefix, std::move(settings));
  return out;
}

std::string display_postgres_location(const std::string& location) {
  return parse_postgres_location(location).display;
}

std::string scrub_libpq_message(const std::string& message) {
  static const std::set<std::string> kPunctuation = {"]", "=", ":", "/"};
  std::string out;
  std::size_t i = 0;
  while (i < message.size()) {
    std::size_t open = message.find('"', i);
    if (open == std::string::npos) {
      out += message.substr(i);
      break;
    }
    out += message.substr(i, open + 1 - i);
    std::size_t close = message.find('"', open + 1);
    std::string quoted =
        message.substr(open + 1, close == std::string::npos ? std::string::npos : close - open - 1);
    bool harmless = option_names().count(quoted) || kPunctuation.count(quoted);
    out += harmless ? quoted : "...";
    if (close == std::string::npos) break;
    out += '"';
    i = close + 1;
  }
  return out;
}

std::string without_secrets(std::string message, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (std::size_t at = message.find(secret); at != std::string::npos;
         at = message.find(secret, at + 3))
      message.replace(at, secret.size(), "***");
  }
  return message;
}

}  // namespace dlbench::store
