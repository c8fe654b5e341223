// A table of text cells rendered three ways: aligned plain text (terminals), padded Markdown and
// HTML. The report, compare and tune outputs build one and pick the rendering.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace attnprof {

struct Table {
  std::vector<std::string> header;
  std::vector<bool> right;  // per column: right-aligned (numbers); missing entries are left
  std::vector<std::vector<std::string>> rows;

  void add(std::vector<std::string> row) { rows.push_back(std::move(row)); }
};

// Columns separated by two spaces, header underlined with dashes; no trailing spaces.
std::string render_plain(const Table& t);
// GitHub Markdown, cells padded so the raw text lines up; cells escaped (markdown_escape).
std::string render_markdown(const Table& t);
// Text that Markdown shows as written, on one line: \ | * ` [ ] < escaped with a backslash, and
// _ outside a word and > at the start (provider names, notes and reasons come from code attnprof
// does not own).
std::string markdown_escape(std::string_view text);
// <table> with <thead>/<tbody>; cells escaped; right-aligned columns get class "num".
std::string render_html(const Table& t);

// Text safe inside HTML elements and attribute values.
std::string html_escape(std::string_view text);

}  // namespace attnprof
