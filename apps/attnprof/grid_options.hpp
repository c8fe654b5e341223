// Grid options shared by the subcommands that take shapes (run, tune, trace): --model, --batch,
// --heads, --seq, ... parsed into Specs. Lists and ranges as parse_int_list accepts them.
#pragma once

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "attnprof/grid.hpp"
#include "attnprof/spec.hpp"

namespace attnprof::cli {

struct GridCliOptions {
  std::string model;
  // The text given for each axis (axes.hpp), by key; empty where not given.
  std::map<std::string, std::string, std::less<>> axes;
  bool given(std::string_view key) const;
};

// Registers --model and one option per axis (axes.hpp: --batch, --heads, --seq, --layout, ...).
void add_grid_options(CLI::App* sub, GridCliOptions& o);
// Refuses a value given empty (`--seq ''`, `--providers ''`): it would run the default instead.
CLI::Validator non_empty();

// Replaces each axis the options give (a preset's series keeps the others): --model first, then
// every axis option (GridAxes::set: --batch clears a tokens-per-batch rule, --heads a model dim).
void apply_grid_overrides(GridAxes& axes, const GridCliOptions& o);
bool any_grid_option(const GridCliOptions& o);

// The specs of the grid: the defaults of GridAxes with the given options replacing their axes.
// Throws std::invalid_argument naming the option (or the first invalid point) and what is allowed.
std::vector<Spec> grid_specs(const GridCliOptions& o);
// The grid's points, impossible ones included (invalid_points.hpp says which and why).
std::vector<Spec> grid_points(const GridCliOptions& o);

// A fraction "0.05" or a percentage "5%" in (0, 1); throws std::invalid_argument naming `option`.
double parse_fraction_option(const std::string& text, const char* option);

}  // namespace attnprof::cli
