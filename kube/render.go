package kube

import (
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// Labels every object the engine creates carries.
const (
	LabelManagedBy     = "app.kubernetes.io/managed-by"
	ManagedBy          = "bulkhead"
	LabelRun           = "bulkhead.dev/run"
	LabelConfiguration = "bulkhead.dev/configuration"
	LabelRole          = "bulkhead.dev/role"
)

// Ports inside the pods (a Service's port is the same number).
const (
	// ServicePort is where the system under test and every fake dependency listen.
	ServicePort = 8080
	// ToxiproxyAPIPort is the Toxiproxy API's port; dependency i's proxy listens on
	// ToxiproxyProxyPort + i.
	ToxiproxyAPIPort   = 8474
	ToxiproxyProxyPort = 9001
)

// DefaultImage is the bulkhead image the pods run when the engine is given none.
const DefaultImage = "bulkhead:latest"

// Names are a configuration run's object names in its namespace.
type Names struct {
	// Prefix starts every name: "bh-<8 hex>" from the run and configuration.
	Prefix string
	// Run and Configuration are the label values.
	Run, Configuration string
}

// NamesFor returns the names of configuration run folder of run id: short, DNS-safe, distinct
// per run and configuration run.
func NamesFor(run, folder string) Names {
	h := fnv.New32a()
	h.Write([]byte(run + "/" + folder))
	return Names{Prefix: fmt.Sprintf("bh-%08x", h.Sum32()), Run: labelValue(run), Configuration: labelValue(folder)}
}

// labelValue fits s into a label value (63 characters of [A-Za-z0-9._-], alphanumeric at both
// ends).
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '-'
		}
	}
	s = strings.Trim(string(b), "-_.")
	if len(s) > 63 {
		s = strings.Trim(s[len(s)-63:], "-_.")
	}
	return s
}

// Root is the name of the ConfigMap that owns every other object of the configuration run.
func (n Names) Root() string { return n.Prefix }

// Dependency, Toxiproxy, Target and Load name the parts.
func (n Names) Dependency(dep string) string { return n.Prefix + "-dep-" + dnsLabel(dep) }
func (n Names) Toxiproxy() string            { return n.Prefix + "-toxiproxy" }
func (n Names) Target() string               { return n.Prefix + "-sut" }
func (n Names) Load() string                 { return n.Prefix + "-load" }

func dnsLabel(s string) string {
	b := []byte(strings.ToLower(s))
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			b[i] = '-'
		}
	}
	return strings.Trim(string(b), "-")
}

// Labels are the labels of a part with role.
func (n Names) Labels(role string) map[string]string {
	return map[string]string{LabelManagedBy: ManagedBy, LabelRun: n.Run, LabelConfiguration: n.Configuration, LabelRole: role}
}

// Selector selects every object of the configuration run.
func (n Names) Selector() string {
	return fmt.Sprintf("%s=%s,%s=%s,%s=%s", LabelManagedBy, ManagedBy, LabelRun, n.Run, LabelConfiguration, n.Configuration)
}

// ServiceHost is the in-cluster address of a Service of the namespace: name.namespace.svc:port.
func ServiceHost(name, namespace string, port int) string {
	return fmt.Sprintf("%s:%d", ServiceName(name, namespace), port)
}

// ServiceName is the in-cluster DNS name of a Service of the namespace: name.namespace.svc.
func ServiceName(name, namespace string) string {
	return fmt.Sprintf("%s.%s.svc", name, namespace)
}

// Parts describes what to render for one configuration run.
type Parts struct {
	Names     Names
	Namespace string
	Image     string
	Scenario  *scenarios.Scenario
	// Configuration is the configuration the system under test serves.
	Configuration scenarios.Configuration
	// DependencySeeds are the fakes' jitter seeds, by dependency index.
	DependencySeeds []int64
}

// podIPEnv gives a container its pod's IP as $(POD_IP) (the downward API): every server binds it.
var podIPEnv = corev1.EnvVar{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}

// deployment is one replica of a bulkhead command with a Service publishing ports.
func (p Parts) deployment(name, role string, args []string, ports []int32, probePort int32, volumes []corev1.Volume, mounts []corev1.VolumeMount) (*appsv1.Deployment, *corev1.Service) {
	c := corev1.Container{
		Name: role, Image: p.Image, Command: []string{"bulkhead"}, Args: args,
		Env: []corev1.EnvVar{podIPEnv}, VolumeMounts: mounts,
		ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(probePort)}}, PeriodSeconds: 1},
	}
	return p.workload(name, role, c, ports, volumes)
}

