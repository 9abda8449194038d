#!/usr/bin/python3
"""The page's own files for tools/web.sh: the lessons, the shipped checkpoints and the fonts,
as one deflated zip whose entries carry the absolute paths the desktop reads them from
(attnsim/lessons/..., attnsim/assets/..., usr/share/fonts/...), written into the page as the
text of one element that src/app/shell.html decodes and main_web.cpp unpacks at start.

Why not emcc --embed-file: its bytes go through SINGLE_FILE's base64 (8 bits of text for 6 of
data) and are not compressed. Deflate takes the fonts and the training logs to half or less,
and the text form here spends 8 bits on 7:

  the zip's bits, 7 at a time -> one character each: the value itself (ASCII, one UTF-8
  byte), except NUL, CR and '<', which an HTML parser would replace or read as a tag; those
  become U+0100 + value (two UTF-8 bytes). The last group is padded with zero bits.

Intermediate checkpoints (a run's checkpoints/step-N/) ship for tools/retrain-check.sh; the
page carries those of the runs named in PAGE_TIMELINES only (lesson 14 scrubs `induction`'s).

The language models: the page opens wordnet-lm-s1 in its model view, with every .npy written
as float16 ('<f2', which the engine widens to float32 on load): half the bytes, and the
weights' own rounding is far below what the views show. Its sibling seeds ship their logs,
recipe, tokenizer and held-out report only (the Training tab compares runs; the lessons' figures
on them come from the value cache; nobody opens their weights in the page), and no run ships
its Hugging Face export (hf/: the desktop's export-hf round trip).

What the first view needs (the fonts, the lessons, the value cache, the language model and
its sibling seeds' logs, the `induction` toy model the decode scenarios and lesson 11 open) is
one zip, decoded and unpacked before main(); the other runs and induction's timeline
checkpoints (most of the bytes) are zips of about LATER_CHUNK_BYTES each, in elements of
class attnsim-later whose data-dirs names the folders they fill, unpacked after the first
frame (src/app/shell.html says when). Each later folder is whole in one chunk, but for its
model.json, which the first zip carries: a lesson's value cache keys hash it, and so every
folder is there from the start.

Usage: web_files.py OUT.html-part FILE[@PATH]...   (from the repository root)
  the lessons/ and assets/ folders go in as /attnsim/..., each FILE at PATH (default: FILE)"""
import ast
import io
import os
import struct
import sys
import zipfile

PAGE_TIMELINES = {"induction"}
FIRST_VIEW_MODELS = {"wordnet-lm-s1", "wordnet-lm-s2", "wordnet-lm-s3", "induction"}
LATER_CHUNK_BYTES = 1 << 18  # uncompressed: one per frame, some ms each (a key held over a long frame is missed)
HALF_MODELS = {"wordnet-lm-s1"}
LOG_ONLY_MODELS = {"wordnet-lm-s2", "wordnet-lm-s3"}
LOG_ONLY_FILES = {"model.json", "train_log.jsonl", "tokenizer.json", "heldout_report.json"}
ESCAPED = {0x00, 0x0D, 0x3C}


