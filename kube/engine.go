package kube

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/faults/proxy"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/rundir"
	"github.com/bulkheadlab/bulkhead/service"
	"github.com/bulkheadlab/bulkhead/target"
)

// Name is the engine's registered name.
const Name = "kubernetes"

func init() {
	experiment.RegisterEngine(Name, func(s experiment.EngineSettings) (experiment.Engine, error) { return Open(s) })
}

// Defaults of an Engine.
const (
	// DefaultStartLead is how far ahead of the Job's creation the shards' common T0 is set: time
	// for the Job controller to make the pods, for them to be scheduled and started, to measure
	// their clocks and warm their connections.
	DefaultStartLead = 20 * time.Second
	// DefaultReadyTimeout bounds the wait for a part's Deployment to be available.
	DefaultReadyTimeout = 2 * time.Minute
)

// Engine runs configuration runs' parts in one namespace. Create it with Open or New; its fields
// may be changed before the first run.
type Engine struct {
	Client    kubernetes.Interface
	Namespace string
	Image     string
	// StartLead is DefaultStartLead unless set; ReadyTimeout DefaultReadyTimeout.
	StartLead, ReadyTimeout time.Duration
	// ClockHost is the address (host) on which the runner serves the clock reference the shards
	// measure their offsets against: $POD_IP when the runner runs in a pod, else 127.0.0.1.
	ClockHost string

	token string // distinguishes this runner's objects from another's in the same namespace
	mu    sync.Mutex
	runs  map[string]*confRun // by configuration folder
}

var _ experiment.Engine = (*Engine)(nil)

// confRun is one configuration run's objects.
type confRun struct {
	parts Parts
	root  metav1.OwnerReference
}

// Open returns an engine from the usual places: the kubeconfig at s.Kubeconfig, else
// $KUBECONFIG or ~/.kube/config, else the pod's service account; the namespace s.Namespace,
// else the kubeconfig context's, else "default".
func Open(s experiment.EngineSettings) (*Engine, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if s.Kubeconfig != "" {
		rules.ExplicitPath = s.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubernetes: load the client configuration: %w", err)
	}
	ns := s.Namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil || ns == "" {
			ns = "default"
		}
	}
	return New(cfg, ns, s.Image)
}

// New returns an engine for the API server of cfg, in namespace ns, running image ("" means
// DefaultImage).
func New(cfg *rest.Config, ns, image string) (*Engine, error) {
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	if image == "" {
		image = DefaultImage
	}
	b := make([]byte, 4)
	rand.Read(b)
	host := os.Getenv("POD_IP")
	if host == "" {
		host = "127.0.0.1"
	}
	return &Engine{Client: c, Namespace: ns, Image: image, ClockHost: host, token: hex.EncodeToString(b), runs: map[string]*confRun{}}, nil
}

// Name returns "kubernetes".
func (e *Engine) Name() string { return Name }

func (e *Engine) parts(p *experiment.Plan) Parts {
	return Parts{Names: NamesFor(e.token, p.Folder), Namespace: e.Namespace, Image: e.Image, Scenario: p.Scenario,
		Configuration: p.Configuration, DependencySeeds: p.DependencySeeds}
}

func (e *Engine) run(p *experiment.Plan) *confRun {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.runs[p.Folder]
}

