//===- ModelSearch.cpp - Random-forest surrogate search -------------------===//
//
// Sequential model-based optimisation: after a small random design, a random
// forest is fitted to log(score) of the evaluations so far (features: the
// rank of each parameter's value), and the next configurations are the
// candidates with the highest expected improvement. Candidates are a large
// uniform sample of valid, unseen configurations plus every configuration
// one parameter away from the best few found so far. The forest is refitted
// every evaluation early on and every few evaluations later (the cost of a
// fit grows with the number of evaluations).
//
//===----------------------------------------------------------------------===//

#include "SearchCommon.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace tessera::autotune::detail {
namespace {

//===----------------------------------------------------------------------===//
// RandomForest
//===----------------------------------------------------------------------===//

/// Regression forest over small-cardinality integer features. Splits are
/// "feature <= threshold", found from per-value histograms (features are
/// value ranks, so every split point is examined in O(node size)).
class RandomForest {
public:
  struct Options {
    int trees = 32;
    /// Features tried per split, as a fraction of the informative ones.
    double featureFraction = 0.6;
    int minLeaf = 1;
    int maxDepth = 24;
  };

  /// `x` is row-major (rows x cards.size()); every x[r][f] < cards[f].
  void fit(const std::vector<uint32_t> &x, const std::vector<double> &y,
           const std::vector<uint32_t> &cards, const Options &opts, Rng &rng) {
    x_ = &x;
    y_ = &y;
    cards_ = &cards;
    opts_ = opts;
    rng_ = &rng;
    nf_ = cards.size();
    informative_.clear();
    for (size_t f = 0; f < nf_; ++f)
      if (cards[f] > 1)
        informative_.push_back(uint32_t(f));
    mtry_ = std::max<size_t>(
        1, size_t(std::ceil(opts.featureFraction * informative_.size())));
    size_t n = y.size();
    trees_.assign(opts.trees, {});
    std::vector<uint32_t> rows(n);
    for (auto &tree : trees_) {
      for (size_t i = 0; i < n; ++i)
        rows[i] = uint32_t(rng.below(n)); // Bootstrap.
      build(tree, rows, 0, n, 0);
    }
  }

  /// Mean and standard deviation of the tree predictions.
  void predict(const uint32_t *row, double &mean, double &sd) const {
    double s = 0, s2 = 0;
    for (const auto &tree : trees_) {
      int32_t i = 0;
      while (tree[i].feature >= 0)
        i = row[tree[i].feature] <= tree[i].threshold ? tree[i].left
                                                      : tree[i].right;
      s += tree[i].value;
      s2 += tree[i].value * tree[i].value;
    }
    double k = double(trees_.size());
    mean = s / k;
    sd = std::sqrt(std::max(0.0, s2 / k - mean * mean));
  }

private:
  struct Node {
    int32_t feature; // -1 for a leaf.
    uint32_t threshold;
    int32_t left, right;
    double value;
  };

