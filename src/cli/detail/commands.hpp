#pragma once

#include <CLI/CLI.hpp>

namespace perflow::cli::detail {

/// Exit codes of the perflow command (a contract: docs/cli.md "Exit codes").
enum ExitCode : int {
  kSuccess = 0,
  kInternalError = 1,
  kUsageError = 2,   // bad command line, bad config, unknown name, sizes a schedule refuses
  kDeadlock = 3,     // the task graph has a dependence cycle
  kOutputError = 4,  // an output file could not be written
  kOutOfMemory = 5,  // the task graph does not fit in memory
  kNoAnswer = 6,     // a search in which no plan fits, a sweep in which no run simulated
};

// Each registers its subcommand; the subcommand's callback runs the command.
void add_simulate_command(CLI::App& app);
void add_schedules_command(CLI::App& app);
void add_validate_command(CLI::App& app);
void add_costs_command(CLI::App& app);
void add_measured_command(CLI::App& app);
void add_compare_measured_command(CLI::App& app);
void add_compare_command(CLI::App& app);
void add_schema_command(CLI::App& app);
void add_devices_command(CLI::App& app);
void add_models_command(CLI::App& app);
void add_gemm_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_calibrate_command(CLI::App& app);
void add_sweep_command(CLI::App& app);
void add_search_command(CLI::App& app);
void add_plot_command(CLI::App& app);
void add_import_command(CLI::App& app);

}  // namespace perflow::cli::detail
