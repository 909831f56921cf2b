module capriccio/bench/stack/go

go 1.21
