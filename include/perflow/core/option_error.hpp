#pragma once

#include <string>
#include <utility>
#include <vector>

#include "perflow/core/error.hpp"

namespace perflow {

/// A value given to a request (a command line option, a Python keyword argument) is wrong.
/// The message names the request's fields by id (snake_case: "rank_stage"); each face words
/// them its own way: the command line as `--rank-stage '0-1'`, Python as `rank_stage='0-1'`.
/// what() writes the ids as they are ("rank_stage '0-1': ...").
class OptionError : public Error {
 public:
  /// A piece of the message: text, or a field (`id`) with the value given to it as the
  /// message shows it ("" when the message shows none; quoted when the message quotes it).
  struct Piece {
    std::string text;
    bool is_field = false;
    std::string value;
  };
  static Piece field(std::string id, std::string value = {}) {
    return {std::move(id), true, std::move(value)};
  }
  static Piece text(std::string text) { return {std::move(text), false, {}}; }

  /// `field_id` is the field the error is about (the first one the message names).
  OptionError(std::string field_id, std::vector<Piece> pieces)
      : Error(worded_with(
            pieces,
            [](const Piece& p) { return p.value.empty() ? p.text : p.text + " " + p.value; })),
        field_(std::move(field_id)),
        pieces_(std::move(pieces)) {}

  /// The id of the field the error is about ("rank_stage").
  [[nodiscard]] const std::string& field() const { return field_; }
  [[nodiscard]] const std::vector<Piece>& pieces() const { return pieces_; }

  /// The message with each field written by `name(piece)`.
  template <class Name>
  [[nodiscard]] std::string worded(Name name) const {
    return worded_with(pieces_, name);
  }

 private:
  template <class Name>
  static std::string worded_with(const std::vector<Piece>& pieces, Name name) {
    std::string out;
    for (const Piece& piece : pieces) out += piece.is_field ? name(piece) : piece.text;
    return out;
  }

  std::string field_;
  std::vector<Piece> pieces_;
};

}  // namespace perflow
