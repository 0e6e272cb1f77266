package kube

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/bulkheadlab/bulkhead/attack"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/rundir"
)

// clock is the runner's clock reference for the shards (attack.ClockHandler).
type clock struct {
	url string
	srv *http.Server
}

func startClock(host string) (*clock, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return nil, fmt.Errorf("kubernetes: the shards' clock reference: %w", err)
	}
	c := &clock{url: "http://" + ln.Addr().String() + "/", srv: &http.Server{Handler: attack.ClockHandler(), ReadHeaderTimeout: time.Second}}
	go c.srv.Serve(ln)
	return c, nil
}

func (c *clock) close() { c.srv.Close() }

// podLoad is the load of an Indexed Job's shards, seen from the runner: it follows each shard's
// pod, copies its log (the attack's event stream, then its raw files) into the configuration
// folder as the shard's stdout log, and when every pod has ended gathers the raw files from the
// logs (attack.Gather) and merges them (attack.Combine).
type podLoad struct {
	e     *Engine
	cr    *confRun
	spec  attack.Spec
	dir   string
	n     int
	clock *clock

	mu       sync.Mutex
	progress [][]loadgen.Progress // by shard
	started  map[int]bool         // shards whose log is being followed
	ended    map[int]string       // shards whose pod ended: "" succeeded, else why it failed
	pods     map[int]string       // shard -> pod name and node

	follow   sync.WaitGroup
	stopOnce sync.Once
	stopped  chan struct{}
	waitOnce sync.Once
	done     chan struct{} // closed once every shard has ended and its log is copied
	checks   []loadgen.Check
	pooled   loadgen.Check
	err      error
	records  [][]rundir.Shard
}

func newPodLoad(e *Engine, cr *confRun, spec attack.Spec, dir string, n int, c *clock) *podLoad {
	l := &podLoad{e: e, cr: cr, spec: spec, dir: dir, n: n, clock: c, progress: make([][]loadgen.Progress, n),
		started: map[int]bool{}, ended: map[int]string{}, pods: map[int]string{}, stopped: make(chan struct{}), done: make(chan struct{})}
	go l.watch()
	return l
}

// stdoutFile is shard k's copy of its pod's log.
func (l *podLoad) stdoutFile(k int) string {
	_, stdout, _ := attack.Files(loadgen.Shard{Index: k, Count: l.n})
	if l.n == 1 {
		_, stdout, _ = attack.Files(loadgen.Shard{})
	}
	return stdout
}

func (l *podLoad) logFiles() []string {
	var out []string
	for k := range l.n {
		out = append(out, l.stdoutFile(k))
	}
	return out
}

// watch polls the Job's pods until every shard's pod has ended (or the Job has failed), starting
// to follow each pod's log as soon as its container runs.
func (l *podLoad) watch() {
	defer close(l.done)
	ctx := context.Background()
	deadline := l.spec.T0.Add(l.spec.Duration + loadgen.StopGrace + l.spec.Load.Timeout + 2*time.Minute)
	sel := l.cr.parts.Names.Selector() + "," + LabelRole + "=load"
	for {
		pods, err := l.e.Client.CoreV1().Pods(l.e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err == nil {
			for i := range pods.Items {
				l.see(ctx, &pods.Items[i])
			}
		}
		l.mu.Lock()
		allEnded := len(l.ended) == l.n
		l.mu.Unlock()
		if allEnded {
			break
		}
		if why := l.jobFailed(ctx); why != "" || time.Now().After(deadline) {
			if why == "" {
				why = "the shards were still running past their time line"
			}
			l.mu.Lock()
			for k := range l.n {
				if _, ok := l.ended[k]; !ok {
					l.ended[k] = why
				}
			}
			l.mu.Unlock()
			break
		}
		select {
		case <-l.stopped:
			// Stopped: the shards were told to stop (their pods deleted); keep watching for
			// their end, briefly.
		case <-time.After(200 * time.Millisecond):
		}
	}
	l.follow.Wait()
	l.clock.close()
}

// jobFailed is the Job's Failed condition's reason and message ("" while it has not failed).
func (l *podLoad) jobFailed(ctx context.Context) string {
	j, err := l.e.Client.BatchV1().Jobs(l.e.Namespace).Get(ctx, l.cr.parts.Names.Load(), metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, c := range j.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return fmt.Sprintf("the load Job failed: %s: %s", c.Reason, c.Message)
		}
	}
	return ""
}

// see starts following a shard's pod once its container has started, and records its end.
func (l *podLoad) see(ctx context.Context, pod *corev1.Pod) {
	k, err := strconv.Atoi(pod.Annotations[batchv1.JobCompletionIndexAnnotation])
	if err != nil || k < 0 || k >= l.n {
		return
	}
	running := pod.Status.Phase == corev1.PodRunning || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed && len(pod.Status.ContainerStatuses) > 0
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pods[k] = fmt.Sprintf("pod %s/%s on %s", pod.Namespace, pod.Name, pod.Spec.NodeName)
	if running && !l.started[k] {
		l.started[k] = true
		l.follow.Add(1)
		go l.copyLog(ctx, k, pod.Name)
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		l.ended[k] = ""
	case corev1.PodFailed:
		l.ended[k] = PodFailure(pod)
	}
}

