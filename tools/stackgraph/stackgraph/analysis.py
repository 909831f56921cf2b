# SPDX-License-Identifier: MIT
"""The paper's checkpoint placement (Capriccio, SOSP'03, Section 3.2) and
stack bounds, on a CallGraph from ci.py.

Weights: a function's frame in bytes; an external function counts as its
trusted annotation (--annotate) or 0, and is listed, since its real use is
unknown (at run time such calls get a large chunk); an indirect call counts
0 and is listed.

1. Recursion: a depth-first search from the entry points (then from every
   function not yet reached, so the whole program is covered) classifies
   edges; an edge to a function still on the DFS stack is a back edge.
   Every cycle contains one, so a checkpoint on each back edge bounds every
   path between checkpoints.
2. MaxPath: on the graph without back edges (a DAG), functions are taken
   bottom-up (DFS finishing order is a reverse topological order). For
   function n and each call n -> s: if frame(n) + longest(s) > MaxPath the
   call gets a checkpoint (and s counts 0 for n), and
   longest(n) = frame(n) + the largest longest(s) over calls without one.
   longest(n) is thus the most stack n may use before the next checkpoint
   or leaf.
3. Checkpoint C0 is the entry itself (the thread's first chunk); then the
   back edges in DFS order, then the MaxPath calls in the order their
   callers were discovered, so the paper's Figure 5 numbering comes out.
4. The stack bound of an entry point is the longest path from it; exact
   when no recursion, unbounded dynamic frame, unannotated external or
   indirect call is reachable from it; otherwise reported with why, along
   with the bound that ignores recursion (the paper's "ignoring the cycle,
   2.3 KB on Main-A-B")."""

from .ci import INDIRECT


class Checkpoint:
    def __init__(self, label, kind, call=None, entry=None, why=""):
        self.label = label  # "C0", "C1", ...
        self.kind = kind    # "entry", "recursion" or "maxpath"
        self.call = call    # ci.Call, None for an entry
        self.entry = entry  # title of the entry, for kind "entry"
        self.why = why


class Bound:
    def __init__(self, entry):
        self.entry = entry
        self.bytes = 0              # longest path ignoring back edges
        self.path = []              # its functions
        self.exact = True
        self.recursion = []         # back edges reachable from the entry
        self.unbounded_frames = []  # dynamic, unbounded frames reachable
        self.externals = []         # unannotated externals reachable
        self.indirect = False       # an indirect call is reachable


