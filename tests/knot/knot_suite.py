#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Knot's behaviour, checked with real clients: curl, Python's http.client
and raw sockets (for pipelining, garbage, slow and many clients).

Usage: knot_suite.py SERVER_BINARY [GROUP ...]   (no group: all of them)
       knot_suite.py --list

Every group starts its own server(s) on a free port (--port 0; the port is
read from the server's ready line, then a connection proves it is up), on a
fresh document root in a temporary directory, and always kills it. Waits are
for events (a response, a close, an exit), each bounded by a generous
timeout that only ever turns a hang into a failure; nothing asserts how
fast a thing happened. Exit status: 0 all passed, 1 a failure, 77 skipped.
"""

import ctypes
import email.utils
import errno
import http.client
import os
import random
import re
import resource
import select
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

SERVER = None
GROUPS = {}
PR_SET_PDEATHSIG = 1
LONG = 30.0  # the bound on any single wait: a hang becomes a failure


class Skip(Exception):
    pass


def group(fn):
    GROUPS[fn.__name__] = fn
    return fn


def check(cond, what, *values):
    if not cond:
        raise AssertionError(what + (": " + " | ".join(repr(v) for v in values) if values else ""))


def check_eq(got, want, what):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, want {want!r}")


def listeners_on(port):
    """How many TCP sockets listen on port (any address), per the kernel."""
    n = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                rows = f.readlines()[1:]
        except FileNotFoundError:
            continue
        for row in rows:
            cols = row.split()
            if cols[3] == "0A" and int(cols[1].rsplit(":", 1)[1], 16) == port:  # TCP_LISTEN
                n += 1
    return n


# ---------------------------------------------------------------- fixtures

def make_site(top):
    """A document root with one file per behaviour, plus a secret outside."""
    root = os.path.join(top, "root")
    os.makedirs(os.path.join(root, "sub"))
    os.makedirs(os.path.join(root, "noindex", "deeper"))
    os.makedirs(os.path.join(top, "outside"))
    rnd = random.Random(6)
    files = {
        "index.html": b"<!DOCTYPE html><title>root</title>root index\n",
        "a.txt": b"hello, knot\n",
        "style.css": b"body { color: black }\n",
        "app.js": b"console.log('knot');\n",
        "pic.png": bytes(rnd.getrandbits(8) for _ in range(3000)),
        "blob.unknownext": b"opaque",
        "empty.txt": b"",
        "a b.txt": b"space in name\n",
        "sub/index.html": b"<p>sub index</p>\n",
        "sub/page.html": b"<p>sub page</p>\n",
        "noindex/one.txt": b"1\n",
        "noindex/<two>.txt": b"2\n",
        "noindex/.hidden": b"h\n",
        "big.bin": rnd.randbytes(3 * 1024 * 1024 + 17),
        "mid.bin": rnd.randbytes(200 * 1024),
    }
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
        os.utime(os.path.join(root, name), (1_600_000_000, 1_600_000_000))  # in the past
    with open(os.path.join(top, "secret.txt"), "wb") as f:
        f.write(b"TOP-SECRET-OUTSIDE-ROOT\n")
    with open(os.path.join(top, "outside", "index.html"), "wb") as f:
        f.write(b"TOP-SECRET-OUTSIDE-DIR\n")
    os.symlink("../secret.txt", os.path.join(root, "link-out"))
    os.symlink(os.path.join(top, "secret.txt"), os.path.join(root, "link-abs"))
    os.symlink("../outside", os.path.join(root, "dir-out"))
    os.symlink("a.txt", os.path.join(root, "link-in"))
    os.symlink(os.path.join(root, "sub", "page.html"), os.path.join(root, "link-abs-in"))
    os.makedirs(os.path.join(top, "outside", "private"))
    os.mkfifo(os.path.join(root, "fifo"))
    return root, files


class Server:
    """A knot process on 127.0.0.1 and a free port, killed on exit."""

    def __init__(self, root, *args, check_exit=False):
        self.root = root
        self.args = list(args)
        self.check_exit = check_exit

    def __enter__(self):
        self.errfile = tempfile.TemporaryFile()
        libc = ctypes.CDLL(None, use_errno=True)

        def die_with_parent():
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)

        self.proc = subprocess.Popen(
            [SERVER, "--addr", "127.0.0.1", "--port", "0", "--root", self.root] + self.args,
            stdout=subprocess.PIPE, stderr=self.errfile, preexec_fn=die_with_parent)
        sel = selectors.DefaultSelector()
        sel.register(self.proc.stdout, selectors.EVENT_READ)
        ok = sel.select(LONG)
        sel.close()
        line = self.proc.stdout.readline().decode() if ok else ""
        m = re.search(r":(\d+)/\s*$", line)
        if not m:
            self.kill()
            raise AssertionError(f"no ready line from the server: {line!r} {self.stderr()!r}")
        self.port = int(m.group(1))
        deadline = time.monotonic() + LONG
        while True:  # ready means: a connection is accepted
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=LONG).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        return self

    def stderr(self):
        self.errfile.seek(0)
        return self.errfile.read().decode(errors="replace")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()

    def __exit__(self, *exc):
        self.kill()
        self.proc.stdout.close()
        self.errfile.close()

    def conn(self, timeout=LONG):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def sock(self, timeout=LONG):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        s.settimeout(timeout)
        return s

    def get(self, path, method="GET", headers=None):
        c = self.conn()
        try:
            c.request(method, path, headers=headers or {})
            r = c.getresponse()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
        finally:
            c.close()

    def raw(self, data, timeout=LONG):
        """Sends data, half-closes, returns everything until the server closes."""
        s = self.sock(timeout)
        try:
            s.sendall(data)
            try:
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return recv_all(s)
        finally:
            s.close()

    def alive_and_serving(self):
        st, _, body = self.get("/a.txt")
        check_eq((st, body), (200, b"hello, knot\n"), "a normal request after the test")


def recv_all(s):
    out = bytearray()
    while True:
        try:
            b = s.recv(65536)
        except ConnectionResetError:
            break
        if not b:
            break
        out += b
    return bytes(out)


class Reader:
    """Reads HTTP/1.1 responses off a socket, one at a time, in order."""

    def __init__(self, sock):
        self.s = sock
        self.buf = b""

    def _fill(self):
        b = self.s.recv(65536)
        if not b:
            raise EOFError("connection closed")
        self.buf += b

    def closed(self):
        """True if the server closed the connection (after any buffered data)."""
        try:
            while True:
                b = self.s.recv(65536)
                if not b:
                    return True
                self.buf += b
        except ConnectionResetError:
            return True

    def response(self, head_request=False):
        while b"\r\n\r\n" not in self.buf:
            self._fill()
        head, self.buf = self.buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) ", lines[0])
        check(m, "status line", lines[0])
        status = int(m.group(1))
        hdrs = {}
        for line in lines[1:]:
            k, v = line.split(":", 1)
            hdrs[k.strip().lower()] = v.strip()
        n = 0 if head_request or status == 304 else int(hdrs.get("content-length", "0"))
        while len(self.buf) < n:
            self._fill()
        body, self.buf = self.buf[:n], self.buf[n:]
        return status, hdrs, body


def curl(*args):
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    r = subprocess.run(["curl", "--noproxy", "*", "-sS", "--max-time", str(int(LONG))] + list(args),
                       capture_output=True, env=env, timeout=LONG + 10)
    return r


def req(path, method="GET", version="1.1", headers=(("Host", "t"),), body=b""):
    h = "".join(f"{k}: {v}\r\n" for k, v in headers)
    return f"{method} {path} HTTP/{version}\r\n{h}\r\n".encode() + body


def status_of(raw):
    m = re.match(rb"HTTP/1\.1 (\d{3}) ", raw)
    return int(m.group(1)) if m else None


def httpdate(t):
    return email.utils.formatdate(t, usegmt=True)


def sigterm_and_wait(srv, sig=signal.SIGTERM):
    srv.proc.send_signal(sig)
    try:
        rc = srv.proc.wait(LONG)
    except subprocess.TimeoutExpired:
        raise AssertionError("server did not exit after " + signal.Signals(sig).name)
    check_eq(rc, 0, "exit status after " + signal.Signals(sig).name)


# ------------------------------------------------------------------ groups

@group
def cli(top):
    root, _ = make_site(top)

    def run(*args):
        return subprocess.run([SERVER] + list(args), capture_output=True, timeout=LONG)

    r = run("--help")
    check_eq(r.returncode, 0, "--help exit status")
    for word in (b"usage", b"--port", b"--root", b"--cache-mb", b"--max-conn", b"--header-timeout"):
        check(word in r.stdout, "--help mentions " + word.decode())
    for args, needle in [
        (["--root", root, "--bogus"], "--bogus"),
        (["--port", "8080"], "--root"),
        (["--root", root, "--port", "abc"], "abc"),
        (["--root", root, "--port", "70000"], "70000"),
        (["--root", root, "--port"], "--port"),
        (["--root", os.path.join(top, "nope")], "nope"),
        (["--root", root, "--cache-mb", "-1"], "-1"),
        (["--root", root, "--header-timeout", "soon"], "soon"),
        (["--root", root, "--min-send-rate", "-1"], "-1"),
        (["--root", root, "--min-send-rate", "fast"], "fast"),
        (["--root", root, "--no-sendfile=1"], "--no-sendfile"),
        (["--root", root, "--listing=yes"], "--listing"),
        (["--root", root, "stray"], "stray"),
        (["--root", root, "--addr", "not-an-ip", "--port", "0"], "not-an-ip"),
    ]:
        r = run(*args)
        check(r.returncode != 0, "bad command line must fail", args)
        check(needle in r.stderr.decode(), "error names the problem", args, r.stderr)
    # "--flag=value" works as well as "--flag value".
    with Server(root, "--cache-mb=2", "--max-conn=50") as srv:
        srv.alive_and_serving()
        # SO_REUSEPORT: a second server can bind the same port and serve.
        with Server(root, "--port", str(srv.port)) as second:
            check_eq(second.port, srv.port, "second server on the same port")
            srv.kill()
            # A process killed by a signal under CAP_NETIO=uring keeps the
            # sockets its ring polls until the kernel ends the dead ring's
            # requests, after the process is reaped (README, Limits): a
            # connection made meanwhile may land in the dead listener and
            # be reset. Wait for the kernel to drop it.
            deadline = time.monotonic() + LONG
            while listeners_on(srv.port) > 1 and time.monotonic() < deadline:
                time.sleep(0.005)
            check_eq(listeners_on(srv.port), 1, "listeners once the first server is gone")
            second.alive_and_serving()


@group
def get_head(top):
    root, files = make_site(top)
    with Server(root) as srv:
        for name, data in files.items():
            if name.startswith("noindex/.") or " " in name or "<" in name:
                continue
            st, h, body = srv.get("/" + name)
            check_eq((st, body), (200, data), "GET /" + name)
            check_eq(h["content-length"], str(len(data)), "Content-Length of " + name)
        types = {"index.html": "text/html", "a.txt": "text/plain", "style.css": "text/css",
                 "app.js": "text/javascript", "pic.png": "image/png",
                 "blob.unknownext": "application/octet-stream", "big.bin": "application/octet-stream"}
        for name, want in types.items():
            check_eq(srv.get("/" + name)[1]["content-type"].split(";")[0], want, "type of " + name)

        st, h, body = srv.get("/a.txt")
        mtime = int(os.stat(os.path.join(root, "a.txt")).st_mtime)
        check_eq(h["last-modified"], httpdate(mtime), "Last-Modified")
        date = email.utils.parsedate_to_datetime(h["date"]).timestamp()
        check(abs(date - time.time()) < 3600, "Date is now-ish", h["date"])
        check_eq(h.get("server"), "knot", "Server header")

        for name in ("a.txt", "big.bin", "mid.bin", "empty.txt"):
            g = srv.get("/" + name)
            st, h, body = srv.get("/" + name, method="HEAD")
            check_eq((st, body), (200, b""), "HEAD /" + name)
            check_eq(h["content-length"], g[1]["content-length"], "HEAD Content-Length = GET's")

        check_eq(srv.get("/")[2], files["index.html"], "directory index at /")
        check_eq(srv.get("/sub/")[2], files["sub/index.html"], "directory index at /sub/")
        st, h, _ = srv.get("/sub?x=1")
        check_eq((st, h.get("location")), (301, "/sub/?x=1"), "redirect to the slash")
        check_eq(srv.get("/nope.txt")[0], 404, "missing file")
        check_eq(srv.get("/a.txt/")[0], 404, "a file named as a directory")
        check_eq(srv.get("/a%20b.txt")[2], files["a b.txt"], "percent-decoded name")
        check_eq(srv.get("/%61.txt")[2], files["a.txt"], "percent-decoded letter")
        check_eq(srv.get("/a.txt?q=1&r=%zz")[2], files["a.txt"], "query ignored")
        check_eq(srv.get("/sub/../a.txt")[2], files["a.txt"], "dot segments inside the root")
        check_eq(srv.get("//sub///page.html")[2], files["sub/page.html"], "empty segments")
        check_eq(srv.get("/link-in")[2], files["a.txt"], "symlink inside the root")
        # An absolute link that leads back inside is inside too (openat2's
        # RESOLVE_BENEATH refuses every absolute link: the opened file is checked).
        check_eq(srv.get("/link-abs-in")[2:], (files["sub/page.html"],), "absolute symlink inside the root")
        check_eq(srv.get("/fifo")[0], 403, "a FIFO is not served (and does not block)")
        raw = srv.raw(req(f"http://127.0.0.1:{srv.port}/a.txt", headers=(("Host", "x"), ("Connection", "close"))))
        check(raw.endswith(files["a.txt"]) and status_of(raw) == 200, "absolute-form target", raw[:80])

        # curl, byte-exact, both paths (cache and sendfile).
        for name in ("a.txt", "pic.png", "big.bin", "mid.bin"):
            out = os.path.join(top, "curl.out")
            r = curl("-o", out, "-w", "%{http_code}", f"http://127.0.0.1:{srv.port}/{name}")
            check_eq(r.stdout, b"200", "curl status for " + name)
            with open(out, "rb") as f:
                check(f.read() == files[name], "curl body byte-exact for " + name)
        r = curl("-I", f"http://127.0.0.1:{srv.port}/big.bin")
        check(b"Content-Length: %d" % len(files["big.bin"]) in r.stdout, "curl -I", r.stdout)


@group
def keepalive(top):
    root, files = make_site(top)
    with Server(root) as srv:
        c = srv.conn()
        c.request("GET", "/a.txt")
        r = c.getresponse()
        r.read()
        first = c.sock.getsockname()
        for i in range(100):
            name = ("a.txt", "mid.bin", "pic.png", "big.bin")[i % 4]
            c.request("GET" if i % 5 else "HEAD", "/" + name)
            r = c.getresponse()
            body = r.read()
            check_eq(r.status, 200, "status on a kept-alive connection")
            check(body == (files[name] if i % 5 else b""), "body on a kept-alive connection", name)
            check(c.sock is not None and c.sock.getsockname() == first, "same connection reused", i)
        c.close()

        # curl: several URLs, one connection.
        u = f"http://127.0.0.1:{srv.port}"
        r = curl("-o", "/dev/null", "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}\n",
                 u + "/a.txt", u + "/sub/", u + "/nope")
        check_eq(r.stdout.split(), [b"1", b"0", b"0"], "curl reuses the connection (even after 404)")

        # HTTP/1.0 closes unless asked; Connection: close closes.
        s = srv.sock()
        s.sendall(req("/a.txt", version="1.0", headers=()))
        rd = Reader(s)
        st, h, body = rd.response()
        check_eq((st, body, h.get("connection")), (200, files["a.txt"], "close"), "HTTP/1.0 default")
        check(rd.closed(), "HTTP/1.0 connection closed")
        s.close()
        s = srv.sock()
        rd = Reader(s)
        for _ in range(3):
            s.sendall(req("/a.txt", version="1.0", headers=(("Connection", "keep-alive"),)))
            st, h, body = rd.response()
            check_eq((st, h.get("connection")), (200, "keep-alive"), "HTTP/1.0 keep-alive")
        s.close()
        s = srv.sock()
        s.sendall(req("/a.txt", headers=(("Host", "x"), ("Connection", "close"))))
        rd = Reader(s)
        st, h, _ = rd.response()
        check_eq(h.get("connection"), "close", "Connection: close echoed")
        check(rd.closed(), "Connection: close closes")
        s.close()


@group
def pipelining(top):
    root, files = make_site(top)
    with Server(root) as srv:
        names = ["a.txt", "pic.png", "nope", "mid.bin", "sub/", "a.txt", "big.bin", "empty.txt"]
        batch = b"".join(req("/" + n, method="HEAD" if i == 3 else "GET") for i, n in enumerate(names))
        # A request with a body in the middle: the body must be skipped.
        batch += req("/a.txt", headers=(("Host", "x"), ("Content-Length", "5")), body=b"xxxxx")
        batch += req("/a.txt", headers=(("Host", "x"), ("Transfer-Encoding", "chunked")),
                     body=b"3\r\nabc\r\n10;ext=1\r\n0123456789abcdef\r\n0\r\nTrailer: x\r\n\r\n")
        batch += b"\r\n" + req("/style.css")  # a stray empty line before a request is allowed
        s = srv.sock()
        s.sendall(batch)
        rd = Reader(s)
        for i, n in enumerate(names):
            st, h, body = rd.response(head_request=(i == 3))
            if n == "nope":
                check_eq(st, 404, "pipelined 404")
                continue
            want = files["sub/index.html"] if n == "sub/" else files[n]
            check_eq(st, 200, "pipelined status " + n)
            check(body == (b"" if i == 3 else want), "pipelined body " + n)
        for want in (files["a.txt"], files["a.txt"], files["style.css"]):
            st, _, body = rd.response()
            check_eq((st, body), (200, want), "pipelined after a body")
        s.close()

        # The same requests, dribbled a few bytes at a time.
        s = srv.sock()
        rd = Reader(s)
        data = b"".join(req("/" + n) for n in ("a.txt", "sub/page.html", "app.js") * 5)
        for i in range(0, len(data), 7):
            s.sendall(data[i:i + 7])
        for n in ("a.txt", "sub/page.html", "app.js") * 5:
            st, _, body = rd.response()
            check_eq((st, body), (200, files[n]), "dribbled pipeline " + n)
        s.close()

        # A pipeline with a chunked body and an Expect, split into two TCP
        # segments at every byte boundary (TCP_NODELAY and a pause between,
        # so the server mostly reads the halves separately).
        data = (req("/a.txt", method="POST", headers=(("Host", "x"), ("Transfer-Encoding", "chunked"))) +
                b"3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\n" +
                req("/a.txt", headers=(("Host", "x"), ("Content-Length", "3"), ("Range", "bytes=1-3"))) + b"xyz" +
                b"\r\n" + req("/style.css", method="HEAD"))
        for k in range(1, len(data)):
            s = srv.sock()
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            s.sendall(data[:k])
            time.sleep(0.001)
            s.sendall(data[k:])
            rd = Reader(s)
            check_eq(rd.response()[0], 405, f"split at {k}: POST")
            check_eq(rd.response()[:3:2], (206, files["a.txt"][1:4]), f"split at {k}: range")
            st, h, body = rd.response(head_request=True)
            check_eq((st, h["content-length"]), (200, str(len(files["style.css"]))), f"split at {k}: HEAD")
            s.close()


@group
def ranges(top):
    root, files = make_site(top)
    with Server(root) as srv:
        for name in ("a.txt", "big.bin"):  # cached and sendfile paths
            data, n = files[name], len(files[name])
            for spec, lo, hi in [("0-0", 0, 0), ("2-5", 2, 5), ("-3", n - 3, n - 1), ("5-", 5, n - 1),
                                 ("3-100000000", 3, n - 1), ("-100000000", 0, n - 1),
                                 # numbers past int64: as large as they are
                                 ("0-99999999999999999999", 0, n - 1), ("-99999999999999999999", 0, n - 1),
                                 (" 1-2 , ", 1, 2)]:
                st, h, body = srv.get("/" + name, headers={"Range": "bytes=" + spec})
                check_eq(st, 206, f"Range {spec} on {name}")
                check_eq(h["content-range"], f"bytes {lo}-{hi}/{n}", f"Content-Range {spec}")
                check(body == data[lo:hi + 1], f"range body {spec} on {name}")
                check_eq(h["content-length"], str(hi - lo + 1), f"range length {spec}")
            for spec in (f"{n}-", f"{n + 10}-{n + 20}", "-0", "99999999999999999999-",
                         f"{n}-, -0, {n + 5}-"):  # several, none satisfiable (RFC 9110 14.2)
                st, h, body = srv.get("/" + name, headers={"Range": "bytes=" + spec})
                check_eq((st, h.get("content-range")), (416, f"bytes */{n}"), f"416 for {spec}")
            for value in ("bytes=0-1,3-4", f"bytes={n}-,0-1", "bytes=5-2", "items=0-1", "bytes=x-y",
                          "bytes=0-1,5-2", "bytes=", "bytes=,"):
                st, _, body = srv.get("/" + name, headers={"Range": value})
                check_eq((st, len(body)), (200, n), f"ignored Range {value!r}")
            lm = srv.get("/" + name)[1]["last-modified"]
            st, _, _ = srv.get("/" + name, headers={"Range": "bytes=0-1", "If-Range": lm})
            check_eq(st, 206, "If-Range with the current date")
            st, _, _ = srv.get("/" + name, headers={"Range": "bytes=0-1", "If-Range": httpdate(1e9)})
            check_eq(st, 200, "If-Range with another date")
            st, _, _ = srv.get("/" + name, headers={"Range": "bytes=0-1", "If-Range": '"etag"'})
            check_eq(st, 200, "If-Range with an entity tag")
            # Range is defined for GET only, and other methods ignore it (RFC
            # 9110 14.2): a HEAD answers as the GET without the Range would.
            st, h, body = srv.get("/" + name, method="HEAD", headers={"Range": "bytes=1-2"})
            check_eq((st, h["content-length"], h.get("content-range"), body), (200, str(n), None, b""),
                     "HEAD with Range")
        st, h, _ = srv.get("/empty.txt", headers={"Range": "bytes=0-"})
        check_eq((st, h.get("content-range")), (416, "bytes */0"), "range of an empty file")
        # A suffix range of an empty file is satisfiable (RFC 9110 14.1.1) but has no
        # bytes to put in a 206: the whole (empty) file, not 416.
        st, h, body = srv.get("/empty.txt", headers={"Range": "bytes=-5"})
        check_eq((st, h.get("content-length"), body), (200, "0", b""), "suffix range of an empty file")
        r = curl("-r", "100-199", f"http://127.0.0.1:{srv.port}/big.bin")
        check(r.stdout == files["big.bin"][100:200], "curl -r")


@group
def conditional(top):
    root, files = make_site(top)
    with Server(root) as srv:
        for name in ("a.txt", "big.bin"):
            lm = srv.get("/" + name)[1]["last-modified"]
            mtime = email.utils.parsedate_to_datetime(lm).timestamp()
            st, h, body = srv.get("/" + name, headers={"If-Modified-Since": lm})
            check_eq((st, body), (304, b""), "304 for the same date " + name)
            check_eq(h.get("last-modified"), lm, "304 keeps Last-Modified")
            check("date" in h, "304 has Date")
            st, _, _ = srv.get("/" + name, headers={"If-Modified-Since": httpdate(mtime + 10)})
            check_eq(st, 304, "304 for a later date")
            st, _, body = srv.get("/" + name, headers={"If-Modified-Since": httpdate(mtime - 10)})
            check_eq((st, body), (200, files[name]), "200 for an earlier date")
            st, _, _ = srv.get("/" + name, headers={"If-Modified-Since": httpdate(time.time() + 86400 * 400)})
            check_eq(st, 200, "a date in the future is ignored")
            st, _, _ = srv.get("/" + name, headers={"If-Modified-Since": "yesterday"})
            check_eq(st, 200, "an unparsable date is ignored")
            st, _, _ = srv.get("/" + name, headers={"If-Modified-Since": lm, "Range": "bytes=0-1"})
            check_eq(st, 304, "304 wins over Range")
            # If-None-Match decides when present, If-Modified-Since is then
            # ignored (RFC 9110 13.1.3); Knot sends no entity tags, so only
            # "*" (any current representation) matches (13.1.2).
            st, _, body = srv.get("/" + name, headers={"If-None-Match": '"x"', "If-Modified-Since": lm})
            check_eq((st, len(body)), (200, len(files[name])), "If-Modified-Since ignored with If-None-Match")
            for extra in ({}, {"If-Modified-Since": httpdate(mtime - 10)}):
                st, h, body = srv.get("/" + name, headers={"If-None-Match": "*", **extra})
                check_eq((st, body, h.get("last-modified")), (304, b"", lm), "If-None-Match: * " + str(extra))
            # The obsolete date forms (RFC 850, asctime) are understood too.
            t = time.gmtime(mtime)
            rfc850 = time.strftime("%A, %d-%b-%y %H:%M:%S GMT", t)
            asctime = time.strftime("%a %b ", t) + f"{t.tm_mday:2d}" + time.strftime(" %H:%M:%S %Y", t)
            for form in (rfc850, asctime):
                check_eq(srv.get("/" + name, headers={"If-Modified-Since": form})[0], 304, "date form " + form)
        # Pipelined 304 on a kept-alive connection: no body may be sent.
        s = srv.sock()
        lm = srv.get("/a.txt")[1]["last-modified"]
        s.sendall(req("/a.txt", headers=(("Host", "x"), ("If-Modified-Since", lm))) + req("/a.txt"))
        rd = Reader(s)
        check_eq(rd.response()[0], 304, "pipelined 304")
        check_eq(rd.response()[2], files["a.txt"], "response after a 304")
        s.close()
        r = curl("-z", lm, "-o", "/dev/null", "-w", "%{http_code}", f"http://127.0.0.1:{srv.port}/a.txt")
        check_eq(r.stdout, b"304", "curl -z")


def write_files(root, files):
    """Writes each name -> bytes of files under root."""
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)


def check_served_shuffled(srv, rnd, files, rounds, what):
    """Requests every file of files, in a new random order each round, on
    one keep-alive connection, and checks each body byte for byte."""
    c = srv.conn()
    for _ in range(rounds):
        for name, data in rnd.sample(sorted(files.items()), len(files)):
            c.request("GET", "/" + name)
            check(c.getresponse().read() == data, what, name)
    c.close()


@group
def cache(top):
    root, files = make_site(top)
    path = os.path.join(root, "a.txt")
    with Server(root, "--cache-mb", "1", "--sendfile-kb", "128") as srv:
        check_eq(srv.get("/a.txt")[2], files["a.txt"], "first read")
        check_eq(srv.get("/a.txt")[2], files["a.txt"], "cached read")
        st = os.stat(path)
        with open(path, "wb") as f:  # same size, new bytes, new mtime
            f.write(b"HELLO, KNOT\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        check_eq(srv.get("/a.txt")[2], b"HELLO, KNOT\n", "edit seen after an mtime change")
        with open(path, "wb") as f:
            f.write(b"longer content now\n")
        check_eq(srv.get("/a.txt")[2], b"longer content now\n", "size change seen")
        os.replace(os.path.join(root, "style.css"), path)  # a different inode
        check_eq(srv.get("/a.txt")[2], files["style.css"], "replaced file seen")
        os.unlink(path)
        check_eq(srv.get("/a.txt")[0], 404, "deleted file is gone")
        # A deleted file's entry goes with its 404: its descriptor (a file
        # sent with sendfile) held the disk space for as long as it stayed.
        check_eq(srv.get("/mid.bin")[2], files["mid.bin"], "a file sent with sendfile")
        os.unlink(os.path.join(root, "mid.bin"))
        check_eq(srv.get("/mid.bin")[0], 404, "deleted sendfile file is gone")
        # The entry's descriptor closes with its last reference: the 404's
        # drop, or the earlier response's thread, which may release it a
        # little after its client has read the whole body (seen under
        # ASan). So it must be gone soon, not at once.
        def mid_held():
            held = []
            for n in os.listdir(f"/proc/{srv.proc.pid}/fd"):
                try:
                    if "mid.bin" in os.readlink(f"/proc/{srv.proc.pid}/fd/{n}"):
                        held.append(n)
                except FileNotFoundError:  # a connection's, closed meanwhile
                    pass
            return held
        held = mid_held()
        for _ in range(200):
            if not held:
                break
            time.sleep(0.05)
            held = mid_held()
        check_eq(held, [], "no descriptor of the deleted file left")
        with open(os.path.join(root, "mid.bin"), "wb") as f:  # back, for the checks below
            f.write(files["mid.bin"])

        # More small files than the cache holds: eviction keeps answers exact.
        rnd = random.Random(1)
        many = {f"m{i}.dat": rnd.randbytes(100 * 1024) for i in range(25)}  # 2.5 MiB > 1 MiB
        write_files(root, many)
        check_served_shuffled(srv, rnd, many, 3, "body exact under eviction")
    with Server(root, "--cache-mb", "0") as srv:
        for name in ("sub/page.html", "mid.bin", "m3.dat"):
            want = files.get(name) or many[name]
            check_eq(srv.get("/" + name)[2], want, "served with the cache off: " + name)


@group
def cache_files(top):
    """Files served by sendfile are cached as open descriptors: hits (and
    ranges of them) stay exact, and an edit, a replacement or a deletion of
    the file is seen as for cached bytes; more files than the cache keeps
    descriptors for are served too."""
    root, files = make_site(top)
    path = os.path.join(root, "mid.bin")  # 200 KiB
    with Server(root, "--sendfile-kb", "64") as srv:
        check_eq(srv.get("/mid.bin")[2], files["mid.bin"], "first read")
        check_eq(srv.get("/mid.bin")[2], files["mid.bin"], "from the kept descriptor")
        st, h, body = srv.get("/mid.bin", headers={"Range": "bytes=100000-100099"})
        check_eq((st, body), (206, files["mid.bin"][100000:100100]), "a range of it")
        check_eq(srv.get("/mid.bin", method="HEAD")[1].get("content-length"), str(len(files["mid.bin"])),
                 "HEAD")
        st0 = os.stat(path)
        edited = bytes(reversed(files["mid.bin"]))  # same size, new bytes, new mtime
        with open(path, "r+b") as f:
            f.write(edited)
        os.utime(path, ns=(st0.st_atime_ns, st0.st_mtime_ns + 5_000_000_000))
        check_eq(srv.get("/mid.bin")[2], edited, "edit in place seen after an mtime change")
        with open(path, "ab") as f:
            f.write(b"more")
        check_eq(srv.get("/mid.bin")[2], edited + b"more", "growth seen")
        os.replace(os.path.join(root, "big.bin"), path)  # a different inode
        check_eq(srv.get("/mid.bin")[2], files["big.bin"], "replaced file seen")
        os.unlink(path)
        check_eq(srv.get("/mid.bin")[0], 404, "deleted file is gone")
    rnd = random.Random(3)
    many = {f"f{i}.dat": rnd.randbytes(2048 + i) for i in range(300)}  # > CACHE_MAX_FILES
    write_files(root, many)
    with Server(root, "--sendfile-kb", "1", "--cache-check", "60") as srv:
        check_served_shuffled(srv, rnd, many, 2, "body exact beyond the descriptor bound")
        srv.alive_and_serving()


@group
def cache_concurrent(top):
    """Hits, misses and evictions from many connections at once (the cache
    takes its lock shared on a hit and evicts by second chance): every body
    stays exact, and edits of hot, just-hit files are still seen."""
    import threading
    root, _ = make_site(top)
    rnd = random.Random(7)
    files = {f"c{i}.dat": rnd.randbytes(rnd.randrange(20_000, 60_000)) for i in range(40)}
    for name, data in files.items():
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
    names = sorted(files)
    weights = [1.0 / (i + 1) for i in range(len(names))]  # a few hot files, a long tail
    errors = []

    def client(seed, srv, want):
        r = random.Random(seed)
        try:
            c = srv.conn()
            for name in r.choices(names, weights, k=150):
                c.request("GET", "/" + name)
                resp = c.getresponse()
                body = resp.read()
                if resp.status != 200 or body != want[name]:
                    errors.append((name, resp.status, len(body)))
            c.close()
        except Exception as e:  # reported by the main thread
            errors.append(repr(e))

    # about 1.6 MiB of files through a 1 MiB cache: eviction all along
    with Server(root, "--cache-mb", "1", "--sendfile-kb", "128") as srv:
        for rep in range(2):
            threads = [threading.Thread(target=client, args=(rep * 100 + i, srv, files))
                       for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(LONG * 4)
            check(not any(t.is_alive() for t in threads), "clients finished")
            check(not errors, "bodies exact under concurrent hits and eviction", errors[:5])
            # Edit the hottest files (new bytes, same size, new mtime): seen at once.
            for name in names[:3]:
                path = os.path.join(root, name)
                st = os.stat(path)
                files[name] = bytes(reversed(files[name]))
                with open(path, "wb") as f:
                    f.write(files[name])
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
                check_eq(srv.get("/" + name)[2], files[name], "edit of a hot file seen: " + name)
        srv.alive_and_serving()


@group
def cache_check(top):
    """--cache-check SEC: a cached file is served without a stat for SEC
    after its last check, so an edit shows only after that; without the
    flag (the cache group) an edit shows on the next request."""
    root, files = make_site(top)
    path = os.path.join(root, "a.txt")

    def edit(data):
        st = os.stat(path)
        with open(path, "wb") as f:
            f.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))

    with Server(root, "--cache-check", "3600") as srv:
        check_eq(srv.get("/a.txt")[2], files["a.txt"], "first read, cached")
        edit(b"HELLO, KNOT\n")
        check_eq(srv.get("/a.txt")[2], files["a.txt"], "within --cache-check: the cached bytes")
        st, h, body = srv.get("/a.txt", method="HEAD")
        check_eq((st, h["content-length"]), (200, str(len(files["a.txt"]))), "HEAD from the cache")
        check_eq(srv.get("/sub/page.html")[2], files["sub/page.html"], "other files unaffected")
        check_eq(srv.get("/a.txt/")[0], 404, "a file is not a directory")
        check_eq(srv.get("/nothere.txt")[0], 404, "a miss still looks at the file system")
    with Server(root, "--cache-check", "0.2") as srv:
        check_eq(srv.get("/a.txt")[2], b"HELLO, KNOT\n", "first read, cached")
        edit(b"hello again\n")
        time.sleep(0.5)
        check_eq(srv.get("/a.txt")[2], b"hello again\n", "edit seen after --cache-check")
        os.unlink(path)
        time.sleep(0.5)
        check_eq(srv.get("/a.txt")[0], 404, "deletion seen after --cache-check")
    with Server(root) as srv:
        check_eq(srv.get("/style.css")[2], files["style.css"], "default: cached")
        with open(os.path.join(root, "style.css"), "wb") as f:
            f.write(b"p { }\n")
        check_eq(srv.get("/style.css")[2], b"p { }\n", "default: a size change seen at once")


@group
def errors(top):
    root, files = make_site(top)
    with Server(root, "--max-body-bytes", "1000", "--max-header-bytes", "2048", "--max-uri-bytes", "512") as srv:
        # 405 keeps the connection; Allow lists GET and HEAD.
        s = srv.sock()
        rd = Reader(s)
        for m in ("POST", "PUT", "DELETE", "OPTIONS", "PATCH", "TRACE"):
            s.sendall(req("/a.txt", method=m, headers=(("Host", "x"), ("Content-Length", "3")), body=b"abc"))
            st, h, _ = rd.response()
            check_eq((st, h.get("allow")), (405, "GET, HEAD"), "405 for " + m)
        # Methods it does not recognise are 501 (RFC 9110 9.1); methods are
        # case-sensitive, so "get" is one of them. The connection stays usable.
        for m in ("BREW", "get", "Head", "PROPFIND"):
            s.sendall(req("/a.txt", method=m, headers=(("Host", "x"), ("Content-Length", "3")), body=b"abc"))
            check_eq(rd.response()[0], 501, "501 for " + m)
        s.sendall(req("/a.txt"))
        check_eq(rd.response()[2], files["a.txt"], "connection usable after 405s")
        s.close()

        def expect(raw_req, want, what):
            got = status_of(srv.raw(raw_req))
            check_eq(got, want, what)

        expect(b"\x00\x01\x02\xff garbage\r\n\r\n", 400, "binary garbage")
        expect(b"GET\r\n\r\n", 400, "request line without target")
        expect(b"GET /a.txt\r\n\r\n", 400, "HTTP/0.9 style line")
        expect(b"GET /a.txt HTTP/x.y\r\nHost: x\r\n\r\n", 400, "bad version")
        expect(b"GET /a.txt HTTP/2.0\r\nHost: x\r\n\r\n", 505, "HTTP/2.0 in text")
        expect(b"GET  /a.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400, "double space")
        expect(b"GET a.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400, "target without slash")
        expect(b"GET /a\x01.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400, "control byte in target")
        expect(b"GET /a.txt HTTP/1.1\r\n\r\n", 400, "HTTP/1.1 without Host")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", 400, "two Hosts")
        # RFC 9112 3.2: a Host with an invalid value is 400 too; an empty one is valid.
        for bad in (b"a b", b"a/b", b"a@b", b"x\x7f", b"\xc3\xa9.example", b"a\tb", b'"x"'):
            expect(b"GET /a.txt HTTP/1.1\r\nHost: " + bad + b"\r\n\r\n", 400, "invalid Host " + repr(bad))
        for good in (b"", b"example.com:8080", b"[::1]:80", b"127.0.0.1", b"xn--bcher-kva.example", b"a%41"):
            expect(b"GET /a.txt HTTP/1.1\r\nHost: " + good + b"\r\nConnection: close\r\n\r\n", 200,
                   "valid Host " + repr(good))
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nBadHeader\r\n\r\n", 400, "header without colon")
        expect(b"GET /a.txt HTTP/1.1\r\nHost : x\r\n\r\n", 400, "space before colon")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX: a\r\n  folded\r\n\r\n", 400, "obsolete folding")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400, "bad Content-Length")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
               400, "conflicting Content-Length")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
               400, "Content-Length with chunked")
        # Transfer-Encoding: the body's length is known only if chunked is the
        # final coding (RFC 9112 6.3: 400 and close), applied once (7); other
        # codings before it are not implemented (6.1: 501); HTTP/1.0 has none
        # (6.1: faulty framing). The field's lines form one list.
        te = b"GET /a.txt HTTP/1.1\r\nHost: x\r\n"
        expect(te + b"Transfer-Encoding: gzip\r\n\r\n", 400, "chunked not final")
        expect(te + b"Transfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n", 400, "chunked then gzip")
        expect(te + b"Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\n0\r\n\r\n", 400,
               "chunked then gzip, two lines")
        expect(te + b"Transfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n", 400, "chunked twice")
        expect(te + b"Transfer-Encoding:\r\n\r\n", 400, "empty Transfer-Encoding")
        expect(te + b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", 501, "unknown coding")
        expect(te + b"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 501,
               "unknown coding, two lines")
        expect(b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
               400, "Transfer-Encoding in HTTP/1.0")
        raw = srv.raw(te + b"Transfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + req("/a.txt"))
        check_eq(raw.count(b"HTTP/1.1 200"), 2, "chunked (any case) body skipped, next request served")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400, "bad chunk size")
        # Chunked framing is CRLF only (RFC 9112 7.1): a bare LF, junk after
        # the size, or a CR or control byte in an extension is what a front
        # end may frame differently (request smuggling): 400, not the next
        # request. Whitespace before an extension and a plain one are fine.
        for bad, what in ((b"3\nabc\r\n0\r\n\r\n", "bare LF after the size"),
                          (b"3\r\nabc\n0\r\n\r\n", "bare LF after the data"),
                          (b"3\nabc\n0\n\n", "bare LFs only"),
                          (b"3 zzz\r\nabc\r\n0\r\n\r\n", "junk after the size"),
                          (b"3;a\rb\r\nabc\r\n0\r\n\r\n", "CR in an extension"),
                          (b"3;a\x01b\r\nabc\r\n0\r\n\r\n", "control byte in an extension"),
                          (b"3;a\x7fb\r\nabc\r\n0\r\n\r\n", "DEL in an extension"),
                          (b"3\r\nabc\r\n0\r\nX: y\n\r\n", "bare LF in a trailer")):
            raw = srv.raw(te + b"Transfer-Encoding: chunked\r\n\r\n" + bad + req("/a.txt"))
            check_eq(status_of(raw), 400, "chunked framing: " + what)
            check_eq(raw.count(b"HTTP/1.1 "), 1, "nothing served after " + what)
        for good in (b"3 ;x=y\r\nabc\r\n0\r\n\r\n", b"3;x=\"a b\"\r\nabc\r\n0\r\nX: y\r\n\r\n"):
            raw = srv.raw(te + b"Transfer-Encoding: chunked\r\n\r\n" + good + req("/a.txt"))
            check_eq(raw.count(b"HTTP/1.1 200"), 2, "chunked body skipped: " + repr(good))
        # A NUL in the head is refused (RFC 9110 5.5); a line that starts with
        # one once ended the head early, hiding the fields after it.
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, "NUL in a field value")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\x00\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
               400, "a line starting with NUL")
        expect(b"GET /a%zz.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400, "bad percent escape")
        expect(b"GET /a%00.txt HTTP/1.1\r\nHost: x\r\n\r\n", 400, "encoded NUL")
        # 413: declared too big, and chunked growing too big.
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1001\r\n\r\n" + b"x" * 1001, 413, "413 length")
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
               413, "413 absurd length")
        chunks = b"".join(b"100\r\n" + b"y" * 256 + b"\r\n" for _ in range(5)) + b"0\r\n\r\n"
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks, 413, "413 chunked")
        # A chunk size near 2^64 once wrapped the running total below the limit,
        # and the server waited for 2^64 bytes.
        expect(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\nFFFFFFFFFFFFFFFF\r\n",
               413, "413 chunk size that wraps the total")
        # 414: a long target; 431: too much header.
        expect(req("/" + "a" * 600), 414, "414 long URI")
        # The target alone is measured: one within its limit in a request line
        # longer than the limit, with too much header after it, is 431.
        expect(req("/" + "a" * 505, headers=[("Host", "x")] + [(f"X-F{i}", "v" * 100) for i in range(30)]),
               431, "431 with a target just within its limit")
        expect(req("/" + "a" * 5000), 414, "414 URI longer than the header buffer")
        expect(req("/a.txt", headers=[("Host", "x")] + [(f"X-F{i}", "v" * 100) for i in range(30)]), 431, "431 big head")
        expect(req("/a.txt", headers=[("Host", "x")] + [(f"X{i}", "v") for i in range(120)]), 431, "431 many fields")
        # Error responses close the connection, but only after the response.
        s = srv.sock()
        s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 5000\r\n\r\n" + b"z" * 5000)
        rd = Reader(s)
        st, h, _ = rd.response()
        check_eq((st, h.get("connection")), (413, "close"), "413 with the body still arriving")
        check(rd.closed(), "closed after 413")
        s.close()
        # Expect: 100-continue (RFC 9110 10.1.1): a 100 before the body is read,
        # then the final answer; none for HTTP/1.0; a 413 at once, without 100.
        s = srv.sock()
        s.sendall(req("/a.txt", method="POST", headers=(("Host", "x"), ("Expect", "100-Continue"),
                                                        ("Content-Length", "4"))))
        rd = Reader(s)
        while b"\r\n\r\n" not in rd.buf:
            rd._fill()
        check(rd.buf.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"), "100 Continue before the body", rd.buf[:40])
        rd.buf = rd.buf[len(b"HTTP/1.1 100 Continue\r\n\r\n"):]
        s.sendall(b"abcd" + req("/a.txt"))
        check_eq(rd.response()[0], 405, "final answer after 100")
        check_eq(rd.response()[2], files["a.txt"], "next request after the body")
        s.close()
        raw = srv.raw(req("/a.txt", version="1.0", headers=(("Expect", "100-continue"), ("Content-Length", "2"))) + b"ab")
        check(raw.startswith(b"HTTP/1.1 200") and b" 100 " not in raw, "no 100 for HTTP/1.0", raw[:40])
        raw = srv.raw(req("/a.txt", headers=(("Host", "x"), ("Expect", "100-continue"), ("Content-Length", "5000"))))
        check(raw.startswith(b"HTTP/1.1 413"), "413 without 100", raw[:40])
        # A body within the limit is read and skipped.
        raw = srv.raw(req("/a.txt", headers=(("Host", "x"), ("Content-Length", "10"))) + b"0123456789")
        check(status_of(raw) == 200 and raw.endswith(files["a.txt"]), "body within the limit skipped")
        srv.alive_and_serving()


@group
def truncated(top):
    root, files = make_site(top)
    with Server(root, "--header-timeout", "1", "--keepalive-timeout", "1") as srv:
        # Half a request, then the client closes: nothing to answer.
        for part in (b"GET /a.tx", b"GET /a.txt HTTP/1.1\r\nHo", b"GET /a.txt HTTP/1.1\r\nHost: x\r\n",
                     b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 50\r\n\r\nonly-some"):
            raw = srv.raw(part)
            check(raw == b"" or status_of(raw) in (400, 408), "truncated request: close or 400/408", part, raw[:60])
            srv.alive_and_serving()
        # Half a request, the client waits: 408 at the header timeout.
        s = srv.sock()
        s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n")
        raw = recv_all(s)
        check_eq(status_of(raw), 408, "incomplete head times out with 408")
        s.close()
        # Random garbage of many shapes; the server answers 400 or closes.
        rnd = random.Random(7)
        for i in range(40):
            junk = rnd.randbytes(rnd.randrange(1, 3000))
            if i % 2:
                junk += b"\r\n\r\n"
            raw = srv.raw(junk)
            check(raw == b"" or status_of(raw) in (400, 408, 414, 431, 501, 505), "garbage answer", raw[:60])
        # A good request on a connection that then sends garbage: the good
        # one is answered, then 400.
        raw = srv.raw(req("/a.txt") + b"\x16\x03\x01 not http\r\n\r\n")
        check(raw.startswith(b"HTTP/1.1 200") and b"HTTP/1.1 400" in raw, "good then garbage", raw[:200])
        srv.alive_and_serving()


@group
def traversal(top):
    root, files = make_site(top)
    attacks = [
        "/../secret.txt", "/../../secret.txt", "/sub/../../secret.txt", "/./../secret.txt",
        "/%2e%2e/secret.txt", "/%2E%2E/secret.txt", "/.%2e/secret.txt", "/%2e./secret.txt",
        "/%2e%2e%2fsecret.txt", "/..%2fsecret.txt", "/sub/..%2f..%2fsecret.txt", "/sub%2f..%2f..%2fsecret.txt",
        "/%252e%252e/secret.txt", "/..%5csecret.txt", "/..\\secret.txt", "/%2e%2e%5csecret.txt",
        "/sub/%2e%2e/%2e%2e/secret.txt", "/a.txt/../../secret.txt", "/..;/secret.txt",
        "/link-out", "/link-abs", "/dir-out/", "/dir-out/index.html", "/dir-out", "/link-out%00.txt",
        "/%c0%ae%c0%ae/secret.txt", "/..%c0%afsecret.txt", f"http://x/../secret.txt",
        "/" + "../" * 20 + "secret.txt", "/" + "%2e%2e/" * 20 + "secret.txt",
    ]
    with Server(root) as srv:
        for a in attacks:
            raw = srv.raw(f"GET {a} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            check(b"TOP-SECRET" not in raw, "traversal served a secret", a)
            check(status_of(raw) in (400, 403, 404), "traversal refused", a, raw[:40])
            r = curl("--path-as-is", "-o", "-", "-w", "\n%{http_code}", f"http://127.0.0.1:{srv.port}{a}")
            check(b"TOP-SECRET" not in r.stdout, "curl traversal served a secret", a)
        # What lies outside must not show in the status either: a path under a
        # link out answers 403 whether it names a directory there, nothing,
        # or a file (a stat that followed the link once told them apart).
        for a in ("/dir-out/private/", "/dir-out/no_such_dir/", "/dir-out/index.html/", "/dir-out/private",
                  "/dir-out/no_such_dir", "/link-out/"):
            check_eq(srv.get(a)[0], 403, "status under a link out of the root: " + a)
        # The slash redirect names the directory by its normalised path: the
        # target as sent made "//evil.example/../sub" a Location that a
        # browser follows to another host (an open redirect; "/\" is "//"
        # to browsers too).
        for a in ("//evil.example/../sub", "/\\evil.example/../sub", "/%2Fevil.example/../sub",
                  "///evil.example/%2e%2e/sub?q=1", "http://x//evil.example/../sub"):
            raw = srv.raw(f"GET {a} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            m = re.search(rb"\r\nLocation: ([^\r]*)\r\n", raw)
            check(status_of(raw) == 301 and m, "a directory without its slash redirects", a, raw[:80])
            want = b"/sub/?q=1" if "?" in a else b"/sub/"
            check_eq(m.group(1), want, "Location of " + a)
        os.makedirs(os.path.join(root, "d ir", "x"))
        st, h, _ = srv.get("/d%20ir/./x")
        check_eq((st, h.get("location")), (301, "/d%20ir/x/"), "Location percent-encodes the path")
        srv.alive_and_serving()
    with Server(root, "--follow-symlinks") as srv:
        check_eq(srv.get("/link-out")[2], b"TOP-SECRET-OUTSIDE-ROOT\n", "--follow-symlinks allows links out")
        check_eq(srv.get("/dir-out/")[2], b"TOP-SECRET-OUTSIDE-DIR\n", "--follow-symlinks allows dirs out")
        check_eq(srv.get("/../secret.txt")[0], 400, "but never '..' out of the root")


@group
def long_paths(top):
    """Paths whose decoded form is longer than the short buffer serve.c
    decodes into first (256 bytes) take the long route and behave the same:
    served if they name a file, refused if they climb out, 414 past PATH_MAX."""
    root, files = make_site(top)
    deep = "/".join(["d" * 60] * 6)  # 365 bytes, within every limit
    os.makedirs(os.path.join(root, deep))
    with open(os.path.join(root, deep, "f.txt"), "wb") as f:
        f.write(b"deep file\n")
    with Server(root, "--max-uri-bytes", "6000") as srv:
        st, _, body = srv.get("/" + deep + "/f.txt")
        check_eq((st, body), (200, b"deep file\n"), "a file 365 bytes deep")
        check_eq(srv.get("/" + deep + "/f.txt")[2], b"deep file\n", "again, from the cache")
        st, _, body = srv.get("/" + "./" * 200 + "a.txt")
        check_eq((st, body), (200, files["a.txt"]), "405 bytes that normalise to a.txt")
        st, _, body = srv.get("/sub/" + "%2e/" * 150 + "page.html")
        check_eq((st, body), (200, files["sub/page.html"]), "escapes decoding to 314 bytes of sub/./.")
        st, _, body = srv.get("/" + "x/../" * 80 + "sub/page.html")
        check_eq((st, body), (200, files["sub/page.html"]), "400 bytes of x/.. then a file")
        st, h, _ = srv.get("/" + deep)
        check_eq((st, h.get("location")), (301, "/" + deep + "/"), "a long directory redirects")
        check_eq(srv.get("/" + "../" * 100 + "secret.txt")[0], 400, "a long climb out of the root")
        check_eq(srv.get("/" + "a" * 5000)[0], 414, "longer than PATH_MAX once decoded")
        srv.alive_and_serving()


@group
def listing(top):
    root, files = make_site(top)
    with Server(root) as srv:
        st, _, body = srv.get("/noindex/")
        check_eq(st, 403, "no listing without --listing")
        check(b"one.txt" not in body, "no listing leaked")
    with Server(root, "--listing") as srv:
        st, h, body = srv.get("/noindex/")
        check_eq(st, 200, "listing status")
        check(h["content-type"].startswith("text/html"), "listing type")
        check(b'href="one.txt"' in body and b'href="deeper/"' in body, "listing entries", body)
        check(b"&lt;two&gt;.txt" in body and b"%3Ctwo%3E.txt" in body, "listing escapes names", body)
        check(b".hidden" not in body, "hidden files not listed")
        check_eq(srv.get("/noindex/%3Ctwo%3E.txt")[2], b"2\n", "listed link works")
        check_eq(srv.get("/")[2], files["index.html"], "index still wins over listing")
        check(b"TOP-SECRET" not in srv.get("/dir-out/")[2], "no listing outside the root")


@group
def conn_limit(top):
    root, files = make_site(top)
    with Server(root, "--max-conn", "3") as srv:
        held = []
        deadline = time.monotonic() + LONG
        while len(held) < 3:  # three served, kept-alive connections fill the limit
            s = srv.sock()  # (a closed connection, such as the readiness probe,
            s.sendall(req("/a.txt"))  # holds its slot until the server sees the close)
            rd = Reader(s)
            st = rd.response()[0]
            if st == 503:
                s.close()
                check(time.monotonic() < deadline, "slots free up")
                continue
            check_eq(st, 200, "within the limit")
            held.append((s, rd))
        for _ in range(3):
            raw = srv.raw(req("/a.txt"))
            check_eq(status_of(raw), 503, "over the limit")
            check(b"Retry-After:" in raw, "503 has Retry-After")
        s, rd = held.pop()
        s.close()
        deadline = time.monotonic() + LONG  # the slot frees once the server notices the close
        while status_of(srv.raw(req("/a.txt"))) != 200:
            check(time.monotonic() < deadline, "a slot frees after a close")
        for s, rd in held:
            s.sendall(req("/a.txt"))
            check_eq(rd.response()[2], files["a.txt"], "held connections still served")
            s.close()


@group
def idle_listener(top):
    # The listener carries the receive timeout its connections inherit,
    # and Linux bounds accept() by it: a quiet spell longer than that is
    # no error (it was reported as "accept: Resource temporarily
    # unavailable" and slept 10 ms).
    root, files = make_site(top)
    with Server(root, "--header-timeout", "1", "--keepalive-timeout", "1") as srv:
        time.sleep(2.5)
        srv.alive_and_serving()
        check("accept" not in srv.stderr(), "no accept error after idling", srv.stderr()[-200:])


@group
def slowloris(top):
    root, files = make_site(top)
    with Server(root, "--header-timeout", "2", "--keepalive-timeout", "2", "--max-conn", "200") as srv:
        dropped = []
        started = threading.Barrier(21)

        def loris(i):
            s = srv.sock()
            try:
                s.sendall(b"GET /a.txt HTTP/1.1\r\nHost: x\r\n")
                started.wait()
                end = time.monotonic() + LONG
                s.settimeout(0.2)
                while time.monotonic() < end:
                    try:
                        s.sendall(b"X-Slow: %d\r\n" % i)  # one header line at a time, never the end
                        data = s.recv(4096)
                        dropped.append(data)  # any answer (408) or EOF means dropped
                        return
                    except socket.timeout:
                        continue
                    except OSError:
                        dropped.append(b"")
                        return
            finally:
                s.close()

        threads = [threading.Thread(target=loris, args=(i,)) for i in range(20)]
        for t in threads:
            t.start()
        started.wait()
        # While all slow clients are connected, others are served.
        for i in range(30):
            st, _, body = srv.get("/a.txt" if i % 2 else "/mid.bin")
            check_eq(st, 200, "served during slowloris")
        for t in threads:
            t.join(LONG + 5)
        check_eq(len(dropped), 20, "every slow client was dropped")
        for d in dropped:
            check(d == b"" or status_of(d) == 408, "dropped with 408 or a close", d[:40])

        # An idle keep-alive connection is closed at the idle timeout.
        s = srv.sock()
        s.sendall(req("/a.txt"))
        rd = Reader(s)
        rd.response()
        check(rd.closed(), "idle keep-alive connection closed")
        s.close()
        # A connection that never sends a byte is closed too (silently).
        s = srv.sock()
        check_eq(recv_all(s), b"", "silent connection closed without a response")
        s.close()
        srv.alive_and_serving()


def huge_response_bytes():
    """More than the kernel's largest send buffer plus a small receive
    buffer: such a response cannot be handed to the kernel in full until
    the client reads."""
    try:
        with open("/proc/sys/net/ipv4/tcp_wmem") as f:
            wmem = int(f.read().split()[2])
    except (OSError, ValueError, IndexError):
        wmem = 8 << 20
    return random.Random(3).randbytes(2 * wmem + (1 << 20))


def stalled_reader(srv, path):
    """A client that asks for path and then never reads."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
    s.connect(("127.0.0.1", srv.port))
    s.sendall(req(path))
    return s


@group
def slow_reader(top):
    root, _ = make_site(top)
    with open(os.path.join(root, "huge.bin"), "wb") as f:
        f.write(huge_response_bytes())
    with Server(root, "--max-conn", "1", "--send-timeout", "2") as srv:
        deadline = time.monotonic() + LONG
        while True:  # take the only slot with a client that stops reading
            stalled = stalled_reader(srv, "/huge.bin")
            stalled.settimeout(LONG)
            if stalled.recv(12) == b"HTTP/1.1 200":
                break
            stalled.close()
            check(time.monotonic() < deadline, "the slot frees up")
        # Others get 503 until the send timeout drops the stalled client.
        seen_503 = False
        while True:
            st = status_of(srv.raw(req("/a.txt")))
            if st == 200:
                break
            check_eq(st, 503, "while the slot is held")
            seen_503 = True
            check(time.monotonic() < deadline, "stalled reader dropped at the send timeout")
            time.sleep(0.05)  # poll, not hammer: each write that stalls waits a full timeout
        check(seen_503, "the stalled reader held the slot for a while")
        stalled.close()

    # Many clients that never read, on both send paths (sendfile for the huge
    # file, writev from the cache for a 40 KiB one pipelined 300 times): while
    # their writers are blocked, others are served; at the send timeout each
    # stalled connection is reset (the kernel drops what it held queued).
    # Waited for without reading: a read would let its writer go on (the
    # first huge one then trickled 9 MB through a 16 KiB window for 15 s).
    with open(os.path.join(root, "small.bin"), "wb") as f:
        f.write(bytes(40 * 1024))
    with Server(root, "--send-timeout", "1") as srv:
        stalled = [stalled_reader(srv, "/huge.bin") for _ in range(10)]
        for _ in range(10):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.connect(("127.0.0.1", srv.port))
            s.sendall(req("/small.bin") * 300)
            stalled.append(s)
        for i in range(20):
            st, _, body = srv.get("/a.txt" if i % 2 else "/mid.bin")
            check_eq(st, 200, "served while 20 clients do not read")
        for i, s in enumerate(stalled):
            p = select.poll()
            p.register(s, select.POLLERR | select.POLLHUP)
            ev = p.poll(LONG * 1000)
            check(ev and ev[0][1] & (select.POLLERR | select.POLLHUP),
                  "stalled client reset at the send timeout", i, ev)
            check_eq(s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), errno.ECONNRESET,
                     f"stalled client {i} reset, not closed")
            s.close()
        srv.alive_and_serving()


