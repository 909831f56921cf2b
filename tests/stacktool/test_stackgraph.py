#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tests of tools/stackgraph on graphs with known answers.

Usage: test_stackgraph.py TOOL_DIR CC
  TOOL_DIR  tools/stackgraph (holds stackgraph.py and the package)
  CC        a C compiler with -fcallgraph-info=su (GCC >= 10); the tests
            that compile programs skip if it has none.

The paper's Figure 5 (Capriccio, SOSP'03, Section 3.2) is checked twice:
as a hand-written .ci with the figure's frame sizes (main 0.5 KB, A 0.8,
B 1.0, C 0.2, D 0.2, E 0.1; checkpoints C0..C3 at MaxPath = 1 KB; 2.3 KB on
main-A-B ignoring the cycle; 0.9 KB on main-C-D), and as a C program
compiled here, whose frames are the compiler's but whose checkpoints must
be the same four."""

import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
TOOL_DIR = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../tools/stackgraph")
CC = sys.argv[2] if len(sys.argv) > 2 else "cc"
TOOL = os.path.join(TOOL_DIR, "stackgraph.py")


def run_tool(*args):
    out = subprocess.run([sys.executable, TOOL, *args], capture_output=True, text=True)
    return out.returncode, out.stdout, out.stderr


def analyse(*args):
    rc, out, err = run_tool("--json", *args)
    if rc != 0:
        raise AssertionError(f"stackgraph failed ({rc}): {err}")
    return json.loads(out)


def checkpoints(doc):
    return [(c["label"], c["kind"], c.get("entry") or f'{c["caller"]}->{c["callee"]}')
            for c in doc["checkpoints"]]


def compile_ci(source, tmp):
    obj = os.path.join(tmp, os.path.basename(source) + ".o")
    r = subprocess.run([CC, "-O1", "-c", "-fcallgraph-info=su", source, "-o", obj],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise unittest.SkipTest(f"{CC} cannot -fcallgraph-info=su: {r.stderr.strip()}")
    return os.path.join(tmp, os.path.basename(source) + ".ci")


FIGURE5 = [("C0", "entry", "main"), ("C1", "recursion", "E->C"),
           ("C2", "maxpath", "main->A"), ("C3", "maxpath", "A->B")]


class Figure5Fixture(unittest.TestCase):
    ci = os.path.join(HERE, "fixtures", "figure5.ci")

    def test_checkpoints_c0_to_c3_at_1kb(self):
        doc = analyse("--max-path", "1000", self.ci)
        self.assertEqual(checkpoints(doc), FIGURE5)

    def test_longest_paths_and_bound(self):
        doc = analyse("--max-path", "1000", self.ci)
        self.assertEqual(doc["longest"],
                         {"main": 900, "A": 1000, "B": 1000, "C": 400, "D": 200, "E": 100})
        b = doc["bounds"]["main"]
        self.assertFalse(b["exact"])
        self.assertEqual(b["bytes"], 2300)
        self.assertEqual(b["path"], ["main", "A", "B"])
        self.assertEqual([(r["caller"], r["callee"]) for r in b["recursion"]], [("E", "C")])

    def test_large_maxpath_leaves_only_entry_and_recursion(self):
        doc = analyse("--max-path", "2300", self.ci)
        self.assertEqual(checkpoints(doc), FIGURE5[:2])

    def test_small_maxpath_adds_checkpoints(self):
        doc = analyse("--max-path", "500", self.ci)
        self.assertEqual(checkpoints(doc), FIGURE5[:3] + [
            ("C3", "maxpath", "main->C"), ("C4", "maxpath", "A->B"), ("C5", "maxpath", "A->D")])
        self.assertEqual(doc["longest"]["main"], 500)

    def test_text_report_is_readable(self):
        rc, out, _ = run_tool("--max-path", "1000", self.ci)
        self.assertEqual(rc, 0)
        for needle in ("C1   E -> C", "recursion", "C3   A -> B", "unbounded",
                       "ignoring recursion: 2300 bytes on main -> A -> B"):
            self.assertIn(needle, out)

    def test_bad_input_is_an_error(self):
        with tempfile.NamedTemporaryFile("w", suffix=".ci") as f:
            f.write('graph: {\nedge: { sourcename: "a" }\n}\n')
            f.flush()
            rc, _, err = run_tool(f.name)
        self.assertEqual(rc, 2)
        self.assertIn("edge without both ends", err)
        rc, _, err = run_tool("--entry", "nosuch", self.ci)
        self.assertEqual(rc, 2)


class CompiledPrograms(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()

    def tearDown(self):
        self.tmp.cleanup()

    def test_figure5_as_c_has_the_same_checkpoints(self):
        ci = compile_ci(os.path.join(HERE, "programs", "figure5.c"), self.tmp.name)
        doc = analyse("--max-path", "1024", ci)
        self.assertEqual(checkpoints(doc), FIGURE5)

    def test_exact_bound_without_recursion(self):
        ci = compile_ci(os.path.join(HERE, "programs", "bounded.c"), self.tmp.name)
        doc = analyse("--entry", "serve", "--max-path", "16K", ci)
        b = doc["bounds"]["serve"]
        self.assertTrue(b["exact"])
        self.assertEqual(b["path"], ["serve", "parse", "header"])
        # The arrays sum to 14000 bytes; the compiler adds a little per frame.
        self.assertGreaterEqual(b["bytes"], 14000 - 128)
        self.assertLessEqual(b["bytes"], 14000 + 3 * 64)
        self.assertEqual(checkpoints(doc), [("C0", "entry", "serve")])

    def test_external_and_indirect_calls_listed(self):
        ci = compile_ci(os.path.join(HERE, "programs", "bounded.c"), self.tmp.name)
        doc = analyse("--entry", "logger", ci)
        b = doc["bounds"]["logger"]
        self.assertFalse(b["exact"])
        self.assertEqual(b["externals"], ["printf"])
        self.assertTrue(b["indirect"])
        self.assertEqual([c["callee"] for c in doc["external_calls"]], ["printf"])
        self.assertEqual([c["caller"] for c in doc["indirect_calls"]], ["logger"])
        # A trusted annotation makes the external call count.
        doc2 = analyse("--entry", "logger", "--annotate", "printf=3000", ci)
        self.assertEqual(doc2["bounds"]["logger"]["externals"], [])
        self.assertGreater(doc2["bounds"]["logger"]["bytes"], 3000)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
