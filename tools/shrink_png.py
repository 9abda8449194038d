#!/usr/bin/python3
"""Rewrite a PNG as an 8-bit palette PNG, so the README's screenshots stay small.

usage: tools/shrink_png.py IN.png OUT.png [--colors N]

The app writes RGBA through stb_image_write, about 4 bytes a pixel before zlib; a
screenshot of the dark UI has a few thousand colours, most of them anti-aliased text.
An image with at most N colours (default 256) is stored exactly; one with more is reduced
by median cut over its distinct colours, weighted by how often each occurs, and each
colour goes to its nearest palette entry. Only the standard library: docs-images.sh
runs wherever the build does, with Debian's python3 and nothing more. Alpha is dropped:
the window and slide exports it is for are opaque.
"""
import struct
import sys
import zlib


def read_rgba(path):
    data = open(path, 'rb').read()
    if data[:8] != b'\x89PNG\r\n\x1a\n':
        sys.exit(f'shrink_png: {path}: not a PNG')
    pos, idat, header = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b'IHDR':
            header = struct.unpack('>IIBBBBB', body)
        elif kind == b'IDAT':
            idat.append(body)
    width, height, depth, colour, _, _, interlace = header
    channels = {6: 4, 2: 3}.get(colour)
    if depth != 8 or channels is None or interlace:
        sys.exit(f'shrink_png: {path}: only 8-bit RGB or RGBA, not interlaced')
    raw = zlib.decompress(b''.join(idat))
    stride = width * channels
    rows, prev = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        row = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        unfilter(kind, row, prev, channels)
        rows.append(row)
        prev = row
    pixels = []
    for row in rows:
        pixels.extend(tuple(row[x:x + 3]) for x in range(0, stride, channels))
    return width, height, pixels


def unfilter(kind, row, prev, bpp):
    """Undo one row's PNG filter in place (the five of the PNG specification)."""
    if kind == 0:
        return
    for i in range(len(row)):
        a = row[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            p = a
        elif kind == 2:
            p = b
        elif kind == 3:
            p = (a + b) >> 1
        else:
            pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
            p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
        row[i] = (row[i] + p) & 255


def median_cut(counts, n):
    """Split the box of colours with the widest channel at its weighted median until n boxes."""
    boxes = [list(counts.items())]
    while len(boxes) < n:
        def spread(box):
            return max(max(c[0][k] for c in box) - min(c[0][k] for c in box) for k in range(3))
        splittable = [b for b in boxes if len(b) > 1]
        if not splittable:
            break
        box = max(splittable, key=lambda b: spread(b) * sum(w for _, w in b))
        boxes.remove(box)
        axis = max(range(3), key=lambda k: max(c[0][k] for c in box) - min(c[0][k] for c in box))
        box.sort(key=lambda c: c[0][axis])
        half, seen, cut = sum(w for _, w in box) / 2, 0, 1
        for i, (_, w) in enumerate(box):
            seen += w
            if seen >= half:
                cut = min(max(i, 1), len(box) - 1)
                break
        boxes += [box[:cut], box[cut:]]
    palette = []
    for box in boxes:
        total = sum(w for _, w in box)
        palette.append(tuple(round(sum(c[k] * w for c, w in box) / total) for k in range(3)))
    return palette


def write_palette_png(path, width, height, pixels, palette, index_of):
    def chunk(kind, body):
        return struct.pack('>I', len(body)) + kind + body + struct.pack('>I', zlib.crc32(kind + body))
    raw = bytearray()
    for y in range(height):
        raw.append(0)
        raw.extend(index_of[p] for p in pixels[y * width:(y + 1) * width])
    png = (b'\x89PNG\r\n\x1a\n'
           + chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 3, 0, 0, 0))
           + chunk(b'PLTE', b''.join(bytes(c) for c in palette))
           + chunk(b'IDAT', zlib.compress(bytes(raw), 9))
           + chunk(b'IEND', b''))
    open(path, 'wb').write(png)


def main():
    args = sys.argv[1:]
    colours = 256
    if '--colors' in args:
        i = args.index('--colors')
        colours = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2 or not 2 <= colours <= 256:
        sys.exit(__doc__.strip().splitlines()[2])
    width, height, pixels = read_rgba(args[0])
    counts = {}
    for p in pixels:
        counts[p] = counts.get(p, 0) + 1
    if len(counts) <= colours:
        palette = list(counts)
        index_of = {c: i for i, c in enumerate(palette)}
    else:
        palette = median_cut(counts, colours)
        index_of = {}
        for c in counts:
            index_of[c] = min(range(len(palette)),
                              key=lambda i: sum((c[k] - palette[i][k]) ** 2 for k in range(3)))
    write_palette_png(args[1], width, height, pixels, palette, index_of)


if __name__ == '__main__':
    main()
