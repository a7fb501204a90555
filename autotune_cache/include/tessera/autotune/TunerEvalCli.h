//===- TunerEvalCli.h - Command-line options of tuner-eval ------*- C++ -*-===//
//
// The options of `tessera-tuner-eval` and `tessera-bench tuner-eval`, in one
// place (header-only; the tools link CLI11).
//
//===----------------------------------------------------------------------===//

#ifndef TESSERA_AUTOTUNE_TUNEREVALCLI_H
#define TESSERA_AUTOTUNE_TUNEREVALCLI_H

#include "tessera/autotune/Replay.h"

#include <CLI/CLI.hpp>

namespace tessera::autotune {

inline void addTunerEvalOptions(CLI::App &app, TunerEvalOptions &o) {
  app.add_option("files", o.files,
                 "Kernel Tuner cache files (.json or .json.gz)")
      ->required();
  app.add_option("--strategies", o.strategies, "Strategies to replay")
      ->delimiter(',');
  app.add_option("--budgets", o.budgets, "Budgets (distinct evaluations)")
      ->delimiter(',');
  app.add_option("--seeds", o.seeds, "Seeds per strategy")
      ->check(CLI::PositiveNumber);
  app.add_option("--first-seed", o.firstSeed, "First seed");
  app.add_option("--format", o.format, "Output format")
      ->check(CLI::IsMember({"table", "json"}));
}

} // namespace tessera::autotune

#endif // TESSERA_AUTOTUNE_TUNEREVALCLI_H
