//===- StrategyTest.cpp - Tests of the autotuning search strategies -------===//
//
// Synthetic spaces with known optima: a separable bowl, and a rugged
// function with restrictions.
//
//===----------------------------------------------------------------------===//

#include "tessera/autotune/Strategy.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <set>
#include <thread>

using namespace tessera::autotune;

namespace {

std::vector<double> range(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i)
    v.push_back(i);
  return v;
}

/// 4 parameters of 8 values, minimum 1.0 at (5, 2, 6, 1).
Space bowlSpace() {
  return Space({{"a", range(8), {}},
                {"b", range(8), {}},
                {"c", range(8), {}},
                {"d", range(8), {}}});
}

double bowl(const Config &c) {
  static const int opt[4] = {5, 2, 6, 1};
  double s = 1;
  for (int i = 0; i < 4; ++i)
    s += (int(c[i]) - opt[i]) * (int(c[i]) - opt[i]) * (i + 1);
  return s;
}

uint64_t mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/// 5 parameters of 6 values with a restriction ((a + b) % 3 != 0) and a
/// noisy multi-modal score; 5184 of 7776 configurations valid.
Space ruggedSpace() {
  return Space({{"a", range(6), {}},
                {"b", range(6), {}},
                {"c", range(6), {}},
                {"d", range(6), {}},
                {"e", range(6), {}}},
               [](const Config &c) { return (c[0] + c[1]) % 3 != 0; });
}

double rugged(const Config &c) {
  double s = 1;
  for (size_t i = 0; i < c.size(); ++i) {
    double x = double(c[i]) - 3.3 + 0.4 * double(i % 2);
    s += x * x * (1 + 0.5 * std::cos(1.7 * double(c[(i + 1) % c.size()])));
  }
  uint64_t h = 0;
  for (uint32_t v : c)
    h = mix(h * 31 + v + 1);
  return s * (1 + 0.6 * double(h % 1000) / 1000.0);
}

std::function<Evaluation(const Config &)> scorer(double (*f)(const Config &)) {
  return [f](const Config &c) { return Evaluation{c, f(c), ""}; };
}

double trueOptimum(const Space &s, double (*f)(const Config &)) {
  double best = INFINITY;
  for (const Config &c : s.validConfigs())
    best = std::min(best, f(c));
  return best;
}

double bestScore(const std::vector<Evaluation> &evals) {
  const Evaluation *b = bestEvaluation(evals);
  return b ? *b->score : INFINITY;
}

const char *const kSearchers[] = {"random", "local", "model", "auto"};

TEST(AutotuneStrategy, Registry) {
  for (const std::string &n : strategyNames()) {
    std::unique_ptr<Strategy> s = makeStrategy(n);
    ASSERT_NE(s, nullptr) << n;
    EXPECT_FALSE(s->name().empty());
  }
  EXPECT_EQ(makeStrategy("simulated-annealing-of-doom"), nullptr);
}

TEST(AutotuneStrategy, ExhaustiveEvaluatesEachValidConfigOnce) {
  Space s = ruggedSpace();
  std::unique_ptr<Strategy> ex = makeStrategy("exhaustive");
  std::vector<Evaluation> evals =
      runSearch(s, *ex, scorer(rugged), Budget{100000, 0}, 1, 7);
  EXPECT_EQ(evals.size(), s.validConfigs().size());
  std::set<uint64_t> seen;
  for (const Evaluation &e : evals) {
    EXPECT_TRUE(s.isValid(e.config));
    EXPECT_TRUE(seen.insert(s.index(e.config)).second);
  }
  EXPECT_EQ(bestScore(evals), trueOptimum(s, rugged));
}

