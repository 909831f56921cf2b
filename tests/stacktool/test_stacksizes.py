#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tools/stackgraph on clang's -fstack-size-section objects, with known
answers: the paper's Figure 5 as C (checkpoints C0..C3 at MaxPath = 1 KB),
an exact bound, and external and indirect calls found from the code.

Usage: test_stacksizes.py TOOL_DIR CLANG
Exits 77 (skipped) when CLANG is missing or lacks -fstack-size-section.
Built at -O0: clang keeps only the touched bytes of the programs' volatile
arrays when optimising, and the answers below are about the arrays."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL = os.path.join(sys.argv[1], "stackgraph.py")
CLANG = sys.argv[2] if len(sys.argv) > 2 else "clang"
FIGURE5 = [("C0", "entry", "main"), ("C1", "recursion", "E->C"),
           ("C2", "maxpath", "main->A"), ("C3", "maxpath", "A->B")]


def analyse(*args):
    out = subprocess.run([sys.executable, TOOL, "--json", *args], capture_output=True, text=True)
    if out.returncode != 0:
        raise AssertionError(f"stackgraph failed ({out.returncode}): {out.stderr}")
    return json.loads(out.stdout)


def checkpoints(doc):
    return [(c["label"], c["kind"], c.get("entry") or f'{c["caller"]}->{c["callee"]}')
            for c in doc["checkpoints"]]


class ClangObjects(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.obj = {}
        for name in ("figure5", "bounded"):
            o = os.path.join(cls.tmp.name, name + ".o")
            subprocess.run([CLANG, "-O0", "-fstack-size-section", "-c",
                            os.path.join(HERE, "programs", name + ".c"), "-o", o], check=True)
            cls.obj[name] = o

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_figure5_checkpoints(self):
        doc = analyse("--max-path", "1024", self.obj["figure5"])
        self.assertEqual(checkpoints(doc), FIGURE5)
        self.assertEqual(doc["bounds"]["main"]["path"], ["main", "A", "B"])

    def test_exact_bound_without_recursion(self):
        doc = analyse("--entry", "serve", "--max-path", "16K", self.obj["bounded"])
        b = doc["bounds"]["serve"]
        self.assertTrue(b["exact"])
        self.assertEqual(b["path"], ["serve", "parse", "header"])
        self.assertGreaterEqual(b["bytes"], 14000 - 128)
        self.assertLessEqual(b["bytes"], 14000 + 3 * 64)

    def test_external_and_indirect_calls(self):
        doc = analyse("--entry", "logger", self.obj["bounded"])
        b = doc["bounds"]["logger"]
        self.assertFalse(b["exact"])
        self.assertEqual(b["externals"], ["printf"])
        self.assertTrue(b["indirect"])
        self.assertEqual([c["caller"] for c in doc["indirect_calls"]], ["logger"])

    def test_not_a_stack_sizes_object(self):
        o = os.path.join(self.tmp.name, "plain.o")
        subprocess.run([CLANG, "-c", os.path.join(HERE, "programs", "figure5.c"), "-o", o],
                       check=True)
        out = subprocess.run([sys.executable, TOOL, o], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("no .stack_sizes section", out.stderr)


if __name__ == "__main__":
    clang = shutil.which(CLANG)
    probe = subprocess.run([clang, "-fstack-size-section", "-x", "c", "-c", "-o", os.devnull,
                            "-"], input="int f(void){return 0;}", capture_output=True,
                           text=True) if clang else None
    if probe is None or probe.returncode != 0:
        print(f"skipped: {CLANG} not found or without -fstack-size-section (apt-get install clang)")
        sys.exit(77)
    r = unittest.main(argv=[sys.argv[0], "-v"], exit=False).result
    sys.exit(0 if r.wasSuccessful() else 1)