// StartDependencies creates the configuration run's root ConfigMap, then (server-side dry-run
// first) a Deployment and Service per fake dependency and Toxiproxy's, waits until they are
// available, and returns Toxiproxy's API (through its Service) as the injector. On error
// everything created is deleted.
func (e *Engine) StartDependencies(ctx context.Context, p *experiment.Plan, opts experiment.Options) (_ *experiment.Dependencies, err error) {
	parts := e.parts(p)
	rootCM, err := parts.Root()
	if err != nil {
		return nil, err
	}
	objs := parts.Dependencies()
	if err := e.dryRun(ctx, append([]runtime.Object{rootCM}, objs...)); err != nil {
		return nil, err
	}
	created, err := e.Client.CoreV1().ConfigMaps(e.Namespace).Create(ctx, rootCM, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: create %s: %w", rootCM.Name, err)
	}
	cr := &confRun{parts: parts, root: metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: created.Name, UID: created.UID}}
	e.mu.Lock()
	e.runs[p.Folder] = cr
	e.mu.Unlock()
	cleanup := func(ctx context.Context) error { return e.remove(ctx, p.Folder) }
	defer func() {
		if err != nil {
			cleanup(context.Background())
		}
	}()
	if err := e.create(ctx, cr, objs); err != nil {
		return nil, err
	}
	if err := e.waitAvailable(ctx, objs); err != nil {
		return nil, err
	}
	pod, err := e.podOf(ctx, parts.Names, "toxiproxy")
	if err != nil {
		return nil, err
	}
	api := "http://" + ServiceHost(parts.Names.Toxiproxy(), e.Namespace, ToxiproxyAPIPort)
	if err := waitDial(ctx, ServiceHost(parts.Names.Toxiproxy(), e.Namespace, ToxiproxyAPIPort), e.readyTimeout()); err != nil {
		return nil, fmt.Errorf("kubernetes: Toxiproxy's Service: %w", err)
	}
	x, err := proxy.NewExternal(ctx, api)
	if err != nil {
		return nil, err
	}
	d := &experiment.Dependencies{
		Injector:  &podProxies{External: x, podIP: pod.Status.PodIP, parts: parts},
		Unmetered: "the proxies run in the cluster, not in the runner's process",
		Upstreams: map[string]string{},
		Abort:     cleanup,
		Close:     cleanup,
	}
	for _, dep := range p.Scenario.Dependencies {
		d.Upstreams[dep.Name] = parts.Upstream(dep)
	}
	return d, nil
}

// podProxies is the run's Toxiproxy seen by the runner: each proxy listens on the Toxiproxy
// pod's IP at the port its Service publishes for that dependency (in the scenario's order, the
// order the runner adds them in), and the address returned is the Service's, where the system
// under test calls it.
type podProxies struct {
	*proxy.External
	podIP string
	parts Parts
	mu    sync.Mutex
	next  int
}

func (x *podProxies) AddProxyAt(ctx context.Context, name, listen, upstream string) (string, error) {
	if listen != "" {
		return "", fmt.Errorf("kubernetes: proxy %s: a fixed listen address (%s) has no meaning in a pod; leave listen: out", name, listen)
	}
	x.mu.Lock()
	i := x.next
	x.next++
	x.mu.Unlock()
	if i >= len(x.parts.Scenario.Dependencies) || !strings.HasSuffix(name, "-"+x.parts.Scenario.Dependencies[i].Name) {
		return "", fmt.Errorf("kubernetes: proxy %s: not the scenario's dependency %d", name, i)
	}
	if _, err := x.External.AddProxyAt(ctx, name, net.JoinHostPort(x.podIP, strconv.Itoa(ToxiproxyProxyPort+i)), upstream); err != nil {
		return "", err
	}
	return x.parts.ProxyHost(i), nil
}

func (x *podProxies) AddProxy(ctx context.Context, name, upstream string) (string, error) {
	return x.AddProxyAt(ctx, name, "", upstream)
}

// StartTarget runs the built-in service, or an image target's image, as a Deployment and
// Service calling the proxies, or checks a url: target (a Service that already exists) from the
// runner. A command target cannot run in a cluster.
func (e *Engine) StartTarget(ctx context.Context, p *experiment.Plan, spec target.Spec, opts experiment.Options) (target.Target, error) {
	k, err := target.Of(spec.Config)
	if err != nil {
		return nil, err
	}
	name := k.Name()
	if name != target.BuiltInKind && name != (target.Image{}).Name() {
		if !k.Remote() {
			return nil, refuseKind(p.Configuration.Name, name)
		}
		return k.Start(ctx, spec)
	}
	cr := e.run(p)
	if cr == nil {
		return nil, fmt.Errorf("kubernetes: configuration %s: no dependencies started", p.Folder)
	}
	var objs []runtime.Object
	var img target.ImageRun
	if name == target.BuiltInKind {
		objs = cr.parts.Target(spec.Dependencies)
	} else {
		if img, err = target.ResolveImage(spec.Config, cr.parts.TargetHost(), spec.Dependencies); err != nil {
			return nil, fmt.Errorf("kubernetes: configuration %s: %w", p.Configuration.Name, err)
		}
		objs = cr.parts.ImageTarget(img)
	}
	if err := e.dryRun(ctx, objs); err != nil {
		return nil, err
	}
	if err := e.create(ctx, cr, objs); err != nil {
		return nil, err
	}
	if err := e.waitAvailable(ctx, objs); err != nil {
		return nil, err
	}
	port := ServicePort
	if name != target.BuiltInKind {
		port = img.Port
	}
	host := ServiceHost(cr.parts.Names.Target(), e.Namespace, port)
	if err := waitDial(ctx, host, e.readyTimeout()); err != nil {
		return nil, fmt.Errorf("kubernetes: the system under test's Service: %w", err)
	}
	if name != target.BuiltInKind {
		return target.ReachImage(ctx, spec, img, "Deployment "+e.Namespace+"/"+cr.parts.Names.Target())
	}
	return &podTarget{url: "http://" + host, cfg: spec.Service}, nil
}