  int32_t build(std::vector<Node> &tree, std::vector<uint32_t> &rows,
                size_t begin, size_t end, int depth) {
    const std::vector<uint32_t> &x = *x_;
    const std::vector<double> &y = *y_;
    size_t n = end - begin;
    double sum = 0, lo = INFINITY, hi = -INFINITY;
    for (size_t i = begin; i < end; ++i) {
      double v = y[rows[i]];
      sum += v;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    int32_t id = int32_t(tree.size());
    tree.push_back({-1, 0, -1, -1, sum / double(n)});
    if (n < size_t(2 * opts_.minLeaf) || depth >= opts_.maxDepth ||
        hi - lo <= 1e-12 * std::max(1.0, std::fabs(hi)))
      return id;

    // Choose mtry features at random (partial Fisher-Yates).
    std::vector<uint32_t> &feats = informative_;
    double bestGain = 1e-12, parent = sum * sum / double(n);
    int32_t bestF = -1;
    uint32_t bestT = 0;
    for (size_t k = 0; k < mtry_; ++k) {
      std::swap(feats[k], feats[k + rng_->below(feats.size() - k)]);
      uint32_t f = feats[k];
      uint32_t card = (*cards_)[f];
      cnt_.assign(card, 0);
      sum_.assign(card, 0.0);
      for (size_t i = begin; i < end; ++i) {
        uint32_t v = x[size_t(rows[i]) * nf_ + f];
        cnt_[v] += 1;
        sum_[v] += y[rows[i]];
      }
      size_t nl = 0;
      double sl = 0;
      for (uint32_t t = 0; t + 1 < card; ++t) {
        nl += cnt_[t];
        sl += sum_[t];
        size_t nr = n - nl;
        if (cnt_[t] == 0 || nl < size_t(opts_.minLeaf) ||
            nr < size_t(opts_.minLeaf))
          continue;
        double sr = sum - sl;
        double gain = sl * sl / double(nl) + sr * sr / double(nr) - parent;
        if (gain > bestGain) {
          bestGain = gain;
          bestF = int32_t(f);
          bestT = t;
        }
      }
    }
    if (bestF < 0)
      return id;
    // Partition rows in place: left part first.
    size_t mid = begin;
    for (size_t i = begin; i < end; ++i)
      if (x[size_t(rows[i]) * nf_ + size_t(bestF)] <= bestT)
        std::swap(rows[i], rows[mid++]);
    if (mid == begin || mid == end)
      return id;
    int32_t left = build(tree, rows, begin, mid, depth + 1);
    int32_t right = build(tree, rows, mid, end, depth + 1);
    tree[id].feature = bestF;
    tree[id].threshold = bestT;
    tree[id].left = left;
    tree[id].right = right;
    return id;
  }

  const std::vector<uint32_t> *x_ = nullptr;
  const std::vector<double> *y_ = nullptr;
  const std::vector<uint32_t> *cards_ = nullptr;
  Options opts_;
  Rng *rng_ = nullptr;
  size_t nf_ = 0, mtry_ = 1;
  std::vector<uint32_t> informative_;
  std::vector<uint32_t> cnt_;
  std::vector<double> sum_;
  std::vector<std::vector<Node>> trees_;
};

//===----------------------------------------------------------------------===//
// ModelSearch
//===----------------------------------------------------------------------===//

double normalPdf(double z) {
  return 0.3989422804014327 * std::exp(-0.5 * z * z);
}
double normalCdf(double z) { return 0.5 * std::erfc(-z * 0.7071067811865476); }

class ModelSearch final : public StrategyBase {
public:
  std::string name() const override { return "model"; }

  void reset(const Space &space, uint64_t seed) override {
    StrategyBase::reset(space, seed);
    ranked_.clear();
    rankedPos_ = 0;
    lastFit_ = 0;
    fitted_ = false;
    // Features: the rank of each value in its parameter's value list.
    const auto &params = space_.params();
    rank_.assign(params.size(), {});
    cards_.assign(params.size(), 0);
    size_t informative = 0;
    for (size_t p = 0; p < params.size(); ++p) {
      const auto &vals = params[p].values;
      std::vector<uint32_t> order(vals.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
        return vals[a] < vals[b];
      });
      rank_[p].assign(vals.size(), 0);
      for (uint32_t r = 0; r < order.size(); ++r)
        rank_[p][order[r]] = r;
      cards_[p] = uint32_t(vals.size());
      if (vals.size() > 1)
        ++informative;
    }
    initial_ = std::clamp<size_t>(2 * informative, 10, 20);
  }

private:
  static constexpr size_t kRandomCandidates = 1000;
  static constexpr size_t kTopForNeighbours = 5;

