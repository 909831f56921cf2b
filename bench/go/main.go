// SPDX-License-Identifier: MIT

// Command gobench is the Go peer of the C micro-benchmarks in bench/micro:
// the same measurements with goroutines, sync.WaitGroup, runtime.Gosched,
// sync.Mutex and sync.Cond, printing the same one-line JSON result so that
// bench/runner.py can set them side by side. Run it with GOMAXPROCS equal
// to the worker count of the Capriccio run it is compared with.
//
// Usage: gobench createjoin|yield|pingpong|mutex|prodcons|acceptshared [args as the C program]
//
// Timing follows bench/micro/common.h: batches grow by doubling until one
// lasts about a millisecond (the warm-up), then run for the duration.
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	batchNs = 1_000_000
	warmup  = 250 * time.Millisecond // prodcons: WARMUP_SECS in prodcons.c
)

func argSecs(args []string, i int, dflt float64) float64 {
	if len(args) <= i {
		return dflt
	}
	v, err := strconv.ParseFloat(args[i], 64)
	if err != nil || v <= 0 {
		fail(2, "bad duration %q (seconds, > 0)", args[i])
	}
	return v
}

func argInt(args []string, i int, dflt int) int {
	if len(args) <= i {
		return dflt
	}
	v, err := strconv.Atoi(args[i])
	if err != nil || v < 1 {
		fail(2, "bad count %q (a whole number >= 1)", args[i])
	}
	return v
}

func fail(code int, format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "gobench: "+format+"\n", a...)
	os.Exit(code)
}

// cpuNs is the process's user + system CPU time so far; cpuUsed is the
// part spent while measuring, for report (as bench_cpu_used in common.h).
func cpuNs() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

var cpuUsed int64

// runFor runs fn(n) (n operations) in batches for about secs seconds after
// a warm-up; it returns the operations counted and the time they took.
func runFor(secs float64, fn func(n uint64)) (ops uint64, elapsed time.Duration) {
	batch := uint64(1)
	for {
		t := time.Now()
		fn(batch)
		if time.Since(t) >= batchNs || batch >= 1<<40 {
			break
		}
		batch *= 2
	}
	want := time.Duration(secs * 1e9)
	c0 := cpuNs()
	t0 := time.Now()
	for {
		fn(batch)
		ops += batch
		if elapsed = time.Since(t0); elapsed >= want {
			cpuUsed = cpuNs() - c0
			return
		}
	}
}

func report(bench string, threads int, ops uint64, elapsed time.Duration, extra string) {
	ns := float64(elapsed.Nanoseconds())
	perOp := 0.0
	if ops > 0 {
		perOp = ns / float64(ops)
	}
	if extra != "" {
		extra = "," + extra
	}
	fmt.Printf("{\"bench\":%q,\"via\":\"go\",\"threads\":%d,\"ops\":%d,\"elapsed_ns\":%d,"+
		"\"ns_per_op\":%.4f,\"cpu_ns\":%d,\"gomaxprocs\":%d%s}\n",
		bench, threads, ops, elapsed.Nanoseconds(), perOp, cpuUsed, runtime.GOMAXPROCS(0), extra)
}

// createjoin: go f() + WaitGroup.Wait, one pair at a time.
func createJoin(args []string) {
	secs := argSecs(args, 0, 0.5)
	var wg sync.WaitGroup
	ops, el := runFor(secs, func(n uint64) {
		for i := uint64(0); i < n; i++ {
			wg.Add(1)
			go func() { wg.Done() }()
			wg.Wait()
		}
	})
	report("create_join", 2, ops, el, "")
}

