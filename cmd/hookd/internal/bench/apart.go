package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"sync/atomic"
	"time"
)

// This file holds the bench's side of --apart: the receiver and the sender as child processes
// of their own, started from the bench's binary and driven over HTTP on loopback. apart_child.go
// holds the children's side.

// receiverControlPrefix starts the paths of a receiver child's control routes; no endpoint's
// path starts with it.
const receiverControlPrefix = "/-bench/"

// apartControlSlack is how much longer than the wait it asks for a call to a child may take.
const apartControlSlack = 10 * time.Second

// apartFor reports whether t's runs have their receiver and senders apart.
func apartFor(t benchTarget, o *Options) bool {
	return o.Apart && slices.Contains(childTargets, t.name())
}

// openReceiver starts the receiver of a run of t: in a child process of its own when apartFor,
// else in this process.
func openReceiver(ctx context.Context, t benchTarget, o *Options) (receiver, error) {
	if !apartFor(t, o) {
		return newBenchReceiver()
	}
	return startApartReceiver(ctx, o.ApartBinary)
}

// apartBinary returns bin, or this process's executable when bin is "".
func apartBinary(bin string) (string, error) {
	if bin != "" {
		return bin, nil
	}
	bin, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the bench's binary for its children: %w", err)
	}
	return bin, nil
}

// startApartChild starts "bin bench <which>" and waits until it listens.
func startApartChild(ctx context.Context, which, bin string) (*fleetChild, error) {
	bin, err := apartBinary(bin)
	if err != nil {
		return nil, err
	}
	return startFleetChild(ctx, "bench "+which, bin, []string{"bench", which}, fleetEnv(os.Environ()))
}

// apartCall makes a request to a child's control route with in as its JSON body (nil: none),
// and decodes the 200 answer into out (nil: discarded). wait is how long the child may take.
func apartCall(ctx context.Context, c *http.Client, method, u string, wait time.Duration, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, wait+apartControlSlack)
	defer cancel()
	var body io.Reader = http.NoBody
	if in != nil {
		data, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, u, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: %s: %s", method, u, resp.Status, bytes.TrimSpace(data))
	}
	if out == nil {
		return nil
	}
	return json.Unmarshal(data, out)
}

// apartReceiver is a benchReceiver in a child process of its own ("hookd bench receiver"): the
// endpoints point at it, and the bench asks it over its control routes what it saw, with each
// arrival's time as the child read it (one clock for every process of the machine).
type apartReceiver struct {
	child *fleetChild
	http  *http.Client
	seen  atomic.Int64 // the latest delivered count heard, for the progress line
}

var _ receiver = (*apartReceiver)(nil)

// startApartReceiver starts a receiver child of bin ("": this process's executable).
func startApartReceiver(ctx context.Context, bin string) (*apartReceiver, error) {
	c, err := startApartChild(ctx, "receiver", bin)
	if err != nil {
		return nil, fmt.Errorf("receiver: %w", err)
	}
	return &apartReceiver{child: c, http: apiHTTPClient(2)}, nil
}

// process names the child for sampleUsage.
func (r *apartReceiver) process() benchProcess {
	return benchProcess{name: "bench receiver", pid: r.child.cmd.Process.Pid, share: shareReceiver}
}

func (r *apartReceiver) url(path string) string { return r.child.url + path }

func (r *apartReceiver) control(route string, q url.Values) string {
	return r.child.url + receiverControlPrefix + route + "?" + q.Encode()
}

func (r *apartReceiver) expect(path, secret string, hang bool) error {
	in := receiverExpect{Path: path, Secret: secret, Hang: hang}
	if err := apartCall(context.Background(), r.http, http.MethodPost, r.control("expect", nil), 0, in, nil); err != nil {
		return fmt.Errorf("receiver: %w", err)
	}
	return nil
}

// delivered asks for the verified deliveries, waiting up to wait for at least n.
func (r *apartReceiver) delivered(ctx context.Context, n int, wait time.Duration) (int, error) {
	var out receiverDelivered
	q := url.Values{"atleast": {strconv.Itoa(n)}, "waitMs": {strconv.FormatInt(wait.Milliseconds(), 10)}}
	if err := apartCall(ctx, r.http, http.MethodGet, r.control("delivered", q), wait, nil, &out); err != nil {
		return 0, fmt.Errorf("receiver: %w", err)
	}
	r.seen.Store(int64(out.Delivered))
	return out.Delivered, nil
}

// deliveredCount asks without waiting; on an error it returns the count heard last.
func (r *apartReceiver) deliveredCount() int {
	if n, err := r.delivered(context.Background(), 0, 0); err == nil {
		return n
	}
	return int(r.seen.Load())
}

// reached's probe waits in the child up to 100 ms for n, so that waitFor asks a few times a
// second rather than every few milliseconds.
func (r *apartReceiver) reached(n int) func() (int, bool, error) {
	return func() (int, bool, error) {
		c, err := r.delivered(context.Background(), n, 100*time.Millisecond)
		return c, c >= n, err
	}
}

