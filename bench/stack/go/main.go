// SPDX-License-Identifier: MIT

// Command idlego is the Go peer of bench/stack/idle_memory.c: N goroutines
// all wait on a sync.Cond; the RSS growth divided by N is the memory of an
// idle goroutine. Prints the same one-line JSON as the C program.
//
// Usage: idlego N
package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

func statusKiB(field string) int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, field) {
			v, _ := strconv.ParseInt(strings.Fields(line[len(field):])[0], 10, 64)
			return v
		}
	}
	return -1
}

func main() {
	n := 1000
	if len(os.Args) > 1 {
		n, _ = strconv.Atoi(os.Args[1])
	}
	var mu sync.Mutex
	allWaiting := sync.NewCond(&mu)
	goCond := sync.NewCond(&mu)
	waiting, released := 0, false
	var wg sync.WaitGroup
	rss0, pte0 := statusKiB("VmRSS:"), statusKiB("VmPTE:")
	t0 := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			waiting++
			allWaiting.Signal()
			for !released {
				goCond.Wait()
			}
			mu.Unlock()
		}()
	}
	mu.Lock()
	for waiting < n {
		allWaiting.Wait()
	}
	mu.Unlock()
	t1 := time.Since(t0)
	rss1, pte1 := statusKiB("VmRSS:"), statusKiB("VmPTE:")
	mu.Lock()
	released = true
	goCond.Broadcast()
	mu.Unlock()
	wg.Wait()
	fmt.Printf("{\"bench\":\"idle_memory\",\"variant\":\"go\",\"threads\":%d,\"created\":%d,"+
		"\"rss_bytes_per_thread\":%.0f,\"pagetable_bytes_per_thread\":%.0f,\"create_s\":%.3f}\n",
		n, n, float64(rss1-rss0)*1024/float64(n), float64(pte1-pte0)*1024/float64(n),
		t1.Seconds())
}
