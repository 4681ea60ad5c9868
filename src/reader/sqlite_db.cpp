#include "detail/sqlite_db.hpp"

#include <cctype>
#include <filesystem>
#include <utility>

#include <fmt/format.h>
#include <sqlite3.h>

#include "detail/excerpt.hpp"
#include "perflow/reader/profile_error.hpp"

namespace perflow::reader::detail {

namespace {

// An SQL identifier (mark '"') or string literal (mark '\'').
std::string quote(std::string_view name, char mark) {
  std::string out(1, mark);
  for (const char c : name) {
    out += c;
    if (c == mark) out += mark;
  }
  return out + mark;
}

// "file:<path, percent-encoded>?immutable=1" (RFC 3986 unreserved bytes and '/' kept).
std::string immutable_uri(const std::filesystem::path& path) {
  const std::string absolute = std::filesystem::absolute(path).string();
  std::string uri = "file:";
  for (const char c : absolute) {
    const auto byte = static_cast<unsigned char>(c);
    if (std::isalnum(byte) != 0 || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      uri += c;
    } else {
      uri += fmt::format("%{:02X}", byte);
    }
  }
  return uri + "?immutable=1";
}

}  // namespace

bool has_sqlite_magic(std::string_view head) {
  return head.substr(0, 16) == std::string_view("SQLite format 3\0", 16);
}

SqliteDb::SqliteDb(const std::filesystem::path& path)
    : file_(path.string()), db_(nullptr, &sqlite3_close) {
  sqlite3* db = nullptr;
  // immutable=1: a profile is read, never locked or journalled, so no -wal/-shm/-journal file
  // appears beside it and a read-only directory (or file system) is no obstacle.
  const int code =
      sqlite3_open_v2(immutable_uri(path).c_str(), &db,
                      SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, nullptr);
  db_.reset(db);  // closed even when opening failed
  if (code != SQLITE_OK) {
    throw ProfileError(file_, "",
                       fmt::format("expected an SQLite database, found none ({})",
                                   db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(code)));
  }
  // Profiles are tables of data; a view runs whatever query the file holds (an endless
  // recursive one hangs the reader), so views are never run, and columns() names them.
  sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_VIEW, 0, nullptr);
}

void SqliteDb::fail(std::string_view table, int code) const {
  const std::string reason = sqlite3_errmsg(db_.get());
  if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
    throw ProfileError(
        file_, "", fmt::format("expected an SQLite database, found a damaged file ({})", reason));
  }
  throw ProfileError(file_, table.empty() ? std::string() : fmt::format("table {}", table),
                     fmt::format("expected readable rows, found an SQLite error ({})", reason));
}

SqliteStatement SqliteDb::prepare(std::string_view sql, std::string_view table) const {
  sqlite3_stmt* stmt = nullptr;
  const int code =
      sqlite3_prepare_v2(db_.get(), sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
  if (code != SQLITE_OK) {
    sqlite3_finalize(stmt);
    fail(table, code);
  }
  return SqliteStatement(*this, stmt, std::string(table));
}

std::vector<std::string> SqliteDb::tables() const {
  SqliteStatement query =
      prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", "");
  std::vector<std::string> names;
  while (query.step()) names.emplace_back(query.text(0));
  return names;
}

std::vector<std::string> SqliteDb::columns(std::string_view table) const {
  SqliteStatement view =
      prepare("SELECT 1 FROM sqlite_master WHERE type = 'view' AND name = " + quote(table, '\'') +
                  " COLLATE NOCASE",
              table);
  if (view.step()) {
    throw ProfileError(file_, fmt::format("table {}", table), "expected a table, found a view");
  }
  SqliteStatement query = prepare("PRAGMA table_info(" + quote(table, '"') + ")", table);
  std::vector<std::string> names;
  while (query.step()) names.emplace_back(query.text(1));
  return names;
}

SqliteStatement::SqliteStatement(const SqliteDb& db, sqlite3_stmt* stmt, std::string table)
    : db_(&db), stmt_(stmt, &sqlite3_finalize), table_(std::move(table)) {}

bool SqliteStatement::step() {
  const int code = sqlite3_step(stmt_.get());
  if (code == SQLITE_ROW) {
    ++row_;
    return true;
  }
  if (code == SQLITE_DONE) return false;
  db_->fail(table_, code);
}

bool SqliteStatement::is_null(int column) const {
  return sqlite3_column_type(stmt_.get(), column) == SQLITE_NULL;
}

void SqliteStatement::type_error(int column, std::string_view expected) const {
  sqlite3_stmt* stmt = stmt_.get();
  std::string found;
  switch (sqlite3_column_type(stmt, column)) {
    case SQLITE_NULL:
      found = "NULL";
      break;
    case SQLITE_FLOAT:
      found = fmt::format("the real number {}", sqlite3_column_double(stmt, column));
      break;
    case SQLITE_BLOB:
      found = "a blob";
      break;
    default:
      found = fmt::format("text '{}'", excerpt(text(column)));
  }
  throw ProfileError(db_->file(), fmt::format("table {}", table_),
                     fmt::format("row {}: column {}: expected {}, found {}", row_,
                                 sqlite3_column_name(stmt, column), expected, found));
}

std::int64_t SqliteStatement::integer(int column) const {
  if (sqlite3_column_type(stmt_.get(), column) != SQLITE_INTEGER) type_error(column, "an integer");
  return sqlite3_column_int64(stmt_.get(), column);
}

std::optional<std::int64_t> SqliteStatement::optional_integer(int column) const {
  if (is_null(column)) return std::nullopt;
  return integer(column);
}

std::string_view SqliteStatement::text(int column) const {
  const auto* bytes = sqlite3_column_text(stmt_.get(), column);
  if (bytes == nullptr) return {};
  return {reinterpret_cast<const char*>(bytes),
          static_cast<std::size_t>(sqlite3_column_bytes(stmt_.get(), column))};
}

}  // namespace perflow::reader::detail
