#include "staged_out.h"

#include <unistd.h>

#include <csignal>
#include <filesystem>

#include "engine/atomic_file.h"
#include "engine/error.h"

namespace attnsim::cli {

namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  std::signal(sig, SIG_DFL);  // a second one ends the process
}

// Installs the handlers for the run's lifetime; restores the previous ones after.
struct StopSignals {
  void (*old_int)(int), (*old_term)(int);
  StopSignals() : old_int(std::signal(SIGINT, on_stop_signal)), old_term(std::signal(SIGTERM, on_stop_signal)) {
    g_signal = 0;
  }
  ~StopSignals() {
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
  }
};

}  // namespace

bool stop_requested() { return g_signal != 0; }

namespace fs = std::filesystem;

static void probe_folder(const fs::path& folder, const std::string& what) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) throw Error(what + ": the folder " + folder.string() + " does not exist");
  const fs::path probe = folder / (".attnsim-probe-" + std::to_string(::getpid()));
  if (!fs::create_directory(probe, ec)) throw Error(what + ": cannot write in " + folder.string() + " (" + ec.message() + ")");
  fs::remove(probe, ec);
}

void check_writable_file(const std::string& path) {
  std::error_code ec;
  const fs::path p(path);
  if (path.back() == '/' || fs::is_directory(p, ec)) throw Error(path + " is a folder; --out names a file");
  check_replaceable(path);
  probe_folder(p.has_parent_path() ? p.parent_path() : fs::path("."), path);
}

void check_writable_folder(const std::string& dir, bool force) {
  std::string d = dir;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const fs::path p(d);
  const std::string name = p.lexically_normal().filename().string();
  if (name.empty() || name == "." || name == "..")
    throw Error(dir + ": name a folder of its own (not the working folder or a parent)");
  std::error_code ec;
  if (fs::exists(fs::symlink_status(p, ec))) {
    if (!fs::is_directory(fs::symlink_status(p, ec))) throw Error(dir + " exists and is not a folder; choose a new folder");
    if (!force && !fs::is_empty(p, ec))
      throw Error(dir + " is a folder that is not empty; choose a new or empty folder, or add --force to replace it");
  }
  probe_folder(p.has_parent_path() ? p.parent_path() : fs::path("."), dir);
}

void run_staged(const std::string& out, bool force, const std::function<void(const std::string&)>& fill) {
  check_writable_folder(out, force);  // all of it before any work
  StopSignals signals;
  write_folder_atomically(
      out,
      [&](const std::string& tmp) {
        fill(tmp);
        if (const int sig = g_signal)  // the run stopped early: its folder is not a finished run
          throw Error(std::string("interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM") + "; " + out +
                      " was not written");
      },
      force);
}

}  // namespace attnsim::cli
