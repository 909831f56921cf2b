#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""stackgraph: stack analysis from GCC's call-graph files.

Build with `gcc -fcallgraph-info=su` (one .ci file per object, next to it),
or with `clang -fstack-size-section` (frame sizes in each object file; the
calls are read from the code's relocations, see stackgraph/stacksizes.py),
then:

    stackgraph.py [--max-path BYTES] [--entry FUNC]... [--annotate NAME=BYTES]...
                  [--json] FILE.ci|FILE.o...

prints the checkpoints the paper's MaxPath rule places (Capriccio, SOSP'03,
Section 3.2), the recursion cycles (back edges), the stack bound of each
entry point (exact, or why there is none), each function's longest path to
the next checkpoint, and the external and indirect calls. Entry points
default to main and every other function nothing calls. See docs/stacks.md.
"""

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from stackgraph import analysis, ci, report, stacksizes  # noqa: E402


def _size(s):
    mult = {"k": 1024, "m": 1024 * 1024}.get(s[-1:].lower(), 1)
    return int(s[:-1] if mult != 1 else s) * mult


def _annotation(s):
    name, _, val = s.partition("=")
    if not name or not val:
        raise argparse.ArgumentTypeError(f"expected NAME=BYTES, got {s!r}")
    return name, _size(val)


def main(argv=None):
    p = argparse.ArgumentParser(prog="stackgraph", description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="+", metavar="FILE.ci|FILE.o")
    p.add_argument("--max-path", type=_size, default=2048,
                   help="MaxPath in bytes (K/M suffix allowed; default 2K, the paper's "
                        "choice for Apache)")
    p.add_argument("--entry", action="append", default=[],
                   help="a thread entry point (repeatable); default: main and every "
                        "function nothing calls")
    p.add_argument("--annotate", action="append", type=_annotation, default=[],
                   help="trusted stack use of an external function, NAME=BYTES")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    args = p.parse_args(argv)

    try:
        graph = ci.CallGraph()
        for path in args.files:
            if path.endswith(".ci"):
                with open(path, encoding="utf-8", errors="replace") as fh:
                    ci.parse(fh.read(), graph, source=path)
            else:
                stacksizes.parse(path, graph)
        entries = [_resolve(graph, e) for e in args.entry]
        a = analysis.Analysis(graph, args.max_path, entries or None, dict(args.annotate))
    except (OSError, ValueError, KeyError) as e:
        print(f"stackgraph: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(report.as_json(a) if args.json else report.text(a))
    return 0


def _resolve(graph, name):
    """A function title from a plain name (file-local ones are 'file:name')."""
    if name in graph.functions:
        return name
    hits = [t for t, f in graph.functions.items() if f.name == name and f.defined]
    if len(hits) == 1:
        return hits[0]
    raise KeyError(f"entry point {name!r} " +
                   ("is ambiguous: " + ", ".join(hits) if hits else "is not defined"))


if __name__ == "__main__":
    sys.exit(main())
