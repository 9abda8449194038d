// Hostile input (issue 14): every case the probe found, as a regression test. Sizes that
// would wrap are refused with the numbers named; memory is refused before it is allocated;
// only regular files are read; every write is checked and lands whole or not at all; errors
// are one line with exit code 2.
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "engine/atomic_file.h"
#include "engine/checked.h"
#include "engine/cost.h"
#include "engine/error.h"
#include "engine/flash.h"
#include "engine/npy.h"
#include "helpers.h"
#include "lessons/lesson.h"

using namespace attnsim;
using test::run_cli;

namespace fs = std::filesystem;

namespace {

// A path of its own per test, inside a parent of its own: counting temp files beside it must
// not see other tests' (ctest runs them in parallel) or other programs' files in /tmp.
fs::path fresh(const std::string& name) {
  const fs::path parent = fs::temp_directory_path() / ("attnsim-hostile-" + name);
  fs::remove_all(parent);
  fs::create_directories(parent);
  return parent / name;
}

std::string npy_with_header(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64) h += ' ';
  h += '\n';
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(h.size() & 0xFF) + static_cast<char>(h.size() >> 8) + h;
}

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

// Files in `dir` whose name holds ".tmp": what a failed atomic write must not leave.
int temp_files_in(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().find(".tmp") != std::string::npos;
  return n;
}

int lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

