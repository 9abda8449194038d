// The page's side of src/app/hub_download.h: models by their Hub name, fetched with the
// browser's fetch, verified with crypto.subtle and kept in IndexedDB, so that a model fetched
// once opens again with no network. hub_download_web.cpp calls start / cancel / list / remove;
// this file answers through the app's exported functions (attnsim_hub_*). tools/web.sh puts it
// in the page beside the app's script, unminified.
//
// IndexedDB "attnsim-hub" (it works from file:// in Chromium and Firefox; so do the Cache API
// and OPFS, but only IndexedDB commits several records in one transaction):
//   blobs   HASH -> {blob, size}    one file, whole and verified; HASH names it as Python's
//                                    cache does: the LFS sha256, else the git blob sha1
//   parts   [HASH, n] -> Blob       a file's bytes so far, in parts of up to 8 MiB: a cut or
//                                    cancelled download resumes from them with a Range request
//   models  NAME -> {name, commit, files: {FILE: HASH}, bytes}
//                                    written last, when every file is in blobs
// A model then opens by writing its files into the page's memory (/hub/models--ORG--NAME/
// snapshots/COMMIT/) and handing that folder to the app, as a dropped folder is handed.
//
// The hash may set the Hub and the stall timeout, as HF_ENDPOINT and ATTNSIM_HUB_TIMEOUT do on
// the desktop: #...&hf_endpoint=http://127.0.0.1:PORT&hub_timeout=SECONDS (the tests' mock hub).
var attnsimHub = (function () {
  "use strict";
  var PART = 8 << 20;
  var job = null;  // {abort: AbortController, cancelled}
  var dbPromise = null;

  // [SECTION] IndexedDB, as promises
  function db() {
    if (!dbPromise) {
      dbPromise = new Promise(function (resolve, reject) {
        var r = indexedDB.open("attnsim-hub", 1);
        r.onupgradeneeded = function () {
          ["blobs", "parts", "models"].forEach(function (s) { r.result.createObjectStore(s); });
        };
        r.onsuccess = function () { resolve(r.result); };
        r.onerror = function () { reject(r.error); };
      });
    }
    return dbPromise;
  }
  function request(r) {
    return new Promise(function (resolve, reject) {
      r.onsuccess = function () { resolve(r.result); };
      r.onerror = function () { reject(r.error); };
    });
  }
  function committed(t) {
    return new Promise(function (resolve, reject) {
      t.oncomplete = resolve;
      t.onerror = t.onabort = function () { reject(t.error || new Error("IndexedDB transaction aborted")); };
    });
  }
  async function get(store, key) {
    return request((await db()).transaction(store).objectStore(store).get(key));
  }
  async function partsOf(hash) {  // [Blob, ...] in order
    var range = IDBKeyRange.bound([hash, 0], [hash, Infinity]);
    return request((await db()).transaction("parts").objectStore("parts").getAll(range));
  }
  async function dropParts(hash) {
    var t = (await db()).transaction("parts", "readwrite");
    t.objectStore("parts").delete(IDBKeyRange.bound([hash, 0], [hash, Infinity]));
    await committed(t);
  }

  // [SECTION] the app's exported functions. Text goes in through the heap, not ccall's
  // "string" (that copies onto the 8 MiB stack, and a model info or an index can be MBs).
  function call(name, texts, extra) {
    var ptrs = texts.map(function (t) { return allocateUTF8(t); });
    try {
      return Module.ccall(name, "string", ptrs.map(function () { return "number"; }).concat(extra !== undefined ? ["number"] : []),
                          ptrs.concat(extra !== undefined ? [extra] : []));
    } finally {
      ptrs.forEach(function (p) { Module._free(p); });
    }
  }
  function json(name, texts) {
    var out = JSON.parse(call(name, texts));
    if (out.error) throw new Error(out.error);
    return out;
  }
  function sum(files) { return files.reduce(function (n, f) { return n + f.size; }, 0); }

  // [SECTION] one request; a refusal is worded by hub_errors.cpp, as the desktop's is
  // Read from the hash the page was opened with, and from any later hash that names them: the
  // app rewrites the hash as the user moves (main_web.cpp), which drops these keys.
  function settingsFrom(hash, old) {
    var get = function (key) {
      var m = new RegExp("[#&]" + key + "=([^&]*)").exec(hash);
      return m ? decodeURIComponent(m[1]) : "";
    };
    var endpoint = get("hf_endpoint"), timeout = Number(get("hub_timeout"));
    return { endpoint: endpoint ? endpoint.replace(/\/+$/, "") : old.endpoint,
             timeout: timeout >= 1 && timeout <= 3600 ? timeout : old.timeout };
  }
  var hubSettings = settingsFrom(location.hash, { endpoint: "https://huggingface.co", timeout: 30 });
  window.addEventListener("hashchange", function () { hubSettings = settingsFrom(location.hash, hubSettings); });
  function settings() { return hubSettings; }
  function statusError(status, ctx, what) {
    return Module.ccall("attnsim_hub_status_error", "string", ["string", "string", "string", "number", "number"],
                        [ctx.name, what, ctx.endpoint, status, ctx.token ? 1 : 0]);
  }
  // The slowest average rate a download may keep after `timeout` seconds of grace, as on the
  // desktop (src/hub/http.h's kMinBytesPerSecond): a hub that drips a few bytes a second
  // cannot hold a request open for ever.
  var MIN_BYTES_PER_SECOND = 16 * 1024;
  // The Hub's address in a message: never a user or password (hub/url_text.h).
  function shown(url) { return Module.ccall("attnsim_hub_shown_url", "string", ["string"], [url]); }
  // fetch with the token, the stall timeout, the deadline and Cancel; `onBody(response, poke)`
  // reads the body and calls poke(bytes) for each piece. Resolves to what onBody returns;
  // rejects with one line.
  async function hubFetch(ctx, url, what, range, onBody) {
    var headers = {};
    if (ctx.token) headers.Authorization = "Bearer " + ctx.token;
    if (range > 0) headers.Range = "bytes=" + range + "-";
    var stalled = false, tooSlow = false, timer = null, received = 0, started = Date.now();
    var seconds = function () { return (Date.now() - started) / 1000; };
    var poke = function (bytes) {  // no byte for `timeout` seconds: give up, keep what is stored
      received += bytes || 0;
      clearTimeout(timer);
      timer = setTimeout(function () { stalled = true; job.abort.abort(); }, ctx.timeout * 1000);
    };
    // the deadline grows with what has come: timeout, plus a second per MIN_BYTES_PER_SECOND
    var deadline = setInterval(function () {
      if (received > 0 && seconds() > ctx.timeout + received / MIN_BYTES_PER_SECOND) { tooSlow = true; job.abort.abort(); }
    }, 1000);
    poke(0);
    try {
      var response = await fetch(url, { headers: headers, signal: job.abort.signal, cache: "no-store" });
      if (!response.ok) throw new Error(statusError(response.status, ctx, what));
      return await onBody(response, poke);
    } catch (e) {
      if (job.cancelled) throw new Error(ctx.name + ": download cancelled during " + what + "; ask for the model again to resume");
      if (stalled)
        throw new Error(ctx.name + ": " + what + ": no data from " + shown(ctx.endpoint) + " for " + ctx.timeout +
                        " s; ask for the model again to resume");
      if (tooSlow)
        throw new Error(ctx.name + ": " + what + ": " + shown(ctx.endpoint) + " sent " + received + " bytes in " +
                        seconds().toFixed(1) + " s, slower than " + MIN_BYTES_PER_SECOND / 1024 + " KiB/s after the first " +
                        ctx.timeout + " s; ask for the model again to resume");
      if (e instanceof TypeError)  // fetch's word for the network, CORS and a cut body alike
        throw new Error(ctx.name + ": cannot reach " + shown(ctx.endpoint) + " for " + what + " (" + shown(e.message) +
                        "): check the network; what arrived is kept, and asking for the model again resumes");
      throw e;
    } finally {
      clearTimeout(timer);
      clearInterval(deadline);
    }
  }

  // [SECTION] one file into blobs, whole and verified or not at all
  async function hexDigest(algorithm, blob, gitSize) {
    var bytes = await blob.arrayBuffer();
    if (gitSize !== undefined) {  // git's blob id: sha1 of "blob SIZE\0" + the bytes
      var head = new TextEncoder().encode("blob " + gitSize + "\0");
      var both = new Uint8Array(head.length + bytes.byteLength);
      both.set(head);
      both.set(new Uint8Array(bytes), head.length);
      bytes = both;
    }
    var d = new Uint8Array(await crypto.subtle.digest(algorithm, bytes));
    return Array.prototype.map.call(d, function (b) { return (b < 16 ? "0" : "") + b.toString(16); }).join("");
  }

  async function fetchFile(ctx, file, remote, progress) {
    var have = await get("blobs", remote.hash);
    if (have && have.size === remote.size) return;
    var parts = await partsOf(remote.hash);
    var kept = parts.reduce(function (n, p) { return n + p.size; }, 0);
    if (kept > remote.size) { await dropParts(remote.hash); parts = []; kept = 0; }
    if (kept < remote.size || remote.size === 0) {
      var url = ctx.endpoint + "/" + ctx.repo + "/resolve/" + ctx.commit + "/" + file;
      await hubFetch(ctx, url, file, kept, async function (response, poke) {
        if (kept > 0 && response.status !== 206) {  // the Range was ignored: start over
          await dropParts(remote.hash);
          parts = [];
          kept = 0;
        }
        var reader = response.body.getReader(), chunks = [], chunked = 0;
        var store = async function () {  // the bytes in hand become part n, durably
          if (!chunked) return;
          var part = new Blob(chunks), t = (await db()).transaction("parts", "readwrite");
          t.objectStore("parts").put(part, [remote.hash, parts.length]);
          await committed(t);
          parts.push(part);
          chunks = [];
          chunked = 0;
        };
        try {
          for (;;) {
            var r = await reader.read();
            if (r.done) break;
            poke(r.value.length);
            if (kept + chunked + r.value.length > remote.size)
              throw new Error(ctx.name + ": " + file + ": the Hub sent more than its " + remote.size + " bytes");
            chunks.push(r.value);
            chunked += r.value.length;
            progress(file, kept + chunked, r.value.length);
            if (chunked >= PART) { kept += chunked; await store(); }
          }
        } finally {
          var more = chunked;
          await store();  // a cut or cancel keeps what arrived
          kept += more;
        }
      });
    }
    if (kept !== remote.size) {
      throw new Error(ctx.name + ": " + file + ": the body ended at " + kept + " of " + remote.size +
                      " bytes; ask for the model again to resume");
    }
    var blob = new Blob(parts);
    progress(file, remote.size, 0, true);  // hashing a large file takes seconds: say so
    var got = remote.lfs ? await hexDigest("SHA-256", blob) : await hexDigest("SHA-1", blob, remote.size);
    if (got !== remote.hash) {
      await dropParts(remote.hash);  // resuming it would repeat the mismatch
      throw new Error(ctx.name + ": " + file + ": its " + (remote.lfs ? "sha256" : "git sha1") + " is " + got +
                      ", the Hub's model info says " + remote.hash + " (nothing was kept; try again)");
    }
    var t = (await db()).transaction(["blobs", "parts"], "readwrite");
    t.objectStore("blobs").put({ blob: blob, size: remote.size }, remote.hash);
    t.objectStore("parts").delete(IDBKeyRange.bound([remote.hash, 0], [remote.hash, Infinity]));
    await committed(t);
  }

  // The weights need room in this browser's storage as well as in the page's memory: refused
  // before their first byte, with the figures, as the memory is. The browser's estimate is
  // what it will grant this page (file:// included).
  async function checkRoom(ctx, weightBytes) {
    if (!navigator.storage || !navigator.storage.estimate) return;
    var e = await navigator.storage.estimate();
    var mb = function (n) { return (n / 1048576).toFixed(1) + " MiB"; };
    if (e.quota !== undefined && e.usage !== undefined && weightBytes > e.quota - e.usage)
      throw new Error(ctx.name + ": its weights take " + mb(weightBytes) + ", over the " + mb(e.quota - e.usage) +
                      " this browser will still store for the page; nothing of the weights was downloaded: " +
                      "delete a stored model, or use the desktop app");
  }

  // [SECTION] a stored model into the page's memory, then the app
  async function openStored(model) {
    var folder = model.name.split("@")[0].replace("/", "--");
    var dir = "/hub/models--" + folder + "/snapshots/" + model.commit;
    FS.mkdirTree(dir);
    for (var file in model.files) {
      var path = dir + "/" + file;
      if (FS.analyzePath(path).exists) continue;  // opened before in this tab
      var b = await get("blobs", model.files[file]);
      if (!b) throw new Error(model.name + ": " + file + " is missing from this browser's storage: delete the model and open it again");
      FS.writeFile(path, new Uint8Array(await b.blob.arrayBuffer()));
    }
    return dir;
  }

  // A small answer read whole, each piece counted for the stall guard and the deadline.
  async function textOf(response, poke) {
    var reader = response.body.getReader(), pieces = [];
    for (;;) {
      var r = await reader.read();
      if (r.done) break;
      poke(r.value.length);
      pieces.push(r.value);
    }
    return new Blob(pieces).text();
  }

  async function download(ctx, progressCall) {
    var t0 = performance.now(), fetched = 0, done = 0;
    var info = await hubFetch(ctx, ctx.endpoint + "/api/models/" + ctx.repo + "/revision/" +
                              encodeURIComponent(ctx.revision) + "?blobs=true", "the model info", 0, textOf);
    var plan = json("attnsim_hub_plan", [ctx.name, info]);
    ctx.commit = plan.commit;
    var weights = plan.weights, total = sum(plan.files) + sum(weights);
    var fileMap = {};
    var progress = function (file, fileDone, received, verifying) {
      fetched += received;
      progressCall(file, done + fileDone, total, fetched, (performance.now() - t0) / 1000, verifying);
    };
    var fetchOne = async function (f) {
      await fetchFile(ctx, f.name, f, progress);
      done += f.size;
      fileMap[f.name] = f.hash;
    };
    for (var i = 0; i < plan.files.length; i++) await fetchOne(plan.files[i]);  // config, tokenizer, index
    if (plan.sharded) {
      var index = await (await get("blobs", fileMap["model.safetensors.index.json"])).blob.text();
      weights = json("attnsim_hub_shards", [ctx.name, index, info]).weights;
      total += sum(weights);
    }
    var config = await (await get("blobs", fileMap["config.json"])).blob.text();
    var refusal = call("attnsim_hub_check", [ctx.name, config], sum(weights));
    if (refusal) throw new Error(refusal);
    await checkRoom(ctx, sum(weights));
    for (var w = 0; w < weights.length; w++) await fetchOne(weights[w]);
    var model = { name: ctx.name, commit: ctx.commit, files: fileMap, bytes: total };
    var t = (await db()).transaction("models", "readwrite");
    t.objectStore("models").put(model, ctx.name);
    await committed(t);
    // A teacher stores a model at home to open it in class: ask the browser not to evict it
    // under storage pressure (it may say no; the model is stored either way).
    if (navigator.storage && navigator.storage.persist) navigator.storage.persist().catch(function () {});
    return { model: model, fetched: fetched, seconds: (performance.now() - t0) / 1000 };
  }

  // [SECTION] what hub_download_web.cpp calls
  async function start(name, token) {
    if (job) return;
    job = { abort: new AbortController(), cancelled: false };
    var report = function (file, done, total, fetched, seconds, verifying) {
      Module.ccall("attnsim_hub_progress", null, ["string", "number", "number", "number", "number", "number"],
                   [file, done, total, fetched, seconds, verifying ? 1 : 0]);
    };
    try {
      var ref = json("attnsim_hub_parse", [name]);
      var s = settings();
      var ctx = { name: ref.name, repo: ref.repo, revision: ref.revision, token: token,
                  endpoint: s.endpoint, timeout: s.timeout };
      var stored = await get("models", ref.name), got = null;
      if (!stored) got = await download(ctx, report);
      report("", 1, 1, 0, 0, false);  // opening: the bar full, "Opening…"
      var dir = await openStored(stored || got.model);
      Module.ccall("attnsim_hub_finished", null, ["string", "string", "number", "number", "number"],
                   [dir, "", stored ? 1 : 0, got ? got.fetched : 0, got ? got.seconds : 0]);
    } catch (e) {
      Module.ccall("attnsim_hub_finished", null, ["string", "string", "number", "number", "number"],
                   ["", String(e.message || e), 0, 0, 0]);
    } finally {
      job = null;
      list();
    }
  }

  function cancel() {
    if (!job) return;
    job.cancelled = true;
    job.abort.abort();
  }

  async function list() {
    var models = [];
    try {
      models = await request((await db()).transaction("models").objectStore("models").getAll());
    } catch (e) {
      console.warn("attnsim: this browser's storage cannot be read: " + e);
    }
    var rows = models.map(function (m) { return { name: m.name, commit: m.commit, bytes: m.bytes }; });
    Module.ccall("attnsim_hub_stored", null, ["string"], [JSON.stringify(rows)]);
    return rows;
  }

  // A model's record, then every blob no other stored model names.
  async function remove(name) {
    var d = await db();
    var all = await request(d.transaction("models").objectStore("models").getAll());
    var doomed = all.filter(function (m) { return m.name === name; });
    var kept = {};
    all.forEach(function (m) { if (m.name !== name) for (var f in m.files) kept[m.files[f]] = true; });
    var t = d.transaction(["models", "blobs"], "readwrite");
    t.objectStore("models").delete(name);
    doomed.forEach(function (m) {
      for (var f in m.files) if (!kept[m.files[f]]) t.objectStore("blobs").delete(m.files[f]);
    });
    await committed(t);
    return list();
  }

  return { start: start, cancel: cancel, list: list, remove: remove };
})();
