#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace perflow::reader::detail {

class SqliteStatement;

/// A profile database opened read-only. Every failure is a ProfileError naming the file and
/// the table being read; a file that is not a database (or is damaged) says so.
class SqliteDb {
 public:
  explicit SqliteDb(const std::filesystem::path& path);

  /// The names of the tables, or throws if the file is not a database. Views are not listed,
  /// and never run: a profile's view could run any query, endless ones included.
  [[nodiscard]] std::vector<std::string> tables() const;
  /// The table's columns in order (PRAGMA table_info); empty if there is no such table; throws
  /// "file:table T: expected a table, found a view" for a view.
  [[nodiscard]] std::vector<std::string> columns(std::string_view table) const;
  /// Prepares `sql`, which reads `table` (named in errors).
  [[nodiscard]] SqliteStatement prepare(std::string_view sql, std::string_view table) const;
  [[nodiscard]] const std::string& file() const { return file_; }

 private:
  friend class SqliteStatement;
  [[noreturn]] void fail(std::string_view table, int code) const;

  std::string file_;
  std::unique_ptr<sqlite3, int (*)(sqlite3*)> db_;
};

/// One query's rows. Column accessors check the SQLite type and throw
/// "file:table T: row N: column C: expected an integer, found text 'x'".
class SqliteStatement {
 public:
  SqliteStatement(const SqliteDb& db, sqlite3_stmt* stmt, std::string table);

  /// Steps to the next row; false when there is none.
  bool step();
  [[nodiscard]] bool is_null(int column) const;
  [[nodiscard]] std::int64_t integer(int column) const;
  [[nodiscard]] std::optional<std::int64_t> optional_integer(int column) const;
  /// The text of the column; empty for NULL.
  [[nodiscard]] std::string_view text(int column) const;
  [[nodiscard]] std::size_t row() const { return row_; }

 private:
  const SqliteDb* db_;
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt_;
  std::string table_;
  std::size_t row_ = 0;

  [[noreturn]] void type_error(int column, std::string_view expected) const;
};

/// True if the text starts with SQLite's file magic ("SQLite format 3" and a NUL).
bool has_sqlite_magic(std::string_view head);

}  // namespace perflow::reader::detail