// Runs fn in a child whose files may grow to `limit_bytes` (ulimit -f), with SIGXFSZ ignored
// so a write past it returns EFBIG: a full disk without root. Returns the child's exit code.
template <class Fn>
int with_file_size_limit(rlim_t limit_bytes, Fn fn) {
  const pid_t pid = fork();
  if (pid == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit rl{limit_bytes, limit_bytes};
    setrlimit(RLIMIT_FSIZE, &rl);
    _exit(fn());
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

// [SECTION] checked sizes

TEST_CASE("hostile: checked products name their numbers instead of wrapping") {
  CHECK(checked_product({2, 3, 4}, "x") == 24);
  CHECK_THROWS_WITH(checked_product({4611686018427387904, 1, 1, 4}, "data bytes"),
                    "data bytes: 4611686018427387904 × 1 × 1 × 4 does not fit in 64 bits (max 9223372036854775807)");
  CHECK_THROWS_WITH(checked_mul(3037000500, 3037000500, "d²"), Catch::Contains("3037000500 × 3037000500"));
  CHECK_THROWS_WITH((Size(INT64_MAX) + 1).value(), Catch::Contains("9223372036854775807 + 1"));
  CHECK((Size(1024) * 1024 * 1024).value() == 1073741824);
  CHECK_THROWS_WITH(numel_of({int64_t{1} << 40, int64_t{1} << 40}), Catch::Contains("does not fit in 64 bits"));
  CHECK_THROWS_AS(Tensor::empty({int64_t{1} << 62, 2}), Error);
}

TEST_CASE("hostile: numbers given as text are refused, never clamped or sign-flipped") {
  const int64_t max = INT64_MAX;
  CHECK(parse_int("42", "--tq", 1, max) == 42);
  CHECK_THROWS_WITH(parse_int("99999999999999999999", "--tq", 1, max),
                    "--tq 99999999999999999999 is out of range (1 to 9223372036854775807)");
  CHECK_THROWS_WITH(parse_int("-1", "--seed", 0, max), Catch::Contains("--seed -1 is out of range"));
  CHECK_THROWS_WITH(parse_int("0", "--tk", 1, max), Catch::Contains("--tk 0 is out of range"));
  for (const char* bad : {"", " 1", "+1", "1x", "0x10", "1e3", "--", "-"}) {
    INFO(bad);
    CHECK_THROWS_AS(parse_int(bad, "--n", 0, max), Error);
  }
}

TEST_CASE("hostile: the cost model is exact or refuses (never a wrapped number)") {
  CostConfig c;
  c.seq = int64_t{1} << 40;  // score elements B·h·T² = 8·2⁸⁰
  CHECK_THROWS_WITH(compute_cost(c), Catch::Contains("score elements B·h·T²: 1 × 8 × 1099511627776 × 1099511627776"));
  c = CostConfig{};
  c.d_model = 3037000500;  // 4·d² wraps int64
  c.heads = 4;
  CHECK_THROWS_WITH(compute_cost(c), Catch::Contains("parameters 4·d²"));
  c = CostConfig{};
  c.seq = 1 << 20;  // large but exact
  CHECK(compute_cost(c).score_elements == 8LL << 40);
}

TEST_CASE("hostile: memory predictions use checked arithmetic") {
  MhaConfig c = test::sized_config(1, 1, 1, 4611686018427387904, 1);
  CHECK_THROWS_WITH(predict_trace_bytes(c), Catch::Contains("does not fit in 64 bits"));
  CHECK_THROWS_AS(predict_weight_bytes(c.d_model, true), Error);
  c = test::sized_config(1, 1000000, 1000000, 512, 8);
  CHECK(predict_trace_bytes(c) > (int64_t{1} << 40));  // 8·10¹²·4 bytes per score tensor
  FlashShape s{1, 1, int64_t{1} << 40, int64_t{1} << 40, 64, 64, 64};
  CHECK_THROWS_AS(flash_io_standard(s), Error);
}

// [SECTION] .npy input

TEST_CASE("hostile: a .npy header claiming 2^62 elements is refused before any allocation") {
  const std::string huge = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 1, 1), }");
  CHECK_THROWS_WITH(parse_npy(huge, "x.npy"), Catch::Contains("does not fit in 64 bits"));
  const std::string big = npy_with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1152921504606846976,), }");
  CHECK_THROWS_WITH(parse_npy(big, "x.npy"), Catch::Contains("(truncated)"));
  const fs::path dir = fresh("npy");
  fs::create_directories(dir);
  write_bytes(dir / "huge.npy", huge);
  write_bytes(dir / "big.npy", big);
  CHECK_THROWS_WITH(read_npy((dir / "huge.npy").string()), Catch::Contains("does not fit in 64 bits"));
  CHECK_THROWS_WITH(read_npy((dir / "big.npy").string()), Catch::Contains("needs 4611686018427387904"));
  CHECK_THROWS_WITH(read_npy_info((dir / "big.npy").string()), Catch::Contains("(truncated)"));
  const auto r = run_cli("trace --input " + (dir / "huge.npy").string());
  CHECK(r.code == 2);
  CHECK(lines(r.output) == 1);
  fs::remove_all(dir);
}