func (r *apartReceiver) lastArrival() (time.Time, error) {
	var out receiverCounts
	if err := apartCall(context.Background(), r.http, http.MethodGet, r.control("counts", nil), 0, nil, &out); err != nil {
		return time.Time{}, fmt.Errorf("receiver: %w", err)
	}
	return time.Unix(0, out.LastUnixNano), nil
}

func (r *apartReceiver) waitArrival(ctx context.Context, id, path string, stall time.Duration) (time.Time, error) {
	var out receiverArrival
	q := url.Values{"id": {id}, "path": {path}, "waitMs": {strconv.FormatInt(stall.Milliseconds(), 10)}}
	if err := apartCall(ctx, r.http, http.MethodGet, r.control("arrival", q), stall, nil, &out); err != nil {
		return time.Time{}, fmt.Errorf("receiver: %w", err)
	}
	if !out.Arrived {
		return time.Time{}, fmt.Errorf("message %s did not arrive at %s within %s", id, path, stall)
	}
	return time.Unix(0, out.AtUnixNano), nil
}

func (r *apartReceiver) counts(expected int) (benchCounts, error) {
	var out receiverCounts
	if err := apartCall(context.Background(), r.http, http.MethodGet, r.control("counts", nil), 0, nil, &out); err != nil {
		return benchCounts{}, fmt.Errorf("receiver: %w", err)
	}
	out.Counts.Expected = expected
	return out.Counts, nil
}

// close kills the child and waits for it.
func (r *apartReceiver) close() {
	r.http.CloseIdleConnections()
	r.child.stop()
}

// apartSender is a sender child ("hookd bench sender"): given the API's address and token, it
// runs the producers of one run and answers with when they started and ended and how long each
// send took.
type apartSender struct {
	child *fleetChild
	http  *http.Client
}

// startApartSender starts a sender child of bin ("": this process's executable).
func startApartSender(ctx context.Context, bin string) (*apartSender, error) {
	c, err := startApartChild(ctx, "sender", bin)
	if err != nil {
		return nil, fmt.Errorf("sender: %w", err)
	}
	return &apartSender{child: c, http: apiHTTPClient(1)}, nil
}

// process names the child for sampleUsage.
func (s *apartSender) process() benchProcess {
	return benchProcess{name: "bench sender", pid: s.child.cmd.Process.Pid, share: shareSender}
}

// sendAll has the child send n messages of bench to api through producers concurrent
// producers, and returns when it is done.
func (s *apartSender) sendAll(ctx context.Context, api *apiInstance, bench string, n, producers int, stall time.Duration) (sendRun, error) {
	job := senderJob{Base: api.base, Token: api.token, MsgPath: api.msgPath, Bench: bench, Messages: n, Producers: producers}
	var out senderResult
	// No bound but the stall's for each message: the child's producers fail on their own.
	wait := time.Duration(n) * stall
	if err := apartCall(ctx, s.http, http.MethodPost, s.child.url+receiverControlPrefix+"send", wait, job, &out); err != nil {
		return sendRun{}, fmt.Errorf("sender: %w", err)
	}
	run := sendRun{start: time.Unix(0, out.StartUnixNano), end: time.Unix(0, out.EndUnixNano), lats: make([]time.Duration, len(out.LatenciesNs))}
	for i, ns := range out.LatenciesNs {
		run.lats[i] = time.Duration(ns)
	}
	return run, nil
}

// close kills the child and waits for it.
func (s *apartSender) close() {
	s.http.CloseIdleConnections()
	s.child.stop()
}

// sendRun is what the producers of one run did.
type sendRun struct {
	start, end time.Time       // the first send's start, the last one's end
	lats       []time.Duration // every send's duration, in no particular order
}

// sendMessages sends n messages of bench to inst through producers concurrent producers: in this
// process, or through snd when it is not nil (inst is then an API's).
func sendMessages(ctx context.Context, snd *apartSender, inst benchInstance, bench string, n, producers int, stall time.Duration) (sendRun, error) {
	if snd != nil {
		a, ok := inst.(apiCaller)
		if !ok {
			return sendRun{}, fmt.Errorf("a sender child sends through an API; this target has none")
		}
		return snd.sendAll(ctx, a.apiClient(), bench, n, producers, stall)
	}
	start := time.Now()
	lats, err := sendAll(ctx, inst, bench, n, producers)
	return sendRun{start: start, end: time.Now(), lats: lats}, err
}

// apiCaller is an instance that is an API on loopback, which a sender child can call.
type apiCaller interface {
	apiClient() *apiInstance
}

func (i *fleetInstance) apiClient() *apiInstance { return i.api }

// apartChildren starts the sender child of a run of t when apartFor, and returns it (nil
// otherwise) with the processes sampleUsage reads: the receiver's when it is a child, and the
// sender's.
func apartChildren(ctx context.Context, t benchTarget, o *Options, recv receiver) (*apartSender, []benchProcess, error) {
	var procs []benchProcess
	if r, ok := recv.(*apartReceiver); ok {
		procs = append(procs, r.process())
	}
	if !apartFor(t, o) {
		return nil, procs, nil
	}
	snd, err := startApartSender(ctx, o.ApartBinary)
	if err != nil {
		return nil, nil, err
	}
	return snd, append(procs, snd.process()), nil
}
