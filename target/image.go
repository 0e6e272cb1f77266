package target

import (
	"context"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Image is the kind of a target run from a container image, for an engine that runs images (the
// Kubernetes engine renders it as a Deployment and a Service). The local engine runs no
// containers and refuses it.
//
//	target:
//	  image: registry.example/orders:v3
//	  args: [--listen, "$(POD_IP):{port}", --payments, "http://{dep.payments}"]
//	  port: 8080
//	  ports: {admin: 9090}
//	  ready: http://{host}:{port}/healthz
//	  metrics: http://{host}:{port:admin}/metrics
//
// {host} is the name the runner and the load reach it at (the Service's DNS name), {port} its
// port and {port:NAME} the ports it names, fixed by the scenario since the container has its own
// network; {dep.NAME} is where it calls dependency NAME (its proxy). url, left out, is
// http://{host}:{port}; ready and metrics, when written, are on {host}.
type Image struct{}

// ImageParams are an image target's own keys.
type ImageParams struct {
	// Image is the container image the service runs from (registry/name:tag or @digest).
	Image string `yaml:"image" scenario:"required"`
	// Entrypoint is the container's command (Kubernetes' command:); left out, the image's own
	// ENTRYPOINT.
	Entrypoint []string `yaml:"entrypoint,omitempty"`
	// Args are the container's arguments (Kubernetes' args:); left out, the image's own CMD.
	// $(POD_IP) is the pod's IP (the engine sets POD_IP), $(NAME) another variable of env.
	Args []string `yaml:"args,omitempty"`
	// Env adds variables to the container's environment.
	Env map[string]string `yaml:"env,omitempty"`
	// Port is the port the service listens on in its container ({port}): the Service publishes
	// it and the load is sent to it.
	Port int `yaml:"port" scenario:"required"`
	// Ports are the container's other ports, by name ({port:NAME}: a metrics or admin listener);
	// the Service publishes them too.
	Ports map[string]int `yaml:"ports,omitempty"`
	// CPU and Memory, when written, are the container's resources in Kubernetes' quantities
	// ("500m", "1", "256Mi"), requested and limited alike (the Guaranteed class): the service
	// runs on the share it has in production, and a node with spare cores cannot lend one
	// configuration more than another. Left out, the namespace's defaults.
	CPU    string `yaml:"cpu,omitempty"`
	Memory string `yaml:"memory,omitempty"`
}

// quantity matches a Kubernetes resource quantity as a scenario writes one: a decimal number
// with an optional SI or binary suffix (the Kubernetes engine parses it; this refuses typos at
// load time).
var quantity = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$`)

func init() { Register(Image{}) }

var _ Kind = Image{}

func (Image) Name() string { return "image" }
func (Image) Key() string  { return "image" }
func (Image) Doc() string {
	return "your service from a container image, run by an engine that runs images (--engine kubernetes: a Deployment and a Service)"
}
func (Image) NewParams() any { return &ImageParams{} }

// Remote is false: the engine starts it for each configuration run.
func (Image) Remote() bool { return false }

var _ FixedPorts = Image{}

// Ports returns the container's ports: {port} under "" and each of ports: under its name.
func (Image) Ports(c *Config) map[string]int {
	p := imageParams(c)
	out := map[string]int{"": p.Port}
	for name, n := range p.Ports {
		out[name] = n
	}
	return out
}

func imageParams(c *Config) *ImageParams {
	if p, ok := c.Params.(*ImageParams); ok && p != nil {
		return p
	}
	return &ImageParams{}
}

// HostPlaceholder is the placeholder an image target's url, ready and metrics name its host by.
const HostPlaceholder = "{host}"

// Check refuses an image target without an image or a port, ports out of range or taken twice,
// {port:NAME} for a NAME ports does not have, and url, ready or metrics on another host than
// {host} (the engine knows only its own Service).
func (Image) Check(c *Config) []Problem {
	p := imageParams(c)
	var out []Problem
	if p.Image == "" {
		out = append(out, Problem{"image", "needs the image the service runs from"})
	}
	if p.Port < 1 || p.Port > 65535 {
		out = append(out, Problem{"port", "needs the port the service listens on in its container (1-65535)"})
	}
	for _, q := range []struct{ key, val, eg string }{{"cpu", p.CPU, "500m or 2"}, {"memory", p.Memory, "256Mi or 1Gi"}} {
		if q.val != "" && !quantity.MatchString(q.val) {
			out = append(out, Problem{q.key, fmt.Sprintf("%q is not a Kubernetes quantity (such as %s)", q.val, q.eg)})
		}
	}
	seen := map[int]string{p.Port: "port"}
	for _, name := range slices.Sorted(maps.Keys(p.Ports)) {
		n := p.Ports[name]
		key := "ports." + name
		switch {
		case n < 1 || n > 65535:
			out = append(out, Problem{key, fmt.Sprintf("%d is not a port (1-65535)", n)})
		case seen[n] != "":
			out = append(out, Problem{key, fmt.Sprintf("%d is %s already", n, seen[n])})
		default:
			seen[n] = key
		}
	}
	strs := c.Strings()
	for _, key := range slices.Sorted(maps.Keys(strs)) {
		for _, name := range PortNames(strs[key]) {
			if _, ok := p.Ports[name]; name != "" && !ok {
				out = append(out, Problem{key, fmt.Sprintf("{port:%s}: ports has no %s", name, name)})
			}
		}
	}
	for _, f := range []struct{ key, val string }{{"url", c.URL}, {"ready", c.Ready}, {"metrics", c.Metrics}} {
		if f.val == "" {
			continue
		}
		if !onHost(f.val) {
			out = append(out, Problem{f.key, fmt.Sprintf("%q: an image target is reached through its Service: write http://{host}:{port}/...", f.val)})
		}
	}
	return out
}

// onHost reports whether u is an http(s) URL on {host}.
func onHost(u string) bool {
	for _, scheme := range []string{"http://", "https://"} {
		if rest, ok := strings.CutPrefix(u, scheme+HostPlaceholder); ok {
			return rest == "" || rest[0] == ':' || rest[0] == '/'
		}
	}
	return false
}

// Start refuses: the image runs only where an engine runs containers.
func (Image) Start(_ context.Context, spec Spec) (Target, error) {
	img := "?"
	if spec.Config != nil {
		img = imageParams(spec.Config).Image
	}
	return nil, fmt.Errorf("%s: an image target (%s) runs only on an engine that runs containers; run with --engine kubernetes (docs/kubernetes.md), or give a command: or url: target", who(spec), img)
}

// ImageRun is an image target as an engine runs it, every placeholder filled.
type ImageRun struct {
	Image      string
	Entrypoint []string
	Args       []string
	// Env is the container's own variables, filled (the engine adds POD_IP).
	Env map[string]string
	// Port and Ports are the container's ports, as written.
	Port  int
	Ports map[string]int
	// URL, Ready and Metrics are where the runner and the load reach it ("" when not written).
	URL, Ready, Metrics string
	// CPU and Memory are the container's resources as written ("" for none).
	CPU, Memory string
}

// ResolveImage fills the placeholders of image target c, reached at host (the name of the
// engine's Service for it) and calling each dependency at deps[name] (a URL or host:port: its
// proxy). The error names the key of the first placeholder it cannot fill.
func ResolveImage(c *Config, host string, deps map[string]string) (ImageRun, error) {
	p := imageParams(c)
	ports := map[string]string{"": strconv.Itoa(p.Port)}
	for n, v := range p.Ports {
		ports[n] = strconv.Itoa(v)
	}
	dep := depAddrs(Spec{Dependencies: deps})
	exp := func(key, s string) (string, error) {
		v, err := ExpandAt(s, host, ports, dep)
		if err != nil {
			return "", fmt.Errorf("target.%s: %w", key, err)
		}
		return v, nil
	}
	r := ImageRun{Image: p.Image, Port: p.Port, Ports: maps.Clone(p.Ports), Env: map[string]string{}, CPU: p.CPU, Memory: p.Memory}
	var err error
	for i, a := range p.Entrypoint {
		v, err := exp(fmt.Sprintf("entrypoint[%d]", i), a)
		if err != nil {
			return r, err
		}
		r.Entrypoint = append(r.Entrypoint, v)
	}
	for i, a := range p.Args {
		v, err := exp(fmt.Sprintf("args[%d]", i), a)
		if err != nil {
			return r, err
		}
		r.Args = append(r.Args, v)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		if r.Env[k], err = exp("env."+k, p.Env[k]); err != nil {
			return r, err
		}
	}
	u := c.URL
	if u == "" {
		u = "http://" + HostPlaceholder + ":{port}"
	}
	if r.URL, err = exp("url", u); err != nil {
		return r, err
	}
	r.URL = strings.TrimSuffix(r.URL, "/")
	if r.Ready, err = exp("ready", c.Ready); err != nil {
		return r, err
	}
	if r.Metrics, err = exp("metrics", c.Metrics); err != nil {
		return r, err
	}
	return r, nil
}

// ReadyProbe is where a readiness probe of r's container asks: the path and port of its ready
// URL; ok is false when r has none (the probe then only connects to Port).
func (r ImageRun) ReadyProbe() (path string, port int, ok bool) {
	if r.Ready == "" {
		return "", 0, false
	}
	u, err := url.Parse(r.Ready)
	if err != nil {
		return "", 0, false
	}
	port, err = strconv.Atoi(u.Port())
	if err != nil {
		port = 80
	}
	path = u.RequestURI()
	return path, port, true
}

// ReachImage returns the image target r, which an engine has started (where says where, for the
// report: "Deployment ns/name"), as the runner's Target, once it answers: its ready URL with 2xx,
// else its URL with anything, within DefaultReadyTimeout or ctx. Its resources are scraped from
// its metrics URL (through the Service) with c's scrape settings.
func ReachImage(ctx context.Context, spec Spec, r ImageRun, where string) (Target, error) {
	c := spec.Config
	out := c.Outcomes
	rec := Record{Kind: Image{}.Name(), Image: r.Image, Command: append(slices.Clone(r.Entrypoint), r.Args...), Env: r.Env,
		URL: r.URL, Ready: r.Ready, Metrics: r.Metrics, Outcomes: &out}
	rec.Description = "image " + r.Image
	if where != "" {
		rec.Description += " (" + where + ")"
	}
	return reach(ctx, spec, rec, c.Scrape)
}