TEST_CASE("hostile: only regular files are read (no FIFO, device or folder)") {
  const fs::path dir = fresh("fifo");
  fs::create_directories(dir);
  REQUIRE(mkfifo((dir / "f.npy").c_str(), 0600) == 0);
  CHECK_THROWS_WITH(read_npy((dir / "f.npy").string()), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(read_npy("/dev/zero"), Catch::Contains("not a regular file"));
  CHECK_THROWS_WITH(read_npy(dir.string()), Catch::Contains("not a regular file"));
  const auto r = run_cli("trace --input " + (dir / "f.npy").string());  // would block forever before
  CHECK(r.code == 2);
  CHECK(r.output.find("not a regular file") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hostile: a header longer than any real one is refused without reading it") {
  std::string v2 = std::string("\x93NUMPY\x02\x00", 8) + std::string("\xff\xff\xff\x7f", 4);
  CHECK_THROWS_WITH(parse_npy(v2, "x.npy"), Catch::Contains("header claims 2147483647 bytes"));
}

TEST_CASE("hostile: control characters in user text are escaped, the message stays one line") {
  const std::string bad = npy_with_header("{'descr': '<f\n4\x1b[2J', 'fortran_order': False, 'shape': (1,), }");
  try {
    parse_npy(bad, "x.npy");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(one_line(e.what()).find("'<f\\n4\\x1b[2J'") != std::string::npos);
  }
  const auto r = run_cli("trace --mask $'causal\\nkey-padding=1' --batch 1 --tq 2 --d-model 4 --heads 1");
  CHECK(r.code == 2);
  CHECK(lines(r.output) == 1);
}

// [SECTION] writes

TEST_CASE("hostile: AtomicFile lands whole or not at all") {
  const fs::path dir = fresh("atomic");
  fs::create_directories(dir);
  const std::string path = (dir / "a.txt").string();
  write_file_atomically(path, "hello\n");
  {
    AtomicFile f(path);
    f.stream() << "one ";
    f.write("two");
    f.stream() << " three";
    // destroyed without commit: the old file stays, no temporary is left
  }
  std::ifstream in(path);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "hello\n");
  {
    AtomicFile f(path);
    f.stream() << "one ";
    f.write("two");
    f.commit();
  }
  std::ifstream in2(path);
  CHECK(std::string(std::istreambuf_iterator<char>(in2), {}) == "one two");
  CHECK(temp_files_in(dir) == 0);
  CHECK_THROWS_WITH(write_file_atomically("/nonexistent-dir/x", "x"), Catch::Contains("/nonexistent-dir/x: cannot write here"));
  CHECK_THROWS_WITH(write_file_atomically((dir / "").string(), "x"), Catch::Contains("is not a file name"));
  fs::remove_all(dir);
}

TEST_CASE("hostile: a write replaces a regular file or a link, never a FIFO, folder or device (issue 37)") {
  const fs::path dir = fresh("not-regular");
  fs::create_directories(dir / "folder");
  const std::string fifo = (dir / "fifo").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH(write_file_atomically(fifo, "x"), Catch::Contains("fifo is a FIFO, not a file attnsim may replace"));
  CHECK(fs::is_fifo(fifo));
  CHECK_THROWS_WITH(write_file_atomically((dir / "folder").string(), "x"), Catch::Contains("is a folder"));
  // a private /dev/full (root only, as CI runs): it stays a device
  const std::string full = (dir / "full").string();
  if (::mknod(full.c_str(), S_IFCHR | 0600, makedev(1, 7)) == 0) {
    CHECK_THROWS_WITH(write_file_atomically(full, "x"), Catch::Contains("is a character device"));
    struct stat st {};
    CHECK((::lstat(full.c_str(), &st) == 0 && S_ISCHR(st.st_mode)));
  }
  // something that appears at the path while the file is written is not replaced either
  const std::string late = (dir / "late").string();
  {
    AtomicFile f(late);
    f.write("x");
    REQUIRE(::mkfifo(late.c_str(), 0600) == 0);
    CHECK_THROWS_WITH(f.commit(), Catch::Contains("late is a FIFO"));
  }
  CHECK(fs::is_fifo(late));
  // a link is replaced (the link, not what it points to)
  write_file_atomically((dir / "target").string(), "kept");
  fs::create_symlink(dir / "target", dir / "link");
  write_file_atomically((dir / "link").string(), "new");
  CHECK(fs::is_regular_file(fs::symlink_status(dir / "link")));
  std::ifstream target(dir / "target");
  CHECK(std::string(std::istreambuf_iterator<char>(target), {}) == "kept");
  CHECK(temp_files_in(dir) == 0);
  fs::remove_all(dir);
}

TEST_CASE("hostile: a full disk (ulimit -f) makes a write fail loudly and leaves nothing") {
  const fs::path dir = fresh("full");
  fs::create_directories(dir);
  const std::string path = (dir / "big.bin").string();
  // 64 KiB allowed, 1 MiB written: direct writes and the buffered stream
  const int direct = with_file_size_limit(64 * 1024, [&] {
    try {
      write_file_atomically(path, std::string(1 << 20, 'x'));
    } catch (const Error& e) {
      return std::string(e.what()).find("File too large") != std::string::npos ? 7 : 1;
    }
    return 0;
  });
  CHECK(direct == 7);
  const int streamed = with_file_size_limit(64 * 1024, [&] {
    try {
      AtomicFile f(path);
      for (int i = 0; i < 1 << 16; ++i) f.stream() << "0123456789abcdef";
      f.commit();
    } catch (const Error&) {
      return 7;
    }
    return 0;
  });
  CHECK(streamed == 7);
  CHECK(fs::is_empty(dir));
  // the CLI: a dump that does not fit is one line, exit 2, no folder and no temporary
  const fs::path dump = dir / "dump";
  const std::string cmd = "bash -c \"trap '' XFSZ; ulimit -f 64; " + std::string(ATTNSIM_CLI) +
                          " trace --batch 2 --tq 64 --d-model 64 --heads 4 --dump " + dump.string() + "\" 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(lines(out) == 1);
  CHECK(out.find("File too large") != std::string::npos);
  CHECK(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST_CASE("hostile: --dump takes a trailing slash and an empty folder, refuses a full one unless --force") {
  const fs::path dir = fresh("dumpdir");
  const std::string small = "trace --batch 1 --tq 2 --d-model 4 --heads 2 --dump ";
  auto r = run_cli(small + dir.string() + "/ --json");
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "alpha.npy"));
  r = run_cli(small + dir.string() + "/");
  CHECK(r.code == 2);
  CHECK(r.output.find("not empty") != std::string::npos);
  CHECK(lines(r.output) == 1);
  fs::remove(dir / "alpha.npy");
  r = run_cli(small + dir.string() + "/ --force");
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "alpha.npy"));
  fs::remove_all(dir);
  fs::create_directories(dir);  // an existing, empty folder
  r = run_cli("flash --batch 1 --tq 4 --d-model 4 --heads 2 --dump " + dir.string() + "/");
  CHECK(r.code == 0);
  CHECK(fs::exists(dir / "tiles.json"));
  CHECK(temp_files_in(dir.parent_path()) == 0);
  fs::remove_all(dir);
}