  std::optional<Config> next() override {
    size_t scored = 0;
    for (const Observation &o : observations_)
      scored += o.score.has_value();
    if (scored < initial_ || bestObservation() < 0)
      return sampleUnseen();
    size_t obs = observations_.size();
    size_t every = 1 + obs / 40;
    if (!fitted_ || obs - lastFit_ >= every || rankedPos_ >= ranked_.size())
      refit();
    while (rankedPos_ < ranked_.size()) {
      Config &c = ranked_[rankedPos_++];
      if (!isSeen(space_.index(c)))
        return std::move(c);
    }
    return sampleUnseen();
  }

  void refit() {
    fitted_ = true;
    lastFit_ = observations_.size();
    size_t np = space_.numParams();
    // Training data: log(score); invalid evaluations get the worst score.
    double worst = -INFINITY;
    for (const Observation &o : observations_)
      if (o.score)
        worst = std::max(worst, logScore(*o.score));
    x_.clear();
    y_.clear();
    for (const Observation &o : observations_) {
      for (size_t p = 0; p < np; ++p)
        x_.push_back(rank_[p][o.config[p]]);
      y_.push_back(o.score ? logScore(*o.score) : worst);
    }
    RandomForest::Options opts;
    forest_.fit(x_, y_, cards_, opts, rng_);
    double best = logScore(*observations_[bestObservation()].score);

    // Candidates: neighbours of the best few, then a uniform sample.
    std::vector<size_t> order;
    for (size_t i = 0; i < observations_.size(); ++i)
      if (observations_[i].score)
        order.push_back(i);
    size_t top = std::min(kTopForNeighbours, order.size());
    std::partial_sort(order.begin(), order.begin() + top, order.end(),
                      [&](size_t a, size_t b) {
                        return *observations_[a].score <
                               *observations_[b].score;
                      });
    std::vector<Config> cands;
    std::unordered_set<uint64_t> inPool;
    auto add = [&](Config c) {
      uint64_t idx = space_.index(c);
      if (isSeen(idx) || !inPool.insert(idx).second)
        return;
      cands.push_back(std::move(c));
    };
    for (size_t k = 0; k < top; ++k)
      for (Config &c : neighbours(observations_[order[k]].config, true))
        add(std::move(c));
    for (size_t k = 0; k < kRandomCandidates; ++k) {
      std::optional<Config> c = sampleUnseen();
      if (!c)
        break;
      add(std::move(*c));
    }

    // Expected improvement in log space.
    std::vector<double> ei(cands.size());
    std::vector<uint32_t> row(np);
    for (size_t i = 0; i < cands.size(); ++i) {
      for (size_t p = 0; p < np; ++p)
        row[p] = rank_[p][cands[i][p]];
      double mu, sd;
      forest_.predict(row.data(), mu, sd);
      double d = best - mu;
      if (sd < 1e-9) {
        ei[i] = std::max(d, 0.0);
        continue;
      }
      double z = d / sd;
      ei[i] = d * normalCdf(z) + sd * normalPdf(z);
    }
    std::vector<size_t> idx(cands.size());
    std::iota(idx.begin(), idx.end(), 0);
    std::stable_sort(idx.begin(), idx.end(),
                     [&](size_t a, size_t b) { return ei[a] > ei[b]; });
    ranked_.clear();
    for (size_t i : idx)
      ranked_.push_back(std::move(cands[i]));
    rankedPos_ = 0;
  }

  static double logScore(double s) { return std::log(std::max(s, 1e-300)); }

  std::vector<std::vector<uint32_t>> rank_;
  std::vector<uint32_t> cards_;
  size_t initial_ = 10;
  RandomForest forest_;
  std::vector<uint32_t> x_;
  std::vector<double> y_;
  std::vector<Config> ranked_;
  size_t rankedPos_ = 0;
  size_t lastFit_ = 0;
  bool fitted_ = false;
};

} // namespace

std::unique_ptr<Strategy> makeModelSearch() {
  return std::make_unique<ModelSearch>();
}

} // namespace tessera::autotune::detail
