# SPDX-License-Identifier: MIT
"""Capriccio's stack analysis: the paper's weighted call graph (Section 3)
built from GCC's -fcallgraph-info=su output, with recursion found by back
edges, checkpoints placed by the MaxPath rule and stack bounds per entry
point. ci.py reads .ci files, analysis.py does the graph work, report.py
prints it; stackgraph.py beside this package is the command line."""