TEST_CASE("hostile: write_folder_atomically leaves an existing folder untouched when fill fails") {
  const fs::path dir = fresh("folder");
  fs::create_directories(dir);
  write_bytes(dir / "keep.txt", "keep");
  CHECK_THROWS_WITH(write_folder_atomically(dir.string(), [](const std::string& tmp) {
                      write_file_atomically(tmp + "/half.txt", "x");
                      throw Error("boom");
                    }, true),
                    "boom");
  CHECK(fs::exists(dir / "keep.txt"));
  CHECK_FALSE(fs::exists(dir / "half.txt"));
  CHECK(temp_files_in(dir.parent_path()) == 0);
  fs::remove_all(dir);
}

// [SECTION] CLI options and memory

TEST_CASE("hostile: CLI sizes that wrap or do not fit are one line and exit 2, quickly") {
  const char* const cases[] = {
      "trace --batch 1 --tq 1 --d-model 4611686018427387904 --heads 1",
      "flash --batch 1 --tq 1 --d-model 4611686018427387904 --heads 1",
      "bench --batch 1 --tq 1 --d-model 4611686018427387904 --heads 1 --repeats 1",
      "cost --seq 1099511627776",
      "cost --d-model 3037000500 --heads 4",
      "cost --sweep seq=512,1099511627776",
      "trace --batch 1 --tq 1000000",  // refused from the prediction, nothing made first
      "trace --batch 1 --tq 1 --d-model 16384 --heads 1 --mem-limit 100M",  // the weights alone are 4 GiB
      "flash --batch 1 --tq 100000000 --d-model 64 --heads 1",
      "flash --batch 1 --tq 4096 --d-model 64 --heads 1 --mem-limit 1M",
      "trace --tq 99999999999999999999",
      "trace --mem-limit 1e30",
      "trace --mem-limit 0.5",
      "trace --mem-limit nan",
      "trace --seed -1",
      "trace --tk 0",
      "trace --batch -5",
      "flash --block-q 0",
      "flash --threads 0",
      "bench --repeats 0",
  };
  for (const char* args : cases) {
    INFO(args);
    const auto r = run_cli(args);
    CHECK(r.code == 2);
    CHECK(lines(r.output) == 1);
  }
  CHECK(run_cli("trace --mem-limit 0.5").output.find("out of range") != std::string::npos);
  CHECK(run_cli("trace --tq 99999999999999999999").output.find("out of range") != std::string::npos);
  CHECK(run_cli("trace --batch 1 --tq 1 --d-model 16384 --heads 1 --mem-limit 100M").output.find("weights 4.00 GiB") !=
        std::string::npos);
}

