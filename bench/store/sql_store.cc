#include "bench/store/sql_store.h"

#include <algorithm>
#include <ctime>

#include "bench/store/schema.h"
#include "engine/core/error.h"
#include "engine/core/json_text.h"

namespace dlbench::store {
namespace {

using nlohmann::json;

// Rows per multi-row INSERT of telemetry samples: one statement instead of thousands of round
// trips to a PostgreSQL server, well under SQLite's limit of bound parameters.
constexpr std::size_t kSamplesPerInsert = 200;

constexpr const char* kRunColumns =
    "r.id, r.created_unix_s, r.status, r.error, r.framework, r.model, r.mode, r.precision,"
    " r.device, r.batch, r.input_size, r.throughput, r.config_json, r.result_json,"
    " r.suite_invocation, r.suite_name, r.suite_index, r.suite_key, m.id, m.fingerprint,"
    " m.hostname, m.description, m.environment_json, m.first_seen_unix_s";

json parse_json(const SqlValue& v) {
  json doc = json::parse(to_text(v), nullptr, /*allow_exceptions=*/false);
  return doc.is_discarded() ? json::object() : doc;
}

MachineRecord machine_from(const SqlRow& row, std::size_t at) {
  MachineRecord m;
  m.id = to_int(row[at]);
  m.fingerprint = to_text(row[at + 1]);
  m.hostname = to_text(row[at + 2]);
  m.description = to_text(row[at + 3]);
  m.environment = parse_json(row[at + 4]);
  m.first_seen_unix_s = to_int(row[at + 5]);
  return m;
}

RunRecord run_from(const SqlRow& row) {
  RunRecord r;
  r.id = to_int(row[0]);
  r.created_unix_s = to_int(row[1]);
  r.status = to_text(row[2]);
  r.error = to_text(row[3]);
  r.framework = to_text(row[4]);
  r.model = to_text(row[5]);
  r.mode = to_text(row[6]);
  r.precision = to_text(row[7]);
  r.device = to_text(row[8]);
  r.batch = to_int(row[9]);
  r.input_size = int(to_int(row[10]));
  r.throughput = to_real(row[11]);
  r.config = parse_json(row[12]);
  r.result = parse_json(row[13]);
  if (row[14])
    r.suite =
        SuiteLink{to_text(row[14]), to_text(row[15]), int(to_int(row[16], -1)), to_text(row[17])};
  r.machine = machine_from(row, 18);
  return r;
}

bool is_integer(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

class SqlStore : public Store {
 public:
  explicit SqlStore(std::unique_ptr<Connection> c) : c_(std::move(c)) { migrate(*c_); }

  std::string location() const override { return c_->location(); }

  std::int64_t save_run(const RunRecord& run) override {
    WriteTransaction tx(*c_);
    std::int64_t id = insert_run(run);
    tx.commit();
    return id;
  }

  ImportCounts import_runs(const std::vector<RunRecord>& runs, bool dry_run) override {
    // Oldest first, so the new ids keep the order the runs were made in (an export lists them
    // newest first).
    std::vector<const RunRecord*> order;
    for (const RunRecord& run : runs) order.push_back(&run);
    std::stable_sort(order.begin(), order.end(), [](const RunRecord* a, const RunRecord* b) {
      return a->created_unix_s != b->created_unix_s ? a->created_unix_s < b->created_unix_s
                                                    : a->id < b->id;
    });
    WriteTransaction tx(*c_);
    ImportCounts counts;
    for (const RunRecord* each : order) {
      const RunRecord& run = *each;
      // The identity of import.h's same_run, as a query.
      auto found = c_->query(
          "SELECT r.id FROM runs r JOIN machines m ON m.id = r.machine_id WHERE m.fingerprint = ?"
          " AND r.created_unix_s = ? AND r.framework = ? AND r.model = ? AND r.mode = ?"
          " AND r.precision = ? AND r.device = ? AND r.batch = ? AND r.input_size = ?",
          {run.machine.fingerprint, sql_int(run.created_unix_s), run.framework, run.model, run.mode,
           run.precision, run.device, sql_int(run.batch), sql_int(run.input_size)});
      if (!found.empty()) {
        ++counts.skipped;
        continue;
      }
      insert_run(run);  // also in a dry run, so a file holding a run twice counts it once
      ++counts.imported;
    }
    if (!dry_run) tx.commit();
    return counts;
  }

  std::vector<RunRecord> list_runs(const RunFilter& f) override {
    std::string sql = std::string("SELECT ") + kRunColumns +
                      " FROM runs r JOIN machines m ON m.id = r.machine_id WHERE 1 = 1";
    std::vector<SqlValue> params;
    if (!f.model.empty()) {
      sql += " AND r.model = ?";
      params.push_back(f.model);
    }
    if (!f.machine.empty()) {
      sql += " AND r.machine_id = ?";
      params.push_back(sql_int(find_machine(f.machine).id));
    }
    if (!f.suite_invocation.empty()) {
      sql += " AND r.suite_invocation = ?";
      params.push_back(f.suite_invocation);
    }
    if (!f.ids.empty()) {
      sql += " AND r.id IN (";
      for (std::size_t i = 0; i < f.ids.size(); ++i) {
        sql += i ? ", ?" : "?";
        params.push_back(sql_int(f.ids[i]));
      }
      sql += ")";
    }
    sql += " ORDER BY r.id DESC";
    if (f.last > 0) sql += " LIMIT " + std::to_string(f.last);
    std::vector<RunRecord> runs;
    for (const SqlRow& row : c_->query(sql, params)) {
      runs.push_back(run_from(row));
      load_metrics(runs.back());
    }
    return runs;
  }

  std::optional<RunRecord> get_run(std::int64_t id) override {
    RunFilter f;
    f.ids = {id};
    std::vector<RunRecord> runs = list_runs(f);
    if (runs.empty()) return std::nullopt;
    RunRecord& r = runs.front();
    for (const SqlRow& row : c_->query(
             "SELECT metric, label, unit, kind, samples, mean, min, max, p95, total, total_unit,"
             " reason FROM telemetry_summary WHERE run_id = ? ORDER BY metric",
             {sql_int(id)})) {
      r.telemetry.push_back({to_text(row[0]), to_text(row[1]), to_text(row[2]), to_text(row[3]),
                             to_int(row[4]), to_optional_real(row[5]), to_optional_real(row[6]),
                             to_optional_real(row[7]), to_optional_real(row[8]),
                             to_optional_real(row[9]), to_text(row[10]), to_text(row[11])});
    }
    for (const SqlRow& row :
         c_->query("SELECT metric, t_s, value FROM telemetry_samples WHERE run_id = ?"
                   " ORDER BY metric, t_s",
                   {sql_int(id)})) {
      std::string name = to_text(row[0]);
      if (r.samples.empty() || r.samples.back().name != name) {
        const TelemetryMetricRecord* t = r.find_telemetry(name);
        r.samples.push_back({name, t ? t->unit : "", {}, {}});
      }
      r.samples.back().t_s.push_back(to_real(row[1]));
      r.samples.back().values.push_back(to_real(row[2], std::numeric_limits<double>::quiet_NaN()));
    }
    return std::move(r);
  }

  bool delete_run(std::int64_t id) override {
    WriteTransaction tx(*c_);
    // Children first: SQLite enforces ON DELETE CASCADE only with foreign_keys on, which an
    // older database file may have been written without.
    for (const char* table : {"results", "telemetry_summary", "telemetry_samples"})
      c_->query(std::string("DELETE FROM ") + table + " WHERE run_id = ?", {sql_int(id)});
    auto rows = c_->query("DELETE FROM runs WHERE id = ? RETURNING id", {sql_int(id)});
    tx.commit();
    return !rows.empty();
  }

  std::vector<MachineRecord> machines() override {
    std::vector<MachineRecord> out;
    for (const SqlRow& row : c_->query(
             "SELECT id, fingerprint, hostname, description, environment_json, first_seen_unix_s"
             " FROM machines ORDER BY id",
             {}))
      out.push_back(machine_from(row, 0));
    return out;
  }

  MachineRecord find_machine(const std::string& text) override {
    std::vector<MachineRecord> matches;
    for (MachineRecord& m : machines()) {
      bool hit = (is_integer(text) && std::to_string(m.id) == text) || m.hostname == text ||
                 (text.size() >= 4 && m.fingerprint.rfind(text, 0) == 0);
      if (hit) matches.push_back(std::move(m));
    }
    if (matches.size() == 1) return matches.front();
    std::string candidates;
    for (const MachineRecord& m : matches)
      candidates += (candidates.empty() ? ": " : ", ") + std::to_string(m.id) + " " +
                    m.fingerprint.substr(0, 12) + " " + m.hostname;
    throw Error(ErrorKind::kUsage,
                matches.empty() ? "no machine '" + text + "' in " + location()
                                : "'" + text + "' names " + std::to_string(matches.size()) +
                                      " machines in " + location() + candidates,
                "name a machine by the id or fingerprint 'dlbench runs list' shows");
  }

  void save_suite(const SuiteRecord& s) override {
    WriteTransaction tx(*c_);
    c_->query(
        "INSERT INTO suites (invocation, name, file, started_unix_s, planned_runs)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (invocation) DO NOTHING",
        {s.invocation, s.name, s.file, sql_int(s.started_unix_s), sql_int(s.planned_runs)});
    tx.commit();
  }

  std::vector<SuiteRecord> suites(const std::string& name) override {
    std::string sql =
        "SELECT s.invocation, s.name, s.file, s.started_unix_s, s.planned_runs,"
        " (SELECT count(*) FROM runs r WHERE r.suite_invocation = s.invocation"
        " AND r.status = 'ok') FROM suites s";
    std::vector<SqlValue> params;
    if (!name.empty()) {
      sql += " WHERE s.name = ? OR s.invocation = ?";
      params = {name, name};
    }
    sql += " ORDER BY s.started_unix_s DESC, s.invocation DESC";
    std::vector<SuiteRecord> out;
    for (const SqlRow& row : c_->query(sql, params))
      out.push_back({to_text(row[0]), to_text(row[1]), to_text(row[2]), to_int(row[3]),
                     int(to_int(row[4])), int(to_int(row[5]))});
    return out;
  }

 private:
  // The run's rows, in the caller's transaction.
  std::int64_t insert_run(const RunRecord& run) {
    std::int64_t machine_id = save_machine(run.machine);
    std::int64_t created = run.created_unix_s ? run.created_unix_s : std::time(nullptr);
    const std::optional<SuiteLink>& s = run.suite;
    auto rows = c_->query(
        "INSERT INTO runs (machine_id, created_unix_s, status, error, framework, model, mode,"
        " precision, device, batch, input_size, throughput, config_json, result_json,"
        " suite_invocation, suite_name, suite_index, suite_key)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        {sql_int(machine_id), sql_int(created), run.status, run.error, run.framework, run.model,
         run.mode, run.precision, run.device, sql_int(run.batch), sql_int(run.input_size),
         sql_real(run.throughput).value_or("0"), dump_json(run.config), dump_json(run.result),
         s ? SqlValue(s->invocation) : std::nullopt, s ? SqlValue(s->name) : std::nullopt,
         s ? sql_int(s->index) : std::nullopt, s ? SqlValue(s->key) : std::nullopt});
    std::int64_t id = to_int(rows.at(0)[0]);
    for (const MetricRecord& m : run.metrics)
      c_->query(
          "INSERT INTO results (run_id, tag, value, unit, description) VALUES (?, ?, ?, ?, ?)",
          {sql_int(id), m.tag, sql_real(m.value), m.unit, m.description});
    for (const TelemetryMetricRecord& t : run.telemetry)
      c_->query(
          "INSERT INTO telemetry_summary (run_id, metric, label, unit, kind, samples, mean, min,"
          " max, p95, total, total_unit, reason) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          {sql_int(id), t.name, t.label, t.unit, t.kind, sql_int(t.samples), sql_real(t.mean),
           sql_real(t.min), sql_real(t.max), sql_real(t.p95), sql_real(t.total), t.total_unit,
           t.reason});
    save_samples(id, run.samples);
    return id;
  }

