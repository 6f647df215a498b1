// A database connection reduced to what the store needs: parameterized statements returning
// rows of text, and write transactions. SQL is written once with `?` placeholders; the
// PostgreSQL connection numbers them ($1, $2, ...). Every value travels as text or NULL, which
// both databases convert by the column's type.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace dlbench::store {

using SqlValue = std::optional<std::string>;  // nullopt is SQL NULL
using SqlRow = std::vector<SqlValue>;

enum class Dialect { kSqlite, kPostgres };

class Connection {
 public:
  virtual ~Connection() = default;
  virtual Dialect dialect() const = 0;
  virtual std::string location() const = 0;
  // Runs one statement; throws dlbench::Error (resource for I/O, locks, a damaged file;
  // internal for a bad statement).
  virtual std::vector<SqlRow> query(const std::string& sql,
                                    const std::vector<SqlValue>& params = {}) = 0;
  // SQLite takes the write lock at BEGIN (IMMEDIATE), so two writers queue on the busy
  // timeout instead of failing when one upgrades a read lock.
  virtual void begin_write() = 0;
  virtual void commit() = 0;
  virtual void rollback() noexcept = 0;
};

// Rolls back unless committed: an exception in the middle of a save leaves no partial run.
class WriteTransaction {
 public:
  explicit WriteTransaction(Connection& c) : connection_(c) { connection_.begin_write(); }
  ~WriteTransaction() {
    if (!done_) connection_.rollback();
  }
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  void commit() {
    connection_.commit();
    done_ = true;
  }

 private:
  Connection& connection_;
  bool done_ = false;
};

SqlValue sql_int(long long v);
SqlValue sql_real(double v);  // NULL when not finite
SqlValue sql_real(const std::optional<double>& v);
SqlValue sql_text(const std::string& v);
long long to_int(const SqlValue& v, long long fallback = 0);
double to_real(const SqlValue& v, double fallback = 0);
std::optional<double> to_optional_real(const SqlValue& v);
std::string to_text(const SqlValue& v);

}  // namespace dlbench::store
