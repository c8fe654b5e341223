#!/usr/bin/env python3
"""PNG files as the report's browser check and screenshots need them, with the standard library
alone: read an 8-bit, non-interlaced PNG (what headless Chromium writes), tell whether it is one
flat colour, crop rows, write it back.

    python3 scripts/png_tool.py crop IN.png OUT.png TOP HEIGHT   # rows TOP..TOP+HEIGHT
    python3 scripts/png_tool.py trim IN.png OUT.png [MARGIN]     # without the blank rows below
    python3 scripts/png_tool.py colours IN.png                   # distinct colours (up to 1000)
"""
import struct
import sys
import zlib

CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit only)


def read(path):
    """(width, height, channels, rows): rows are bytes objects of width * channels."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in CHANNELS or interlace:
        raise ValueError(f"{path}: only 8-bit, non-interlaced PNGs (got depth {depth}, "
                         f"colour type {colour}, interlace {interlace})")
    bpp = CHANNELS[colour]
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up = previous[i]
            corner = previous[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        previous = line
    return width, height, bpp, rows


def write(path, width, bpp, rows):
    colour = {1: 0, 2: 4, 3: 2, 4: 6}[bpp]

    def chunk(kind, body):
        return (struct.pack(">I", len(body)) + kind + body +
                struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))

    raw = b"".join(b"\x00" + r for r in rows)
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, len(rows), 8, colour, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def colours(path, most=1000):
    """The distinct pixel values of the image, counted up to `most`."""
    _, _, bpp, rows = read(path)
    seen = set()
    for r in rows:
        for i in range(0, len(r), bpp):
            seen.add(r[i:i + bpp])
            if len(seen) >= most:
                return len(seen)
    return len(seen)


def trimmed(rows, bpp, margin):
    """The rows down to the last that is not blank, and `margin` blank ones more: a blank row is
    one flat colour, the bottom row's (a screenshot taller than its page)."""
    blank = rows[-1]
    if blank != blank[:bpp] * (len(blank) // bpp):
        return rows
    last = len(rows)
    while last > 1 and rows[last - 1] == blank:
        last -= 1
    return rows[:min(len(rows), last + margin)]


def main(argv):
    if len(argv) == 6 and argv[1] == "crop":
        width, height, bpp, rows = read(argv[2])
        top, count = int(argv[4]), int(argv[5])
        if top < 0 or count < 1 or top + count > height:
            sys.exit(f"png_tool: rows {top}..{top + count} are outside the image's {height}")
        write(argv[3], width, bpp, rows[top:top + count])
    elif len(argv) in (4, 5) and argv[1] == "trim":
        width, _, bpp, rows = read(argv[2])
        write(argv[3], width, bpp, trimmed(rows, bpp, int(argv[4]) if len(argv) == 5 else 24))
    elif len(argv) == 3 and argv[1] == "colours":
        print(colours(argv[2]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
