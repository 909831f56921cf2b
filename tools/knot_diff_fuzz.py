#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential fuzz: the same request streams to knot-pthreads and to knot
(CAP_WORKERS=1 and 2), responses compared byte for byte after masking the
clock-derived fields (Date; Last-Modified of generated listings).

Usage: tools/knot_diff_fuzz.py BUILD_DIR [--seed N] [--cases N] [--jobs N] [--config A|B]
       tools/knot_diff_fuzz.py BUILD_DIR --replay FILE   (a JSON list of cases)
"""

import argparse
import json
import os
import random
import re
import selectors
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor

MTIME = 1_600_000_000
SIZES = [0, 1, 2, 3, 100, 4095, 4096, 4097, 8191, 8192, 16383, 16384, 16385, 65535, 65536, 65537,
         200_000, 1_048_579]


# ------------------------------------------------------------------ the tree

def make_tree(top):
    root = os.path.join(top, "root")
    os.makedirs(root)
    rnd = random.Random(1234)
    files = {}

    def put(name, data):
        p = os.path.join(root, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        os.utime(p, (MTIME, MTIME))
        files[name] = data

    for n in SIZES:
        put(f"s/{n}.bin", rnd.randbytes(n))
    put("index.html", b"<!DOCTYPE html><title>root</title>\n")
    put("a.txt", b"hello, knot\n")
    put("empty.txt", b"")
    put("style.css", b"body{}\n")
    put("sub/index.html", b"<p>sub</p>\n")
    put("sub/page.html", b"<p>page</p>\n")
    put("sub/deeper/x.json", b'{"x":1}\n')
    put("sub/deeper/index.htm", b"not the index name\n")
    put("noindex/one.txt", b"1\n")
    put("noindex/two words.txt", b"2\n")
    put("noindex/.hidden", b"h\n")
    put("a b.txt", b"space\n")
    put("pct%.txt", b"percent\n")
    put("q?mark.txt", b"question\n")
    put("hash#.txt", b"hash\n")
    put("\u20ac.txt", b"euro\n")
    put("semi;colon.txt", b"semicolon\n")
    put("plus+.txt", b"plus\n")
    put("UPPER.TXT", b"upper\n")
    put("dots..txt", b"dots\n")
    put("...", b"three dots\n")
    put(".dotfile", b"dotfile\n")
    put("unreadable.txt", b"you may not read me\n")
    os.chmod(os.path.join(root, "unreadable.txt"), 0)
    os.makedirs(os.path.join(root, "emptydir"))
    os.makedirs(os.path.join(root, "locked"))
    put("locked/in.txt", b"locked\n")
    os.chmod(os.path.join(root, "locked"), 0)
    for d in ("emptydir", "sub", "sub/deeper", "noindex", "s"):
        os.utime(os.path.join(root, d), (MTIME, MTIME))
    os.utime(root, (MTIME, MTIME))
    with open(os.path.join(top, "secret.txt"), "wb") as f:
        f.write(b"TOP-SECRET-OUTSIDE\n")
    os.symlink("a.txt", os.path.join(root, "link-in"))
    os.symlink("sub", os.path.join(root, "dirlink-in"))
    os.symlink("../secret.txt", os.path.join(root, "link-out"))
    os.symlink("/etc", os.path.join(root, "etc-out"))
    os.symlink("nowhere", os.path.join(root, "dangling"))
    os.mkfifo(os.path.join(root, "fifo"))
    for dirpath, dirnames, filenames in os.walk(top):
        os.chmod(dirpath, 0o755 if not dirpath.endswith("locked") else 0)
    os.chmod(top, 0o755)
    return root, files


# ----------------------------------------------------------------- servers

class Server:
    def __init__(self, name, binary, env, root, args, as_nobody):
        self.name = name
        env2 = dict(os.environ)
        env2.update(env)
        kw = {}
        if as_nobody:
            kw = dict(user=65534, group=65534, extra_groups=[])
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen([binary, "--addr", "127.0.0.1", "--port", "0", "--root", root] + args,
                                     stdout=subprocess.PIPE, stderr=self.err, env=env2, **kw)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ok = sel.select(20)
        line = self.proc.stdout.readline().decode() if ok else ""
        m = re.search(r":(\d+)/\s*$", line)
        if not m:
            raise SystemExit(f"{name}: no ready line {line!r}")
        self.port = int(m.group(1))

    def alive(self):
        return self.proc.poll() is None

    def stderr(self):
        self.err.seek(0)
        return self.err.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


def exchange(port, case, cap=12.0):
    """Runs one case (sending from a thread while reading, so a big pipeline
    cannot deadlock with big responses); returns (bytes received, how it ended)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=cap)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if case.get("rcvbuf"):
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, case["rcvbuf"])
    out = bytearray()
    end = "?"
    deadline = time.monotonic() + cap
    send_err = []

    def sender():
        try:
            for i, part in enumerate(case["parts"]):
                s.sendall(bytes.fromhex(part))
                if case["gap"] and i + 1 < len(case["parts"]):
                    time.sleep(case["gap"])
            if case["half_close"]:
                s.shutdown(socket.SHUT_WR)
        except OSError as e:
            send_err.append(e)

    t = threading.Thread(target=sender)
    t.start()
    try:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                end = "open"
                break
            s.settimeout(left)
            try:
                b = s.recv(case.get("recv", 1 << 20))
            except socket.timeout:
                end = "open"
                break
            except ConnectionResetError:
                end = "rst"
                break
            if not b:
                end = "fin"
                break
            out += b
            if case.get("slow"):
                time.sleep(case["slow"])
            if case.get("abort_after") and len(out) >= case["abort_after"]:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\0\0\0\0\0\0\0")
                end = "aborted"
                break
    finally:
        t.join(cap)
        s.close()
    return bytes(out), end


