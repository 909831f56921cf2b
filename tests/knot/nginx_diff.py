#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Differential HTTP conformance: the same odd requests to nginx and to Knot
serving the same directory, side by side. A tool for a person, not a test:
a difference is not a bug by itself (RFC 9110/9112 decide, not nginx).

Usage: nginx_diff.py KNOT_BINARY [NGINX_BINARY]    (default /usr/sbin/nginx)
Prints, per request: status, the framing (Content-Length, Content-Range,
Connection) and whether the server closed the connection afterwards.
"""

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BIG = bytes(range(256)) * 400  # 102,400 bytes


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port):
    end = time.monotonic() + 10
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


def exchange(port, parts, gap=0.0, timeout=2.0):
    """Sends parts (a list of byte strings, with an optional pause between),
    reads until close or timeout; returns (bytes, closed)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    for i, p in enumerate(parts):
        s.sendall(p)
        if gap and i + 1 < len(parts):
            time.sleep(gap)
    out, closed = b"", False
    s.settimeout(timeout)
    try:
        while True:
            b = s.recv(65536)
            if not b:
                closed = True
                break
            out += b
    except socket.timeout:
        pass
    except ConnectionResetError:
        closed = True
    s.close()
    return out, closed


def summary(raw, closed, head_request=False, http10=False):
    """Status lines and framing of every response in raw."""
    res = []
    while raw:
        m = re.match(rb"HTTP/1\.[01] (\d{3})[^\r\n]*\r\n", raw)
        if not m:
            res.append("garbage:" + repr(raw[:40]))
            break
        end = raw.find(b"\r\n\r\n")
        head = raw[:end].decode("latin-1").split("\r\n")
        h = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            h[k.strip().lower()] = v.strip()
        n = int(h.get("content-length", "0"))
        st = int(m.group(1))
        if head_request or st in (204, 304):
            n = 0
        raw = raw[end + 4 + n:]
        bits = [str(st)]
        # Error pages differ in size and HTTP/1.1 keep-alive may or may not be
        # spelled out: compare what a client acts on.
        for k in ("content-length", "content-range", "connection", "transfer-encoding"):
            if k in h and not (k == "content-length" and st >= 300) and not (
                    k == "connection" and h[k].lower() == "keep-alive" and not http10):
                bits.append(f"{k}={h[k]}")
        res.append(" ".join(bits))
    return " | ".join(res) + ("  [closed]" if closed else "  [open]")