// Every strategy proposes only valid, distinct configurations and, given
// enough budget, goes through the whole space.
TEST(AutotuneStrategy, ProposalsAreValidDistinctAndExhaustTheSpace) {
  // A small restricted space: 3 x 5 x 4, half of it valid.
  Space s({{"x", range(3), {}}, {"y", range(5), {}}, {"z", range(4), {}}},
          [](const Config &c) { return (c[0] + c[1] + c[2]) % 2 == 0; });
  size_t nValid = s.validConfigs().size();
  for (const char *name : kSearchers) {
    for (size_t batch : {1, 3}) {
      std::unique_ptr<Strategy> st = makeStrategy(name);
      std::vector<Evaluation> evals =
          runSearch(s, *st, scorer(rugged), Budget{1000, 0}, 3, batch);
      EXPECT_EQ(evals.size(), nValid) << name;
      std::set<uint64_t> seen;
      for (const Evaluation &e : evals) {
        EXPECT_TRUE(s.isValid(e.config)) << name;
        EXPECT_TRUE(seen.insert(s.index(e.config)).second) << name;
      }
    }
  }
}

TEST(AutotuneStrategy, RandomNeverRepeatsAndRespectsValidity) {
  Space s = ruggedSpace();
  std::unique_ptr<Strategy> r = makeStrategy("random");
  std::vector<Evaluation> evals =
      runSearch(s, *r, scorer(rugged), Budget{2000, 0}, 11, 16);
  ASSERT_EQ(evals.size(), 2000u);
  std::set<uint64_t> seen;
  for (const Evaluation &e : evals) {
    EXPECT_TRUE(s.isValid(e.config));
    EXPECT_TRUE(seen.insert(s.index(e.config)).second);
  }
}

TEST(AutotuneStrategy, LocalAndModelFindTheOptimumOfASmoothSpace) {
  Space s = bowlSpace();
  for (const char *name : {"local", "model", "auto"}) {
    for (uint64_t seed = 0; seed < 5; ++seed) {
      std::unique_ptr<Strategy> st = makeStrategy(name);
      std::vector<Evaluation> evals =
          runSearch(s, *st, scorer(bowl), Budget{120, 0}, seed);
      EXPECT_EQ(bestScore(evals), 1.0) << name << " seed " << seed;
    }
  }
}

TEST(AutotuneStrategy, LocalAndModelBeatRandomOnARuggedSpace) {
  Space s = ruggedSpace();
  double opt = trueOptimum(s, rugged);
  auto meanFraction = [&](const char *name) {
    double sum = 0;
    const int seeds = 12;
    for (int seed = 0; seed < seeds; ++seed) {
      std::unique_ptr<Strategy> st = makeStrategy(name);
      sum += opt / bestScore(runSearch(s, *st, scorer(rugged), Budget{60, 0},
                                       uint64_t(seed)));
    }
    return sum / seeds;
  };
  double random = meanFraction("random");
  EXPECT_GT(meanFraction("local"), random);
  EXPECT_GT(meanFraction("model"), random);
}

TEST(AutotuneStrategy, DeterministicPerSeed) {
  Space s = ruggedSpace();
  for (const char *name : kSearchers) {
    for (size_t batch : {1, 4}) {
      auto run = [&](uint64_t seed) {
        std::unique_ptr<Strategy> st = makeStrategy(name);
        std::vector<uint64_t> out;
        for (const Evaluation &e :
             runSearch(s, *st, scorer(rugged), Budget{80, 0}, seed, batch))
          out.push_back(s.index(e.config));
        return out;
      };
      EXPECT_EQ(run(5), run(5)) << name;
      EXPECT_NE(run(5), run(6)) << name;
    }
  }
}

