// A PostgreSQL --db as the user wrote it, and as dlbench shows it. libpq's own parser
// (PQconninfoParse) reads every form libpq accepts: a URI
// (postgresql://USER:PASSWORD@HOST:PORT/DB?password=...&sslmode=...) or a key=value string
// (host=/tmp dbname=results password=...). The display form keeps every option but those libpq
// marks as secret (dispchar "*": password, sslpassword), and it is the only form any message,
// stored field, terminal line or report shows. A string libpq cannot parse is never echoed:
// its display form is the scheme and the host when they can be told apart from the
// credentials, else a placeholder.
//
//   display_postgres_location("postgresql://me:secret@db.example/results?password=x")
//     == "postgresql://me@db.example/results"
//   display_postgres_location("host=/tmp dbname=results password=secret")
//     == "host=/tmp dbname=results"
#pragma once

#include <string>
#include <vector>

namespace dlbench::store {

// postgresql:// and postgres:// URIs, and key=value connection strings (a first word followed
// by '=': `host=/tmp dbname=x`); anything else is an SQLite file path. A file whose name starts
// like `word=` is written with a folder: `./word=...`.
bool is_postgres_location(const std::string& location);

// A location of the form SCHEME:/... that is not a PostgreSQL URI (`mysql://...`,
// `postgresql:/host/db`): a mistyped URL rather than a file path, refused without echoing it.
bool is_other_url(const std::string& location);

// The display form of a string whose host cannot be told apart from its credentials.
constexpr const char* kUnparsablePostgresLocation = "<unparsable PostgreSQL connection string>";

struct PostgresLocation {
  bool parsed = false;  // libpq parsed it and its credentials are unambiguous
  std::string display;  // never holds a password
  std::string problem;  // why it did not parse (libpq's words, scrubbed); empty when parsed
  std::vector<std::string> secrets;  // the values display leaves out, to scrub from messages
};

// For a location that is_postgres_location.
PostgresLocation parse_postgres_location(const std::string& location);

// parse_postgres_location(location).display
std::string display_postgres_location(const std::string& location);

// libpq's parse errors quote the whole URI or a token of it, which may hold the password: every
// quoted fragment that is not a connection option's name or a single punctuation character
// becomes "...".
std::string scrub_libpq_message(const std::string& message);

// `message` with every occurrence of a non-empty secret replaced by "***". libpq's connection
// errors name the host, port, user and database but no password; this makes sure of it.
std::string without_secrets(std::string message, const std::vector<std::string>& secrets);

}  // namespace dlbench::store
