// Package k8stest gives tests a real Kubernetes control plane on this machine: etcd,
// kube-apiserver and kube-controller-manager, built by scripts/k8s-control-plane.sh into a
// cache folder reused across runs, started on free loopback ports and torn down with the test.
// There is no container runtime, so pods never run by themselves: KubeletStandIn plays the
// kubelet's part (and the scheduler's, kube-proxy's and cluster DNS's, as little as the tests
// need), running each pod's container command as a local process. Only tests import this
// package.
package k8stest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// ControlPlane is a running etcd, kube-apiserver and kube-controller-manager.
type ControlPlane struct {
	// Config reaches the API server as a cluster administrator (a static token).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file with the same credentials, for code that
	// loads its configuration the usual way (KUBECONFIG).
	Kubeconfig string
	// Client is a clientset for Config.
	Client kubernetes.Interface
	// Dir holds the control plane's data and logs.
	Dir string
}

// Binaries returns the folder holding etcd, kube-apiserver and kube-controller-manager,
// running scripts/k8s-control-plane.sh to build them when the cache is empty (several minutes
// the first time). When they cannot be had the test is skipped, or failed in CI (testenv).
func Binaries(t testing.TB) string {
	t.Helper()
	script := filepath.Join(repoRoot(t), "scripts", "k8s-control-plane.sh")
	if out, err := exec.Command(script, "--check").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	t.Logf("building the control plane with %s (cold: several minutes)", script)
	cmd := exec.Command(script)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		testenv.SkipOrFail(t, "no Kubernetes control plane: %s: %v", script, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("k8stest: cannot find its own source file")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// token is the administrator's static bearer token; only loopback ever sees it.
const token = "bulkhead-test-admin"

// Start starts a control plane for the test and stops it (every process, by its pid) when the
// test ends. It blocks until the API server's readyz passes (about 5-20 s), failing the test
// with the tail of the logs otherwise.
func Start(t testing.TB) *ControlPlane {
	t.Helper()
	bin := Binaries(t)
	dir := t.TempDir()
	cp := &ControlPlane{Dir: dir}
	ports := freePorts(t, 3)
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	start(t, dir, "etcd", filepath.Join(bin, "etcd"),
		"--data-dir", filepath.Join(dir, "etcd"),
		"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
		"--listen-peer-urls", "http://127.0.0.1:"+strconv.Itoa(ports[1]),
		"--initial-advertise-peer-urls", "http://127.0.0.1:"+strconv.Itoa(ports[1]),
		"--initial-cluster", "default=http://127.0.0.1:"+strconv.Itoa(ports[1]),
		"--log-level", "warn")

	key := filepath.Join(dir, "sa.key")
	pub := filepath.Join(dir, "sa.pub")
	writeServiceAccountKey(t, key, pub)
	tokens := filepath.Join(dir, "tokens.csv")
	if err := os.WriteFile(tokens, []byte(token+",admin,admin-uid,system:masters\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	host := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	start(t, dir, "kube-apiserver", filepath.Join(bin, "kube-apiserver"),
		"--etcd-servers", etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1",
		"--secure-port", strconv.Itoa(ports[2]),
		"--cert-dir", filepath.Join(dir, "certs"),
		"--token-auth-file", tokens,
		"--authorization-mode", "RBAC",
		"--service-cluster-ip-range", "10.0.0.0/24",
		"--service-account-issuer", "https://kubernetes.default.svc",
		"--service-account-key-file", pub,
		"--service-account-signing-key-file", key,
		// No service account tokens are mounted into pods: the stand-in has no volumes for them.
		"--disable-admission-plugins", "ServiceAccount",
		"--allow-privileged=true",
		// The stand-in kubelet is reached at its node's InternalIP (127.0.0.1), never by host name.
		"--kubelet-preferred-address-types", "InternalIP")

	cp.Config = &rest.Config{Host: host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{Insecure: true}, QPS: 100, Burst: 200}
	waitReady(t, dir, host)
	cp.Kubeconfig = filepath.Join(dir, "kubeconfig")
	kc := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: %s
    insecure-skip-tls-verify: true
users:
- name: admin
  user:
    token: %s
contexts:
- name: test
  context:
    cluster: test
    user: admin
    namespace: default
current-context: test
`, host, token)
	if err := os.WriteFile(cp.Kubeconfig, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	start(t, dir, "kube-controller-manager", filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig", cp.Kubeconfig,
		"--leader-elect=false",
		"--bind-address", "127.0.0.1", "--secure-port", "0",
		"--service-account-private-key-file", key,
		"--use-service-account-credentials=false",
		// The stand-in node has no heartbeat: nothing should evict its pods for that.
		"--controllers", "*,-node-lifecycle-controller,-service-lb-controller,-cloud-node-lifecycle-controller,-node-route-controller,-persistentvolume-attach-detach-controller")
	var err error
	if cp.Client, err = kubernetes.NewForConfig(cp.Config); err != nil {
		t.Fatal(err)
	}
	return cp
}

// start runs one control-plane process, its output in dir/<name>.log, stopped by its pid (its
// process group) when the test ends.
func start(t testing.TB, dir, name, path string, args ...string) {
	t.Helper()
	log, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		log.Close()
	})
}

// waitReady polls the API server's /readyz until it answers 200, within a minute.
func waitReady(t testing.TB, dir, host string) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	deadline := time.Now().Add(time.Minute)
	var last string
	for time.Now().Before(deadline) {
		req, _ := http.NewRequest(http.MethodGet, host+"/readyz", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(200 * time.Millisecond)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "kube-apiserver.log"))
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	t.Fatalf("kube-apiserver not ready within a minute (last: %s); its log ends:\n%s", last, b)
}

// freePorts returns n distinct free loopback ports.
func freePorts(t testing.TB, n int) []int {
	t.Helper()
	var out []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

func writeServiceAccountKey(t testing.TB, keyPath, pubPath string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubPath, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Ctx is a context for a test's API calls, cancelled when the test ends.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}
