// Models by name in the app (issue 39): the "Open from Hugging Face…" window (panel_hub.cpp)
// starts a job here and reads its state every frame; where the bytes come from and where they
// are kept is the platform's:
//   hub_download_desktop.cpp  src/hub on a worker thread: libcurl, Python's cache
//                             (HF_HUB_CACHE, ...), resumable .incomplete files
//   hub_download_web.cpp      the page's fetch (hub_web.js): files verified with the browser's
//                             SHA-256 / SHA-1, kept in IndexedDB (it works from file:// in
//                             Chromium and Firefox, as the Cache API and OPFS do; IndexedDB
//                             keeps Blobs on disk and commits a stored model in one transaction)
// Either way a name resolves as hub.h says: what is stored opens with no network; else the
// Hub's model info, memory predicted from config.json and the sizes before any weight byte,
// the files, each verified before it is kept; then the folder opens in the model scenario.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace attnsim::app {

struct HubJob {
  enum class State { Idle, Running, Done, Failed };
  State state = State::Idle;
  std::string name;        // as typed: ORG/NAME[@REV]
  std::string file;        // the file being fetched ("" while asking the Hub or opening)
  bool verifying = false;  // its bytes are all in, its hash is being checked (the page: a
                           // whole-file digest, seconds for a large file)
  int64_t done = 0, total = 0;  // bytes of the model's files in hand, of all of them
  int64_t fetched = 0;     // received over the network in this run
  double seconds = 0;      // since the run started
  bool from_store = false; // Done: opened from what was stored, no network
  std::string dir;         // Done: the folder to open
  std::string error;       // Failed: one line
};

struct StoredModel {
  std::string name;    // ORG/NAME or ORG/NAME@REV, as it opens again
  std::string commit;
  int64_t bytes = 0;
};

// `token` is for this run only (empty: none, or HF_TOKEN on the desktop). A job already
// running is left alone (the window offers Cancel instead).
void hub_start(const std::string& name, const std::string& token);
void hub_cancel();
HubJob hub_job();
// The job has been shown (its folder opened or its error bannered): back to Idle.
void hub_job_taken();
// The stored models; the list may arrive a frame or two after hub_refresh_stored (the page
// reads IndexedDB asynchronously).
void hub_refresh_stored();
std::vector<StoredModel> hub_stored();
void hub_delete_stored(const StoredModel& model);
// Where models are kept, in the UI's language: the Hugging Face cache shared with Python
// (its folder), or this browser's storage.
std::string hub_store_where();
// The desktop reads HF_TOKEN itself; the page keeps a token only when the user asks to.
bool hub_can_remember_token();
void hub_remember_token(const std::string& token);  // "" forgets it
std::string hub_remembered_token();

}  // namespace attnsim::app
