// src/hub's parts without a network: names, the model info from outside, the file set, the
// cache's refs and snapshots, the digests, and the CLI's progress line. The downloads
// themselves are tested against the mock hub (tests/hub/test_hub.py, CTest hub_mock).
#include <arpa/inet.h>
#include <catch2/catch.hpp>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <thread>
#include <set>

#include "cli/progress_line.h"
#include "engine/atomic_file.h"
#include "engine/error.h"
#include "hub/cache.h"
#include "hub/cache_errors.h"
#include "hub/cache_list.h"
#include "hub/digest.h"
#include "hub/download_plan.h"
#include "hub/hub.h"
#include "hub/model_files.h"
#include "hub/model_info.h"
#include "hub/repo_name.h"
#include "hub/url_text.h"

using namespace attnsim;
using namespace attnsim::hub;
namespace fs = std::filesystem;

TEST_CASE("hub: a model name is ORG/NAME[@REV]; paths and hostile names are not names", "[hub]") {
  const auto r = parse_repo_ref("openai-community/gpt2");
  REQUIRE(r);
  CHECK(r->repo == "openai-community/gpt2");
  CHECK(r->revision == "main");
  CHECK(parse_repo_ref("Qwen/Qwen2-0.5B@refs/pr/1")->revision == "refs/pr/1");
  CHECK(display_name(*parse_repo_ref("a/b@v1.0")) == "a/b@v1.0");
  for (const char* path : {"gpt2", "./a/b", "/abs/x", "a/b/c", "../b", "a/..", "a--b/c", "a/.b", "a/b-", "", "a/", "/b", "a b/c"})
    CHECK_FALSE(parse_repo_ref(path));
  CHECK_FALSE(parse_repo_ref(std::string(97, 'a') + "/b"));
  for (const char* rev : {"a/b@", "a/b@../main", "a/b@x//y", "a/b@/x", "a/b@x/", "a/b@x y", "a/b@-x", "a/b@x/.git"})
    CHECK_THROWS_AS(parse_repo_ref(rev), Error);
}

TEST_CASE("hub: the cache folder of a repo is models--ORG--NAME", "[hub]") {
  CHECK(repo_cache("/c", "openai-community/gpt2").root == "/c/models--openai-community--gpt2");
  const RepoCache c = repo_cache("/c", "a/b");
  CHECK(c.blob("ab") == "/c/models--a--b/blobs/ab");
  CHECK(c.incomplete("ab") == "/c/models--a--b/blobs/ab.incomplete");
  CHECK(c.ref("refs/pr/1") == "/c/models--a--b/refs/refs/pr/1");
  CHECK(c.lock("ab") == "/c/.locks/models--a--b/ab.lock");
}

TEST_CASE("hub: the model info from outside: hashes become file names, sizes are checked", "[hub]") {
  const std::string sha(40, 'a'), lfs(64, 'b');
  const ModelInfo info = parse_model_info(
      R"({"sha":")" + sha + R"(","siblings":[{"rfilename":"config.json","size":5,"blobId":")" + sha +
          R"("},{"rfilename":"model.safetensors","size":9,"blobId":")" + sha + R"(","lfs":{"sha256":")" + lfs +
          R"(","size":9}}]})",
      "x");
  CHECK(info.commit == sha);
  CHECK(info.files.at("config.json").hash == sha);
  CHECK_FALSE(info.files.at("config.json").lfs);
  CHECK(info.files.at("model.safetensors").hash == lfs);
  CHECK(info.files.at("model.safetensors").size == 9);
  const auto one = [&](const std::string& sibling) {
    return R"({"sha":")" + sha + R"(","siblings":[)" + sibling + "]}";
  };
  for (const std::string& bad : {
           std::string("[]"), std::string("{\"sha\":\"../../etc\",\"siblings\":[]}"), std::string("{\"sha\":\"") + sha + "\"}",
           one(R"({"rfilename":"a","size":-1,"blobId":")" + sha + "\"}"),
           one(R"({"rfilename":"a","size":1e30,"blobId":")" + sha + "\"}"),
           one(R"({"rfilename":"a","size":18446744073709551615,"blobId":")" + sha + "\"}"),
           one(R"({"rfilename":"a","size":1,"blobId":"../x"})"),
           one(R"({"rfilename":"a","size":1,"blobId":")" + sha + R"(","lfs":{"sha256":"../../x","size":1}})"),
           one(R"({"rfilename":"a","size":1,"blobId":")" + sha + R"(","lfs":{"sha256":")" + lfs + R"(","size":2}})"),
           one(R"({"rfilename":"a","size":1,"blobId":")" + sha + R"("},{"rfilename":"a","size":1,"blobId":")" + sha + "\"}"),
           std::string("not json"), std::string(1000000, '[')})  // nested past the bound: an Error, not a stack overflow
    CHECK_THROWS_AS(parse_model_info(bad, "x"), Error);
}

