# SPDX-License-Identifier: MIT
"""Prints an Analysis: a report for people (text) or for programs (JSON)."""

import json

from .ci import INDIRECT


def _name(graph, title):
    if title == INDIRECT:
        return "(indirect call)"
    return graph.functions[title].name


def _edge(graph, call):
    return f"{_name(graph, call.caller)} -> {_name(graph, call.callee)}"


def text(a):
    g = a.graph
    defined = sum(1 for f in g.functions.values() if f.defined)
    external = sum(1 for t in g.functions if a.is_external(t))
    out = [f"stackgraph: {defined} functions defined, {external} external, "
           f"{len(g.calls)} call sites; MaxPath = {a.max_path} bytes", ""]

    out.append(f"Checkpoints ({len(a.checkpoints)}):")
    for cp in a.checkpoints:
        if cp.kind == "entry":
            out.append(f"  {cp.label:<4} entry {_name(g, cp.entry):<28} {cp.why}")
        else:
            where = cp.call.site or "?"
            out.append(f"  {cp.label:<4} {_edge(g, cp.call):<34} at {where:<22} "
                       f"{cp.kind}: {cp.why}")
    out.append("")

    out.append("Stack bound per entry point:")
    for e in a.entries:
        b = a.bounds[e]
        path = " -> ".join(_name(g, t) for t in b.path)
        if b.exact:
            out.append(f"  {_name(g, e)}: {b.bytes} bytes, exact (path {path})")
            continue
        why = []
        if b.recursion:
            why.append("recursion via " + ", ".join(_edge(g, c) for c in b.recursion))
        if b.unbounded_frames:
            why.append("dynamic frames in " + ", ".join(_name(g, t) for t in b.unbounded_frames))
        if b.externals:
            why.append("external calls to " + ", ".join(_name(g, t) for t in b.externals))
        if b.indirect:
            why.append("indirect calls")
        kind = "unbounded" if b.recursion or b.unbounded_frames else "at least"
        out.append(f"  {_name(g, e)}: {kind}: {'; '.join(why)}")
        label = "ignoring recursion" if b.recursion else "known part"
        out.append(f"      {label}: {b.bytes} bytes on {path}")
    out.append("")

    out.append("Most stack used before the next checkpoint or leaf (longest):")
    for t in sorted(a.longest, key=lambda t: (-a.longest[t], t)):
        f = g.functions[t]
        if not f.defined:
            continue
        flags = " dynamic" if f.dynamic else ""
        flags += "" if f.bounded else " (unbounded)"
        out.append(f"  {f.name:<28} frame {f.frame:>7}{flags:<12}  longest {a.longest[t]:>7}"
                   f"   {f.location}")
    out.append("")

    ext = a.external_calls()
    out.append(f"External calls ({len(ext)}): run on a large chunk unless annotated")
    for c in ext:
        note = ""
        f = g.functions[c.callee]
        if c.callee in a.annotations or f.name in a.annotations:
            note = f"  (annotated: {a.weight(c.callee)} bytes)"
        out.append(f"  {_edge(g, c):<40} at {c.site}{note}")
    ind = a.indirect_calls()
    out.append(f"Indirect calls ({len(ind)}): targets unknown, counted as 0 bytes")
    for c in ind:
        out.append(f"  {_name(g, c.caller):<40} at {c.site}")
    return "\n".join(out) + "\n"


def as_json(a):
    g = a.graph

    def call(c):
        return {"caller": _name(g, c.caller), "callee": _name(g, c.callee), "site": c.site}

    doc = {
        "max_path": a.max_path,
        "entries": [_name(g, e) for e in a.entries],
        "checkpoints": [
            dict({"label": cp.label, "kind": cp.kind},
                 **({"entry": _name(g, cp.entry)} if cp.kind == "entry" else call(cp.call)))
            for cp in a.checkpoints
        ],
        "longest": {g.functions[t].name: v for t, v in a.longest.items()
                    if g.functions[t].defined},
        "bounds": {
            _name(g, e): {
                "bytes": b.bytes,
                "exact": b.exact,
                "path": [_name(g, t) for t in b.path],
                "recursion": [call(c) for c in b.recursion],
                "unbounded_frames": [_name(g, t) for t in b.unbounded_frames],
                "externals": [_name(g, t) for t in b.externals],
                "indirect": b.indirect,
            }
            for e, b in a.bounds.items()
        },
        "external_calls": [call(c) for c in a.external_calls()],
        "indirect_calls": [call(c) for c in a.indirect_calls()],
    }
    return json.dumps(doc, indent=2) + "\n"
