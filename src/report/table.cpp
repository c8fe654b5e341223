#include "report/table.hpp"

#include <algorithm>
#include <cctype>

#include "report/units.hpp"

namespace attnprof {

namespace {

bool right_aligned(const Table& t, std::size_t c) {
  return c < t.right.size() && t.right[c];
}

std::string cell(const std::vector<std::string>& row, std::size_t c) {
  return c < row.size() ? row[c] : std::string();
}

// Widths of each column over the header and the rows, after `transform`.
template <class Transform>
std::vector<std::size_t> widths(const Table& t, Transform transform, std::size_t minimum) {
  std::vector<std::size_t> w(t.header.size(), minimum);
  for (std::size_t c = 0; c < w.size(); ++c) {
    w[c] = std::max(w[c], display_width(transform(t.header[c])));
    for (const auto& row : t.rows) w[c] = std::max(w[c], display_width(transform(cell(row, c))));
  }
  return w;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::string fill(width - std::min(width, display_width(s)), ' ');
  return right ? fill + s : s + fill;
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

std::string markdown_escape(std::string_view text) {
  // Only what Markdown would act on: "_" inside a word ("not_supported") emphasizes nothing and
  // ">" quotes only at the start of a line, so both stay readable in the raw file.
  const std::string line = one_line(text);
  const auto word = [&](std::size_t i) {
    return i < line.size() && std::isalnum(static_cast<unsigned char>(line[i])) != 0;
  };
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    const bool inside_word = c == '_' && i > 0 && word(i - 1) && word(i + 1);
    const bool quote = c == '>' && i == 0;
    if ((std::string_view("\\|*_`[]<").find(c) != std::string_view::npos && !inside_word) ||
        quote) {
      out += '\\';
    }
    out += c;
  }
  return out;
}

std::string render_plain(const Table& t) {
  const auto plain = [](const std::string& s) { return one_line(s); };
  const std::vector<std::size_t> w = widths(t, plain, 1);
  const auto line = [&](const std::vector<std::string>& row) {
    std::string out;
    for (std::size_t c = 0; c < w.size(); ++c) {
      out += (c ? "  " : "") + pad(plain(cell(row, c)), w[c], right_aligned(t, c));
    }
    return rstrip(out) + '\n';
  };
  std::string out = line(t.header);
  std::vector<std::string> rule;
  for (std::size_t width : w) rule.emplace_back(width, '-');
  out += line(rule);
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string render_markdown(const Table& t) {
  const std::vector<std::size_t> w = widths(t, markdown_escape, 3);
  const auto line = [&](const std::vector<std::string>& row) {
    std::string out = "|";
    for (std::size_t c = 0; c < w.size(); ++c) {
      out += ' ' + pad(markdown_escape(cell(row, c)), w[c], right_aligned(t, c)) + " |";
    }
    return out + '\n';
  };
  std::string out = line(t.header) + '|';
  for (std::size_t c = 0; c < w.size(); ++c) {
    out += ' ' + std::string(w[c] - 1, '-') + (right_aligned(t, c) ? ":" : "-") + " |";
  }
  out += '\n';
  for (const auto& row : t.rows) out += line(row);
  return out;
}

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string render_html(const Table& t) {
  const auto row_html = [&](const std::vector<std::string>& row, const char* tag) {
    std::string out = "<tr>";
    for (std::size_t c = 0; c < t.header.size(); ++c) {
      out += right_aligned(t, c) ? std::string("<") + tag + " class=\"num\">"
                                 : std::string("<") + tag + ">";
      out += html_escape(cell(row, c)) + "</" + tag + ">";
    }
    return out + "</tr>\n";
  };
  std::string out = "<table>\n<thead>" + row_html(t.header, "th") + "</thead>\n<tbody>\n";
  for (const auto& row : t.rows) out += row_html(row, "td");
  return out + "</tbody>\n</table>\n";
}

}  // namespace attnprof