// [SECTION] lessons

TEST_CASE("hostile: lesson ids are [a-z0-9-]{1,64}, reported at file:line:col") {
  auto lesson = [](const std::string& step_id) {
    return "format = 2\nid = \"t\"\norder = 1\ntitle = { ko = \"가\", en = \"a\" }\n"
           "summary = { ko = \"가\", en = \"a\" }\n[scenario]\npreset = \"default\"\n[[step]]\nid = " +
           step_id + "\ntitle = { ko = \"가\", en = \"a\" }\ntext = { ko = \"가\", en = \"a\" }\n";
  };
  CHECK(lessons::load_lesson_text(lesson("\"fine-1\""), "t.toml").diagnostics.empty());
  const std::vector<std::string> bads = {"\"sub/../x\"", "\"a\\nb\"", "\"" + std::string(300, 'a') + "\"", "\"\"", "\"Up\""};
  for (const std::string& bad : bads) {
    INFO(bad);
    const auto r = lessons::load_lesson_text(lesson(bad), "t.toml");
    REQUIRE(r.diagnostics.size() == 1);
    CHECK(r.diagnostics[0].str().rfind("t.toml:9:6: step id '", 0) == 0);
    CHECK(r.diagnostics[0].str().find('\n') == std::string::npos);
  }
}

TEST_CASE("hostile: lesson sizes go through the checked path and the memory prediction") {
  const std::string head =
      "format = 2\nid = \"t\"\norder = 1\ntitle = { ko = \"가\", en = \"a\" }\n"
      "summary = { ko = \"가\", en = \"a\" }\n[scenario]\npreset = \"default\"\n";
  const std::string step =
      "[[step]]\nid = \"s\"\ntitle = { ko = \"가\", en = \"a\" }\ntext = { ko = \"가\", en = \"a\" }\n";
  for (const std::string& sizes : {std::string("tq = 1000000000\n"), std::string("d_model = 4611686018427387904\nheads = 1\n"),
                                  std::string("batch = 100000\ntq = 1000\n")}) {
    INFO(sizes);
    auto r = lessons::load_lesson_text(head + sizes + step, "t.toml");
    REQUIRE(r.lesson);
    lessons::check_lesson(*r.lesson, r.diagnostics);
    REQUIRE_FALSE(r.diagnostics.empty());
    CHECK(r.diagnostics[0].message.find("the engine refuses") != std::string::npos);
  }
  // cost = {seq = 2**40} made a quantity "0"
  auto r = lessons::load_lesson_text(head + step +
                                         "[[step.claim]]\nquantity = \"cost.score_elements\"\nequals = 0\n"
                                         "cost = { seq = 1099511627776 }\n",
                                     "t.toml");
  REQUIRE(r.lesson);
  lessons::check_lesson(*r.lesson, r.diagnostics);
  REQUIRE_FALSE(r.diagnostics.empty());
  CHECK(r.diagnostics[0].message.find("does not fit in 64 bits") != std::string::npos);
}
