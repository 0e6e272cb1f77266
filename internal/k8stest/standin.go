package k8stest

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"maps"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

// KubeletStandIn plays, for tests, the parts of a node that this machine lacks because it has no
// container runtime. It is named for the kubelet, whose part it mostly plays, and used by tests
// only. What it replaces, precisely:
//
//   - the scheduler: it binds every pending pod without a node to its Node (pods/binding);
//   - the kubelet: it registers a Ready Node, runs each container of a pod bound to it as a
//     local process (the container's command and args, $(VAR) expanded from its env, env from
//     values and the downward API's fieldRefs), with no image, no isolation and no resource
//     limits: the image is ignored and command[0] is looked up in Commands. configMap and
//     emptyDir volumes are folders of the pod; with no mount namespace, every argument that
//     starts with a volume's mountPath is rewritten to the folder. It reports the pod's phase,
//     IP, Ready condition (at once, or when a readinessProbe's TCP port or HTTP GET answers) and
//     each container's state and exit code (pods/status), serves each container's stdout and
//     stderr as the kubelet's /containerLogs endpoint, so `pods/log` works through the API
//     server as on a cluster, and on a pod's deletion stops its processes (SIGTERM, then SIGKILL
//     after the grace period) and removes it. A container that exits in a pod whose
//     restartPolicy is Always is not restarted: the pod fails;
//   - the EndpointSlice controller's output, kube-proxy and cluster DNS: each pod gets its own
//     loopback address (127.0.1.N) as its IP, and each Service's name (name.namespace.svc, with
//     and without .cluster.local) resolves, through lines it adds to /etc/hosts, to the IP of a
//     ready pod its selector matches. (The real EndpointSlice controller runs, but the API server
//     refuses loopback endpoint addresses, so no slice exists to read.) There is no port
//     translation: a Service's port must equal its target port.
//
// Everything else is the real control plane: the API server's validation and admission, the
// Job, ReplicaSet, Deployment, EndpointSlice and garbage-collector controllers.
type KubeletStandIn struct {
	// Node is the Node's name.
	Node string
	// Commands maps a container's command[0] to the local program that runs it (the bulkhead
	// binary built for the test); a command not in it fails its pod (reason ErrImagePull).
	Commands map[string]string

	client  kubernetes.Interface
	dir     string
	t       testing.TB
	mu      sync.Mutex
	pods    map[string]*standinPod // by namespace/name
	nextIP  int
	logAddr string
	hosts   map[string]string // service DNS name -> IP
}

type standinPod struct {
	pod   *corev1.Pod
	ip    string
	dir   string
	procs []*exec.Cmd
	logs  map[string]string // container -> log file
	done  chan struct{}
	stop  chan struct{}
	grace time.Duration
	once  sync.Once
}

// hostsMarker ends every /etc/hosts line the stand-in adds, with its pid, so that lines left by a
// killed test can be recognised.
const hostsMarker = "# bulkhead-kubelet-standin"

// StartKubeletStandIn registers node and starts playing its parts until the test ends, when it
// stops every process it started and removes its /etc/hosts lines.
func StartKubeletStandIn(t testing.TB, cp *ControlPlane, node string, commands map[string]string) *KubeletStandIn {
	t.Helper()
	k := &KubeletStandIn{Node: node, Commands: commands, client: cp.Client, dir: t.TempDir(), t: t,
		pods: map[string]*standinPod{}, hosts: map[string]string{}}
	ctx, cancel := context.WithCancel(context.Background())
	port := k.serveLogs(t)
	if err := k.register(ctx, port); err != nil {
		cancel()
		t.Fatalf("kubelet stand-in: register node: %v", err)
	}
	var wg sync.WaitGroup
	wg.Go(func() { k.watchPods(ctx) })
	wg.Go(func() { k.watchEndpoints(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
		k.mu.Lock()
		pods := make([]*standinPod, 0, len(k.pods))
		for _, p := range k.pods {
			pods = append(pods, p)
		}
		k.mu.Unlock()
		for _, p := range pods {
			p.kill(2 * time.Second)
		}
		k.writeHosts(nil)
	})
	return k
}

// register creates the Ready Node, its kubelet endpoint on 127.0.0.1:port.
func (k *KubeletStandIn) register(ctx context.Context, port int) error {
	n := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: k.Node, Labels: map[string]string{"kubernetes.io/hostname": k.Node}},
		Status: corev1.NodeStatus{
			Capacity:        corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Allocatable:     corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: k.Node}},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(port)}},
			Conditions:      []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletStandIn", LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now()}},
		},
	}
	created, err := k.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	created.Status = n.Status
	_, err = k.client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
	return err
}