CASES = [
    ("plain 1.1", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("absolute-form", [b"GET http://other/a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("absolute-form, no path", [b"GET http://other HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("absolute-form, other scheme", [b"GET ftp://other/a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("1.0 no keep-alive", [b"GET /a.txt HTTP/1.0\r\n\r\n"]),
    ("1.0 keep-alive", [b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"]),
    ("1.1 Connection: close", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]),
    ("1.1 Connection: Close, foo", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: foo, Close\r\n\r\n"]),
    ("HEAD with Range", [b"HEAD /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-9\r\n\r\n"]),
    ("IMS garbage", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: yesterday\r\n\r\n"]),
    ("IMS future", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Fri, 31 Dec 2100 23:59:59 GMT\r\n\r\n"]),
    ("IMS exact", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sun, 13 Sep 2020 12:26:40 GMT\r\n\r\n"]),
    ("multi-range", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-1,5-9\r\n\r\n"]),
    ("multi-range unsatisfiable", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=999999-,9999999-\r\n\r\n"]),
    ("bytes=-0", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-0\r\n\r\n"]),
    ("bytes=5-2", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=5-2\r\n\r\n"]),
    ("bytes=0-", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-\r\n\r\n"]),
    ("bytes=-200000", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=-200000\r\n\r\n"]),
    ("bytes=102400-", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=102400-\r\n\r\n"]),
    ("bytes=0-99999999999999999999", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=0-99999999999999999999\r\n\r\n"]),
    ("bytes=99999999999999999999-", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: bytes=99999999999999999999-\r\n\r\n"]),
    ("Range on empty file", [b"GET /empty.txt HTTP/1.1\r\nHost: x\r\nRange: bytes=-5\r\n\r\n"]),
    ("Range: items=0-1", [b"GET /big.bin HTTP/1.1\r\nHost: x\r\nRange: items=0-1\r\n\r\n"]),
    ("TE chunked on GET", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
                           b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("TE gzip", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n"]),
    ("TE gzip, chunked", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"]),
    ("TE chunked, chunked", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n"]),
    ("TE on 1.0", [b"GET /a.txt HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"]),
    ("chunk size overflow", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\nFFFFFFFFFFFFFFFF\r\n"]),
    ("duplicate CL equal", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nz"]),
    ("duplicate CL differ", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nzz"]),
    ("CL list 1, 1", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 1, 1\r\n\r\nz"]),
    ("obs-fold", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n"]),
    ("lowercase method", [b"get /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("unknown method", [b"FOO /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("POST", [b"POST /a.txt HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n"]),
    ("missing Host 1.1", [b"GET /a.txt HTTP/1.1\r\n\r\n"]),
    ("empty Host 1.1", [b"GET /a.txt HTTP/1.1\r\nHost:\r\n\r\n"]),
    ("bad Host", [b"GET /a.txt HTTP/1.1\r\nHost: a b\r\n\r\n"]),
    ("two Hosts", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n"]),
    ("extra space after method", [b"GET  /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("extra space before version", [b"GET /a.txt  HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("trailing space", [b"GET /a.txt HTTP/1.1 \r\nHost: x\r\n\r\n"]),
    ("tab separator", [b"GET\t/a.txt\tHTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("HTTP/1.2", [b"GET /a.txt HTTP/1.2\r\nHost: x\r\n\r\n"]),
    ("HTTP/2.0", [b"GET /a.txt HTTP/2.0\r\nHost: x\r\n\r\n"]),
    ("HTTP/0.9", [b"GET /a.txt\r\n\r\n"]),
    ("lowercase http/1.1", [b"GET /a.txt http/1.1\r\nHost: x\r\n\r\n"]),
    ("bare LF", [b"GET /a.txt HTTP/1.1\nHost: x\n\n"]),
    ("bare CR in field", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\rb\r\n\r\n"]),
    ("NUL in field", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n"]),
    ("NUL line", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\x00\r\nContent-Length: 5\r\n\r\n"]),
    ("space before colon", [b"GET /a.txt HTTP/1.1\r\nHost : x\r\n\r\n"]),
    ("fragment in target", [b"GET /a.txt#frag HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("query", [b"GET /a.txt?x=1 HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("dotdot", [b"GET /../a.txt HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("dir no slash", [b"GET /sub HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("asterisk", [b"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n"]),
    ("Expect 100", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n", b"ab"]),
    ("pipelined 3", [b"GET /a.txt HTTP/1.1\r\nHost: x\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: x\r\n\r\n"
                     b"GET /a.txt HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"]),
]


def main():
    knot = sys.argv[1]
    nginx = sys.argv[2] if len(sys.argv) > 2 else "/usr/sbin/nginx"
    tmp = tempfile.mkdtemp(prefix="knot-diff-")
    root = os.path.join(tmp, "root")
    os.makedirs(os.path.join(root, "sub"))
    for name, data in (("a.txt", b"hello\n"), ("big.bin", BIG), ("empty.txt", b""), ("sub/index.html", b"sub\n")):
        with open(os.path.join(root, name), "wb") as f:
            f.write(data)
        os.utime(os.path.join(root, name), (1_600_000_000, 1_600_000_000))
    np, kp = free_port(), free_port()
    conf = os.path.join(tmp, "nginx.conf")
    with open(conf, "w") as f:
        f.write(f"""daemon off; master_process off; worker_processes 1;
pid {tmp}/nginx.pid; error_log {tmp}/error.log warn;
events {{ worker_connections 64; }}
http {{ access_log off; sendfile on; keepalive_timeout 5s;
  default_type application/octet-stream;
  client_body_temp_path {tmp}/body; proxy_temp_path {tmp}/proxy; fastcgi_temp_path {tmp}/fcgi;
  uwsgi_temp_path {tmp}/uwsgi; scgi_temp_path {tmp}/scgi;
  server {{ listen 127.0.0.1:{np}; root {root}; }} }}
""")
    procs = [subprocess.Popen([nginx, "-c", conf, "-p", tmp], stderr=subprocess.DEVNULL),
             subprocess.Popen([knot, "--addr", "127.0.0.1", "--port", str(kp), "--root", root,
                               "--keepalive-timeout", "5"], stdout=subprocess.DEVNULL)]
    try:
        wait_port(np)
        wait_port(kp)
        for name, parts in CASES:
            head = parts[0].startswith(b"HEAD")
            v10 = b" HTTP/1.0\r\n" in parts[0]
            n = summary(*exchange(np, parts, gap=0.3), head_request=head, http10=v10)
            k = summary(*exchange(kp, parts, gap=0.3), head_request=head, http10=v10)
            mark = "  " if n == k else "!="
            print(f"{mark} {name}\n     nginx: {n}\n     knot:  {k}")
    finally:
        for p in procs:
            p.send_signal(signal.SIGTERM)
            p.wait(10)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
