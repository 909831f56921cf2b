#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Description: a program built for linked stacks that is linked with
ld.bfd fails to link, with an error that points at capriccio-linked.ld
(whose comment says to link with lld); the same link with lld succeeds.

Usage: bfd_link_fails.py CC SCRIPT LIBDIR INCLUDEDIR. Exits 77 (skipped)
when ld.bfd is not installed."""

import os
import shutil
import subprocess
import sys
import tempfile

SOURCE = r"""
#include <capriccio.h>
#include <stdio.h>
static void *hello(void *arg) { printf("hello\n"); return arg; }
int main(void) { cap_thread_t t; cap_thread_create(&t, NULL, hello, NULL);
                 return cap_thread_join(t, NULL); }
"""


def main():
    cc, script, libdir, incdir = sys.argv[1:5]
    if shutil.which("ld.bfd") is None:
        print("skipped: ld.bfd not installed")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        src, obj = os.path.join(tmp, "p.c"), os.path.join(tmp, "p.o")
        with open(src, "w") as f:
            f.write(SOURCE)
        subprocess.run([cc, "-fsplit-stack", "-I", incdir, "-c", src, "-o", obj], check=True)
        libs = ["-Wl,-z,now", script, "-L", libdir, "-lcapriccio-linked", "-lcapriccio",
                f"-Wl,-rpath,{libdir}"]
        bfd = subprocess.run([cc, "-fuse-ld=bfd", obj, *libs, "-o", os.path.join(tmp, "bfd")],
                             capture_output=True, text=True)
        out = bfd.stdout + bfd.stderr
        print("ld.bfd:", out.strip())
        if bfd.returncode == 0 or "capriccio-linked.ld" not in out:
            print("FAIL: ld.bfd should have stopped at capriccio-linked.ld")
            return 1
        lld = subprocess.run([cc, "-fuse-ld=lld", obj, *libs, "-o", os.path.join(tmp, "lld")],
                             capture_output=True, text=True)
        if lld.returncode != 0:
            print("FAIL: lld link failed:", lld.stdout + lld.stderr)
            return 1
        run = subprocess.run([os.path.join(tmp, "lld")], capture_output=True, text=True,
                             timeout=30)
        if run.returncode != 0 or "hello" not in run.stdout:
            print("FAIL: the lld-linked program did not run:", run.stdout, run.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