// refuseKind is the error for a target of a kind that runs on the runner's host.
func refuseKind(configuration, kind string) error {
	return fmt.Errorf("kubernetes: configuration %s: a %s target runs on the runner's host; on kubernetes give a url: (a Service that exists), an image: (run as a Deployment), or use the built-in service", configuration, kind)
}

// podTarget is the built-in service in a pod, reached through its Service.
type podTarget struct {
	url  string
	cfg  service.Config
	mu   sync.Mutex
	prev *service.Snapshot
}

func (t *podTarget) URL() string { return t.url }

// Record says it is the built-in service, in a pod.
func (t *podTarget) Record() target.Record {
	return target.Record{Kind: target.BuiltInKind, Description: "the built-in service, in a pod", URL: t.url}
}

// Resources reads the service's /debug/resources (its Snapshot) and returns the interval since
// the previous read, as the in-process service does; nil when it does not answer within a second.
func (t *podTarget) Resources() []outcome.Resource {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get(t.url + service.DebugResourcesPath)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var snap service.Snapshot
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&snap) != nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	rs := snap.ResourcesSince(t.prev)
	t.prev = &snap
	return rs
}

// Close does nothing: the Deployment goes with the configuration run's root.
func (t *podTarget) Close(context.Context) error { return nil }

// Describe records the service config the pod runs, as the in-process service does.
func (t *podTarget) Describe() (json.RawMessage, error) { return json.Marshal(t.cfg) }

// LoadInRunner is false: the shards write the raw files, and the runner gathers them.
func (e *Engine) LoadInRunner(experiment.Options) bool { return false }

// StartLoad renders the load (the attack spec in a ConfigMap, an Indexed Job of
// max(opts.Shards, 1) shards with a common T0 StartLead ahead), dry-runs and creates it, and
// returns the load once it is created; the shards' pods are followed from then on (podLoad).
func (e *Engine) StartLoad(ctx context.Context, p *experiment.Plan, dir, base string, _ []io.Writer, lopts []loadgen.Opt, opts experiment.Options) (experiment.Load, *rundir.Load, error) {
	cr := e.run(p)
	if cr == nil {
		return nil, nil, fmt.Errorf("kubernetes: configuration %s: no dependencies started", p.Folder)
	}
	spec, err := p.AttackSpec(base, lopts)
	if err != nil {
		return nil, nil, err
	}
	n := max(opts.Shards, 1)
	lead := e.StartLead
	if lead <= 0 {
		lead = DefaultStartLead
	}
	clock, err := startClock(e.ClockHost)
	if err != nil {
		return nil, nil, err
	}
	spec.ClockURL = clock.url
	spec.T0 = time.Now().Add(lead).Truncate(time.Microsecond)
	b, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		clock.close()
		return nil, nil, err
	}
	if err := os.WriteFile(dir+"/attack.json", append(b, '\n'), 0o644); err != nil {
		clock.close()
		return nil, nil, err
	}
	objs := cr.parts.Load(b, n, lead+spec.Duration+loadgen.StopGrace+spec.Load.Timeout+time.Minute)
	if err := e.dryRun(ctx, objs); err == nil {
		err = e.create(ctx, cr, objs)
	}
	if err != nil {
		clock.close()
		return nil, nil, err
	}
	l := newPodLoad(e, cr, spec, dir, n, clock)
	rec := &rundir.Load{Layout: Name, Command: append([]string{"bulkhead"}, objs[1].(*batchv1.Job).Spec.Template.Spec.Containers[0].Args...),
		Spec: "attack.json", Logs: l.logFiles()}
	return l, rec, nil
}

