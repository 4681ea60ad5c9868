// A file of command-line flags (`perflow import megatron --args-file`): the words a shell
// would pass for a simple command, so the lines of a launch script's argument arrays can be
// pasted as they are.
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "perflow/core/error.hpp"
#include "perflow/study/launch_import.hpp"

namespace perflow::study {

std::vector<std::string> read_args_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("cannot read the arguments file '{}'", path.string()));
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (c == '\\' && i + 1 < text.size() && text[i + 1] == '\n') {  // a continued line
      ++i;
      ++line;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
      continue;
    }
    if (c == '#' && !in_word) {  // a comment, to the line's end
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    in_word = true;
    if (c == '\'' || c == '"') {
      const std::size_t close = text.find(c, i + 1);
      if (close == std::string::npos) {
        throw Error(fmt::format("{}:{}: the quote {} is not closed", path.string(), line, c));
      }
      const std::string quoted = text.substr(i + 1, close - i - 1);
      for (char q : quoted) line += q == '\n' ? 1 : 0;
      word += quoted;
      i = close;
      continue;
    }
    word += c;
  }
  if (in_word) words.push_back(std::move(word));
  return words;
}

}  // namespace perflow::study