// watchPods binds, runs and deletes pods as they come, until ctx ends.
func (k *KubeletStandIn) watchPods(ctx context.Context) {
	for ctx.Err() == nil {
		w, err := k.client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			k.handle(ctx, ev.Type, pod)
		}
		w.Stop()
	}
}

func (k *KubeletStandIn) handle(ctx context.Context, typ watch.EventType, pod *corev1.Pod) {
	key := pod.Namespace + "/" + pod.Name
	switch {
	case typ == watch.Deleted:
		k.mu.Lock()
		p := k.pods[key]
		delete(k.pods, key)
		k.mu.Unlock()
		if p != nil {
			go p.kill(0)
		}
	case pod.DeletionTimestamp != nil:
		k.mu.Lock()
		p := k.pods[key]
		k.mu.Unlock()
		if p != nil || pod.Spec.NodeName == k.Node {
			go k.terminate(ctx, pod, p)
		}
	case pod.Spec.NodeName == "":
		// The scheduler's part: bind it here.
		b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID},
			Target: corev1.ObjectReference{Kind: "Node", Name: k.Node}}
		if err := k.client.CoreV1().Pods(pod.Namespace).Bind(ctx, b, metav1.CreateOptions{}); err != nil && ctx.Err() == nil {
			k.t.Logf("kubelet stand-in: bind %s: %v", key, err)
		}
	case pod.Spec.NodeName == k.Node && pod.Status.Phase == "" || pod.Spec.NodeName == k.Node && pod.Status.Phase == corev1.PodPending:
		k.mu.Lock()
		_, running := k.pods[key]
		if !running {
			k.nextIP++
			p := &standinPod{pod: pod.DeepCopy(), ip: fmt.Sprintf("127.0.1.%d", k.nextIP), dir: filepath.Join(k.dir, pod.Namespace, pod.Name),
				logs: map[string]string{}, done: make(chan struct{}), stop: make(chan struct{})}
			k.pods[key] = p
			k.mu.Unlock()
			go k.run(ctx, p)
			return
		}
		k.mu.Unlock()
	}
}

// terminate stops a pod being deleted and removes it for good, as the kubelet does.
func (k *KubeletStandIn) terminate(ctx context.Context, pod *corev1.Pod, p *standinPod) {
	grace := 30 * time.Second
	if pod.DeletionGracePeriodSeconds != nil {
		grace = time.Duration(*pod.DeletionGracePeriodSeconds) * time.Second
	}
	if p != nil {
		p.kill(grace)
	}
	zero := int64(0)
	k.client.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero, Preconditions: &metav1.Preconditions{UID: &pod.UID}})
}

// kill sends SIGTERM to the pod's processes, SIGKILL after grace, and waits for them.
func (p *standinPod) kill(grace time.Duration) {
	p.once.Do(func() {
		p.grace = max(grace, 100*time.Millisecond)
		close(p.stop)
	})
	<-p.done
}

