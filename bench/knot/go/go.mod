module capriccio.example/bench/knot

go 1.19
