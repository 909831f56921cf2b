// SPDX-License-Identifier: MIT
// The Go peers of the C micro-benchmarks (bench/run-all builds them); no dependencies.

module capriccio.dev/bench

go 1.19
