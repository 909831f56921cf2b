#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Generates a SPECweb99-like static file set.

DIR/dirNNNNN/classC_F for NNNNN in 0..dirs-1, class C in 0..3 and file F in
1..9: 36 files per directory, sized F * 102 B (class 0: 102-918 B),
F * 1 KiB (class 1), F * 10 KiB (class 2) and F * 100 KiB (class 3), about
5 MiB per directory. specweb.lua and go/loadgen request them with the
SPECweb99 mix (class 35/50/14/1 %, a fixed popularity per file within a
class, Zipf over directories); this file only lays them down. The bytes
are pseudo-random from a fixed seed, so two runs give identical sets.

usage: gen_fileset.py DIR [--dirs N]     (default 20 directories, ~100 MiB)
"""
import argparse
import os
import random
import sys

CLASS_UNIT = (102, 1024, 10 * 1024, 100 * 1024)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--dirs", type=int, default=20)
    a = ap.parse_args()
    if a.dirs < 1:
        sys.exit("gen_fileset: --dirs must be at least 1")
    rnd = random.Random(99)
    pool = rnd.randbytes(CLASS_UNIT[3] * 9)  # every file is a slice of this
    total = 0
    for d in range(a.dirs):
        path = os.path.join(a.dir, f"dir{d:05d}")
        os.makedirs(path, exist_ok=True)
        for c, unit in enumerate(CLASS_UNIT):
            for f in range(1, 10):
                size = unit * f
                off = rnd.randrange(0, len(pool) - size + 1)
                with open(os.path.join(path, f"class{c}_{f}"), "wb") as out:
                    out.write(pool[off:off + size])
                total += size
    with open(os.path.join(a.dir, "FILESET"), "w") as f:
        f.write(f"dirs={a.dirs}\n")
    print(f"gen_fileset: {a.dirs} directories, {36 * a.dirs} files, {total / 2**20:.1f} MiB in {a.dir}")


if __name__ == "__main__":
    main()