// yield: goroutines calling runtime.Gosched; see yield_switch.c.
func yield(args []string) {
	secs := argSecs(args, 0, 0.5)
	nthreads := argInt(args, 1, 2)
	cpus := argInt(args, 2, 1)
	check := len(args) > 3 && args[3] != "0"
	if nthreads < 2 {
		fail(2, "threads must be >= 2")
	}
	var stop, last int32 = 0, -1
	c0 := cpuNs() // creation and the end count too: noise
	counts := make([]uint64, nthreads)
	switched := make([]uint64, nthreads)
	var tStart, tStop time.Time
	want := time.Duration(secs * 1e9)
	var wg sync.WaitGroup
	for id := 0; id < nthreads; id++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			var n, sw uint64
			if id == 0 {
				tStart = time.Now()
			}
			for atomic.LoadInt32(&stop) == 0 {
				runtime.Gosched()
				n++
				if check && atomic.LoadInt32(&last) != int32(id) {
					atomic.StoreInt32(&last, int32(id))
					sw++
				}
				if id == 0 && n%1024 == 0 {
					if now := time.Now(); now.Sub(tStart) >= want {
						tStop = now
						atomic.StoreInt32(&stop, 1)
					}
				}
			}
			counts[id], switched[id] = n, sw
		}(id)
	}
	wg.Wait()
	cpuUsed = cpuNs() - c0
	var total, sw, lo, hi uint64 = 0, 0, ^uint64(0), 0
	for i := range counts {
		total += counts[i]
		sw += switched[i]
		if counts[i] < lo {
			lo = counts[i]
		}
		if counts[i] > hi {
			hi = counts[i]
		}
	}
	even := float64(total) / float64(nthreads)
	extra := fmt.Sprintf("\"cpus\":%d,\"share_min\":%.3f,\"share_max\":%.3f",
		cpus, float64(lo)/even, float64(hi)/even)
	if check && total > 0 {
		extra += fmt.Sprintf(",\"switched\":%.4f", float64(sw)/float64(total))
	}
	report("yield", nthreads, total, tStop.Sub(tStart)*time.Duration(cpus), extra)
}

// pingpong: a token handed back and forth with one Mutex and two Conds.
func pingpong(args []string) {
	secs := argSecs(args, 0, 0.5)
	var mu sync.Mutex
	toPing, toPong := sync.NewCond(&mu), sync.NewCond(&mu)
	turn, stop := 0, false
	var ops uint64
	var el time.Duration
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // ponger
		defer wg.Done()
		mu.Lock()
		for {
			for turn == 0 && !stop {
				toPong.Wait()
			}
			if stop {
				break
			}
			turn = 0
			toPing.Signal()
		}
		mu.Unlock()
	}()
	go func() { // pinger
		defer wg.Done()
		mu.Lock()
		ops, el = runFor(secs, func(n uint64) {
			for i := uint64(0); i < n; i++ {
				turn = 1
				toPong.Signal()
				for turn == 1 {
					toPing.Wait()
				}
			}
		})
		stop = true
		toPong.Signal()
		mu.Unlock()
	}()
	wg.Wait()
	report("pingpong", 2, ops, el, "")
}

var counter uint64

// mutex: uncontended sync.Mutex Lock+Unlock.
func mutex(args []string) {
	secs := argSecs(args, 0, 0.5)
	var mu sync.Mutex
	ops, el := runFor(secs, func(n uint64) {
		for i := uint64(0); i < n; i++ {
			mu.Lock()
			counter++
			mu.Unlock()
		}
	})
	report("mutex", 1, ops, el, "")
}

// spin is prodcons.c's spin(): n steps of the same generator.
//
//go:noinline
func spin(x, n uint32) uint32 {
	for i := uint32(0); i < n; i++ {
		x = x*1664525 + 1013904223
	}
	return x
}

// prodcons: the paper's Figure 1; see prodcons.c (same warm-up, and the
// same early exit without waiting for the goroutines to drain).
func prodcons(args []string) {
	secs := argSecs(args, 0, 1)
	nthreads := argInt(args, 1, 2)
	slots := argInt(args, 2, 64)
	meanSpin := uint32(argInt(args, 3, 100))
	if nthreads < 2 || nthreads%2 != 0 {
		fail(2, "threads must be even and >= 2")
	}
	var mu sync.Mutex
	notFull, notEmpty := sync.NewCond(&mu), sync.NewCond(&mu)
	count := 0
	var consumed uint64
	tc := time.Now()
	for i := 0; i < nthreads; i++ {
		if i%2 == 0 {
			go func() {
				mu.Lock()
				for {
					for count == slots {
						notFull.Wait()
					}
					count++
					notEmpty.Signal()
				}
			}()
		} else {
			go func(i int) {
				x := uint32(i)*2654435761 + 1
				for {
					mu.Lock()
					for count == 0 {
						notEmpty.Wait()
					}
					count--
					consumed++
					notFull.Signal()
					mu.Unlock()
					x = x*1664525 + 1013904223 // this message's length
					x = spin(x, (x>>8)%(2*meanSpin))
				}
			}(i)
		}
	}
	createNs := time.Since(tc).Nanoseconds()
	sample := func() uint64 {
		mu.Lock()
		defer mu.Unlock()
		return consumed
	}
	time.Sleep(warmup)
	c0, t0, cpu0 := sample(), time.Now(), cpuNs()
	time.Sleep(time.Duration(secs * 1e9))
	c1, el := sample(), time.Since(t0)
	cpuUsed = cpuNs() - cpu0
	extra := fmt.Sprintf("\"msgs_per_sec\":%.1f,\"create_ns\":%d,\"slots\":%d",
		float64(c1-c0)*1e9/float64(el.Nanoseconds()), createNs, slots)
	report("prodcons", nthreads, c1-c0, el, extra)
	os.Exit(0)
}

