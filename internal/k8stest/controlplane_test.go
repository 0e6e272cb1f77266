package k8stest

import (
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// The control plane is real: the API server refuses what it would refuse on a cluster at a
// server-side dry-run, and the real Job controller fans an Indexed Job out into pods carrying
// their completion index.
func TestControlPlaneIsReal(t *testing.T) {
	cp := Start(t)
	ctx := Ctx(t)
	bad := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "x"}}}}
	if _, err := cp.Client.CoreV1().Pods("default").Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err == nil {
		t.Fatal("a pod named Bad_Name passed the server-side dry run")
	}
	job := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "fan"}, Spec: batchv1.JobSpec{
		Completions: ptr.To[int32](2), Parallelism: ptr.To[int32](2), CompletionMode: ptr.To(batchv1.IndexedCompletion),
		Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "c", Image: "x", Command: []string{"true"}}}}}}}
	if _, err := cp.Client.BatchV1().Jobs("default").Create(ctx, job, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := cp.Client.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "job-name=fan"})
		if err != nil {
			t.Fatal(err)
		}
		if len(pods.Items) == 2 {
			idx := map[string]bool{}
			for _, p := range pods.Items {
				idx[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = true
			}
			if !idx["0"] || !idx["1"] {
				t.Fatalf("completion indexes %v; want 0 and 1", idx)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("the Job controller made no two pods within 30 s")
}
