// --out for commands that write a whole folder over a long run (train): the folder rules of
// --dump (a new or empty folder; --force replaces one; "." and ".." never), the run written
// into a hidden temporary sibling and renamed into place only when it finished, and SIGINT /
// SIGTERM turned into a clean stop: the run ends at its next step, the temporary folder is
// removed, and an existing --out is left as it was. A second signal kills at once (the
// default action), for a run stuck inside one step.
#pragma once

#include <functional>
#include <string>

namespace attnsim::cli {

// True once SIGINT or SIGTERM arrived during run_staged (poll it from the run's stop hook).
bool stop_requested();

// Checks `out` first (before any work: exists as a file, non-empty without force, parent
// missing or not writable), then runs fill(tmp_dir) and renames tmp_dir to `out`. Throws
// Error on any failure or interruption ("interrupted by SIGTERM; OUT was not written"),
// leaving nothing behind.
void run_staged(const std::string& out, bool force, const std::function<void(const std::string& tmp_dir)>& fill);

// Before a command computes what it will write: `path` can be written as a file (it is not a
// folder, its folder exists and takes a new file). Error naming the path otherwise. A probe
// file is made and removed at once: access() passes root on folders it cannot write (/proc).
void check_writable_file(const std::string& path);
// The same for a folder write_folder_atomically will make: new or empty (or force), "." and
// ".." refused, its parent a writable folder.
void check_writable_folder(const std::string& dir, bool force);

}  // namespace attnsim::cli