// run starts the pod's containers, reports it Running (and Ready), and when every container has
// exited reports how.
func (k *KubeletStandIn) run(ctx context.Context, p *standinPod) {
	defer close(p.done)
	pod := p.pod
	fail := func(reason, msg string) {
		k.setStatus(ctx, pod, func(s *corev1.PodStatus) {
			s.Phase, s.Reason, s.Message = corev1.PodFailed, reason, msg
		})
	}
	vols, err := k.volumes(ctx, p)
	if err != nil {
		fail("VolumeFailed", err.Error())
		return
	}
	type exit struct {
		name string
		err  error
	}
	exits := make(chan exit, len(pod.Spec.Containers))
	started := metav1.Now()
	for _, c := range pod.Spec.Containers {
		cmd, err := k.command(p, c, vols)
		if err != nil {
			for _, q := range p.procs {
				syscall.Kill(-q.Process.Pid, syscall.SIGKILL)
				q.Wait()
			}
			fail("ErrImagePull", err.Error())
			return
		}
		p.procs = append(p.procs, cmd)
		go func() { exits <- exit{c.Name, cmd.Wait()} }()
	}
	k.setStatus(ctx, pod, func(s *corev1.PodStatus) {
		s.Phase, s.PodIP, s.PodIPs, s.HostIP, s.StartTime = corev1.PodRunning, p.ip, []corev1.PodIP{{IP: p.ip}}, "127.0.0.1", &started
		s.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptrTrue(),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}})
		}
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue}}
	})
	readyCtx, readyDone := context.WithCancel(ctx)
	go k.awaitReady(readyCtx, p)

	codes := map[string]int32{}
	stopped := false
	var killTimer <-chan time.Time
	for len(codes) < len(pod.Spec.Containers) {
		select {
		case e := <-exits:
			code := int32(0)
			if e.err != nil {
				code = 1
				if ee, ok := e.err.(*exec.ExitError); ok {
					code = int32(ee.ExitCode())
					if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
						code = 128 + int32(ws.Signal())
					}
				}
			}
			codes[e.name] = code
		case <-p.stop:
			if !stopped {
				stopped = true
				for _, q := range p.procs {
					syscall.Kill(-q.Process.Pid, syscall.SIGTERM)
				}
				killTimer = time.After(p.grace)
			}
		case <-killTimer:
			for _, q := range p.procs {
				syscall.Kill(-q.Process.Pid, syscall.SIGKILL)
			}
		}
	}
	readyDone()
	if stopped {
		return
	}
	phase := corev1.PodSucceeded
	for _, c := range codes {
		if c != 0 || pod.Spec.RestartPolicy == corev1.RestartPolicyAlways || pod.Spec.RestartPolicy == "" {
			phase = corev1.PodFailed
		}
	}
	finished := metav1.Now()
	k.setStatus(ctx, pod, func(s *corev1.PodStatus) {
		s.Phase = phase
		s.ContainerStatuses = nil
		for _, c := range pod.Spec.Containers {
			reason := "Completed"
			if codes[c.Name] != 0 {
				reason = "Error"
			}
			s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: codes[c.Name], Reason: reason, StartedAt: started, FinishedAt: finished}}})
		}
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted"}}
	})
}

func ptrTrue() *bool { b := true; return &b }

// awaitReady sets the Ready condition once every container's readiness probe passes (at once for
// a container without one).
func (k *KubeletStandIn) awaitReady(ctx context.Context, p *standinPod) {
	for _, c := range p.pod.Spec.Containers {
		probe := c.ReadinessProbe
		if probe == nil {
			continue
		}
		for ctx.Err() == nil && !probeOnce(p.ip, probe) {
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if ctx.Err() != nil {
		return
	}
	k.setStatus(ctx, p.pod, func(s *corev1.PodStatus) {
		if s.Phase != corev1.PodRunning {
			return
		}
		s.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionTrue}, {Type: corev1.PodInitialized, Status: corev1.ConditionTrue},
			{Type: corev1.ContainersReady, Status: corev1.ConditionTrue}, {Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()}}
		for i := range s.ContainerStatuses {
			s.ContainerStatuses[i].Ready = true
		}
	})
}

func probeOnce(ip string, probe *corev1.Probe) bool {
	switch {
	case probe.TCPSocket != nil:
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, probe.TCPSocket.Port.String()), time.Second)
		if err != nil {
			return false
		}
		c.Close()
		return true
	case probe.HTTPGet != nil:
		resp, err := (&http.Client{Timeout: time.Second}).Get("http://" + net.JoinHostPort(ip, probe.HTTPGet.Port.String()) + probe.HTTPGet.Path)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode >= 200 && resp.StatusCode < 400
	}
	return true
}

