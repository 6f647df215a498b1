#include "bench/store/postgres_connection.h"

#include <libpq-fe.h>

#include "bench/store/postgres_location.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::store {
namespace {

std::string first_line(const char* text) {
  std::string s = text ? text : "";
  std::size_t end = s.find('\n');
  return end == std::string::npos ? s : s.substr(0, end);
}

// `?` -> $1, $2, ...; our statements never hold a `?` inside a string literal.
std::string number_placeholders(const std::string& sql) {
  std::string out;
  int n = 0;
  for (char c : sql) {
    if (c != '?') {
      out.push_back(c);
      continue;
    }
    out.push_back('$');
    out.append(std::to_string(++n));
  }
  return out;
}

void ignore_notice(void*, const char*) {}

class PostgresConnection : public Connection {
 public:
  // `display` is the location without its password (postgres_location.h).
  PostgresConnection(PGconn* pg, std::string display) : pg_(pg), display_(std::move(display)) {}
  ~PostgresConnection() override { PQfinish(pg_); }

  Dialect dialect() const override { return Dialect::kPostgres; }
  std::string location() const override { return "PostgreSQL " + display_; }

  std::vector<SqlRow> query(const std::string& sql, const std::vector<SqlValue>& params) override {
    // The server refuses text that is not UTF-8 (a suite named after a Latin-1 file, say) and
    // would fail the whole save; such bytes become U+FFFD, as in every JSON output.
    // (Assigned in a loop: GCC 13 warns falsely about `p ? SqlValue(...) : nullopt`.)
    std::vector<SqlValue> texts(params.size());
    for (size_t i = 0; i < params.size(); ++i)
      if (params[i]) texts[i] = valid_utf8(*params[i]);
    std::vector<const char*> values;
    for (const SqlValue& p : texts) values.push_back(p ? p->c_str() : nullptr);
    PGresult* res = PQexecParams(pg_, number_placeholders(sql).c_str(), int(values.size()), nullptr,
                                 values.data(), nullptr, nullptr, 0);
    ExecStatusType status = PQresultStatus(res);
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      const char* state = PQresultErrorField(res, PG_DIAG_SQLSTATE);
      std::string code = state ? state : "";
      std::string message = first_line(PQresultErrorMessage(res));
      PQclear(res);
      // Classes 08 (connection), 53 (resources), 57 (operator intervention) are the server's
      // or the network's problem; 42 and the rest are a wrong statement: ours.
      std::string cls = code.substr(0, 2);
      if (code.empty() || cls == "08" || cls == "53" || cls == "57" || cls == "28")
        throw Error(ErrorKind::kResource, "PostgreSQL " + display_ + ": " + message,
                    "check that the server is up and reachable");
      if (cls == "42" && code == "42501")
        throw Error(ErrorKind::kResource, "PostgreSQL " + display_ + ": " + message,
                    "grant the user rights on the database");
      throw Error(ErrorKind::kInternal, "PostgreSQL: " + message + " in: " + sql.substr(0, 80),
                  "this is a dlbench bug; please report it");
    }
    std::vector<SqlRow> rows(PQntuples(res));
    for (int r = 0; r < int(rows.size()); ++r) {
      rows[r].resize(PQnfields(res));
      for (int c = 0; c < int(rows[r].size()); ++c)
        if (!PQgetisnull(res, r, c)) rows[r][c] = std::string(PQgetvalue(res, r, c));
    }
    PQclear(res);
    return rows;
  }

  void begin_write() override { query("BEGIN", {}); }
  void commit() override { query("COMMIT", {}); }
  void rollback() noexcept override {
    if (PQtransactionStatus(pg_) != PQTRANS_IDLE) PQclear(PQexec(pg_, "ROLLBACK"));
  }

 private:
  PGconn* pg_;
  std::string display_;
};

}  // namespace

std::unique_ptr<Connection> open_postgres(const std::string& location) {
  PostgresLocation parsed = parse_postgres_location(location);
  if (!parsed.parsed) {
    std::string shown = parsed.display == kUnparsablePostgresLocation ? "" : " " + parsed.display;
    throw Error(ErrorKind::kUsage,
                "malformed PostgreSQL connection string" + shown + ": " + parsed.problem,
                "write it as postgresql://USER[:PASSWORD]@HOST[:PORT]/DATABASE (percent-encode "
                "@ / ? as %40 %2F %3F) or as key=value pairs: host=HOST dbname=DATABASE");
  }
  PGconn* pg = PQconnectdb(location.c_str());
  if (PQstatus(pg) != CONNECTION_OK) {
    std::string message = without_secrets(first_line(PQerrorMessage(pg)), parsed.secrets);
    PQfinish(pg);
    throw Error(ErrorKind::kResource,
                "cannot connect to PostgreSQL " + parsed.display + ": " + message,
                "check that the server is up, the database exists and the login is right");
  }
  // dlbench's text is UTF-8 whatever PGCLIENTENCODING or the server's default says; another
  // client encoding would make the server convert (or refuse) every name and JSON document.
  if (PQsetClientEncoding(pg, "UTF8") != 0) {
    std::string message = without_secrets(first_line(PQerrorMessage(pg)), parsed.secrets);
    PQfinish(pg);
    throw Error(ErrorKind::kResource,
                "cannot use UTF-8 with PostgreSQL " + parsed.display + ": " + message,
                "use a server whose database encoding can hold UTF-8 text (UTF8 or SQL_ASCII)");
  }
  PQsetNoticeProcessor(pg, ignore_notice, nullptr);
  return std::make_unique<PostgresConnection>(pg, parsed.display);
}

}  // namespace dlbench::store
