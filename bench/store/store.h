// The results database behind one interface. Two backends share one schema (schema.cc) and
// one implementation of the queries (sql_store.cc): SQLite, the embedded default, and
// PostgreSQL for teams. A run is written in one transaction, so a killed run leaves nothing.
//
//   auto store = store::open_store(store::default_location());
//   std::int64_t id = store->save_run(record);
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/store/records.h"

namespace dlbench::store {

class Store {
 public:
  virtual ~Store() = default;

  // "SQLite /home/me/.local/share/dlbench/results.db", "PostgreSQL postgresql://me@host/db":
  // never a password (postgres_location.h).
  virtual std::string location() const = 0;

  // Writes the run, its machine (once per fingerprint), metrics and telemetry in one
  // transaction and returns the run's id.
  virtual std::int64_t save_run(const RunRecord& run) = 0;
  // Stores the runs that are not stored yet (import.h: a run's identity), each with its own
  // machine, all in one transaction: an error stores none. dry_run: counts, stores nothing.
  virtual ImportCounts import_runs(const std::vector<RunRecord>& runs, bool dry_run) = 0;
  // Newest first, with metrics but without telemetry.
  virtual std::vector<RunRecord> list_runs(const RunFilter& filter) = 0;
  // Everything, telemetry samples included; nullopt when there is no such run.
  virtual std::optional<RunRecord> get_run(std::int64_t id) = 0;
  // false when there was no such run.
  virtual bool delete_run(std::int64_t id) = 0;

  virtual std::vector<MachineRecord> machines() = 0;
  // The machine a --machine value names (id, hostname or fingerprint prefix); Error (usage)
  // when it names none or several.
  virtual MachineRecord find_machine(const std::string& text) = 0;

  virtual void save_suite(const SuiteRecord& suite) = 0;
  // Newest first; `name` empty: every suite; otherwise invocations of that suite name or id.
  virtual std::vector<SuiteRecord> suites(const std::string& name = {}) = 0;
};

// Where the database lives without --db: $XDG_DATA_HOME/dlbench/results.db, else
// ~/.local/share/dlbench/results.db.
std::string default_location();

// Opens (creating and migrating when needed) the database at `location`: a path for SQLite,
// or a PostgreSQL URI (postgresql://, postgres://) or key=value connection string
// (postgres_location.h). Throws dlbench::Error: usage for a malformed or unknown URL, resource
// for a missing folder, an unreadable file, a file that is not a dlbench database (left as it
// was), a server that cannot be reached or a schema newer than this dlbench knows. No message
// holds a password.
std::unique_ptr<Store> open_store(const std::string& location);

}  // namespace dlbench::store