DATE_RE = re.compile(rb"\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n")
LM_RE = re.compile(rb"\r\nLast-Modified: ([^\r]*)\r\n")


CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"


def mask(raw, split=False):
    if split:  # whether a 100 goes out depends on whether the body came yet
        raw = raw.replace(CONTINUE, b"")
    raw = DATE_RE.sub(b"\r\nDate: <masked>\r\n", raw)
    now = time.time()

    def lm(m):
        try:
            import email.utils
            t = email.utils.parsedate_to_datetime(m.group(1).decode()).timestamp()
        except Exception:  # noqa: BLE001
            return m.group(0)
        if MTIME + 10 ** 6 < t < now + 10:  # generated (listings): the clock, not a file's mtime
            return b"\r\nLast-Modified: <now>\r\n"
        return m.group(0)

    return LM_RE.sub(lm, raw)


# ------------------------------------------------------------ invariants

def parse_stream(raw, methods):
    """Splits raw into responses; methods: the request methods, in order
    (for HEAD). Returns (list of (status, headers, body), leftover, error)."""
    res = []
    i = 0
    mi = 0
    while i < len(raw):
        if raw.startswith(b"HTTP/1.1 100 Continue\r\n\r\n", i):
            i += len(b"HTTP/1.1 100 Continue\r\n\r\n")
            continue
        end = raw.find(b"\r\n\r\n", i)
        if end < 0:
            return res, raw[i:], "truncated head"
        head = raw[i:end].decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) [^\r\n]*$", head[0])
        if not m:
            return res, raw[i:], "bad status line"
        st = int(m.group(1))
        h = {}
        for line in head[1:]:
            k, _, v = line.partition(": ")
            if k.lower() in h:
                return res, raw[i:], "duplicate header " + k
            h[k.lower()] = v
        meth = methods[mi] if mi < len(methods) else None
        mi += 1
        n = 0 if st == 304 else int(h.get("content-length", "0"))
        if meth == "HEAD" and (raw.startswith(b"HTTP/1.1 ", end + 4) or end + 4 == len(raw)):
            n = 0  # HEAD: no body (unless the server could not parse the method)
        body = raw[end + 4:end + 4 + n]
        if len(body) < n:
            return res + [(st, h, body)], b"", "short body"
        res.append((st, h, body))
        i = end + 4 + n
    return res, b"", None


