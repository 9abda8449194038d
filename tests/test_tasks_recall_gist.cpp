// The recall and gist tasks (model/tasks.h): every sequence of a few seeds checked against the
// rule written out by hand (tokens, targets, parts), the names, the refusals, determinism.
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "engine/error.h"
#include "model/training/tasks.h"

using namespace attnsim;
using namespace attnsim::model;

namespace {

// vocab 9: lower half 1..4 (keys), upper half 5..8 (values); 3 pairs in 13 positions:
//   recall  BOS k v k v k v | q a q a q a
//   gist    BOS x x x x x x | q a q a q a
TaskSpec tiny(Task task) {
  TaskSpec s;
  s.tasks = {task};
  s.vocab = 9;
  s.len = 13;
  s.pairs = 3;
  return s;
}

int32_t tok(const Batch& b, int64_t r, int64_t t) { return b.tokens[static_cast<size_t>(r * b.len + t)]; }
int32_t target(const Batch& b, int64_t r, int64_t t) { return b.targets[static_cast<size_t>(r * b.len + t)]; }
int part(const Batch& b, int64_t r, int64_t t) { return b.part[static_cast<size_t>(r * b.len + t)]; }

}  // namespace

TEST_CASE("recall task: k v pairs, then every stored key asked once; the answer is its value", "[model]") {
  const TaskSpec s = tiny(Task::Recall);
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Batch b = make_batch(s, 32, seed, 0);
    for (int64_t r = 0; r < b.batch; ++r) {
      CHECK(tok(b, r, 0) == 0);
      std::map<int32_t, int32_t> value_of;
      for (int64_t i = 0; i < 3; ++i) {
        const int32_t k = tok(b, r, 1 + 2 * i), v = tok(b, r, 2 + 2 * i);
        CHECK((k >= 1 && k <= 4));
        CHECK((v >= 5 && v <= 8));
        CHECK(value_of.count(k) == 0);  // distinct keys
        value_of[k] = v;
      }
      std::set<int32_t> asked;
      for (int64_t t = 0; t < 7; ++t) CHECK(part(b, r, t) == kOther);  // the store: nothing to look up
      for (int64_t t = 7; t < 13; t += 2) {  // a query key, then its answer
        const int32_t q = tok(b, r, t);
        REQUIRE(value_of.count(q) == 1);
        asked.insert(q);
        CHECK(target(b, r, t) == value_of[q]);
        CHECK(part(b, r, t) == kRecall);
        CHECK(tok(b, r, t + 1) == value_of[q]);
        if (t + 1 < 12) CHECK(part(b, r, t + 1) == kOther);  // which key comes next is random
      }
      CHECK(asked.size() == 3);  // each key once before any repeats
      CHECK(target(b, r, 12) == -1);
    }
  }
}

TEST_CASE("gist task: the answer names the majority half of the context, never a tie", "[model]") {
  const TaskSpec s = tiny(Task::Gist);
  std::set<int64_t> lower_counts;
  for (uint64_t seed : {1u, 2u, 3u}) {
    const Batch b = make_batch(s, 64, seed, 0);
    for (int64_t r = 0; r < b.batch; ++r) {
      CHECK(tok(b, r, 0) == 0);
      std::multiset<int32_t> context;
      int64_t lower = 0;
      for (int64_t t = 1; t <= 6; ++t) {
        const int32_t x = tok(b, r, t);
        CHECK((x >= 1 && x <= 8));
        lower += x <= 4;
        context.insert(x);
        CHECK(part(b, r, t - 1) == kOther);
      }
      CHECK(lower != 3);
      lower_counts.insert(lower);
      const int32_t answer = lower > 3 ? 1 : 5;
      for (int64_t t = 7; t < 13; t += 2) {
        CHECK(context.count(tok(b, r, t)) >= 1);  // the query token is one of the context's
        CHECK(target(b, r, t) == answer);
        CHECK(part(b, r, t) == (t == 7 ? kGistFirst : kGist));
        CHECK(tok(b, r, t + 1) == answer);
      }
      CHECK(target(b, r, 12) == -1);
    }
  }
  CHECK(lower_counts == std::set<int64_t>{0, 1, 2, 4, 5, 6});  // every count but the tie turns up
}

TEST_CASE("recall and gist: seeded, named, and refused when they cannot fit", "[model]") {
  for (Task task : {Task::Recall, Task::Gist}) {
    const TaskSpec s = tiny(task);
    const Batch a = make_batch(s, 8, 5, 3), b = make_batch(s, 8, 5, 3);
    CHECK(a.tokens == b.tokens);
    CHECK(a.targets == b.targets);
    CHECK(a.part == b.part);
    CHECK(make_batch(s, 8, 6, 3).tokens != a.tokens);
    CHECK(make_batch(s, 8, 5, 4).tokens != a.tokens);
    CHECK(parse_task(task_name(task)) == task);
  }
  CHECK(std::string(task_name(Task::Recall)) == "recall");
  CHECK(std::string(task_name(Task::Gist)) == "gist");
  CHECK(std::string(part_name(kRecall)) == "recall");
  CHECK(std::string(part_name(kGistFirst)) == "gist-first");
  CHECK(std::string(part_name(kGist)) == "gist");
  CHECK_THROWS_WITH(parse_task("majority"), "unknown task 'majority' (valid: induction, copy-prev, recall, gist, text)");
  CHECK(uses_pairs({Task::Induction, Task::Gist}));
  CHECK_FALSE(uses_pairs({Task::Induction, Task::CopyPrev}));

  TaskSpec s = tiny(Task::Recall);
  s.pairs = 5;  // only 4 distinct keys in 1..4
  CHECK_THROWS_WITH(validate(s), "recall / gist need 1..4 pairs (distinct keys from the lower half of 9 tokens), got 5");
  s.pairs = 3;
  s.len = 8;  // BOS + 6 + one query needs 9
  CHECK_THROWS_WITH(validate(s), "3 pairs plus BOS and one query need 9 positions, the sequence has 8");
  s.len = 9;
  CHECK_NOTHROW(validate(s));
}
