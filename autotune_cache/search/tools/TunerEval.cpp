//===- TunerEval.cpp - tessera-tuner-eval ---------------------------------===//
//
// tessera-tuner-eval FILE... [--strategies random,local,model,auto]
//     [--budgets 25,50,100,200,400] [--seeds 100] [--format table|json]
//
// The report itself is autotune::runTunerEval (Replay.h), which
// `tessera-bench tuner-eval` runs too.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/TunerEvalCli.h"

using namespace tessera;
using namespace tessera::autotune;

int main(int argc, char **argv) {
  CLI::App app{"Replays autotuning search strategies on exhaustively "
               "measured tuning spaces (Kernel Tuner cache files)"};
  TunerEvalOptions o;
  addTunerEvalOptions(app, o);
  CLI11_PARSE(app, argc, argv);
  return runTunerEval(o);
}