class Analysis:
    def __init__(self, graph, max_path, entries=None, annotations=None):
        self.graph = graph
        self.max_path = max_path
        self.annotations = dict(annotations or {})
        self.succ = graph.successors()
        self.entries = list(entries) if entries else self._default_entries()
        for e in self.entries:
            if e not in graph.functions:
                raise KeyError(f"entry point {e!r} is not in the call graph")
        self.back_edges = []
        self.maxpath_calls = []
        self.longest = {}
        self._dfs()
        self._place_maxpath()
        self.checkpoints = self._number()
        self.bounds = {e: self._bound(e) for e in self.entries}

    # -- weights ---------------------------------------------------------
    def weight(self, title):
        f = self.graph.functions[title]
        if f.defined:
            return f.frame
        if title in self.annotations:
            return self.annotations[title]
        if f.name in self.annotations:
            return self.annotations[f.name]
        return 0

    def is_external(self, title):
        return title != INDIRECT and not self.graph.functions[title].defined

    def _default_entries(self):
        called = {c.callee for c in self.graph.calls if c.callee != c.caller}
        roots = sorted(t for t, f in self.graph.functions.items()
                       if f.defined and t not in called)
        roots.sort(key=lambda t: (self.graph.functions[t].name != "main", t))
        return roots

    # -- 1. back edges, DFS orders ----------------------------------------
    def _dfs(self):
        white, gray, black = 0, 1, 2
        color = {t: white for t in self.graph.functions}
        self.preorder = {}
        self.finish = []
        back = set()
        starts = self.entries + sorted(self.graph.functions)
        for root in starts:
            if color[root] != white:
                continue
            color[root] = gray
            self.preorder[root] = len(self.preorder)
            stack = [(root, iter(self.succ[root]))]
            while stack:
                node, it = stack[-1]
                call = next(it, None)
                if call is None:
                    color[node] = black
                    self.finish.append(node)
                    stack.pop()
                    continue
                s = call.callee
                if color[s] == gray:
                    back.add(id(call))
                    self.back_edges.append(call)
                elif color[s] == white:
                    color[s] = gray
                    self.preorder[s] = len(self.preorder)
                    stack.append((s, iter(self.succ[s])))
        self._back = back

    def is_back_edge(self, call):
        return id(call) in self._back

    # -- 2. MaxPath -------------------------------------------------------
    def _place_maxpath(self):
        marked = set()
        for n in self.finish:  # callees finish before their callers
            w = self.weight(n)
            best = 0
            for call in self.succ[n]:
                if self.is_back_edge(call):
                    continue
                ls = self.longest[call.callee]
                if w + ls > self.max_path:
                    marked.add(id(call))
                    self.maxpath_calls.append(call)
                else:
                    best = max(best, ls)
            self.longest[n] = w + best
        self._maxpath = marked

    def is_checkpoint(self, call):
        return id(call) in self._back or id(call) in self._maxpath

    # -- 3. numbering -------------------------------------------------------
    def _number(self):
        cps = []
        for e in self.entries:
            cps.append(Checkpoint(f"C{len(cps)}", "entry", entry=e,
                                  why="first chunk of a thread starting here"))
        for call in self.back_edges:
            cps.append(Checkpoint(f"C{len(cps)}", "recursion", call=call,
                                  why="back edge: closes a cycle"))
        order = {id(c): i for i, c in enumerate(self.graph.calls)}
        for call in sorted(self.maxpath_calls,
                           key=lambda c: (self.preorder[c.caller], order[id(c)])):
            total = self.weight(call.caller) + self.longest[call.callee]
            cps.append(Checkpoint(f"C{len(cps)}", "maxpath", call=call,
                                  why=f"{total} > MaxPath {self.max_path}"))
        return cps

    # -- 4. bounds ----------------------------------------------------------
    def _reachable(self, entry):
        seen, todo = {entry}, [entry]
        while todo:
            for call in self.succ[todo.pop()]:
                if call.callee not in seen:
                    seen.add(call.callee)
                    todo.append(call.callee)
        return seen

    def _bound(self, entry):
        b = Bound(entry)
        reach = self._reachable(entry)
        b.recursion = [c for c in self.back_edges if c.caller in reach]
        for t in sorted(reach):
            f = self.graph.functions[t]
            if t == INDIRECT:
                b.indirect = True
            elif not f.defined and t not in self.annotations and f.name not in self.annotations:
                b.externals.append(t)
            elif f.defined and not f.bounded:
                b.unbounded_frames.append(t)
        # Longest path on the DAG (back edges dropped), with the path.
        memo = {}
        for n in self.finish:
            if n not in reach:
                continue
            best, via = 0, None
            for call in self.succ[n]:
                if self.is_back_edge(call):
                    continue
                if memo[call.callee][0] > best:
                    best, via = memo[call.callee][0], call.callee
            memo[n] = (self.weight(n) + best, via)
        b.bytes = memo[entry][0]
        node = entry
        while node is not None:
            b.path.append(node)
            node = memo[node][1]
        b.exact = not (b.recursion or b.unbounded_frames or b.externals or b.indirect)
        return b

    # -- listings -------------------------------------------------------------
    def external_calls(self):
        return [c for c in self.graph.calls if self.is_external(c.callee)]

    def indirect_calls(self):
        return [c for c in self.graph.calls if c.callee == INDIRECT]
