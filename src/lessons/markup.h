// The lessons' light markup, parsed for the app and the slides (no GUI here):
//   **bold**   `code`   lines starting "- " are list items   blank lines end a paragraph
//   {quote:6.4GB} a quoted figure (its own span, drawn in the quote style)
//   {math:4}      a formula's constant (plain text)
// Run it on filled text (Text::ko / en): the {value:...} marks are figures by then.
#pragma once

#include <string>
#include <vector>

namespace attnsim::lessons {

struct Span {
  std::string text;
  bool bold = false;
  bool code = false;
  bool quote = false;  // a figure quoted from the article or the literature
};

struct Block {
  bool list_item = false;
  std::vector<Span> spans;
};

std::vector<Block> parse_markup(const std::string& text);
// The text with the markers removed (for plain output and the first-paragraph default).
std::string plain_text(const std::vector<Block>& blocks);
// The first paragraph of the text, without markers.
std::string first_paragraph(const std::string& text);

}  // namespace attnsim::lessons
