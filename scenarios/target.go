package scenarios

import (
	"bytes"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/bulkheadlab/bulkhead/outcome"
	"github.com/bulkheadlab/bulkhead/scrape"
)

// Target kinds (Target.Kind).
const (
	TargetBuiltIn = "builtin"
	TargetCommand = "command"
	TargetURL     = "url"
)

// Target is a configuration's system under test when it is not the built-in service: a command
// the runner starts (Command, reached at URL when given) or a service already running (URL
// alone). Placeholders in Command, Env, Ready, Metrics and URL are filled when the target starts:
// {port} is a port free on the runner's host for the service, {dep.NAME} the host:port dependency
// NAME is reached at (its proxy).
type Target struct {
	// Command is the argv started for this configuration only, stopped when it ends.
	Command []string `yaml:"command,omitempty" json:"command,omitempty"`
	// URL is the base URL the load is sent to. Without Command it is a service already running;
	// with Command it is where the started service is reached, and may use {port}: a command
	// that runs the service on another host or network namespace ("ssh host ...", "ip netns exec
	// ns ...") names that host here. "" with Command means http://127.0.0.1:{port}.
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// Dir is Command's working directory, relative to the scenario file; "" means its folder.
	Dir string `yaml:"dir,omitempty" json:"dir,omitempty"`
	// Env adds variables to Command's environment.
	Env map[string]string `yaml:"env,omitempty" json:"env,omitempty"`
	// Ready is polled until it answers 2xx before the load starts; "" means the base URL
	// answering anything (a URL target) or nothing (a command target).
	Ready string `yaml:"ready,omitempty" json:"ready,omitempty"`
	// Metrics is a Prometheus text endpoint scraped at sample_every into resources.csv.
	Metrics string `yaml:"metrics,omitempty" json:"metrics,omitempty"`
	// Scrape tunes the scraping of Metrics (timeout, own mappings).
	Scrape scrape.Config `yaml:"scrape,omitempty" json:"scrape,omitempty"`
	// Outcomes maps the target's responses to outcome classes (defaults when empty).
	Outcomes outcome.Mapping `yaml:"outcomes,omitempty" json:"outcomes,omitempty"`
}

// Kind is TargetCommand, TargetURL, or TargetBuiltIn for a nil Target.
func (t *Target) Kind() string {
	switch {
	case t == nil:
		return TargetBuiltIn
	case len(t.Command) > 0:
		return TargetCommand
	default:
		return TargetURL
	}
}

var yamlLineRef = regexp.MustCompile(`line \d+: `)

var targetPlaceholder = regexp.MustCompile(`\{([^{}]*)\}`)

// Expand fills the placeholders of s: {port} with port, {dep.NAME} with deps[NAME]. It returns
// an error naming the first unknown placeholder.
func Expand(s, port string, deps map[string]string) (string, error) {
	var bad string
	out := targetPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
		key := m[1 : len(m)-1]
		if key == "port" && port != "" {
			return port
		}
		if name, ok := strings.CutPrefix(key, "dep."); ok {
			if a, ok := deps[name]; ok {
				return a
			}
		}
		if bad == "" {
			bad = m
		}
		return m
	})
	if bad != "" {
		return "", fmt.Errorf("unknown placeholder %s", bad)
	}
	return out, nil
}