TEST_CASE("hub: the files a model needs: config, a tokenizer, safetensors or the index", "[hub]") {
  const auto with = [](std::set<std::string> names) {
    return select_model_files([names](const std::string& f) { return names.count(f) > 0; });
  };
  const ModelFiles gpt2 = with({"config.json", "vocab.json", "merges.txt", "model.safetensors", "pytorch_model.bin", "README.md"});
  CHECK(gpt2.missing.empty());
  CHECK(gpt2.files == std::vector<std::string>{"config.json", "vocab.json", "merges.txt", "model.safetensors"});
  const ModelFiles sharded = with({"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json"});
  CHECK(sharded.sharded);
  CHECK(sharded.files.back() == "model.safetensors.index.json");
  CHECK(gpt2.tokenizer);
  // no tokenizer is needed (a folder without one opens on token ids); half of GPT-2's pair is not fetched
  const ModelFiles bare = with({"config.json", "vocab.json", "model.safetensors"});
  CHECK(bare.missing.empty());
  CHECK_FALSE(bare.tokenizer);
  CHECK(bare.files == std::vector<std::string>{"config.json", "model.safetensors"});
  CHECK(with({"vocab.json", "pytorch_model.bin"}).missing ==
        "config.json, model.safetensors (or model.safetensors.index.json; attnsim reads no .bin weights)");
}

namespace {

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// A model info of `files` (name -> size) at `commit`.
ModelInfo info_of(const std::string& commit, const std::map<std::string, int64_t>& files) {
  ModelInfo info{commit, {}};
  for (const auto& [name, size] : files) info.files[name] = RemoteFile{size, false, std::string(40, 'e')};
  return info;
}

}  // namespace

TEST_CASE("hub: the download plan: a pinned commit is a promise, small files within their caps, no tokenizer needed", "[hub]") {
  const std::string commit(40, 'a'), other(40, 'b');
  const ModelInfo info = info_of(commit, {{"config.json", 700}, {"model.safetensors", int64_t{1} << 45}});
  const ModelFiles plan = plan_download(*parse_repo_ref("o/m"), info);
  CHECK(plan.files == std::vector<std::string>{"config.json", "model.safetensors"});  // the weights: check_weights' to bound
  CHECK_FALSE(plan.tokenizer);
  CHECK(plan_download(*parse_repo_ref("o/m@" + commit), info).files.size() == 2);
  CHECK(refusal([&] { plan_download(*parse_repo_ref("o/m@" + other), info); }) ==
        "o/m@" + other + ": the Hub answered with commit " + commit + " for the pinned commit " + other +
            "; refused, nothing was written (a server that answers another commit does not serve this one: check HF_ENDPOINT)");
  CHECK(refusal([&] { plan_download(*parse_repo_ref("o/m"), info_of(commit, {{"config.json", 1000000000000000}, {"model.safetensors", 9}})); }) ==
        "o/m: the model info says config.json is 1000000000000000 bytes, over the 1.00 MiB attnsim reads of it; refused before any byte of it");
  CHECK(max_file_bytes("config.json") == 1 << 20);
  CHECK(max_file_bytes("tokenizer.json") == 32 << 20);
  CHECK(max_file_bytes("model.safetensors.index.json") == 16 << 20);
  CHECK(max_file_bytes("model-00001-of-00002.safetensors") == -1);
  CHECK(refusal([&] { plan_download(*parse_repo_ref("o/m"), info_of(commit, {{"config.json", 1}, {"model.safetensors", 1}, {"tokenizer.json", (32 << 20) + 1}})); })
            .find("tokenizer.json is 33554433 bytes, over the 32.00 MiB") != std::string::npos);
  CHECK(refusal([&] { plan_download(*parse_repo_ref("o/m"), info_of(commit, {{"model.safetensors", 1}})); }) ==
        "o/m at commit " + commit + " lacks config.json: not a model attnsim opens");
  CHECK(refusal([&] { check_shards(info, {"model.safetensors", "x.safetensors"}, "o/m"); }) ==
        "o/m: model.safetensors.index.json names x.safetensors, which the repository does not hold");
}

TEST_CASE("hub: URLs in messages keep no credentials", "[hub]") {
  CHECK(without_credentials("cannot reach http://user:PASSWORD@127.0.0.1:9 (refused)") == "cannot reach http://***@127.0.0.1:9 (refused)");
  CHECK(without_credentials("https://hf_TOKEN@host/a/b and http://u:p)x/@h") == "https://***@host/a/b and http://***@h");
  CHECK(without_credentials("https://huggingface.co/api/models (no userinfo)") == "https://huggingface.co/api/models (no userinfo)");
  CHECK(without_credentials("no URL: a@b") == "no URL: a@b");
  CHECK(without_credentials("http://") == "http://");
}