TEST(AutotuneStrategy, WarmStartNeverReproposesPriors) {
  Space s = ruggedSpace();
  // Priors: 40 configs from a random search, some recorded as failures.
  std::unique_ptr<Strategy> r = makeStrategy("random");
  std::vector<Evaluation> prior =
      runSearch(s, *r, scorer(rugged), Budget{40, 0}, 99);
  for (size_t i = 0; i < prior.size(); i += 5) {
    prior[i].score.reset();
    prior[i].invalidReason = "failed to compile";
  }
  std::set<uint64_t> priorIdx;
  for (const Evaluation &e : prior)
    priorIdx.insert(s.index(e.config));
  for (const char *name : kSearchers) {
    for (size_t batch : {1, 4}) {
      std::unique_ptr<Strategy> st = makeStrategy(name);
      std::vector<Evaluation> evals =
          runSearch(s, *st, scorer(rugged), Budget{100, 0}, 1, batch, prior);
      EXPECT_EQ(evals.size(), 100u);
      for (const Evaluation &e : evals)
        EXPECT_EQ(priorIdx.count(s.index(e.config)), 0u) << name;
    }
  }
  // The same by hand, through observe() before the first propose().
  std::unique_ptr<Strategy> st = makeStrategy("model");
  st->reset(s, 3);
  for (const Evaluation &e : prior)
    st->observe(e);
  for (const Config &c : st->propose(50))
    EXPECT_EQ(priorIdx.count(s.index(c)), 0u);
}

TEST(AutotuneStrategy, InvalidEvaluationsNeverBecomeTheBest) {
  std::vector<Evaluation> evals = {{{0}, std::nullopt, "wrong answer"},
                                   {{1}, 3.0, ""},
                                   {{2}, std::nullopt, "too much smem"},
                                   {{3}, 2.0, ""}};
  const Evaluation *b = bestEvaluation(evals);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(*b->score, 2.0);
  EXPECT_EQ(bestEvaluation(std::span(evals).first(1)), nullptr);

  // Configs that fail at run time (unknown beforehand) around the optimum:
  // the searches go on and report a valid best.
  Space s = bowlSpace();
  auto evaluate = [](const Config &c) {
    Evaluation e{c, bowl(c), ""};
    if ((c[0] + c[1] + c[2] + c[3]) % 4 == 1) {
      e.score.reset();
      e.invalidReason = "failed to compile";
    }
    return e;
  };
  for (const char *name : kSearchers) {
    std::unique_ptr<Strategy> st = makeStrategy(name);
    std::vector<Evaluation> evals =
        runSearch(s, *st, evaluate, Budget{150, 0}, 2);
    const Evaluation *best = bestEvaluation(evals);
    ASSERT_NE(best, nullptr) << name;
    EXPECT_TRUE(evaluate(best->config).score) << name;
  }
}

TEST(AutotuneStrategy, BudgetsStopTheSearch) {
  Space s = ruggedSpace();
  for (const char *name : kSearchers) {
    std::unique_ptr<Strategy> st = makeStrategy(name);
    // Invalid evaluations count against the evaluation budget.
    int calls = 0;
    auto halfInvalid = [&](const Config &c) {
      ++calls;
      Evaluation e{c, rugged(c), ""};
      if (calls % 2)
        e.score.reset();
      return e;
    };
    EXPECT_EQ(runSearch(s, *st, halfInvalid, Budget{37, 0}, 1, 4).size(), 37u);
    EXPECT_EQ(calls, 37);
  }
  // A time budget: 2 ms per evaluation, 60 ms in all.
  std::unique_ptr<Strategy> st = makeStrategy("random");
  auto slow = [](const Config &c) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return Evaluation{c, rugged(c), ""};
  };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<Evaluation> evals = runSearch(s, *st, slow, Budget{0, 0.06}, 1);
  double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  EXPECT_GT(evals.size(), 0u);
  EXPECT_LT(evals.size(), 31u);
  EXPECT_LT(secs, 1.0);
  // Both limits: whichever comes first.
  EXPECT_EQ(runSearch(s, *st, slow, Budget{5, 10}, 1).size(), 5u);
  // No limit at all: nothing is evaluated.
  EXPECT_TRUE(runSearch(s, *st, slow, Budget{}, 1).empty());
}

} // namespace