// target decodes a configuration's target: mapping. scrape and outcomes are decoded strictly
// into their packages' own types (one definition per concept).
func (d *decoder) target(n *yaml.Node, path string, c *Configuration) {
	t := &Target{}
	ok := d.mapping(n, path, []field{
		{name: "command", decode: d.strList(&t.Command)},
		{name: "url", decode: d.str(&t.URL)},
		{name: "dir", decode: d.str(&t.Dir)},
		{name: "env", decode: func(n *yaml.Node, path string) { d.strict(n, path, &t.Env) }},
		{name: "ready", decode: d.str(&t.Ready)},
		{name: "metrics", decode: d.str(&t.Metrics)},
		{name: "scrape", decode: func(n *yaml.Node, path string) {
			if d.strict(n, path, &t.Scrape) {
				if err := scrape.Validate(join(path, "resources"), t.Scrape.Resources); err != nil {
					d.addAt(deref(n).Line, path, "%v", err)
				}
				if t.Scrape.Timeout < 0 {
					d.add(join(path, "timeout"), "must not be negative")
				}
			}
		}},
		{name: "outcomes", decode: func(n *yaml.Node, path string) {
			if d.strict(n, path, &t.Outcomes) {
				if err := t.Outcomes.Validate(path); err != nil {
					d.addAt(deref(n).Line, path, "%v", err)
				}
			}
		}},
	})
	if !ok {
		return
	}
	c.Target = t
	switch {
	case len(t.Command) == 0 && t.URL == "":
		d.add(path, "needs command (a service to start) or url (one already running)")
	case len(t.Command) == 0 && (t.Dir != "" || len(t.Env) > 0):
		d.add(path, "dir and env are for command targets; a url target is already running")
	}
	for _, f := range []struct{ key, val string }{{"url", t.URL}, {"ready", t.Ready}, {"metrics", t.Metrics}} {
		if f.val == "" {
			continue
		}
		probe := targetPlaceholder.ReplaceAllString(f.val, "1")
		if u, err := url.Parse(probe); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			d.add(join(path, f.key), "%q is not an http(s) URL", f.val)
		}
	}
}

// strict decodes n into v with yaml's known-fields check, reporting an unknown or mistyped key
// at n's line under path.
func (d *decoder) strict(n *yaml.Node, path string, v any) bool {
	n = deref(n)
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	if err := enc.Encode(n); err != nil {
		d.addAt(n.Line, path, "%v", err)
		return false
	}
	dec := yaml.NewDecoder(&buf)
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		msg := err.Error()
		if te, ok := err.(*yaml.TypeError); ok {
			msg = strings.Join(te.Errors, "; ")
		}
		// The line numbers are the re-encoded node's; the node's own line is the one to show.
		msg = yamlLineRef.ReplaceAllString(strings.TrimPrefix(msg, "yaml: "), "")
		d.addAt(n.Line, path, "%s", msg)
		return false
	}
	return true
}

// checkTargets checks what needs the whole scenario: placeholders name known dependencies, and
// listen addresses are host:port and distinct.
func (s *Scenario) checkTargets(p *problems) {
	deps := map[string]string{}
	for _, d := range s.Dependencies {
		deps[d.Name] = "h:1"
	}
	var listens []string
	for i, d := range s.Dependencies {
		for _, f := range []struct{ key, val string }{{"listen", d.Listen}, {"upstream", d.Upstream}} {
			if f.val == "" {
				continue
			}
			path := fmt.Sprintf("dependencies[%d].%s", i, f.key)
			if _, port, err := net.SplitHostPort(f.val); err != nil || port == "" {
				p.add(path, "%q is not host:port", f.val)
			}
		}
		if d.Listen != "" {
			if slices.Contains(listens, d.Listen) {
				p.add(fmt.Sprintf("dependencies[%d].listen", i), "%s is already another dependency's", d.Listen)
			}
			listens = append(listens, d.Listen)
		}
		if d.Upstream != "" && (d.Latency != 0 || d.Jitter != 0) {
			p.add(fmt.Sprintf("dependencies[%d].upstream", i), "a real upstream has its own latency; latency and jitter are for the built-in fake")
		}
	}
	for i, c := range s.Configurations {
		t := c.Target
		if t == nil {
			continue
		}
		path := fmt.Sprintf("configurations[%d].target", i)
		check := func(field, v string) {
			if _, err := Expand(v, "1", deps); err != nil {
				p.add(join(path, field), "%v (known: {port}, {dep.NAME} for a dependency NAME)", err)
			}
		}
		for j, a := range t.Command {
			check(fmt.Sprintf("command[%d]", j), a)
		}
		for k, v := range t.Env {
			check("env."+k, v)
		}
		check("ready", t.Ready)
		check("metrics", t.Metrics)
		check("url", t.URL)
		if len(t.Command) == 0 && strings.Contains(t.URL, "{port}") {
			p.add(join(path, "url"), "{port} is for command targets; a url target's port is fixed")
		}
	}
}