// setStatus applies change to the pod's latest status and writes it (pods/status), retrying on
// conflicts.
func (k *KubeletStandIn) setStatus(ctx context.Context, pod *corev1.Pod, change func(*corev1.PodStatus)) {
	for range 20 {
		cur, err := k.client.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return
		}
		change(&cur.Status)
		if _, err = k.client.CoreV1().Pods(pod.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{}); err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// volumes makes the pod's configMap and emptyDir volumes as folders: mountPath -> folder.
func (k *KubeletStandIn) volumes(ctx context.Context, p *standinPod) (map[string]string, error) {
	byName := map[string]string{}
	for _, v := range p.pod.Spec.Volumes {
		dir := filepath.Join(p.dir, "volumes", v.Name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		switch {
		case v.ConfigMap != nil:
			cm, err := k.client.CoreV1().ConfigMaps(p.pod.Namespace).Get(ctx, v.ConfigMap.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("volume %s: configmap %s: %w", v.Name, v.ConfigMap.Name, err)
			}
			for name, data := range cm.Data {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
					return nil, err
				}
			}
		case v.EmptyDir != nil:
		default:
			return nil, fmt.Errorf("volume %s: the kubelet stand-in has only configMap and emptyDir volumes", v.Name)
		}
		byName[v.Name] = dir
	}
	mounts := map[string]string{}
	for _, c := range p.pod.Spec.Containers {
		for _, m := range c.VolumeMounts {
			mounts[m.MountPath] = byName[m.Name]
		}
	}
	return mounts, nil
}

// command starts container c of p as a local process, in its own process group, its output in
// the container's log file.
func (k *KubeletStandIn) command(p *standinPod, c corev1.Container, mounts map[string]string) (*exec.Cmd, error) {
	env := map[string]string{}
	var envList []string
	for _, e := range c.Env {
		v := e.Value
		if e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			v = p.field(e.ValueFrom.FieldRef.FieldPath, k.Node)
		}
		v = expand(v, env)
		env[e.Name] = v
		envList = append(envList, e.Name+"="+v)
	}
	argv := append(append([]string(nil), c.Command...), c.Args...)
	if len(argv) == 0 {
		return nil, fmt.Errorf("container %s: no command (the stand-in cannot run an image's entrypoint)", c.Name)
	}
	prog, ok := k.Commands[argv[0]]
	if !ok {
		return nil, fmt.Errorf("container %s: command %q is not one the stand-in can run", c.Name, argv[0])
	}
	for i := range argv {
		argv[i] = expand(argv[i], env)
		for mp, dir := range mounts {
			if argv[i] == mp || strings.HasPrefix(argv[i], mp+"/") {
				argv[i] = dir + strings.TrimPrefix(argv[i], mp)
			} else if at := strings.Index(argv[i], "="+mp); at >= 0 && (len(argv[i]) == at+1+len(mp) || argv[i][at+1+len(mp)] == '/') {
				argv[i] = argv[i][:at+1] + dir + argv[i][at+1+len(mp):]
			}
		}
	}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, err
	}
	logPath := filepath.Join(p.dir, c.Name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(prog, argv[1:]...)
	cmd.Env = append(os.Environ(), envList...)
	cmd.Dir = p.dir
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("container %s: %w", c.Name, err)
	}
	log.Close() // the child holds its own descriptor
	k.mu.Lock()
	p.logs[c.Name] = logPath
	k.mu.Unlock()
	return cmd, nil
}

// field is the downward API's value of path for the pod.
func (p *standinPod) field(path, node string) string {
	switch {
	case path == "metadata.name":
		return p.pod.Name
	case path == "metadata.namespace":
		return p.pod.Namespace
	case path == "status.podIP":
		return p.ip
	case path == "spec.nodeName":
		return node
	case strings.HasPrefix(path, "metadata.annotations['"):
		return p.pod.Annotations[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.annotations['"), "']")]
	case strings.HasPrefix(path, "metadata.labels['"):
		return p.pod.Labels[strings.TrimSuffix(strings.TrimPrefix(path, "metadata.labels['"), "']")]
	}
	return ""
}

// expand replaces $(NAME) by env's value, as the kubelet does (an unknown name stays as it is).
func expand(s string, env map[string]string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "$(")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := strings.IndexByte(s[i:], ')')
		if j < 0 {
			b.WriteString(s)
			return b.String()
		}
		name := s[i+2 : i+j]
		b.WriteString(s[:i])
		if v, ok := env[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString(s[i : i+j+1])
		}
		s = s[i+j+1:]
	}
}

// serveLogs serves the kubelet's /containerLogs/{namespace}/{pod}/{container} over TLS (the API
// server proxies pods/log there) and returns its port.
func (k *KubeletStandIn) serveLogs(t testing.TB) int {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(k.containerLogs), TLSConfig: &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}}}
	go srv.ServeTLS(ln, "", "")
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