func (e *Engine) readyTimeout() time.Duration {
	if e.ReadyTimeout > 0 {
		return e.ReadyTimeout
	}
	return DefaultReadyTimeout
}

// DryRun has the API server validate objs as the engine would create them; see dryRun.
func (e *Engine) DryRun(ctx context.Context, objs []runtime.Object) error { return e.dryRun(ctx, objs) }

// dryRun has the API server validate objs as it would create them (validation, defaulting,
// admission), with unknown fields refused. The error names the object.
func (e *Engine) dryRun(ctx context.Context, objs []runtime.Object) error {
	for _, o := range objs {
		if err := e.createOne(ctx, o, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"}); err != nil {
			return fmt.Errorf("kubernetes: server-side dry run of %s: %w", describe(o), err)
		}
	}
	return nil
}

// create creates objs, each owned by the configuration run's root.
func (e *Engine) create(ctx context.Context, cr *confRun, objs []runtime.Object) error {
	for _, o := range objs {
		m, err := metaOf(o)
		if err != nil {
			return err
		}
		m.SetOwnerReferences([]metav1.OwnerReference{cr.root})
		if err := e.createOne(ctx, o, metav1.CreateOptions{FieldValidation: "Strict"}); err != nil {
			return fmt.Errorf("kubernetes: create %s: %w", describe(o), err)
		}
	}
	return nil
}

func metaOf(o runtime.Object) (metav1.Object, error) {
	m, ok := o.(metav1.Object)
	if !ok {
		return nil, fmt.Errorf("kubernetes: %T has no object metadata", o)
	}
	return m, nil
}

func describe(o runtime.Object) string {
	m, _ := o.(metav1.Object)
	kind := fmt.Sprintf("%T", o)
	if k := o.GetObjectKind().GroupVersionKind().Kind; k != "" {
		kind = k
	}
	if m == nil {
		return kind
	}
	return kind + " " + m.GetName()
}

func (e *Engine) createOne(ctx context.Context, o runtime.Object, opts metav1.CreateOptions) error {
	ns := e.Namespace
	var err error
	switch v := o.(type) {
	case *corev1.ConfigMap:
		_, err = e.Client.CoreV1().ConfigMaps(ns).Create(ctx, v, opts)
	case *corev1.Service:
		_, err = e.Client.CoreV1().Services(ns).Create(ctx, v, opts)
	case *appsv1.Deployment:
		_, err = e.Client.AppsV1().Deployments(ns).Create(ctx, v, opts)
	case *batchv1.Job:
		_, err = e.Client.BatchV1().Jobs(ns).Create(ctx, v, opts)
	default:
		err = fmt.Errorf("kubernetes: no client for %T", o)
	}
	return err
}

