#!/usr/bin/env python3
"""not_blank.py PNG: exit 0 when the screenshot shows something, 1 when it is blank.

A blank or broken window is one colour (or a handful: a frame, a title). The Qt example's
three section panels hold hundreds of gray levels over much of the window, so this asks
for at least MIN_COLOURS distinct colours and for MIN_BUSY of the pixels to differ from
the most common colour (the window background). Decodes 8-bit non-interlaced PNGs with
the standard library only (what Qt writes)."""
import struct
import sys
import zlib
from collections import Counter

MIN_COLOURS = 64
MIN_BUSY = 0.25


def pixels(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(colour)
    if depth != 8 or channels is None or interlace:
        raise ValueError(f"unsupported PNG (depth {depth}, colour type {colour})")
    raw, stride = zlib.decompress(idat), width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 255
            elif kind == 2:
                line[i] = (line[i] + b) & 255
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, [r[i:i + channels] for r in rows for i in range(0, stride, channels)]


def main():
    width, height, px = pixels(sys.argv[1])
    counts = Counter(px)
    busy = 1.0 - counts.most_common(1)[0][1] / len(px)
    print(f"{sys.argv[1]}: {width} x {height}, {len(counts)} colours, "
          f"{100 * busy:.1f} % of pixels off the background")
    if len(counts) < MIN_COLOURS or busy < MIN_BUSY:
        print(f"blank: want at least {MIN_COLOURS} colours and {100 * MIN_BUSY:.0f} % busy")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