TEST_CASE("hub: shard names from an index are plain file names, once each", "[hub]") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hub-index-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const std::string index = (dir / "i.json").string();
  write_file_atomically(index, R"({"weight_map":{"a":"m-2.safetensors","b":"m-1.safetensors","c":"m-2.safetensors"}})");
  CHECK(read_shard_names(index) == std::vector<std::string>{"m-1.safetensors", "m-2.safetensors"});
  for (const char* bad : {R"({"weight_map":{"a":"../x"}})", R"({"weight_map":{"a":"sub/x"}})", R"({"weight_map":{"a":".x"}})",
                          R"({"weight_map":{"a":1}})", R"({"weight_map":{}})", R"({})", "nope", "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}) {
    write_file_atomically(index, bad);
    CHECK_THROWS_AS(read_shard_names(index), Error);
  }
  fs::remove_all(dir);
}

TEST_CASE("hub: refs and snapshots: a ref holds a commit, a snapshot is complete or names what it lacks", "[hub]") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hub-cache-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const RepoCache c = repo_cache(dir.string(), "a/b");
  const std::string commit(40, 'c');
  CHECK_FALSE(cached_commit(c, "main"));
  CHECK(cached_commit(c, commit) == commit);  // a commit names itself
  write_ref(c, "refs/pr/1", commit);
  CHECK(cached_commit(c, "refs/pr/1") == commit);
  write_file_atomically(c.ref(commit), std::string(40, 'd'));
  CHECK(cached_commit(c, commit) == commit);  // whatever a refs/<commit> (an old bug's) says
  write_file_atomically(c.ref("main"), "../../../etc");
  CHECK_THROWS_AS(cached_commit(c, "main"), Error);
  fs::create_directories(c.root + "/blobs");
  for (const char* f : {"config.json", "tokenizer.json", "model.safetensors"}) {
    write_file_atomically(c.blob(f), "x");
    link_snapshot_file(c, commit, f, f);
  }
  CHECK(fs::read_symlink(c.snapshot(commit) + "/config.json") == "../../blobs/config.json");
  CHECK(snapshot_missing(c.snapshot(commit)).empty());
  fs::remove(c.blob("model.safetensors"));  // a dangling link is missing
  CHECK(snapshot_missing(c.snapshot(commit)).find("model.safetensors") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hub: the cache's filesystem failures are one worded line: a file for a cache, a ref in the way", "[hub]") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hub-fs-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string file = (dir / "file").string();
  write_file_atomically(file, "");
  const RepoCache in_file = repo_cache(file, "a/b");
  CHECK(refusal([&] { make_cache_dir(in_file, in_file.root + "/blobs"); }) ==
        "the Hugging Face cache " + file + " (HF_HUB_CACHE) cannot be a folder: " + file +
            " is a file; set HF_HUB_CACHE to a folder");
  CHECK(refusal([&] { cached_commit(in_file, "main"); }).find("cannot be a folder") != std::string::npos);
  const RepoCache c = repo_cache((dir / "cache").string(), "a/b");
  make_cache_dir(c, c.root + "/blobs");
  write_file_atomically(c.root + "/snapshots", "");  // a damaged cache
  CHECK(refusal([&] { link_snapshot_file(c, std::string(40, 'a'), "config.json", "h"); }) ==
        c.root + "/snapshots is a file where the Hugging Face cache " + c.dir + " (HF_HUB_CACHE) needs a folder (a damaged cache): remove it and run again");
  CHECK(refusal([&] { cache_write_failed(c, c.root + "/blobs/x", EROFS); }) ==
        "cannot write to the Hugging Face cache " + c.dir + " (HF_HUB_CACHE): " + c.root +
            "/blobs/x (Read-only file system); make it writable, or set HF_HUB_CACHE to a folder you can write");
  write_ref(c, "main", std::string(40, 'c'));
  CHECK(refusal([&] { check_ref_place(c, "main/x"); }) ==
        "the Hugging Face cache " + c.dir + " (HF_HUB_CACHE) keeps " + c.ref("main") +
            " as the ref of main, where the revision main/x needs a folder: git allows no branch main/x beside main; "
            "remove that file if main is gone from the Hub, or ask for another revision");
  CHECK(refusal([&] { write_ref(c, "main/x", std::string(40, 'c')); }).find("as the ref of main") != std::string::npos);
  fs::remove(c.ref("main"));
  write_ref(c, "main/x", std::string(40, 'c'));
  CHECK(refusal([&] { cached_commit(c, "main"); }).find(c.ref("main") + " as a folder (of refs such as main/...)") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("hub: the stored models: complete snapshots a ref names, each blob counted once; delete removes the repo", "[hub]") {
  const fs::path dir = fs::temp_directory_path() / ("attnsim-hub-list-" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string commit(40, 'a'), other(40, 'b');
  const RepoCache c = repo_cache(dir.string(), "org/model");
  fs::create_directories(c.root + "/blobs");
  write_file_atomically(c.blob("h1"), "12345");        // config.json and tokenizer.json share it
  write_file_atomically(c.blob("h2"), "1234567890");  // the weights
  for (const auto& [file, hash] : {std::pair{"config.json", "h1"}, {"tokenizer.json", "h1"}, {"model.safetensors", "h2"}})
    link_snapshot_file(c, commit, file, hash);
  write_ref(c, "main", commit);
  write_ref(c, "refs/pr/1", commit);
  // skipped: a snapshot that lacks its weights, a damaged ref, what is not a model repository
  const RepoCache half = repo_cache(dir.string(), "org/half");
  fs::create_directories(half.root + "/blobs");
  write_file_atomically(half.blob("h1"), "{}");
  link_snapshot_file(half, other, "config.json", "h1");
  write_ref(half, "main", other);
  const RepoCache broken = repo_cache(dir.string(), "org/broken");
  fs::create_directories(broken.root + "/refs");
  write_file_atomically(broken.ref("main"), "not a commit");
  fs::create_directories(dir / "datasets--org--data" / "refs");
  fs::create_directories(dir / ".locks" / c.folder);

  const auto list = list_cached_models(dir.string());
  REQUIRE(list.size() == 2);
  CHECK(list[0].repo == "org/model");
  CHECK(list[0].revision == "main");
  CHECK(list[1].revision == "refs/pr/1");
  CHECK(list[0].commit == commit);
  CHECK(list[0].dir == c.snapshot(commit));
  CHECK(list[0].bytes == 15);  // 5 + 10: h1 once
  CHECK(list_cached_models((dir / "absent").string()).empty());

  delete_cached_model(dir.string(), "org/model");
  CHECK_FALSE(fs::exists(c.root));
  CHECK_FALSE(fs::exists(dir / ".locks" / c.folder));
  CHECK(fs::exists(half.root));  // the others stay
  CHECK(list_cached_models(dir.string()).empty());
  fs::remove_all(dir);
}

TEST_CASE("hub: digests: sha256 and git's blob sha1", "[hub]") {
  Digest empty(Digest::Kind::GitSha1, 0);
  CHECK(empty.hex() == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");  // git hash-object /dev/null
  Digest s(Digest::Kind::Sha256, 3);
  s.update("abc", 3);
  CHECK(s.hex() == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  Digest g(Digest::Kind::GitSha1, 6);
  g.update("hello\n", 6);
  CHECK(g.hex() == "ce013625030ba8dba906f756967f9e9ca394464a");  // echo hello | git hash-object --stdin
}

TEST_CASE("hub: the progress line: bytes, total, rate and ETA", "[hub]") {
  hub::Progress p{"model.safetensors", 0, 0, 512 << 20, int64_t{1} << 30, 256 << 20, 32};
  CHECK(cli::format_progress(p) == "model.safetensors  512.00 MiB / 1.00 GiB (50%)  8.00 MiB/s  ETA 1:04");
  p.seconds = 0;
  CHECK(cli::format_progress(p).find("ETA --:--") != std::string::npos);
}

TEST_CASE("hub: a download is cancelled by its flag, from another thread, while the Hub is silent", "[hub]") {
  // a port that accepts connections (the kernel's backlog) and never answers
  const int s = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  REQUIRE(::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(::listen(s, 4) == 0);
  REQUIRE(::getsockname(s, reinterpret_cast<sockaddr*>(&a), &n) == 0);
  const fs::path cache = fs::temp_directory_path() / ("attnsim-hub-cancel-" + std::to_string(getpid()));
  ::setenv("HF_ENDPOINT", ("http://127.0.0.1:" + std::to_string(ntohs(a.sin_port))).c_str(), 1);
  ::setenv("HF_HUB_CACHE", cache.c_str(), 1);
  ::unsetenv("HF_HUB_OFFLINE");
  std::atomic<bool> cancel{false};
  HubOptions o;
  o.cancel = &cancel;
  std::thread stop([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    cancel = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  std::string message;
  try {
    pull_model(*parse_repo_ref("a/b"), o);
  } catch (const Error& e) {
    message = e.what();
  }
  stop.join();
  ::unsetenv("HF_ENDPOINT");
  ::unsetenv("HF_HUB_CACHE");
  ::close(s);
  CHECK(message.find("download cancelled") != std::string::npos);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(5));  // not the 30 s stall timeout
  CHECK_FALSE(fs::exists(cache));  // nothing written before the model info
}
