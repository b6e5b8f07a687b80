#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""tp_flamegraph_svg.py - checks of pfc_flamegraph's SVG for
tests/integration/tp_flamegraph.sh (which sources no Python itself):

  layout SVG FOLDED WIDTH   the SVG parses as XML; it has one frame (<g>
                            with <title>, <rect>, <text>) per node of the
                            tree of the folded stacks in FOLDED (kernel
                            frames "_[k]") at least 0.1 px wide, in preorder, callees in name
                            order, each at the x and width its count
                            gives, with the label cut to fit, blue for
                            kernel frames and warm colours for the rest;
                            nothing is loaded from outside the file
  inject SVG OUT            OUT: SVG plus a probe script that records, for
                            each frame, its rendered rect width, label and
                            label width, before and after a click on
                            "compute" and after Reset Zoom, and the result
                            of a search, into <desc id="probe">
  dom DUMP                  the probe of a browser's DOM dump (after its
                            scripts ran): the hot frames are drawn, their
                            labels visible and inside their rects; the
                            click zoomed "compute" to the full width,
                            Reset Zoom undid it, a search highlighted the
                            matching frames and counted their share once
  png PNG SVG               a browser's screenshot of SVG is not blank:
                            the middle of each wide frame has its fill

Each prints what is wrong and exits 1, or exits 0.
"""
import re
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

NS = "{http://www.w3.org/2000/svg}"
PAD = 10
FRAME = 16
CHAR = 7.4


def fail(msg):
    print(msg)
    sys.exit(1)


def tree_of(folded):
    """Preorder (depth, name, count, start) of the tree of folded lines."""
    root = {"count": 0, "kids": {}}
    for line in folded.splitlines():
        stack, count = line.rsplit(" ", 1)
        node = root
        node["count"] += int(count)
        for name in stack.split(";"):
            node = node["kids"].setdefault(name, {"count": 0, "kids": {}})
            node["count"] += int(count)
    out = []

    def walk(name, node, depth, start):
        out.append((depth, name, node["count"], start))
        for k in sorted(node["kids"]):
            walk(k, node["kids"][k], depth + 1, start)
            start += node["kids"][k]["count"]

    walk("all", root, 0, 0)
    return out


def frames_of(svg_path):
    root = ET.parse(svg_path).getroot()
    if root.tag != NS + "svg":
        fail("root element is %s, not svg" % root.tag)
    group = root.find(NS + "g[@id='frames']")
    if group is None:
        fail("no <g id=frames>")
    frames = []
    for g in group:
        title, rect, text = g.find(NS + "title"), g.find(NS + "rect"), g.find(NS + "text")
        if title is None or rect is None or text is None:
            fail("a frame without title, rect or text")
        frames.append((title.text, rect.attrib, text.text or ""))
    return root, frames


def label_of(name, w):
    fit = int((w - 6) / CHAR) if w > 6 else 0
    if fit < 3:
        return ""
    return name if len(name) <= fit else name[: fit - 2] + ".."


def rgb(fill):
    m = re.fullmatch(r"rgb\((\d+),(\d+),(\d+)\)", fill)
    if not m:
        fail("fill %r is not rgb()" % fill)
    return tuple(int(v) for v in m.groups())


def layout(svg_path, folded_path, width):
    width = int(width)
    with open(folded_path) as f:
        want = tree_of(f.read())
    root, frames = frames_of(svg_path)
    with open(svg_path) as f:
        raw = f.read()
    for bad in ("href", "url(", "@import", "<image", "<foreignObject", "src="):
        if bad in raw:
            fail("the SVG is not self-contained: it has %r" % bad)
    total = want[0][2]
    scale = (width - 2 * PAD) / total
    # Frames narrower than --min-width (0.1 px by default) are left out.
    want = [w for w in want if w[2] * scale >= 0.1]
    if len(frames) != len(want):
        fail("%d frames, want %d (one per node of the folded stacks)" % (len(frames), len(want)))
    y0 = float(root.get("data-y0"))
    for (depth, name, count, start), (title, rect, text) in zip(want, frames):
        kernel = name.endswith("_[k]")
        shown = name[:-4] if kernel else name
        unit = "sample" if count == 1 else "samples"
        tip = "%s (%s %s, %.2f%%)" % (shown, format(count, ","), unit, 100.0 * count / total)
        if title != tip:
            fail("frame %r: title %r, want %r" % (name, title, tip))
        x, w, y = float(rect["x"]), float(rect["width"]), float(rect["y"])
        if abs(x - (PAD + start * scale)) > 0.006 or abs(w - count * scale) > 0.006:
            fail("frame %r: x %.2f width %.2f, want %.2f %.2f" %
                 (name, x, w, PAD + start * scale, count * scale))
        if y != y0 - depth * FRAME:
            fail("frame %r at y %s, want depth %d" % (name, rect["y"], depth))
        if text != label_of(shown, count * scale):
            fail("frame %r: label %r, want %r" % (name, text, label_of(shown, count * scale)))
        r, g, b = rgb(rect["fill"])
        if depth > 0 and kernel and not b > r:
            fail("kernel frame %r is not blue: %s" % (name, rect["fill"]))
        if depth > 0 and not kernel and not (r > 200 and b < 100):
            fail("frame %r is not in warm colours: %s" % (name, rect["fill"]))
    return 0


PROBE = """
<script type="text/ecmascript"><![CDATA[
(function () {
  var out = [];
  function measure(tag) {
    var gs = document.querySelectorAll('#frames > g');
    for (var i = 0; i < gs.length; i++) {
      var g = gs[i], r = g.querySelector('rect'), t = g.querySelector('text');
      var tip = g.querySelector('title').textContent;
      var shown = getComputedStyle(g).display !== 'none';
      out.push([tag, tip.slice(0, tip.lastIndexOf(' (')), t.textContent,
        shown ? r.getBoundingClientRect().width.toFixed(2) : '0',
        shown ? t.getComputedTextLength().toFixed(2) : '0',
        getComputedStyle(g).opacity].join('|'));
    }
  }
  measure('initial');
  var gs = document.querySelectorAll('#frames > g');
  for (var i = 0; i < gs.length; i++)
    if (gs[i].querySelector('title').textContent.indexOf('compute (') === 0)
      gs[i].querySelector('rect').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  measure('zoomed');
  document.getElementById('unzoom').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  measure('reset');
  window.prompt = function () { return '^(read|vfs_read|hash)$'; };
  document.getElementById('search').dispatchEvent(new MouseEvent('click', {bubbles: true}));
  out.push('search|' + document.getElementById('matched').textContent + '|' +
    [].map.call(document.querySelectorAll('#frames rect'), function (r) {
      return r.getAttribute('fill') === 'rgb(230,0,230)' ? 1 : 0; }).join(','));
  var d = document.createElementNS('http://www.w3.org/2000/svg', 'desc');
  d.setAttribute('id', 'probe');
  d.textContent = '\\n' + out.join('\\n') + '\\n';
  document.documentElement.appendChild(d);
})();
]]></script>
"""


def inject(svg_path, out_path):
    with open(svg_path) as f:
        raw = f.read()
    with open(out_path, "w") as f:
        f.write(raw.replace("</svg>", PROBE + "</svg>"))
    return 0


def dom(dump_path):
    with open(dump_path) as f:
        raw = f.read()
    m = re.search(r'<desc id="probe">(.*?)</desc>', raw, re.S)
    if not m:
        fail("the dump has no probe output: the scripts did not run")
    rows = {}
    search = None
    for line in m.group(1).strip().splitlines():
        if line.startswith("search|"):
            search = line.split("|")[1:]
            continue
        tag, name, label, w, tw, opacity = line.split("|")
        rows[(tag, name)] = (label, float(w), float(tw), float(opacity))
    for name in ("hash", "compute", "main", "vfs_read", "do_syscall_64"):
        label, w, tw, _ = rows.get(("initial", name), ("", 0, 0, 1))
        if label != name or w <= 0 or tw <= 0:
            fail("%s not visible: label %r, rect %.2f px, text %.2f px" % (name, label, w, tw))
    for (tag, name), (label, w, tw, _) in rows.items():
        if tag == "initial" and tw > w:
            fail("label %r of %s is wider (%.2f px) than its frame (%.2f px)" % (label, name, tw, w))
    full = rows[("initial", "all")][1]
    z = rows
    if abs(z[("zoomed", "compute")][1] - full) > 0.5:
        fail("after the click, compute is %.2f px wide, want %.2f" % (z[("zoomed", "compute")][1], full))
    want_hash = full * 4 / 5
    if abs(z[("zoomed", "hash")][1] - want_hash) > 0.5:
        fail("after the click, hash is %.2f px wide, want %.2f" % (z[("zoomed", "hash")][1], want_hash))
    if abs(z[("zoomed", "main")][1] - full) > 0.5 or z[("zoomed", "main")][3] >= 1:
        fail("after the click, main (a caller) is not a full, faded bar: %r" % (z[("zoomed", "main")],))
    if z[("zoomed", "start_thread")][1] != 0:
        fail("after the click, start_thread (not under compute) is still drawn")
    for (tag, name), row in rows.items():
        if tag == "reset" and row != rows[("initial", name)]:
            fail("after Reset Zoom, %s is %r, was %r" % (name, row, rows[("initial", name)]))
    # ^(read|vfs_read|hash)$: hash (4) and read (2; vfs_read under it is not counted again).
    names = [name for (tag, name) in rows if tag == "initial"]
    want = ",".join("1" if n in ("read", "vfs_read", "hash") else "0" for n in names)
    if search != ["Matched: 50.0%", want]:
        fail("search: %r, want %r" % (search, ["Matched: 50.0%", want]))
    return 0


def png_pixels(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("%s is not a PNG" % path)
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    if depth != 8 or ctype not in (2, 6):
        fail("PNG of bit depth %d, colour type %d" % (depth, ctype))
    bpp = 3 if ctype == 2 else 4
    raw = zlib.decompress(idat)
    stride = w * bpp
    rows, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else b if pb <= pc else c
                line[i] = (line[i] + pr) & 255
        rows.append(line)
        prev = line
    return w, h, bpp, rows


def png(png_path, svg_path):
    w, h, bpp, rows = png_pixels(png_path)
    colours = set()
    for y in range(0, h, 2):
        for x in range(0, w, 4):
            colours.add(tuple(rows[y][x * bpp:x * bpp + 3]))
    if len(colours) < 8:
        fail("the screenshot is (nearly) blank: %d colours" % len(colours))
    _, frames = frames_of(svg_path)
    checked = 0
    for title, rect, _ in frames:
        x, y, fw = float(rect["x"]), float(rect["y"]), float(rect["width"])
        if fw < 40:
            continue
        # Left of the label's baseline area: above the text, inside the rect.
        px, py = int(x + fw - 4), int(y + 2)
        if py >= h or px >= w:
            fail("the screenshot (%dx%d) does not show frame %s" % (w, h, title))
        got = tuple(rows[py][px * bpp:px * bpp + 3])
        want = rgb(rect["fill"])
        if max(abs(g - v) for g, v in zip(got, want)) > 3:
            fail("pixel (%d,%d) of frame %s is %s, want its fill %s" % (px, py, title, got, want))
        checked += 1
    if checked < 5:
        fail("only %d wide frames to check" % checked)
    return 0


def main():
    cmds = {"layout": (layout, 3), "inject": (inject, 2), "dom": (dom, 1), "png": (png, 2)}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds or len(sys.argv) != 2 + cmds[sys.argv[1]][1]:
        fail("usage: tp_flamegraph_svg.py layout|inject|dom|png ARGS (see the file)")
    fn, _ = cmds[sys.argv[1]]
    return fn(*sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