// workload is one replica of container c (its ports set from ports) with a Service publishing
// ports, each at the same number as its target port.
func (p Parts) workload(name, role string, c corev1.Container, ports []int32, volumes []corev1.Volume) (*appsv1.Deployment, *corev1.Service) {
	labels := p.Names.Labels(role)
	sel := map[string]string{LabelRun: p.Names.Run, LabelConfiguration: p.Names.Configuration, LabelRole: role}
	var sports []corev1.ServicePort
	c.Ports = nil
	for i, port := range ports {
		pn := "p" + strconv.Itoa(i)
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: pn, ContainerPort: port})
		sports = append(sports, corev1.ServicePort{Name: pn, Port: port, TargetPort: intstr.FromInt32(port)})
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					Containers:                    []corev1.Container{c},
					Volumes:                       volumes,
					TerminationGracePeriodSeconds: ptr.To[int64](5),
				},
			},
		},
	}
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels},
		Spec:       corev1.ServiceSpec{Selector: sel, Ports: sports},
	}
	return d, s
}

// Root renders the configuration run's root ConfigMap: it owns every other object, and holds
// the scenario file when the built-in service serves a scenario that is not a built-in one.
func (p Parts) Root() (*corev1.ConfigMap, error) {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: p.Names.Root(), Namespace: p.Namespace, Labels: p.Names.Labels("root")},
		Data:       map[string]string{},
	}
	if path := p.Scenario.Path; !strings.HasPrefix(path, "builtin:") && p.Configuration.Target == nil {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("scenario file for the system under test's pod: %w", err)
		}
		cm.Data["scenario.yaml"] = string(b)
	}
	return cm, nil
}

// scenarioArg is what `bulkhead serve --scenario` is given in the pod: a built-in name, or the
// root ConfigMap's copy of the file.
func (p Parts) scenarioArg() string {
	if name, ok := strings.CutPrefix(p.Scenario.Path, "builtin:"); ok {
		return name
	}
	return "/scenario/scenario.yaml"
}

// Dependencies renders a Deployment and a Service per fake dependency (those without a real
// upstream: `bulkhead dep`) and one for Toxiproxy (`bulkhead toxiproxy serve`), whose Service
// publishes the API and a port per dependency's proxy.
func (p Parts) Dependencies() []runtime.Object {
	var out []runtime.Object
	tports := []int32{ToxiproxyAPIPort}
	for i, d := range p.Scenario.Dependencies {
		tports = append(tports, int32(ToxiproxyProxyPort+i))
		if d.Upstream != "" {
			continue
		}
		var seed int64
		if i < len(p.DependencySeeds) {
			seed = p.DependencySeeds[i]
		}
		dep, svc := p.deployment(p.Names.Dependency(d.Name), "dependency", []string{"dep", "--name", d.Name,
			"--latency", d.Latency.String(), "--jitter", d.Jitter.String(), "--seed", strconv.FormatInt(seed, 10),
			"--addr", "$(POD_IP):" + strconv.Itoa(ServicePort)}, []int32{ServicePort}, ServicePort, nil, nil)
		dep.Spec.Template.Labels["bulkhead.dev/dependency"] = dnsLabel(d.Name)
		out = append(out, dep, svc)
	}
	dep, svc := p.deployment(p.Names.Toxiproxy(), "toxiproxy", []string{"toxiproxy", "serve", "--listen", "$(POD_IP):" + strconv.Itoa(ToxiproxyAPIPort)},
		tports, ToxiproxyAPIPort, nil, nil)
	return append(out, dep, svc)
}

// Upstream is where Toxiproxy reaches dependency d: its fake's Service, or its real upstream.
func (p Parts) Upstream(d scenarios.Dependency) string {
	if d.Upstream != "" {
		return d.Upstream
	}
	return ServiceHost(p.Names.Dependency(d.Name), p.Namespace, ServicePort)
}

// ProxyHost is where the system under test reaches dependency i's proxy: the Toxiproxy Service.
func (p Parts) ProxyHost(i int) string {
	return ServiceHost(p.Names.Toxiproxy(), p.Namespace, ToxiproxyProxyPort+i)
}

