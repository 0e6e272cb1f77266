package target

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Placeholders in a target's strings (command, env, url, ready, metrics), filled when it starts:
//
//	{port}        a port free on the runner's host, where the service listens
//	{port:NAME}   another free port, one per NAME (a stats page, an admin listener)
//	{dep.NAME}    the host:port dependency NAME is reached at (its proxy)
//	{host}        the host the runner reaches the target at: 127.0.0.1 for a command target,
//	              its Service's name for an image target
//
// A URL target runs already, so its host and ports are fixed: it takes {dep.NAME} only. An image
// target's ports are its container's, fixed by the scenario (ImageParams).
var placeholder = regexp.MustCompile(`\{([^{}]*)\}`)

// PortNames returns the port names the strings use, in order of first use: "" for {port},
// "stats" for {port:stats}.
func PortNames(strs ...string) []string {
	var out []string
	for _, s := range strs {
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			if name, ok := portName(m[1]); ok && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	return out
}

func portName(key string) (string, bool) {
	if key == "port" {
		return "", true
	}
	if name, ok := strings.CutPrefix(key, "port:"); ok && name != "" {
		return name, true
	}
	return "", false
}

// Expand fills the placeholders of s: {port} with ports[""], {port:NAME} with ports[NAME],
// {dep.NAME} with deps[NAME]. It returns an error naming the first placeholder it cannot fill
// ({host} among them: see ExpandAt).
func Expand(s string, ports, deps map[string]string) (string, error) {
	return ExpandAt(s, "", ports, deps)
}

// ExpandAt is Expand, with {host} filled with host too (refused when host is "").
func ExpandAt(s, host string, ports, deps map[string]string) (string, error) {
	var bad string
	out := placeholder.ReplaceAllStringFunc(s, func(m string) string {
		key := m[1 : len(m)-1]
		if key == "host" && host != "" {
			return host
		}
		if name, ok := portName(key); ok {
			if p, ok := ports[name]; ok {
				return p
			}
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

// Probe fills every placeholder of s with "1", for checking the shape of a URL before a run.
func Probe(s string) string { return placeholder.ReplaceAllString(s, "1") }