// waitAvailable waits until every Deployment among objs has an available replica and a ready
// endpoint in its Service, failing at once with the reason of a pod that failed.
func (e *Engine) waitAvailable(ctx context.Context, objs []runtime.Object) error {
	ctx, cancel := context.WithTimeout(ctx, e.readyTimeout())
	defer cancel()
	for _, o := range objs {
		d, ok := o.(*appsv1.Deployment)
		if !ok {
			continue
		}
		for {
			cur, err := e.Client.AppsV1().Deployments(e.Namespace).Get(ctx, d.Name, metav1.GetOptions{})
			if err == nil && cur.Status.AvailableReplicas >= 1 {
				break
			}
			if why := e.podFailure(ctx, d.Spec.Selector.MatchLabels); why != "" {
				return fmt.Errorf("kubernetes: %s: %s", d.Name, why)
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("kubernetes: %s not available within %v: %w", d.Name, e.readyTimeout(), context.Cause(ctx))
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// podFailure describes the first failed pod matching labels ("" when none has failed).
func (e *Engine) podFailure(ctx context.Context, labels map[string]string) string {
	pods, err := e.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: metav1.FormatLabelSelector(&metav1.LabelSelector{MatchLabels: labels})})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		if why := PodFailure(&p); why != "" {
			return why
		}
	}
	return ""
}

// PodFailure describes why pod failed, from its status: its phase's reason and message, and each
// terminated container's exit code and reason (or a container waiting on an image that cannot be
// pulled); "" for a pod that has not failed.
func PodFailure(pod *corev1.Pod) string {
	var parts []string
	for _, c := range pod.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil && t.ExitCode != 0 {
			parts = append(parts, fmt.Sprintf("container %s exited %d (%s)%s", c.Name, t.ExitCode, t.Reason, suffix(t.Message)))
		}
		if w := c.State.Waiting; w != nil && (w.Reason == "ErrImagePull" || w.Reason == "ImagePullBackOff" || w.Reason == "CrashLoopBackOff" || w.Reason == "CreateContainerConfigError") {
			parts = append(parts, fmt.Sprintf("container %s waiting: %s%s", c.Name, w.Reason, suffix(w.Message)))
		}
	}
	if pod.Status.Phase != corev1.PodFailed && len(parts) == 0 {
		return ""
	}
	head := fmt.Sprintf("pod %s failed", pod.Name)
	if pod.Status.Reason != "" {
		head += ": " + pod.Status.Reason + suffix(pod.Status.Message)
	}
	return strings.Join(append([]string{head}, parts...), "; ")
}

func suffix(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + msg
}

// podOf returns the running pod of a part's Deployment.
func (e *Engine) podOf(ctx context.Context, n Names, role string) (*corev1.Pod, error) {
	pods, err := e.Client.CoreV1().Pods(e.Namespace).List(ctx, metav1.ListOptions{LabelSelector: n.Selector() + "," + LabelRole + "=" + role})
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %s pod: %w", role, err)
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp == nil {
			return p, nil
		}
	}
	return nil, fmt.Errorf("kubernetes: no running %s pod", role)
}

// waitDial waits until hostport accepts a TCP connection from the runner.
func waitDial(ctx context.Context, hostport string, within time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, within)
	defer cancel()
	var last error
	for {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", hostport)
		if err == nil {
			return c.Close()
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s unreachable from the runner within %v: %w", hostport, within, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// remove deletes the configuration run's root (the garbage collector deletes what it owns, in
// the background) and waits, up to a minute, until no object with its labels is left.
func (e *Engine) remove(ctx context.Context, folder string) error {
	e.mu.Lock()
	cr := e.runs[folder]
	delete(e.runs, folder)
	e.mu.Unlock()
	if cr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	bg := metav1.DeletePropagationBackground
	err := e.Client.CoreV1().ConfigMaps(e.Namespace).Delete(ctx, cr.root.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubernetes: delete %s: %w", cr.root.Name, err)
	}
	return e.waitGone(ctx, cr.parts.Names)
}

// Left lists the objects with names's labels still in the namespace (kind/name).
func (e *Engine) Left(ctx context.Context, n Names) ([]string, error) {
	return left(ctx, e.Client, e.Namespace, n.Selector())
}

func left(ctx context.Context, c kubernetes.Interface, ns, sel string) ([]string, error) {
	lo := metav1.ListOptions{LabelSelector: sel}
	var out []string
	var errs []error
	if l, err := c.CoreV1().ConfigMaps(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "configmap/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := c.CoreV1().Services(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "service/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := c.AppsV1().Deployments(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "deployment/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := c.AppsV1().ReplicaSets(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "replicaset/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := c.BatchV1().Jobs(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "job/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	if l, err := c.CoreV1().Pods(ns).List(ctx, lo); err == nil {
		for _, o := range l.Items {
			out = append(out, "pod/"+o.Name)
		}
	} else {
		errs = append(errs, err)
	}
	return out, errors.Join(errs...)
}

func (e *Engine) waitGone(ctx context.Context, n Names) error {
	for {
		objs, err := e.Left(ctx, n)
		if err == nil && len(objs) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubernetes: still there after deleting %s: %v: %w", n.Root(), objs, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}