def invariants(case, raw, end, files):
    problems = []
    methods = case.get("methods", [])
    resps, left, err = parse_stream(raw, methods)
    if err and not (err == "short body" and case.get("maybe_short")):
        problems.append("framing: " + err)
    if b"TOP-SECRET" in raw:
        problems.append("secret leaked")
    if end == "aborted":
        return [], []
    if end == "open":
        problems.append("server kept connection open past cap")
    if case["half_close"] and end not in ("fin", "rst"):
        problems.append("not closed after half-close")
    if len(resps) > case.get("nreq", 99):
        problems.append(f"more responses ({len(resps)}) than requests ({case.get('nreq')})")
    import email.utils
    lm_files = email.utils.formatdate(MTIME, usegmt=True)
    contents = {v for v in files.values()}
    by_size = {}
    for v in files.values():
        by_size.setdefault(len(v), []).append(v)
    for k, (st, h, body) in enumerate(resps):
        if st == 200 and h.get("last-modified") == lm_files and body and body not in contents:
            problems.append("200 body is no file's")
        if st == 206 and body:
            m = re.match(r"bytes (\d+)-(\d+)/(\d+)$", h.get("content-range", ""))
            if m and not any(f[int(m.group(1)):int(m.group(2)) + 1] == body for f in by_size.get(int(m.group(3)), [])):
                problems.append("206 body is no file's slice")
        if h.get("connection") == "close" and k != len(resps) - 1:
            problems.append("response after Connection: close")
        if st == 405 and h.get("allow") != "GET, HEAD":
            problems.append("405 without Allow")
        if st in (204, 304) and "content-length" in h and st == 204:
            problems.append("CL on 204")
        if st == 206:
            m = re.match(r"bytes (\d+)-(\d+)/(\d+)$", h.get("content-range", ""))
            if not m or int(h["content-length"]) != int(m.group(2)) - int(m.group(1)) + 1:
                problems.append("bad 206 framing")
        if st >= 500 and st not in (501, 503, 505):
            problems.append(f"status {st}")
    if resps and resps[-1][1].get("connection") == "close" and end == "open":
        problems.append("Connection: close but stayed open")
    return problems, [r[0] for r in resps]


# --------------------------------------------------------------- grammar