// copyLog follows shard k's pod log into its stdout file, reading progress events on the way.
func (l *podLoad) copyLog(ctx context.Context, k int, pod string) {
	defer l.follow.Done()
	f, err := os.OpenFile(filepath.Join(l.dir, l.stdoutFile(k)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	rc, err := l.e.Client.CoreV1().Pods(l.e.Namespace).GetLogs(pod, &corev1.PodLogOptions{Container: "attack", Follow: true}).Stream(ctx)
	if err != nil {
		fmt.Fprintf(f, "bulkhead: could not read the pod's log: %v\n", err)
		return
	}
	defer rc.Close()
	sc := bufio.NewScanner(io.TeeReader(rc, f))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		var e attack.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == attack.EventProgress {
			l.mu.Lock()
			l.progress[k] = e.Progress
			l.mu.Unlock()
		}
	}
}

// T0 is the common start the shards were given.
func (l *podLoad) T0() time.Time { return l.spec.T0 }

// Progress sums the shards' latest progress events (loadgen.Progress.Add).
func (l *podLoad) Progress() []loadgen.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]loadgen.Progress, len(l.spec.Attacks))
	for i, a := range l.spec.Attacks {
		out[i].Name = a.Name
	}
	for _, ps := range l.progress {
		for i, g := range ps {
			if i < len(out) {
				out[i].Add(g)
			}
		}
	}
	return out
}

// Stop deletes the shards' pods (SIGTERM: each stops sending, writes and streams what it has).
// It does not block.
func (l *podLoad) Stop() {
	l.stopOnce.Do(func() {
		close(l.stopped)
		go func() {
			sel := l.cr.parts.Names.Selector() + "," + LabelRole + "=load"
			l.e.Client.CoreV1().Pods(l.e.Namespace).DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
		}()
	})
}

// Wait blocks until every shard's pod has ended and its log is copied, then gathers each
// shard's raw files from its log and merges them; a shard whose pod failed fails the load with
// the pod's reason.
func (l *podLoad) Wait() ([]loadgen.Check, error) {
	l.waitOnce.Do(func() {
		<-l.done
		var errs []error
		results := make([]attack.ShardResult, l.n)
		pooled := loadgen.Check{Name: "all", Valid: true, Steal: -1}
		for k := range l.n {
			seg := loadgen.Shard{Index: k, Count: l.n}
			l.mu.Lock()
			why, where := l.ended[k], l.pods[k]
			l.mu.Unlock()
			results[k].Where = where
			if why != "" {
				errs = append(errs, fmt.Errorf("shard %v: %s", seg, why))
			}
			var paths []string
			for _, a := range l.spec.Attacks {
				paths = append(paths, filepath.Join(l.dir, attack.ShardName(a.RawFile, seg)))
			}
			f, err := os.Open(filepath.Join(l.dir, l.stdoutFile(k)))
			if err != nil {
				errs = append(errs, fmt.Errorf("shard %v: no log: %w", seg, err))
				continue
			}
			events, err := attack.Gather(f, paths)
			f.Close()
			if err != nil {
				errs = append(errs, fmt.Errorf("shard %v: %w", seg, err))
			}
			for _, e := range events {
				switch e.Type {
				case attack.EventStarted:
					results[k].Clock, results[k].Slack = e.Clock, e.Slack
				case attack.EventDone:
					results[k].Checks = e.Checks
					if e.Pooled != nil {
						c := *e.Pooled
						pooled.Sent, pooled.Scheduled, pooled.Dropped = pooled.Sent+c.Sent, pooled.Scheduled+c.Scheduled, pooled.Dropped+c.Dropped
						pooled.LagP99, pooled.LagMax, pooled.Steal = max(pooled.LagP99, c.LagP99), max(pooled.LagMax, c.LagMax), max(pooled.Steal, c.Steal)
						if !c.Valid {
							pooled.Valid = false
							for _, r := range c.Reasons {
								pooled.Reasons = append(pooled.Reasons, fmt.Sprintf("shard %v: %s", seg, r))
							}
						}
					}
					if e.Error != "" {
						errs = append(errs, fmt.Errorf("shard %v: %s", seg, e.Error))
					}
				}
			}
			if results[k].Checks == nil {
				pooled.Valid = false
				pooled.Reasons = append(pooled.Reasons, fmt.Sprintf("shard %v sent no checks", seg))
			}
		}
		l.pooled = pooled
		if l.n == 1 {
			// One load generator: its raw files are the endpoints' own, gathered in place.
			l.checks = results[0].Checks
			l.err = errors.Join(errs...)
			return
		}
		checks, records, err := attack.Combine(l.spec, l.dir, results)
		l.checks, l.records = checks, records
		l.err = errors.Join(append(errs, err)...)
	})
	return l.checks, l.err
}

// Pooled is the shards' pooled checks together. Call it after Wait.
func (l *podLoad) Pooled() loadgen.Check { return l.pooled }

// ShardRecords returns, per attack, every shard's record (rundir.Endpoint.Shards). Call it
// after Wait.
func (l *podLoad) ShardRecords() [][]rundir.Shard { return l.records }
