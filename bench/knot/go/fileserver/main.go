// SPDX-License-Identifier: MIT

// Command fileserver is the Go contender in Knot's benchmark: the standard
// library's net/http file server, nothing added. Run it with GOMAXPROCS=2
// to give it the same two cores as the others.
package main

import (
	"flag"
	"log"
	"net/http"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	root := flag.String("root", ".", "document root")
	flag.Parse()
	http.Handle("/", http.FileServer(http.Dir(*root)))
	log.Fatal(http.ListenAndServe(*addr, nil))
}
