package proxy

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"

	toxiclient "github.com/Shopify/toxiproxy/v2/client"

	"github.com/bulkheadlab/bulkhead/supervise"
)

// OwnedPrefix starts the name of every proxy bulkhead creates; OwnedName puts the owning
// process's id and its host's tag right after it, so that a proxy left on an external Toxiproxy
// by a killed run can be recognised and removed later (CleanStale), by a runner on the same host
// only: a process id means nothing on another host.
const OwnedPrefix = "bulkhead-"

// OwnedName names a proxy owned by process pid of this host: "bulkhead-<pid>.<host>-<part>-...",
// e.g. "bulkhead-4242.1f2e3d4c-20261130T090000Z-hypothesis-shared-A", where <host> is HostTag.
// The parts make it unique within the process (run id, configuration folder, dependency).
func OwnedName(pid int, parts ...string) string { return ownedNameOn(HostTag(), pid, parts...) }

func ownedNameOn(host string, pid int, parts ...string) string {
	return OwnedPrefix + strconv.Itoa(pid) + "." + host + "-" + strings.Join(parts, "-")
}

// HostTag is this host's tag in proxy names: 8 hex digits of the FNV-1a hash of its hostname.
// Runners on hosts (or containers) with different hostnames sharing one Toxiproxy server thus
// never take each other's process ids for their own.
func HostTag() string {
	name, err := os.Hostname()
	if err != nil {
		name = "unknown"
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	return fmt.Sprintf("%08x", h.Sum32())
}

// Owner returns the process id and host tag in a name made by OwnedName, and false for any
// other name. A name of an earlier version, "bulkhead-<pid>-<part>..." without a host tag,
// returns host "".
func Owner(name string) (pid int, host string, ok bool) {
	rest, ok := strings.CutPrefix(name, OwnedPrefix)
	if !ok {
		return 0, "", false
	}
	id, _, ok := strings.Cut(rest, "-")
	if !ok || id == "" {
		return 0, "", false
	}
	digits, host, tagged := strings.Cut(id, ".")
	if tagged && !isHostTag(host) {
		return 0, "", false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || strconv.Itoa(pid) != digits {
		return 0, "", false
	}
	return pid, host, true
}

func isHostTag(s string) bool {
	if len(s) != 8 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// OwnerPID returns the process id in a name made by OwnedName, and false for any other name.
func OwnerPID(name string) (int, bool) {
	pid, _, ok := Owner(name)
	return pid, ok
}

// Proxies returns the names of every proxy on the server, sorted, in one GET /proxies.
func (x *External) Proxies(ctx context.Context) ([]string, error) {
	if err := x.check(); err != nil {
		return nil, fmt.Errorf("proxy: list proxies: %w", err)
	}
	var all map[string]toxiclient.Proxy
	if err := x.do(ctx, http.MethodGet, "/proxies", nil, http.StatusOK, &all); err != nil {
		return nil, fmt.Errorf("proxy: list proxies: %w", err)
	}
	names := make([]string, 0, len(all))
	for n := range all {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}

// Remove deletes the named proxy from the server, its toxics first (see Close), whoever created
// it. A proxy already gone is not an error.
func (x *External) Remove(ctx context.Context, name string) error {
	if err := x.check(); err != nil {
		return fmt.Errorf("proxy: remove %q: %w", name, err)
	}
	err := x.removeToxics(ctx, name)
	if err == nil {
		err = x.do(ctx, http.MethodDelete, "/proxies/"+url.PathEscape(name), nil, http.StatusNoContent, nil)
	}
	if err != nil && !errors.Is(err, ErrUnknownProxy) {
		return fmt.Errorf("proxy: remove %q: %w", name, err)
	}
	return nil
}

// Stale is a proxy CleanStale removed and the process that had created it.
type Stale struct {
	Name string
	PID  int
}

// CleanStale removes from the server every proxy named by OwnedName on this host (or by an
// earlier version, without a host tag) whose owner is no longer alive (alive nil means supervise.Alive: a
// process on this host) and returns those it removed. Proxies of live processes, this one
// included, proxies of other hosts' runners and proxies with other names are left alone. It makes one API call to list and two or three per removal, each bounded
// by ctx; it stops at the first error, returning what it removed until then.
func (x *External) CleanStale(ctx context.Context, alive func(pid int) bool) ([]Stale, error) {
	if alive == nil {
		alive = supervise.Alive
	}
	names, err := x.Proxies(ctx)
	if err != nil {
		return nil, err
	}
	here := HostTag()
	var removed []Stale
	for _, n := range names {
		pid, host, ok := Owner(n)
		if !ok || (host != "" && host != here) || pid == os.Getpid() || alive(pid) {
			continue
		}
		if err := x.Remove(ctx, n); err != nil {
			return removed, err
		}
		removed = append(removed, Stale{Name: n, PID: pid})
	}
	return removed, nil
}
