// Package kube is the Kubernetes engine (experiment.Engine, registered as "kubernetes"): each
// configuration run's fake dependencies, its Toxiproxy and its system under test run as
// Deployments with Services in one namespace, and its load as an Indexed Job of `bulkhead attack
// --segment k/N` shards with a common T0, all from the bulkhead image but an image target's
// system under test, which runs from the image its scenario names. The runner renders the
// manifests (Render, `bulkhead render --engine kubernetes`), has the API server dry-run them
// (server-side, so its validation and admission judge them), creates them with the run's labels
// and owned by one root ConfigMap, drives the faults through the Toxiproxy API, follows the
// shards' pods, gathers their raw files from their logs (attack.Gather: each shard streams its
// files after its checks), merges them (attack.Merge) and judges them as any run's. Everything it
// created is deleted when the configuration run ends, fails or is interrupted: the root is
// deleted and the garbage collector removes what it owns; the engine waits until nothing with the
// run's label is left.
//
// Addresses: the shards reach the system under test, the system under test reaches Toxiproxy's
// proxies and Toxiproxy reaches the fake dependencies through Services (cluster DNS names; a
// Service's port is its target port). Toxiproxy's proxies listen on its pod's IP, on the ports
// its Service publishes. The runner calls the Toxiproxy API and reads the system under test's
// resources through their Services too, so it must run where cluster DNS and pod IPs are
// reachable: inside the cluster (a pod with the RBAC of docs/kubernetes.md), or, in this
// package's tests, beside the kubelet's stand-in (internal/k8stest).
package kube