  std::int64_t save_machine(const MachineRecord& m) {
    // ON CONFLICT: two processes on a new machine at once; the second reuses the first's row.
    c_->query(
        "INSERT INTO machines (fingerprint, hostname, description, environment_json,"
        " first_seen_unix_s) VALUES (?, ?, ?, ?, ?) ON CONFLICT (fingerprint) DO NOTHING",
        {m.fingerprint, m.hostname, m.description, dump_json(m.environment),
         sql_int(std::time(nullptr))});
    auto rows = c_->query("SELECT id FROM machines WHERE fingerprint = ?", {m.fingerprint});
    return to_int(rows.at(0)[0]);
  }

  void save_samples(std::int64_t id, const std::vector<TelemetrySeries>& series) {
    std::vector<SqlValue> params;
    auto flush = [&] {
      if (params.empty()) return;
      std::string sql = "INSERT INTO telemetry_samples (run_id, metric, t_s, value) VALUES ";
      for (std::size_t i = 0; i < params.size() / 4; ++i)
        sql += i ? ", (?, ?, ?, ?)" : "(?, ?, ?, ?)";
      c_->query(sql, params);
      params.clear();
    };
    for (const TelemetrySeries& s : series) {
      for (std::size_t i = 0; i < s.t_s.size() && i < s.values.size(); ++i) {
        params.insert(params.end(),
                      {sql_int(id), s.name, sql_real(s.t_s[i]), sql_real(s.values[i])});
        if (params.size() / 4 == kSamplesPerInsert) flush();
      }
    }
    flush();
  }

  void load_metrics(RunRecord& r) {
    for (const SqlRow& row :
         c_->query("SELECT tag, value, unit, description FROM results WHERE run_id = ?"
                   " ORDER BY tag",
                   {sql_int(r.id)}))
      r.metrics.push_back({to_text(row[0]),
                           to_real(row[1], std::numeric_limits<double>::quiet_NaN()),
                           to_text(row[2]), to_text(row[3])});
  }

  std::unique_ptr<Connection> c_;
};

}  // namespace

std::unique_ptr<Store> make_sql_store(std::unique_ptr<Connection> connection) {
  return std::make_unique<SqlStore>(std::move(connection));
}

}  // namespace dlbench::store
