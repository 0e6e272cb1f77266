package kube

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/bulkheadlab/bulkhead/experiment"
	"github.com/bulkheadlab/bulkhead/loadgen"
	"github.com/bulkheadlab/bulkhead/scenarios"
	"github.com/bulkheadlab/bulkhead/target"
)

// Manifests renders, for review, the objects a run of sc creates in namespace ns from image
// with the load in shards shards: per configuration run, its root ConfigMap, the fake
// dependencies' and Toxiproxy's Deployments and Services, the system under test's (the built-in
// service's, or an image target's from its own image; none for a url: target) and the load's
// ConfigMap and Indexed Job. A command target cannot run in a cluster and is an error. They are what the engine creates,
// except what only the run knows: the owner references (the root's UID), the common T0 and
// clock reference in the attack spec, and the run's token in the names.
func Manifests(sc *scenarios.Scenario, ns, image string, shards int) ([]runtime.Object, error) {
	if image == "" {
		image = DefaultImage
	}
	plans, err := experiment.Plans(sc, 0)
	if err != nil {
		return nil, err
	}
	var out []runtime.Object
	for _, p := range plans {
		parts := Parts{Names: NamesFor("render", p.Folder), Namespace: ns, Image: image, Scenario: sc, Configuration: p.Configuration, DependencySeeds: p.DependencySeeds}
		root, err := parts.Root()
		if err != nil {
			return nil, err
		}
		out = append(out, root)
		out = append(out, parts.Dependencies()...)
		deps := map[string]string{}
		for i, d := range sc.Dependencies {
			deps[d.Name] = "http://" + parts.ProxyHost(i)
		}
		var base string
		tc := p.Configuration.TargetConfig()
		k, err := target.Of(tc)
		if err != nil {
			return nil, err
		}
		switch name := k.Name(); {
		case name == target.BuiltInKind:
			out = append(out, parts.Target(deps)...)
			base = "http://" + ServiceHost(parts.Names.Target(), ns, ServicePort)
		case name == (target.Image{}).Name():
			img, err := target.ResolveImage(tc, parts.TargetHost(), deps)
			if err != nil {
				return nil, fmt.Errorf("configuration %s: %w", p.Configuration.Name, err)
			}
			out = append(out, parts.ImageTarget(img)...)
			base = img.URL
		case k.Remote():
			base = strings.TrimSuffix(tc.URL, "/")
		default:
			return nil, refuseKind(p.Configuration.Name, name)
		}
		spec, err := p.AttackSpec(base, nil)
		if err != nil {
			return nil, err
		}
		b, err := json.MarshalIndent(spec, "", "  ")
		if err != nil {
			return nil, err
		}
		out = append(out, parts.Load(b, max(shards, 1), DefaultStartLead+spec.Duration+loadgen.StopGrace+spec.Load.Timeout+time.Minute)...)
	}
	return out, nil
}

// WriteYAML writes objs as one YAML stream, "---" between documents.
func WriteYAML(w io.Writer, objs []runtime.Object) error {
	for i, o := range objs {
		b, err := yaml.Marshal(o)
		if err != nil {
			return fmt.Errorf("render %s: %w", describe(o), err)
		}
		if i > 0 {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	return nil
}