// acceptshared: bench/micro/acceptshared.c's loop on Go's netpoller.
// Acceptor goroutines accept on one listener and answer inline; client
// processes (this program again, "acceptshared-client", raw system
// calls only, as the C clients) each connect, send a byte, read the
// answer and close, over and over. ns_per_op: elapsed time per connection.
func acceptShared(args []string) {
	conns := argInt(args, 0, 2000)
	clients := argInt(args, 1, 4)
	acceptors := argInt(args, 2, 4)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		fail(1, "listen: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	for i := 0; i < acceptors; i++ {
		go func() {
			b := make([]byte, 1)
			for {
				c, err := ln.Accept()
				if err != nil {
					return // the listener was closed: done
				}
				if n, _ := c.Read(b); n == 1 {
					if _, err := c.Write([]byte("x")); err != nil {
						fail(1, "write: %v", err)
					}
				}
				c.Close()
			}
		}()
	}
	self, err := os.Executable()
	if err != nil {
		fail(1, "executable: %v", err)
	}
	c0, t0 := cpuNs(), time.Now()
	procs := make([]*exec.Cmd, clients)
	for k := range procs {
		procs[k] = exec.Command(self, "acceptshared-client", strconv.Itoa(port), strconv.Itoa(conns))
		procs[k].Env = append(os.Environ(), "GOMAXPROCS=1")
		if err := procs[k].Start(); err != nil {
			fail(1, "client: %v", err)
		}
	}
	for _, p := range procs {
		if err := p.Wait(); err != nil {
			fail(1, "client: %v", err)
		}
	}
	elapsed := time.Since(t0)
	cpuUsed = cpuNs() - c0
	ln.Close()
	report("acceptshared", acceptors, uint64(conns*clients), elapsed, "\"listener\":\"go\"")
}

// The client of acceptshared: raw system calls, blocking, no netpoller.
func acceptSharedClient(args []string) {
	if len(args) < 2 {
		fail(2, "usage: gobench acceptshared-client PORT CONNS")
	}
	port, _ := strconv.Atoi(args[0])
	conns, _ := strconv.Atoi(args[1])
	sa := &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}
	b := make([]byte, 1)
	for i := 0; i < conns; i++ {
		s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
		if err != nil {
			os.Exit(2)
		}
		if syscall.Connect(s, sa) != nil {
			os.Exit(2)
		}
		if n, err := syscall.Write(s, []byte("q")); n != 1 || err != nil {
			os.Exit(3)
		}
		if n, err := syscall.Read(s, b); n != 1 || err != nil {
			os.Exit(3)
		}
		syscall.Close(s)
	}
	os.Exit(0)
}

func main() {
	if len(os.Args) < 2 {
		fail(2, "usage: gobench createjoin|yield|pingpong|mutex|prodcons|acceptshared [args]")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "createjoin":
		createJoin(args)
	case "yield":
		yield(args)
	case "pingpong":
		pingpong(args)
	case "mutex":
		mutex(args)
	case "prodcons":
		prodcons(args)
	case "acceptshared":
		acceptShared(args)
	case "acceptshared-client":
		acceptSharedClient(args)
	default:
		fail(2, "unknown benchmark %q", os.Args[1])
	}
}
