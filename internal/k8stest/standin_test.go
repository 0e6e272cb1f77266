package k8stest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/bulkheadlab/bulkhead/internal/testenv"
)

// waitPod polls the pod until done says so, within 30 s.
func waitPod(t *testing.T, cp *ControlPlane, ns, name string, done func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		p, err := cp.Client.CoreV1().Pods(ns).Get(Ctx(t), name, metav1.GetOptions{})
		if err == nil && done(p) {
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("pod %s/%s did not get there within 30 s", ns, name)
	return nil
}

// A pod created through the API is bound, run as a local process with its env and $(VAR)
// expansion, reported with its exit code, and its output read back through the API server's
// pods/log; an unknown command fails the pod with a reason, and a deleted pod goes away.
func TestKubeletStandInRunsPods(t *testing.T) {
	cp := Start(t)
	StartKubeletStandIn(t, cp, "standin", map[string]string{"sh": "/bin/sh"})
	ctx := Ctx(t)
	pods := cp.Client.CoreV1().Pods("default")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "hello", Annotations: map[string]string{"who": "annotated"}}, Spec: corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "main", Image: "any", Command: []string{"sh", "-c", "echo hello $(WHO) from $NS; exit 3"},
			Env: []corev1.EnvVar{{Name: "WHO", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.annotations['who']"}}},
				{Name: "NS", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}}}}}}}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitPod(t, cp, "default", "hello", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if cs := got.Status.ContainerStatuses; len(cs) != 1 || cs[0].State.Terminated == nil || cs[0].State.Terminated.ExitCode != 3 {
		t.Fatalf("container statuses %+v; want exit code 3", cs)
	}
	if got.Spec.NodeName != "standin" || !strings.HasPrefix(got.Status.PodIP, "127.0.1.") {
		t.Fatalf("node %q, pod IP %q; want the stand-in's, on loopback", got.Spec.NodeName, got.Status.PodIP)
	}
	rc, err := pods.GetLogs("hello", &corev1.PodLogOptions{Container: "main"}).Stream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(rc)
	rc.Close()
	if string(b) != "hello annotated from default\n" {
		t.Fatalf("pods/log = %q", b)
	}

	bad := pod.DeepCopy()
	bad.Name = "no-such-command"
	bad.Spec.Containers[0].Command = []string{"kubectl-nonexistent"}
	if _, err := pods.Create(ctx, bad, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got = waitPod(t, cp, "default", "no-such-command", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if got.Status.Reason != "ErrImagePull" {
		t.Fatalf("reason %q, message %q; want ErrImagePull", got.Status.Reason, got.Status.Message)
	}

	long := pod.DeepCopy()
	long.Name = "sleeper"
	long.Spec.Containers[0].Command = []string{"sh", "-c", "sleep 600"}
	if _, err := pods.Create(ctx, long, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, cp, "default", "sleeper", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	if err := pods.Delete(ctx, "sleeper", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := pods.Get(ctx, "sleeper", metav1.GetOptions{}); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a deleted pod was still there after 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A Service's name resolves, on this machine, to the IP of a ready pod behind it, through the
// stand-in's /etc/hosts lines.
func TestKubeletStandInResolvesServices(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.SkipOrFail(t, "no python3 to serve HTTP from a pod: %v", err)
	}
	cp := Start(t)
	StartKubeletStandIn(t, cp, "standin", map[string]string{"python3": py})
	ctx := Ctx(t)
	labels := map[string]string{"app": "web"}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Labels: labels}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "web", Image: "any", Command: []string{"python3", "-m", "http.server", "--bind", "$(POD_IP)", "8080"},
			Env:            []corev1.EnvVar{{Name: "POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "status.podIP"}}}},
			Ports:          []corev1.ContainerPort{{ContainerPort: 8080}},
			ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt(8080)}}}}}}}
	if _, err := cp.Client.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web"}, Spec: corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 8080, TargetPort: intstr.FromInt(8080)}}}}
	if _, err := cp.Client.CoreV1().Services("default").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := waitPod(t, cp, "default", "web", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://web.default.svc:8080/")
		if err == nil {
			resp.Body.Close()
			addrs, _ := net.LookupHost("web.default.svc")
			if len(addrs) != 1 || addrs[0] != got.Status.PodIP {
				t.Fatalf("web.default.svc resolves to %v; want the pod's %s", addrs, got.Status.PodIP)
			}
			return
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(hostsFile)
			t.Fatalf("the Service did not answer within 30 s: %v; /etc/hosts:\n%s", err, b)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// The stand-in's /etc/hosts lines replace its earlier ones and a dead stand-in's, and keep every
// other line (a live stand-in's of another process among them); the file is replaced whole, with
// its mode, never left half-written for a resolver.
func TestWriteHostsKeepsOtherLines(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hosts")
	old := hostsFile
	hostsFile = file
	t.Cleanup(func() { hostsFile = old })
	initial := "127.0.0.1 localhost\n" +
		"10.0.0.9 gone.default.svc " + hostsMarker + " 999999999\n" + // a dead stand-in's
		"10.0.0.1 other.default.svc " + hostsMarker + " 1\n" // a live one's (pid 1)
	if err := os.WriteFile(file, []byte(initial), 0o640); err != nil {
		t.Fatal(err)
	}
	k := &KubeletStandIn{hosts: map[string]string{}}
	k.writeHosts(map[string]string{"web.default.svc": "127.0.0.5"})
	k.writeHosts(map[string]string{"web.default.svc": "127.0.0.6"})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	mine := fmt.Sprintf("%s %d", hostsMarker, os.Getpid())
	want := "127.0.0.1 localhost\n10.0.0.1 other.default.svc " + hostsMarker + " 1\n127.0.0.6 web.default.svc " + mine + "\n"
	if string(b) != want {
		t.Errorf("hosts file:\n%s\nwant:\n%s", b, want)
	}
	if st, _ := os.Stat(file); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's own 0640", st.Mode().Perm())
	}
	k.writeHosts(nil)
	if b, _ := os.ReadFile(file); strings.Contains(string(b), mine) {
		t.Errorf("after the stand-in's end its lines remain:\n%s", b)
	}
}
