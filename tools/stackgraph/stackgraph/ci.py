# SPDX-License-Identifier: MIT
"""Reads GCC's -fcallgraph-info=su files (.ci, a VCG graph per translation
unit) into one whole-program call graph.

A .ci file has one line per node or edge:
  node: { title: "f" label: "f\\nfile.c:3:5\\n48 bytes (static)" }
  node: { title: "ext" label: "ext\\nfile.h:2:13" shape : ellipse }
  edge: { sourcename: "f" targetname: "ext" label: "file.c:7:3" }
A node with a size is a function defined in that unit; an ellipse node
without one is a callee defined elsewhere (another unit, or a library).
File-local (static) functions are titled "file.c:f" so they stay distinct.
"__indirect_call" stands for every call through a pointer.

Merging: a function defined in any unit is defined in the graph; one that
only ever appears as an ellipse is external. Sizes are bytes; "dynamic"
frames (alloca, VLAs) are flagged, and "dynamic,bounded" ones are taken
at their bound as GCC reports it."""

import re

INDIRECT = "__indirect_call"

_FIELD = re.compile(r'(\w+)\s*:\s*("(?:[^"\\]|\\.)*"|\w+)')
_SIZE = re.compile(r"(\d+) bytes \(([a-z,]+)\)")


class Function:
    def __init__(self, title):
        self.title = title          # unique key (file-local ones carry "file:")
        self.name = title.split(":")[-1]
        self.location = ""          # file:line:col of the definition
        self.frame = None           # bytes; None when not defined in any unit
        self.dynamic = False        # frame grows at run time (alloca, VLA)
        self.bounded = True         # False for unbounded dynamic frames

    @property
    def defined(self):
        return self.frame is not None


class Call:
    def __init__(self, caller, callee, site):
        self.caller = caller        # titles
        self.callee = callee
        self.site = site            # file:line:col of the call


class CallGraph:
    """Functions by title, and calls (one per call site, in file order)."""

    def __init__(self):
        self.functions = {}
        self.calls = []

    def function(self, title):
        f = self.functions.get(title)
        if f is None:
            f = self.functions[title] = Function(title)
        return f

    def callees(self, title):
        return [c for c in self.calls if c.caller == title]

    def successors(self):
        succ = {t: [] for t in self.functions}
        for c in self.calls:
            succ[c.caller].append(c)
        return succ


def _unquote(v):
    if v.startswith('"'):
        return v[1:-1].replace('\\"', '"')
    return v


def _fields(line):
    return {k: _unquote(v) for k, v in _FIELD.findall(line)}


def parse(text, graph=None, source="<ci>"):
    """Adds the nodes and edges of one .ci file's text to graph."""
    graph = graph if graph is not None else CallGraph()
    for lineno, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line.startswith("node:"):
            f = _fields(line)
            if "title" not in f:
                raise ValueError(f"{source}:{lineno}: node without a title")
            fn = graph.function(f["title"])
            parts = f.get("label", "").split("\\n")
            if len(parts) >= 2 and not fn.location:
                fn.location = parts[1]
            m = _SIZE.search(f.get("label", ""))
            if m:
                fn.frame = int(m.group(1))
                qual = m.group(2).split(",")
                fn.dynamic = "dynamic" in qual
                fn.bounded = not fn.dynamic or "bounded" in qual
                if len(parts) >= 2:
                    fn.location = parts[1]
        elif line.startswith("edge:"):
            f = _fields(line)
            if "sourcename" not in f or "targetname" not in f:
                raise ValueError(f"{source}:{lineno}: edge without both ends")
            graph.function(f["sourcename"])
            graph.function(f["targetname"])
            graph.calls.append(Call(f["sourcename"], f["targetname"], f.get("label", "")))
    return graph


def load(paths):
    """The whole-program graph of a list of .ci files."""
    graph = CallGraph()
    for p in paths:
        with open(p, encoding="utf-8", errors="replace") as fh:
            parse(fh.read(), graph, source=p)
    return graph