func (k *KubeletStandIn) containerLogs(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/containerLogs/"), "/")
	if len(parts) != 3 {
		http.NotFound(w, r)
		return
	}
	k.mu.Lock()
	p := k.pods[parts[0]+"/"+parts[1]]
	var path string
	if p != nil {
		path = p.logs[parts[2]]
	}
	k.mu.Unlock()
	if path == "" {
		http.Error(w, "container not found", http.StatusNotFound)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "text/plain")
	follow, _ := strconv.ParseBool(r.URL.Query().Get("follow"))
	flusher, _ := w.(http.Flusher)
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		n, err := io.Copy(w, br)
		if flusher != nil && n > 0 {
			flusher.Flush()
		}
		if err != nil || !follow {
			return
		}
		select {
		case <-p.done:
			io.Copy(w, br) // what it wrote last
			return
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func selfSigned(t testing.TB) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubelet-standin"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// watchEndpoints keeps /etc/hosts naming each Service after a ready pod its selector matches,
// every 100 ms, until ctx ends.
//
// This is the EndpointSlice controller's view computed here: the real controller runs, but the
// API server refuses EndpointSlices with loopback addresses ("may not be in the loopback
// range"), and loopback is all the stand-in's pods can have on this machine.
func (k *KubeletStandIn) watchEndpoints(ctx context.Context) {
	for ctx.Err() == nil {
		hosts := map[string]string{}
		svcs, err1 := k.client.CoreV1().Services("").List(ctx, metav1.ListOptions{})
		pods, err2 := k.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err1 == nil && err2 == nil {
			for _, svc := range svcs.Items {
				if len(svc.Spec.Selector) == 0 {
					continue
				}
				sel := labels.SelectorFromSet(svc.Spec.Selector)
				for _, p := range pods.Items {
					if p.Namespace == svc.Namespace && p.DeletionTimestamp == nil && p.Status.PodIP != "" && podReady(&p) && sel.Matches(labels.Set(p.Labels)) {
						hosts[svc.Name+"."+svc.Namespace+".svc"] = p.Status.PodIP
						hosts[svc.Name+"."+svc.Namespace+".svc.cluster.local"] = p.Status.PodIP
						break
					}
				}
			}
			if !maps.Equal(hosts, k.currentHosts()) {
				k.writeHosts(hosts)
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func (k *KubeletStandIn) currentHosts() map[string]string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hosts
}

// hostsFile is the file the stand-in's name resolution goes through.
var hostsFile = "/etc/hosts"

// writeHosts replaces the stand-in's lines in /etc/hosts with hosts (none for nil), leaving
// every other line, and lines of stand-ins still running in other processes, as they were.
//
// Two test binaries may run stand-ins at once (go test runs packages in parallel), so the
// read-modify-write holds an exclusive flock on hostsFile+".lock" across processes; and a
// resolver reading the file while it is rewritten must never see it empty, so the new content
// goes to a temporary file renamed over it. Only where the file is a bind mount (a container's
// /etc/hosts: rename fails with EBUSY) is it rewritten in place.
func (k *KubeletStandIn) writeHosts(hosts map[string]string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if lock, err := os.OpenFile(hostsFile+".lock", os.O_CREATE|os.O_RDWR, 0o644); err == nil {
		defer lock.Close()
		if syscall.Flock(int(lock.Fd()), syscall.LOCK_EX) == nil {
			defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		}
	}
	b, err := os.ReadFile(hostsFile)
	if err != nil {
		return
	}
	mine := fmt.Sprintf("%s %d", hostsMarker, os.Getpid())
	var keep []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if i := strings.Index(l, hostsMarker+" "); i >= 0 {
			pid, _ := strconv.Atoi(strings.TrimSpace(l[i+len(hostsMarker)+1:]))
			if pid == os.Getpid() || syscall.Kill(pid, 0) != nil {
				continue // ours, or a dead stand-in's
			}
		}
		keep = append(keep, l)
	}
	for name, ip := range hosts {
		keep = append(keep, fmt.Sprintf("%s %s %s", ip, name, mine))
	}
	data := []byte(strings.Join(keep, "\n") + "\n")
	tmp := fmt.Sprintf("%s.%d.tmp", hostsFile, os.Getpid())
	mode := os.FileMode(0o644)
	if st, err := os.Stat(hostsFile); err == nil {
		mode = st.Mode().Perm()
	}
	if os.WriteFile(tmp, data, mode) == nil && os.Chmod(tmp, mode) == nil && os.Rename(tmp, hostsFile) == nil {
		k.hosts = hosts // replaced whole (Chmod: WriteFile's mode is masked by the umask)
		return
	}
	os.Remove(tmp)
	os.WriteFile(hostsFile, data, mode) // a bind mount cannot be renamed over
	k.hosts = hosts
}
