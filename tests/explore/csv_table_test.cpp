#include "perflow/explore/csv_table.hpp"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "perflow/core/error.hpp"

namespace perflow::explore {
namespace {

std::filesystem::path write(const std::string& name, const std::string& text) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(CsvTable, ReadsQuotedFieldsWithCommasQuotesAndLineBreaks) {
  const auto path = write("perflow_csv_quoted.csv",
                          "run,note,x\r\n0,\"a, \"\"b\"\"\",1\n1,\"two\nlines\",\n2,,3");
  const CsvTable table = read_csv_table(path);
  EXPECT_EQ(table.columns, (std::vector<std::string>{"run", "note", "x"}));
  ASSERT_EQ(table.rows.size(), 3u);
  EXPECT_EQ(table.rows[0], (std::vector<std::string>{"0", "a, \"b\"", "1"}));
  EXPECT_EQ(table.rows[1], (std::vector<std::string>{"1", "two\nlines", ""}));
  EXPECT_EQ(table.rows[2], (std::vector<std::string>{"2", "", "3"}));
  EXPECT_EQ(table.column("x"), 2u);
  EXPECT_EQ(table.column("y"), std::nullopt);
  std::filesystem::remove(path);
}

TEST(CsvTable, ARowOfAnotherWidthIsNamedByItsLine) {
  const auto path = write("perflow_csv_width.csv", "a,b\n1,\"x\ny\"\n1,2,3\n");
  try {
    read_csv_table(path);
    FAIL() << "expected a FormatError";
  } catch (const FormatError& e) {
    EXPECT_EQ(e.line(), 4u);  // the quoted line break counts
    EXPECT_NE(std::string(e.what()).find("expected 2 fields as in the header, got 3"),
              std::string::npos);
  }
  const auto open = write("perflow_csv_open.csv", "a,b\n1,\"never closed\n");
  EXPECT_THROW(read_csv_table(open), FormatError);
  std::filesystem::remove(path);
  std::filesystem::remove(open);
}

}  // namespace
}  // namespace perflow::explore