@group
def slow_rate(top):
    """--min-send-rate: a client that keeps reading, but slowly (a slow-read
    attack: each write makes progress, so the send timeout never fires), is
    closed once a --send-timeout period passes below the rate; a slow client
    above the rate gets its whole response."""
    root, files = make_site(top)
    data = huge_response_bytes()
    with open(os.path.join(root, "huge.bin"), "wb") as f:
        f.write(data)

    def trickle(srv, path, args):
        """Reads path 4 KiB at a time, 50 ms apart (at most 80 KiB/s),
        until the body is complete or the server closes; returns
        (Content-Length, body length)."""
        s = stalled_reader(srv, path)
        s.settimeout(LONG)
        st, h, body = read_head(s)
        check_eq(st, 200, "trickled response")
        n = len(body)
        deadline = time.monotonic() + LONG
        while n < int(h["content-length"]):
            try:
                b = s.recv(4096)
            except ConnectionResetError:
                break
            if not b:
                break
            n += len(b)
            check(time.monotonic() < deadline, "slow reader closed", path, args, n)
            time.sleep(0.05)
        s.close()
        return int(h["content-length"]), n

    def send_path(args, errors):
        try:
            with Server(root, "--send-timeout", "1", "--min-send-rate", "1000000", *args) as srv:
                length, got = trickle(srv, "/huge.bin", args)
                check(got < length, "below the rate: closed before the end", args, got, length)
                st, _, body = srv.get("/huge.bin")  # a client reading at full speed
                check(st == 200 and body == data, "a fast reader gets it all", args)
            with Server(root, "--send-timeout", "1", "--min-send-rate", "1000", *args) as srv:
                length, got = trickle(srv, "/mid.bin", args)
                check_eq((length, got), (len(files["mid.bin"]), len(files["mid.bin"])),
                         f"above the rate: all of it {args}")
        except Exception as e:  # reported by the main thread
            errors.append(e)

    # The three send paths (sendfile, copy, cache) at once, each against its
    # own servers: each waits out send timeouts that the others need not.
    errors = []
    threads = [threading.Thread(target=send_path, args=(args, errors))
               for args in ((), ("--no-sendfile",), ("--sendfile-kb", "1048576"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(LONG * 4)
    check(not any(t.is_alive() for t in threads), "send paths finished")
    if errors:
        raise errors[0]


def read_head(s):
    """Reads a response head off s; returns (status, headers, bytes after it)."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = s.recv(65536)
        check(b, "connection closed before the head")
        buf += b
    head, rest = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    hdrs = {k.strip().lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:])}
    return int(lines[0].split()[1]), hdrs, rest


def truncate_during_send(srv, path, data, cut, how):
    """Starts a response of path (holding data) to a client that does not
    read, truncates the file to cut in place, then reads the rest. how:
    "sendfile" (the default path), "copy" (--no-sendfile) or "cached" (the
    whole file in the cache, a copy taken before the head went out)."""
    what = f"{how}, truncated to {cut}"
    with open(path, "wb") as f:
        f.write(data)
    s = stalled_reader(srv, "/huge.bin")
    s.settimeout(LONG)
    st, h, body = read_head(s)
    check_eq((st, h["content-length"]), (200, str(len(data))), f"{what}: huge file head")
    while len(body) < 65536:  # the transfer is under way
        b = s.recv(65536)
        check(b, f"{what}: closed early")
        body += b
    os.truncate(path, cut)  # the server is blocked in its send, the client not reading
    while how != "cached" or len(body) < len(data):  # cached: whole, then kept alive
        try:
            b = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not b:
            break
        body += b
    if how == "cached":
        check(body == data, f"{what}: the cached copy is sent whole", len(body))
        # Nothing past it: the next response on the connection comes next.
        s.sendall(req("/huge.bin"))
        st, h, _ = read_head(s)
        check_eq((st, h["content-length"]), (200, str(cut)), f"{what}: the next response")
        s.close()
        return
    s.close()
    check(len(body) < len(data), f"{what}: the response ended short (closed)", len(body))
    if how == "copy":
        bad = None if body == data[:len(body)] else next(i for i in range(len(body)) if body[i] != data[i])
        check(bad is None, f"{what}: the body is a prefix of the file", len(body), bad)
        return
    # sendfile: bytes before the cut are the file's. Bytes past it may have
    # been queued before the file shrank: sendfile queues the file's pages,
    # not copies, and the kernel zeroes the part of the page (folio, up to
    # megabytes) past the cut, in place; they are within Content-Length and
    # the response ends short, so a client sees an incomplete message (RFC
    # 9112 8), never bytes beyond its length. --no-sendfile avoids them.
    n = min(len(body), cut)
    check(body[:n] == data[:n], f"{what}: the file's bytes before the cut")
    for off in range(cut, len(body), 4096):
        got, want = body[off:off + 4096], data[off:off + 4096][:len(body) - off]
        if got != want and got != bytes(len(got)):
            check(all(g == w or g == 0 for g, w in zip(got, want)),
                  f"{what}: past the cut, only the file's bytes or zeros", off)


@group
def file_changes(top):
    """A file truncated while it is sent (by sendfile, by copy, from the
    cache), and clients that reset the connection mid-sendfile: the
    response ends (the connection closes) without hanging, never sends more
    than its Content-Length promised nor, but for sendfile's zeroed pages,
    bytes that were not the file's, and the server goes on serving."""
    root, _ = make_site(top)
    data = huge_response_bytes()
    path = os.path.join(root, "huge.bin")
    for how, args in (("copy", ("--no-sendfile",)), ("cached", ("--sendfile-kb", "1048576")),
                      ("sendfile", ())):
        with Server(root, "--send-timeout", "10", *args) as srv:
            for cut in (0, 1 << 20, len(data) // 2):
                truncate_during_send(srv, path, data, cut, how)
                # The next request sees the file as it is now.
                st, h, now = srv.get("/huge.bin")
                check_eq((st, len(now), h["content-length"]), (200, cut, str(cut)),
                         f"{how}: after truncation to {cut}")
                check(now == data[:cut], f"{how}: after truncation to {cut}, the file's bytes")
                srv.alive_and_serving()
            if how != "cached":
                check("huge.bin: file was truncated while being sent" in srv.stderr(),
                      f"{how}: truncation reported", srv.stderr())

    # --cache-check: a cached descriptor is served without a stat. One
    # response finds the file shorter than the entry says and ends short;
    # the entry must then go, not be served short until the check is due.
    for args in ((), ("--no-sendfile",)):
        with Server(root, "--cache-check", "3600", *args) as srv:
            with open(path, "wb") as f:
                f.write(data)
            st, _, body = srv.get("/huge.bin")
            check(st == 200 and body == data, "huge file, cached descriptor", args)
            cut = 1 << 20
            os.truncate(path, cut)
            s = srv.sock()
            s.sendall(req("/huge.bin"))
            st, h, body = read_head(s)
            body += recv_all(s)
            s.close()
            check_eq((st, h["content-length"], len(body)), (200, str(len(data)), cut),
                     f"served from the entry, short {args}")
            check(body == data[:cut], "the file's bytes", args)
            st, h, now = srv.get("/huge.bin")
            check_eq((st, len(now), h["content-length"]), (200, cut, str(cut)),
                     f"the stale entry dropped {args}")
            check(now == data[:cut], "after the drop, the file's bytes", args)

    with Server(root, "--send-timeout", "10") as srv:
        # Clients that reset the connection while sendfile sends to them.
        with open(path, "wb") as f:
            f.write(data)
        for i in range(20):
            s = stalled_reader(srv, "/huge.bin" if i % 2 else "/big.bin")
            s.settimeout(LONG)
            read_head(s)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.close()  # RST, with the server blocked in sendfile or about to be
        srv.alive_and_serving()
        st, _, body = srv.get("/huge.bin")
        check(st == 200 and body == data, "the huge file after resets")


@group
def shutdown(top):
    root, files = make_site(top)
    # Too large to be handed to the kernel before the client reads it: the
    # response is still in flight inside the server when the signal comes.
    big = huge_response_bytes()
    with open(os.path.join(root, "huge.bin"), "wb") as f:
        f.write(big)
    log = os.path.join(top, "access.log")
    with Server(root, "--access-log", log) as srv:
        idle = srv.sock()
        idle.sendall(req("/a.txt"))
        idle_rd = Reader(idle)
        check_eq(idle_rd.response()[0], 200, "idle connection's first answer")
        # An in-flight response to a client that reads slowly.
        busy = stalled_reader(srv, "/huge.bin")
        busy.settimeout(LONG)
        got = bytearray(busy.recv(16384))
        check(got.startswith(b"HTTP/1.1 200"), "large response started")
        srv.proc.send_signal(signal.SIGTERM)
        check(idle_rd.closed(), "idle connection closed at shutdown")
        check(srv.proc.poll() is None, "server waits for the response in flight")
        while True:
            b = busy.recv(65536)
            if not b:
                break
            got += b
        head, body = bytes(got).split(b"\r\n\r\n", 1)
        check(body == big, "in-flight response completed byte-exact", len(body), len(big))
        rc = srv.proc.wait(LONG)
        check_eq(rc, 0, "exit status after SIGTERM")
        check("stopped" in srv.stderr(), "server said it stopped", srv.stderr())
        idle.close()
        busy.close()
    with open(log) as f:
        lines = f.read().splitlines()
    check(any('"GET /huge.bin HTTP/1.1" 200 %d' % len(big) in l for l in lines), "access log flushed", lines)
    check(all(re.match(r'127\.0\.0\.1 - - \[\d\d/\w{3}/\d{4}:\d\d:\d\d:\d\d \+0000\] "', l) for l in lines),
          "Common Log Format", lines)

    with Server(root, "--access-log", log) as srv:
        srv.raw(req('/we"ird\\%0a', headers=(("Host", "x"), ("Connection", "close"))))
        sigterm_and_wait(srv, signal.SIGINT)
    with open(log) as f:
        last = f.read().splitlines()[-1]
    check('/we\\x22ird\\x5c%0a' in last, "log escapes quotes and backslashes", last)

    with Server(root) as srv:  # idle server, SIGTERM
        sigterm_and_wait(srv)


@group
def concurrency(top):
    """10,000 concurrent keep-alive connections, each answered twice."""
    root, files = make_site(top)
    n = int(os.environ.get("KNOT_CONCURRENCY", "10000"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n + 200
    if hard != resource.RLIM_INFINITY and hard < want:
        raise Skip(f"RLIMIT_NOFILE hard limit {hard} < {want}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (want if hard == resource.RLIM_INFINITY else hard, hard))
    names = ["a.txt", "sub/page.html", "pic.png", "style.css", "mid.bin"]
    with Server(root, "--max-conn", str(n + 100), "--header-timeout", "120",
                "--keepalive-timeout", "120", "--backlog", "4096") as srv:
        sel = selectors.DefaultSelector()
        socks = []
        batch = 500
        for start in range(0, n, batch):  # connect in batches, each fully established
            pending = set()
            for i in range(start, min(n, start + batch)):
                s = socket.socket()
                s.setblocking(False)
                s.connect_ex(("127.0.0.1", srv.port))
                socks.append(s)
                sel.register(s, selectors.EVENT_WRITE, i)
                pending.add(i)
            deadline = time.monotonic() + LONG * 2
            while pending:
                check(time.monotonic() < deadline, "connections established", len(pending))
                for key, _ in sel.select(1):
                    err = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    check_eq(err, 0, "connect error")
                    sel.unregister(key.fileobj)
                    pending.discard(key.data)

        def round_trip(label):
            bufs = {}
            for i, s in enumerate(socks):
                name = names[i % len(names)] if i % 100 else "big.bin"
                s.send(req("/" + name))  # small: fits the empty socket buffer
                sel.register(s, selectors.EVENT_READ, i)
                bufs[i] = bytearray()
            left = set(range(n))
            deadline = time.monotonic() + LONG * 6
            while left:
                check(time.monotonic() < deadline, "all responses arrived " + label, len(left))
                for key, _ in sel.select(1):
                    i = key.data
                    data = key.fileobj.recv(1 << 20)
                    check(data, "connection closed early " + label, i)
                    buf = bufs[i]
                    buf += data
                    end = buf.find(b"\r\n\r\n")
                    if end < 0:
                        continue
                    m = re.search(rb"Content-Length: (\d+)", buf[:end])
                    if len(buf) - end - 4 < int(m.group(1)):
                        continue
                    name = names[i % len(names)] if i % 100 else "big.bin"
                    check(buf.startswith(b"HTTP/1.1 200"), "status " + label, bytes(buf[:40]))
                    check(bytes(buf[end + 4:]) == files[name], "body " + label, i, name)
                    sel.unregister(key.fileobj)
                    left.discard(i)
                    bufs[i] = None

        round_trip("(first request)")
        round_trip("(second request, same connections)")
        for s in socks:
            s.close()
        sel.close()
        srv.alive_and_serving()
        check(srv.proc.poll() is None, "server survived")


def main(argv):
    global SERVER
    if len(argv) >= 2 and argv[1] == "--list":
        print("\n".join(GROUPS))
        return 0
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    SERVER = os.path.abspath(argv[1])
    chosen = argv[2:] or list(GROUPS)
    for g in chosen:
        if g not in GROUPS:
            print(f"unknown group {g}; --list shows them", file=sys.stderr)
            return 2
    if shutil.which("curl") is None:
        print("skipped: curl is not installed (scripts/deps/knot.txt)", file=sys.stderr)
        return 77
    passed = failed = skipped = 0
    for g in chosen:
        top = tempfile.mkdtemp(prefix="knot-test-")
        t0 = time.monotonic()
        try:
            GROUPS[g](top)
            passed += 1
            print(f"PASS {g} ({time.monotonic() - t0:.1f}s)", flush=True)
        except Skip as e:
            skipped += 1
            print(f"SKIP {g}: {e}", flush=True)
        except Exception as e:  # noqa: BLE001 -- report and go on
            failed += 1
            print(f"FAIL {g}: {type(e).__name__}: {e}", flush=True)
        finally:
            shutil.rmtree(top, ignore_errors=True)
    print(f"knot: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    if failed:
        return 1
    return 77 if skipped and not passed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