def npy_header(dict_text):
    """A version 1.0 .npy preamble + header, padded so the data starts on a 64-byte boundary."""
    header = dict_text + " " * ((64 - (10 + len(dict_text) + 1) % 64) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin-1")


def half_npy(data, path):
    """A float32 .npy (version 1, C order) as the same array in float16 ('<f2')."""
    if data[:6] != b"\x93NUMPY" or data[6] != 1:
        sys.exit("web_files.py: %s: not a version 1.0 .npy" % path)
    (n,) = struct.unpack("<H", data[8:10])
    meta = ast.literal_eval(data[10:10 + n].decode("latin-1"))
    if meta["descr"] != "<f4" or meta["fortran_order"]:
        sys.exit("web_files.py: %s: want a C-order float32 array, found %r" % (path, meta))
    body = data[10 + n:]
    count = len(body) // 4
    values = struct.unpack("<%df" % count, body)
    dict_text = "{'descr': '<f2', 'fortran_order': False, 'shape': %r, }" % (tuple(meta["shape"]),)
    return npy_header(dict_text) + struct.pack("<%de" % count, *values)  # 'e': IEEE half, rounded to nearest


def model_name(path):
    """The run folder under assets/models/ a path is in, or None."""
    parts = path.split(os.sep)
    return parts[2] if len(parts) > 3 and parts[:2] == ["assets", "models"] else None


def shipped(path):
    parts = path.split(os.sep)
    name = model_name(path)
    if name and "hf" in parts[3:-1]:
        return False
    if name in LOG_ONLY_MODELS:
        return parts[-1] in LOG_ONLY_FILES and len(parts) == 4
    return True


def page_files(extra):
    files = [(f.split("@")[0], f.split("@")[-1].lstrip("/")) for f in extra]
    for top in ("lessons", "assets"):
        for root, dirs, names in os.walk(top):
            dirs.sort()
            parts = root.split(os.sep)
            if "checkpoints" in parts and parts[parts.index("checkpoints") - 1] not in PAGE_TIMELINES:
                continue
            files += [(os.path.join(root, n), "attnsim/" + os.path.join(root, n)) for n in sorted(names)
                      if shipped(os.path.join(root, n))]
    return files


def later_folder(name):
    """The folder (as the page's absolute path) whose files wait until after the first frame,
    or None for a file the first view may need. `name` is the zip entry's path."""
    parts = name.split("/")
    if parts[:3] != ["attnsim", "assets", "models"] or len(parts) < 5 or parts[-1] == "model.json":
        return None
    if parts[3] not in FIRST_VIEW_MODELS:
        return "/" + "/".join(parts[:4])
    return "/" + "/".join(parts[:5]) if parts[4] == "checkpoints" and len(parts) > 5 else None


def later_chunks(files):
    """The later files grouped by folder, folders packed in order into chunks of about
    LATER_CHUNK_BYTES: [(folders, files)]."""
    folders = {}
    for src, name in files:
        folder = later_folder(name)
        if folder:
            folders.setdefault(folder, []).append((src, name))
    chunks = []
    size = LATER_CHUNK_BYTES
    for folder, entries in folders.items():
        if size >= LATER_CHUNK_BYTES:
            chunks.append(([], []))
            size = 0
        chunks[-1][0].append(folder)
        chunks[-1][1].extend(entries)
        size += sum(os.path.getsize(src) for src, _ in entries)
    return chunks


def element(data, attributes):
    return '<script type="application/octet-stream"%s data-bytes="%d">%s</script>\n' % (
        attributes, len(data), seven_bit_text(data))


def zipped(files):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for src, name in files:  # sorted, with a fixed time: the same sources give the same page
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(src, "rb") as f:
                data = f.read()
            if model_name(src) in HALF_MODELS and src.endswith(".npy"):
                data = half_npy(data, src)
            z.writestr(info, data, compresslevel=9)
    return buf.getvalue()


def seven_bit_text(data):
    values = bytearray()
    for i in range(0, len(data), 7):  # 7 bytes = 56 bits = 8 characters
        chunk = data[i:i + 7]
        n = int.from_bytes(chunk.ljust(7, b"\0"), "big")
        groups = (len(chunk) * 8 + 6) // 7
        values += bytes((n >> (49 - 7 * k)) & 0x7F for k in range(groups))
    table = {v: chr(0x100 + v) for v in ESCAPED}
    return values.decode("latin-1").translate(table)


def main():
    out, extra = sys.argv[1], sys.argv[2:]
    files = page_files(extra)
    first = zipped([(src, name) for src, name in files if not later_folder(name)])
    later = [(folders, zipped(entries)) for folders, entries in later_chunks(files)]
    with open(out + ".tmp", "w", encoding="utf-8") as f:
        f.write(element(first, ' id="attnsim-files"'))
        for folders, data in later:
            f.write(element(data, ' class="attnsim-later" data-dirs="%s"' % " ".join(folders)))
    os.replace(out + ".tmp", out)
    print("page files: %.1f MB zipped (%.1f MB for the first view, the rest in %d chunks), %.1f MB as text" %
          ((len(first) + sum(len(d) for _, d in later)) / 1e6, len(first) / 1e6, len(later), os.path.getsize(out) / 1e6))


if __name__ == "__main__":
    main()
