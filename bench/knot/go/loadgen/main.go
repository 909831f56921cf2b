// SPDX-License-Identifier: MIT

// Command loadgen drives the Capriccio paper's web workload (section 5.1),
// which wrk cannot express: each of -c clients repeatedly connects, sends
// -n requests (default 5) with a pause of -gap (default 20 ms) between
// them on that one kept-alive connection, and closes. Paths follow the
// SPECweb99 mix, exactly as specweb.lua does. At the end it prints one
// line "RESULT {json}" in the same form as specweb.lua.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"sort"
	"sync"
	"syscall"
	"time"
)

var (
	classP = []float64{0.35, 0.50, 0.14, 0.01}
	fileP  = []float64{0.039, 0.059, 0.088, 0.177, 0.353, 0.118, 0.074, 0.050, 0.042}
)

func cumulative(w []float64) []float64 {
	c := make([]float64, len(w))
	sum := 0.0
	for i, x := range w {
		sum += x
		c[i] = sum
	}
	for i := range c {
		c[i] /= sum
	}
	return c
}

func pick(cum []float64, x float64) int {
	return sort.SearchFloat64s(cum, x) // first index with cum[i] >= x
}

type errorCounts struct {
	Connect int64 `json:"connect"`
	Read    int64 `json:"read"`
	Write   int64 `json:"write"`
	Status  int64 `json:"status"`
	Timeout int64 `json:"timeout"`
}

type clientResult struct {
	latencies []int64 // microseconds
	bytes     int64
	errs      errorCounts
}

type workload struct {
	addr                string
	dirC, classC, fileC []float64
	perConn             int
	gap, timeout        time.Duration
	deadline            time.Time
	sources             int // loopback source addresses clients spread over (0: the kernel's choice)
}

// ipBindAddressNoPort is IP_BIND_ADDRESS_NO_PORT from <linux/in.h>.
const ipBindAddressNoPort = 24

// dialer returns the dialer of client i. On loopback, clients spread over
// w.sources addresses 127.0.0.1, 127.0.0.2, ...: from one address, ~2,000
// connections a second leave every ephemeral port in TIME_WAIT within
// seconds, and each connect then searches the port space (a fifth of this
// program's CPU at 10,000 clients, on the CPUs the server under test
// shares), where real clients come from many hosts. The port is still the
// kernel's choice at connect (IP_BIND_ADDRESS_NO_PORT).
func (w *workload) dialer(i int) *net.Dialer {
	d := &net.Dialer{Timeout: w.timeout}
	host, _, err := net.SplitHostPort(w.addr)
	ip := net.ParseIP(host)
	if w.sources < 2 || err != nil || ip == nil || !ip.IsLoopback() || ip.To4() == nil {
		return d
	}
	d.LocalAddr = &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(1+i%w.sources))}
	d.Control = func(network, address string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.IPPROTO_IP, ipBindAddressNoPort, 1)
		})
		if err != nil {
			return err
		}
		return serr
	}
	return d
}

func (w *workload) path(r *rand.Rand) string {
	d := pick(w.dirC, r.Float64())
	c := pick(w.classC, r.Float64())
	f := pick(w.fileC, r.Float64()) + 1
	return fmt.Sprintf("/dir%05d/class%d_%d", d, c, f)
}

// session is one connection: connect, perConn requests, close. br is the
// client's read buffer (16 KiB, wrk's is 8), reset onto each new
// connection: a fresh 64 KiB buffer per connection had the kernel zero new
// pages for every session, a quarter of this program's CPU at 10,000
// clients, on the CPUs the server under test shares.
func (w *workload) session(r *rand.Rand, d *net.Dialer, br *bufio.Reader, res *clientResult) {
	conn, err := d.Dial("tcp", w.addr)
	if err != nil {
		res.errs.Connect++
		time.Sleep(10 * time.Millisecond)
		return
	}
	defer conn.Close()
	br.Reset(conn)
	for i := 0; i < w.perConn && time.Now().Before(w.deadline); i++ {
		if i > 0 {
			time.Sleep(w.gap)
		}
		start := time.Now()
		conn.SetDeadline(start.Add(w.timeout))
		req := "GET " + w.path(r) + " HTTP/1.1\r\nHost: bench\r\n\r\n"
		if _, err := io.WriteString(conn, req); err != nil {
			res.errs.Write++
			return
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				res.errs.Timeout++
			} else {
				res.errs.Read++
			}
			return
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			res.errs.Read++
			return
		}
		if resp.StatusCode != 200 {
			res.errs.Status++
		}
		res.bytes += n
		res.latencies = append(res.latencies, time.Since(start).Microseconds())
	}
}

func main() {
	url := flag.String("addr", "127.0.0.1:8080", "server host:port")
	clients := flag.Int("c", 100, "concurrent clients")
	duration := flag.Duration("d", 10*time.Second, "test duration")
	dirs := flag.Int("dirs", 20, "directories in the file set")
	perConn := flag.Int("n", 5, "requests per connection")
	gap := flag.Duration("gap", 20*time.Millisecond, "pause between requests on a connection")
	timeout := flag.Duration("timeout", 10*time.Second, "per-request timeout")
	sources := flag.Int("sources", 16, "loopback source addresses to spread clients over (1: one)")
	flag.Parse()
	if *clients < 1 || *dirs < 1 || *perConn < 1 || *sources < 1 || *sources > 254 {
		fmt.Fprintln(os.Stderr, "loadgen: -c, -dirs and -n must be positive, -sources in 1..254")
		os.Exit(2)
	}

	zipf := make([]float64, *dirs)
	for i := range zipf {
		zipf[i] = 1 / float64(i+1)
	}
	start := time.Now()
	w := &workload{addr: *url, dirC: cumulative(zipf), classC: cumulative(classP), fileC: cumulative(fileP),
		perConn: *perConn, gap: *gap, timeout: *timeout, deadline: start.Add(*duration), sources: *sources}

	results := make([]clientResult, *clients)
	var wg sync.WaitGroup
	for i := 0; i < *clients; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := rand.New(rand.NewSource(start.UnixNano() + int64(i)*7919))
			br := bufio.NewReaderSize(nil, 16*1024)
			d := w.dialer(i)
			for time.Now().Before(w.deadline) {
				w.session(r, d, br, &results[i])
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)

	var all []int64
	var total clientResult
	for _, r := range results {
		all = append(all, r.latencies...)
		total.bytes += r.bytes
		total.errs.Connect += r.errs.Connect
		total.errs.Read += r.errs.Read
		total.errs.Write += r.errs.Write
		total.errs.Status += r.errs.Status
		total.errs.Timeout += r.errs.Timeout
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	pct := func(p float64) int64 {
		if len(all) == 0 {
			return 0
		}
		return all[int(p*float64(len(all)-1))]
	}
	out, _ := json.Marshal(map[string]interface{}{
		"requests": len(all), "duration_us": elapsed.Microseconds(), "bytes": total.bytes,
		"p50_us": pct(0.50), "p99_us": pct(0.99), "errors": total.errs,
	})
	fmt.Printf("RESULT %s\n", out)
}