class Gen:
    def __init__(self, rnd, files):
        self.r = rnd
        self.files = files
        self.names = sorted(files)

    def pct(self, s, prob):
        out = []
        for ch in s:
            if ch != "/" and self.r.random() < prob:
                for b in ch.encode():
                    out.append(("%%%02X" if self.r.random() < .5 else "%%%02x") % b)
            else:
                out.append(ch)
        return "".join(out)

    def encode_name(self, name):
        # what a client must encode, then maybe more
        safe = "".join(ch if (ch.isascii() and (ch.isalnum() or ch in "/-._~!$&'()*+,;=:@")) else
                       "".join("%%%02X" % b for b in ch.encode()) for ch in name)
        return safe

    def target(self):
        r = self.r
        k = r.random()
        if k < 0.55:
            name = r.choice(self.names + ["", "sub/", "sub", "noindex/", "noindex", "emptydir/", "emptydir",
                                           "sub/deeper/", "link-in", "link-out", "etc-out/passwd", "etc-out/",
                                           "dangling", "fifo", "locked/", "locked/in.txt", "nope", "a.txt/",
                                           "dirlink-in/", "dirlink-in", "s/", "s"])
            t = "/" + self.encode_name(name)
        else:
            t = "/" + r.choice(self.names)
        for _ in range(r.choice([0, 0, 0, 1, 1, 2, 3])):
            t = self.mutate_target(t)
        return t

    def mutate_target(self, t):
        r = self.r
        m = r.randrange(22)
        if m == 0:
            return self.pct(t, 0.3)
        if m == 1:
            i = r.randrange(len(t) + 1)
            return t[:i] + r.choice(["/./", "//", "/../", "/x/../", "/%2e%2e/", "/%2E/", "%2f", "%2F..%2F",
                                     "/.%2e/", "/..", "/.", "\\..\\"]) + t[i:]
        if m == 2:
            return t + r.choice(["?", "?a=b", "?x=%zz", "#frag", "?q#f", "?/../..", "?" + "q" * 50])
        if m == 3:
            i = r.randrange(len(t) + 1)
            return t[:i] + r.choice(["%", "%4", "%zz", "%G0", "%00", "%0a", "%0d", "%20", "%7f", "%ff",
                                     "%c0%ae", "%25", "%2525", "%3f", "%23"]) + t[i:]
        if m == 4:
            return "/" + "../" * r.randrange(1, 6) + t.lstrip("/")
        if m == 5:
            n = r.choice([200, 255, 256, 257, 1000, 1023, 1024, 1025, 2000, 4000, 5000])
            unit = r.choice(["a", "./", "x/../", "%2e/", "%41"])
            return "/" + (unit * (n // len(unit) + 1))[:n] + t
        if m == 6:
            return r.choice(["http://host", "HTTP://h:1", "https://x", "http://x?y", "http://"]) + t
        if m == 7:
            return t.lstrip("/") or "x"
        if m == 8:
            return r.choice(["*", "host:80", "", "/", "?", "#"])
        if m == 9:
            i = r.randrange(len(t) + 1)
            return t[:i] + r.choice(["\x7f", "\x01", "\t", " ", "é", "\"", "<", "{", "|", "^", "`"]) + t[i:]
        if m == 10:
            return t.upper()
        if m == 11:
            return t + "/"
        if m == 12:
            return t.rstrip("/")
        if m == 13:
            return t.replace("/", "//")
        if m == 14:
            return t + "/."
        if m == 15:
            return t + "/.."
        if m == 16:
            return t + "/%2e%2e"
        return t

    def method(self):
        r = self.r
        k = r.random()
        if k < 0.6:
            return "GET"
        if k < 0.75:
            return "HEAD"
        return r.choice(["POST", "PUT", "DELETE", "OPTIONS", "TRACE", "CONNECT", "PATCH", "get", "Head",
                         "BREW", "PROPFIND", "G@T", "", "GE T", "G" * 300, "\x16\x03\x01", "GET\t"])

    def version(self):
        r = self.r
        k = r.random()
        if k < 0.75:
            return "HTTP/1.1"
        if k < 0.87:
            return "HTTP/1.0"
        return r.choice(["HTTP/2.0", "HTTP/0.9", "HTTP/1.2", "HTTP/1.9", "HTTP/3.0", "HTTP/1.10", "http/1.1",
                         "HTTP/1", "HTTP/1.1 ", "", "HTTP/x.y", "HTTP/11", "HTTP /1.1", "HTTP/1.1\x00"])

    def range_value(self):
        r = self.r
        n = r.choice(SIZES)
        a = r.randrange(0, n + 3)
        b = r.randrange(0, n + 3)
        return r.choice([
            f"bytes={a}-{b}", f"bytes={a}-", f"bytes=-{b}", f"bytes={min(a, b)}-{max(a, b)}",
            "bytes=0-0", "bytes=-0", "bytes=0-", "bytes=-1", f"bytes={a}-{b},{b}-", "bytes=0-1,2-3",
            "bytes=", "bytes=,", "bytes= 1-2 , ", "BYTES=1-2", "bytes =1-2", "items=0-1", "bytes=x-y",
            "bytes=1-2-3", "bytes=99999999999999999999-", "bytes=-99999999999999999999",
            "bytes=0-99999999999999999999", f"bytes={n}-", f"bytes={n - 1}-", "bytes=--1", "bytes=1--2",
            "bytes=1-2,", ",bytes=1-2", "bytes=\t0-3", "bytes=0-3;x", f"bytes=-{n + 1}", "bytes=+1-2",
        ])

    def date(self, which=None):
        r = self.r
        t = MTIME + r.choice([0, 0, 0, -1, 1, -100000, 1000, 10 ** 9]) if which is None else which
        import email.utils
        fmt = r.randrange(6)
        if fmt < 3:
            return email.utils.formatdate(t, usegmt=True)
        tm = time.gmtime(t)
        if fmt == 3:
            return time.strftime("%A, %d-%b-%y %H:%M:%S GMT", tm)
        if fmt == 4:
            return time.strftime("%a %b ", tm) + f"{tm.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", tm)
        return r.choice(["yesterday", "", "Mon, 32 Jan 2020 00:00:00 GMT", "Tue, 15 Nov 1994 08:12:31 UTC",
                         email.utils.formatdate(t, usegmt=True).lower(), "Sun, 13 Sep 2020 12:26:40 GMT x",
                         "Thu, 01 Jan 2099 00:00:00 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"])

    def headers(self, version):
        """A list of (name, value) pairs; raw lines as (None, line)."""
        r = self.r
        hs = []
        k = r.random()
        if k < 0.95:
            hs.append(("Host", r.choice(["x", "example.com", "127.0.0.1:80", "[::1]", ""])))
        if r.random() < 0.05:
            hs.append(("Host", r.choice(["x", "y"])))
        if r.random() < 0.04:
            hs.append(("Host", r.choice(["a b", "a/b", "é", "x\x7f", "a@b"])))
        if r.random() < 0.35:
            hs.append(("Connection", r.choice(["close", "keep-alive", "Keep-Alive", "CLOSE", "upgrade, close",
                                               "keep-alive, close", "te", "", "closed", " close "])))
        if r.random() < 0.25:
            hs.append(("Range", self.range_value()))
        if r.random() < 0.07:
            hs.append(("If-Range", r.choice([self.date(), '"etag"', 'W/"x"'])))
        if r.random() < 0.2:
            hs.append(("If-Modified-Since", self.date()))
        if r.random() < 0.05:
            hs.append(("If-None-Match", r.choice(["*", '"x"', 'W/"x"', "", "*, \"x\""])))
        if r.random() < 0.08:
            hs.append(("Expect", r.choice(["100-continue", "100-Continue", "200-ok", ""])))
        for _ in range(r.choice([0, 0, 0, 1, 2, 5])):
            hs.append((r.choice(["X-A", "Accept", "User-Agent", "Cookie", "x-y-z", "Accept-Encoding"]),
                       r.choice(["v", "*/*", "a" * r.randrange(1, 300), "  spaced  ", "\tt", "é"])))
        r.shuffle(hs)
        # oddities
        m = r.random()
        if m < 0.03:
            hs.append((None, " folded continuation"))
        elif m < 0.05:
            hs.append((None, "NoColon"))
        elif m < 0.07:
            hs.append((None, "Bad Name: v"))
        elif m < 0.09:
            hs.append((None, "Host : x"))
        elif m < 0.11:
            hs.append(("X-Nul", "a\x00b"))
        elif m < 0.13:
            hs.append(("X-Big", "b" * r.choice([1000, 3000, 4000, 4100, 9000])))
        elif m < 0.15:
            hs.extend((f"X-{i}", "v") for i in range(r.choice([99, 100, 101, 150])))
        elif m < 0.16:
            hs.append((None, "\x00"))
        elif m < 0.17:
            hs.append((None, ":empty-name"))
        elif m < 0.18:
            hs.append(("X-CR", "a\rb"))
        return hs

    def body_part(self, hs, version):
        """Adds body framing; returns the body bytes."""
        r = self.r
        k = r.random()
        if k < 0.8:
            return b""
        if k < 0.9:
            n = r.choice([0, 1, 5, 100, 9999, 10000, 10001, 70000])
            real = n if r.random() < 0.8 else max(0, n - r.randrange(1, 5))
            v = str(n) if r.random() < 0.9 else r.choice([f"{n},{n}", f" {n}", f"+{n}", f"{n}x", "-1", "0x10", ""])
            hs.append(("Content-Length", v))
            if r.random() < 0.05:
                hs.append(("Content-Length", r.choice([str(n), str(n + 1)])))
            return b"z" * real
        te = r.choice(["chunked", "chunked", "Chunked", "gzip, chunked", "chunked, gzip", "gzip", "chunked, chunked",
                       "identity", ""])
        hs.append(("Transfer-Encoding", te))
        if r.random() < 0.1:
            hs.append(("Content-Length", "3"))
        chunks = []
        for _ in range(r.randrange(0, 4)):
            n = r.choice([1, 3, 16, 255, 4096, 6000])
            ext = r.choice(["", "", ";a=b", " ", ";"])
            chunks.append(b"%x%s\r\n" % (n, ext.encode()) + b"c" * n + b"\r\n")
        if r.random() < 0.1:
            chunks.append(r.choice([b"zz\r\n", b"1\r\nxx\r\n", b"FFFFFFFFFFFFFFFFF\r\n", b"-1\r\n", b"\r\n",
                                    b"3\nabc\n"]))
        chunks.append(b"0\r\n")
        if r.random() < 0.2:
            chunks.append(b"Trailer: x\r\n")
        chunks.append(b"\r\n")
        return b"".join(chunks)

    def request(self):
        """Returns (bytes, method as the server may see it)."""
        r = self.r
        meth = self.method()
        tgt = self.target()
        ver = self.version()
        hs = self.headers(ver)
        body = self.body_part(hs, ver)
        eol_mode = r.random()
        lines = []
        if r.random() < 0.97:
            lines.append(f"{meth} {tgt} {ver}" if ver else f"{meth} {tgt}")
        else:
            lines.append(r.choice([f"{meth}  {tgt} {ver}", f"{meth} {tgt}  {ver}", f" {meth} {tgt} {ver}",
                                   f"{meth}\t{tgt} {ver}", f"{meth} {tgt} {ver} extra"]))
        for k, v in hs:
            lines.append(v if k is None else f"{k}: {v}")
        out = b""
        for ln in lines + [""]:
            if eol_mode < 0.9:
                eol = b"\r\n"
            elif eol_mode < 0.95:
                eol = b"\n"
            else:
                eol = r.choice([b"\r\n", b"\n", b"\r\n", b"\r"])
            out += ln.encode("utf-8", "surrogateescape") + eol
        return out + body, meth

    def burst(self):
        """Many simple pipelined GET/HEADs, large files among them, maybe a slow reader."""
        r = self.r
        reqs, methods = [], []
        slow = r.random() < 0.3
        names = [n for n in self.names if len(self.files[n]) < 300_000] if slow else self.names
        for _ in range(r.randrange(5, 40)):
            m = r.choice(["GET", "GET", "GET", "HEAD"])
            name = r.choice(names + ["sub/", "noindex/", "nope", "sub"])
            hs = [("Host", "x")]
            if r.random() < 0.2:
                hs.append(("Range", self.range_value()))
            if r.random() < 0.1:
                hs.append(("If-Modified-Since", self.date()))
            body = b""
            if r.random() < 0.1:
                n = r.choice([1, 1000, 5000])
                hs.append(("Content-Length", str(n)))
                body = b"b" * n
            reqs.append(f"{m} /{self.encode_name(name)} HTTP/1.1\r\n".encode() +
                        b"".join(f"{k}: {v}\r\n".encode() for k, v in hs) + b"\r\n" + body)
            methods.append(m)
        data = b"".join(reqs)
        c = {"parts": [data.hex()], "gap": 0.0, "half_close": r.random() < 0.5, "nreq": len(reqs),
             "methods": methods}
        k = r.random()
        if slow:
            c["slow"] = 0.0005
            c["recv"] = r.choice([1000, 4096, 65536])
            c["rcvbuf"] = 16384
        elif k < 0.15:
            c["abort_after"] = r.randrange(1, 200000)
            c["maybe_short"] = True
        return c

    def case(self):
        r = self.r
        if r.random() < 0.08:
            return self.burst()
        nreq = r.choice([1, 1, 1, 1, 2, 3, 5])
        reqs, methods = [], []
        for _ in range(nreq):
            b, m = self.request()
            if r.random() < 0.05:
                b = b"\r\n" + b
            reqs.append(b)
            methods.append(m)
        data = b"".join(reqs)
        flipped = r.random() < 0.05
        if flipped:  # a raw byte flip somewhere
            data = bytearray(data)
            for _ in range(r.randrange(1, 4)):
                data[r.randrange(len(data))] = r.randrange(256)
            data = bytes(data)
        if r.random() < 0.05:  # truncated
            data = data[:r.randrange(1, len(data) + 1)]
        split = r.random()
        if split < 0.6 or len(data) < 2:
            parts = [data]
        elif split < 0.9:
            k = r.randrange(2, 12)
            cuts = sorted(r.sample(range(1, len(data)), min(k, len(data) - 1)))
            parts = [data[a:b] for a, b in zip([0] + cuts, cuts + [len(data)])]
        else:
            step = r.choice([1, 2, 3, 7])
            parts = [data[i:i + step] for i in range(0, min(len(data), 300), step)]
            if len(data) > 300:
                parts.append(data[300:])
        return {
            "parts": [p.hex() for p in parts],
            "gap": 0.0 if len(parts) == 1 else r.choice([0.0, 0.0, 0.001, 0.003]),
            "half_close": r.random() < 0.6,
            "nreq": 99 if flipped else nreq,
            "methods": methods,
        }


# ------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=8)
    ap.add_argument("--config", default="A")
    ap.add_argument("--replay")
    ap.add_argument("--raw", action="append", help="a Python bytes literal to send (half-closed)")
    ap.add_argument("--open", action="store_true", help="--raw: do not half-close")
    ap.add_argument("--out", default="/tmp/diff_fuzz_out.json")
    ap.add_argument("--only", default="pthreads,cap-w1,cap-w2")
    args = ap.parse_args()

    top = tempfile.mkdtemp(prefix="knotdiff-")
    root, files = make_tree(top)
    as_nobody = os.getuid() == 0
    common = ["--header-timeout", "2", "--keepalive-timeout", "1", "--max-header-bytes", "4096",
              "--max-uri-bytes", "1024", "--max-body-bytes", "10000"]
    if args.config == "A":
        common += ["--listing", "--sendfile-kb", "16"]
    else:
        common += ["--no-sendfile", "--cache-mb", "0", "--sendfile-kb", "8", "--index", "index.htm"]
    kb = os.path.join(args.build, "apps/knot")
    specs = [("pthreads", os.path.join(kb, "knot-pthreads"), {}),
             ("cap-w1", os.path.join(kb, "knot"), {"CAP_WORKERS": "1"}),
             ("cap-w2", os.path.join(kb, "knot"), {"CAP_WORKERS": "2"})]
    specs = [s for s in specs if s[0] in args.only.split(",")]
    servers = [Server(n, b, e, root, common, as_nobody) for n, b, e in specs]
    try:
        if args.raw:
            import ast
            cases = [{"parts": [ast.literal_eval(x).hex()], "gap": 0, "half_close": not args.open, "nreq": 99,
                      "methods": []} for x in args.raw]
        elif args.replay:
            with open(args.replay) as f:
                cases = json.load(f)
        else:
            gen = Gen(random.Random(args.seed), files)
            cases = [gen.case() for _ in range(args.cases)]
        results = {}

        def run(ci, si):
            case = cases[ci]
            raw, end = exchange(servers[si].port, case)
            results[(ci, si)] = (raw, end)

        t0 = time.monotonic()
        with ThreadPoolExecutor(args.jobs) as ex:
            futs = [ex.submit(run, ci, si) for ci in range(len(cases)) for si in range(len(servers))]
            for f in futs:
                f.result()
        diffs, fails, statuses = [], [], {}
        for ci, case in enumerate(cases):
            ref_raw, ref_end = results[(ci, 0)]
            split = len(case["parts"]) > 1
            ref = mask(ref_raw, split)
            for si, srv in enumerate(servers):
                raw, end = results[(ci, si)]
                probs, sts = invariants(case, raw, end, files)
                if si == 0:
                    for s in sts:
                        statuses[s] = statuses.get(s, 0) + 1
                if probs:
                    fails.append({"case": ci, "server": srv.name, "problems": probs, "end": end,
                                  "raw": raw[:600].decode("latin-1")})
                if case.get("abort_after"):
                    continue  # bytes before an abort depend on timing
                if si and (mask(raw, split) != ref or (end != ref_end and {end, ref_end} != {"fin", "rst"})):
                    diffs.append({"case": ci, "server": srv.name, "end": end, "ref_end": ref_end,
                                  "raw": mask(raw, split).decode("latin-1"), "ref": ref.decode("latin-1")})
        alive = {}
        for srv in servers:
            try:
                raw, end = exchange(srv.port, {"parts": [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".hex()],
                                               "gap": 0, "half_close": False}, cap=10)
                alive[srv.name] = srv.alive() and raw.startswith(b"HTTP/1.1 200") and raw.endswith(b"hello, knot\n")
            except OSError as e:
                alive[srv.name] = repr(e)
        print(f"{len(cases)} cases x {len(servers)} servers in {time.monotonic() - t0:.0f}s; statuses {sorted(statuses.items())}")
        print("alive:", alive)
        print(f"{len(diffs)} differences, {len(fails)} invariant failures")
        with open(args.out, "w") as f:
            json.dump({"diffs": diffs, "fails": fails, "cases": cases, "alive": alive,
                       "stderr": {s.name: s.stderr()[-3000:] for s in servers}}, f, indent=1)
        if args.raw:
            for ci in range(len(cases)):
                for si, srv in enumerate(servers):
                    raw, end = results[(ci, si)]
                    print(f"--- case {ci} {srv.name} ({end}):")
                    print(mask(raw).decode("latin-1")[:3000])
        for d in diffs[:10]:
            print("DIFF case", d["case"], d["server"], d["end"], "vs", d["ref_end"])
        for fl in fails[:20]:
            print("FAIL case", fl["case"], fl["server"], fl["problems"], fl["end"], repr(fl["raw"][:120]))
        return 1 if diffs or fails or not all(v is True for v in alive.values()) else 0
    finally:
        for s in servers:
            s.kill()
        shutil.rmtree(top, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