// Target renders the built-in system under test (`bulkhead serve` with the configuration's
// pools), told to call each dependency at deps[name] (its proxy).
func (p Parts) Target(deps map[string]string) []runtime.Object {
	args := []string{"serve", "--scenario", p.scenarioArg(), "--configuration", p.Configuration.Name, "--addr", "$(POD_IP):" + strconv.Itoa(ServicePort)}
	names := make([]string, 0, len(deps))
	for n := range deps {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		args = append(args, "--dep", n+"="+deps[n])
	}
	var vols []corev1.Volume
	var mounts []corev1.VolumeMount
	if !strings.HasPrefix(p.Scenario.Path, "builtin:") {
		vols = []corev1.Volume{{Name: "scenario", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: p.Names.Root()}}}}}
		mounts = []corev1.VolumeMount{{Name: "scenario", MountPath: "/scenario", ReadOnly: true}}
	}
	d, s := p.deployment(p.Names.Target(), "target", args, []int32{ServicePort}, ServicePort, vols, mounts)
	return []runtime.Object{d, s}
}

// TargetHost is the DNS name of the system under test's Service: an image target's {host}.
func (p Parts) TargetHost() string { return ServiceName(p.Names.Target(), p.Namespace) }

// ImageTarget renders an image target (its placeholders filled, target.ResolveImage) as a
// Deployment of its image, with its entrypoint, args and env (and POD_IP, first, from the
// downward API), its port and named ports, ready when its ready URL's path answers on its port
// (else when its port accepts connections), its cpu and memory requested and limited alike, and a
// Service publishing those ports.
func (p Parts) ImageTarget(r target.ImageRun) []runtime.Object {
	ports := []int32{int32(r.Port)}
	for _, n := range slices.Sorted(maps.Keys(r.Ports)) {
		ports = append(ports, int32(r.Ports[n]))
	}
	env := []corev1.EnvVar{podIPEnv}
	for _, k := range slices.Sorted(maps.Keys(r.Env)) {
		env = append(env, corev1.EnvVar{Name: k, Value: r.Env[k]})
	}
	probe := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(r.Port)}}
	if path, port, ok := r.ReadyProbe(); ok {
		probe = corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromInt(port)}}
	}
	c := corev1.Container{Name: "target", Image: r.Image, Command: r.Entrypoint, Args: r.Args, Env: env,
		ReadinessProbe: &corev1.Probe{ProbeHandler: probe, PeriodSeconds: 1}}
	res := corev1.ResourceList{}
	for name, q := range map[corev1.ResourceName]string{corev1.ResourceCPU: r.CPU, corev1.ResourceMemory: r.Memory} {
		if v, err := resource.ParseQuantity(q); q != "" && err == nil {
			res[name] = v
		}
	}
	if len(res) > 0 {
		c.Resources = corev1.ResourceRequirements{Requests: res, Limits: res.DeepCopy()}
	}
	d, s := p.workload(p.Names.Target(), "target", c, ports, nil)
	return []runtime.Object{d, s}
}

// Load renders the load: a ConfigMap with the attack spec and an Indexed Job of shards pods,
// each running `bulkhead attack --segment $(JOB_COMPLETION_INDEX)/shards --stream-results`, its
// raw files in an emptyDir and streamed over its log. timeout bounds the Job
// (activeDeadlineSeconds); no pod is retried (a failed shard fails the configuration).
func (p Parts) Load(spec []byte, shards int, timeout time.Duration) []runtime.Object {
	name := p.Names.Load()
	labels := p.Names.Labels("load")
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels},
		Data:       map[string]string{"attack.json": string(spec)},
	}
	job := &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: p.Namespace, Labels: labels},
		Spec: batchv1.JobSpec{
			Completions: ptr.To(int32(shards)), Parallelism: ptr.To(int32(shards)),
			CompletionMode:        ptr.To(batchv1.IndexedCompletion),
			BackoffLimit:          ptr.To[int32](0),
			ActiveDeadlineSeconds: ptr.To(int64(timeout.Seconds()) + 1),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{
						Name: "attack", Image: p.Image, Command: []string{"bulkhead"},
						Args: []string{"attack", "--segment", "$(JOB_COMPLETION_INDEX)/" + strconv.Itoa(shards),
							"--dir", "/results", "--stream-results", "/spec/attack.json"},
						Env: []corev1.EnvVar{{Name: "JOB_COMPLETION_INDEX", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
							FieldPath: "metadata.annotations['" + batchv1.JobCompletionIndexAnnotation + "']"}}}},
						VolumeMounts: []corev1.VolumeMount{{Name: "spec", MountPath: "/spec", ReadOnly: true}, {Name: "results", MountPath: "/results"}},
					}},
					Volumes: []corev1.Volume{
						{Name: "spec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: name}}}},
						{Name: "results", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}
	return []runtime.Object{cm, job}
}
