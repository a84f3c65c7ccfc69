// upstream-smp answers, with apimachinery's own strategicpatch package and the compiled-in Go types
// of the built-in kinds (PatchMetaFromStruct, as kubectl 1.36 and the API server use them), what
// a client-side kubectl apply of a built-in kind computes and what the server makes of it, so that
// tests/appliers/test_strategic_upstream.py checks kubectl_fieldown against upstream and not against
// a copy of it. Built by tests/upstream_oracle.py from the lab's Debian Go sources.
//
// One JSON request per line on stdin, one JSON answer per line on stdout:
//
//	{"op":"three-way","kind":"Deployment","original":"<annotation text>"|null,"modified":"<json>","current":"<json>"}
//	  -> {"patch": <CreateThreeWayMergePatch(original, modified, current, meta, overwrite=true)>}
//	{"op":"apply","kind":"Deployment","object":"<json>","patch":"<json>"}
//	  -> {"object": <StrategicMergeMapPatch of the patch on the object>}
//
// A failure of the library is {"failed": "<its message>"}, a panic {"panic": "..."}; a bad request
// {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	kjson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
)

type request struct {
	Op       string  `json:"op"`
	Kind     string  `json:"kind"`
	Original *string `json:"original"`
	Modified string  `json:"modified"`
	Current  string  `json:"current"`
	Object   string  `json:"object"`
	Patch    string  `json:"patch"`
}

var kinds = map[string]interface{}{
	"Deployment":  &appsv1.Deployment{},
	"StatefulSet": &appsv1.StatefulSet{},
	"DaemonSet":   &appsv1.DaemonSet{},
	"Pod":         &corev1.Pod{},
	"Service":     &corev1.Service{},
	"ConfigMap":   &corev1.ConfigMap{},
	"Secret":      &corev1.Secret{},
	"Job":         &batchv1.Job{},
	"CronJob":     &batchv1.CronJob{},
	"Ingress":     &networkingv1.Ingress{},
}

func answer(req request) (ans map[string]interface{}) {
	// a panic of the library (kubectl would crash too) is an answer, not the end of the oracle
	defer func() {
		if r := recover(); r != nil {
			ans = map[string]interface{}{"panic": fmt.Sprint(r)}
		}
	}()
	ds, ok := kinds[req.Kind]
	if !ok {
		return map[string]interface{}{"error": fmt.Sprintf("unknown kind %q", req.Kind)}
	}
	meta, err := strategicpatch.NewPatchMetaFromStruct(ds)
	if err != nil {
		return map[string]interface{}{"error": err.Error()}
	}
	switch req.Op {
	case "three-way":
		var original []byte
		if req.Original != nil {
			original = []byte(*req.Original)
		}
		patch, err := strategicpatch.CreateThreeWayMergePatch(original, []byte(req.Modified), []byte(req.Current), meta, true)
		if err != nil {
			return map[string]interface{}{"failed": err.Error()}
		}
		return map[string]interface{}{"patch": json.RawMessage(patch)}
	case "apply":
		obj := map[string]interface{}{}
		if err := kjson.Unmarshal([]byte(req.Object), &obj); err != nil {
			return map[string]interface{}{"error": err.Error()}
		}
		patch := map[string]interface{}{}
		if err := kjson.Unmarshal([]byte(req.Patch), &patch); err != nil {
			return map[string]interface{}{"error": err.Error()}
		}
		result, err := strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta(obj, patch, meta)
		if err != nil {
			return map[string]interface{}{"failed": err.Error()}
		}
		return map[string]interface{}{"object": result}
	}
	return map[string]interface{}{"error": fmt.Sprintf("unknown op %q", req.Op)}
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	for in.Scan() {
		var req request
		if err := json.Unmarshal(in.Bytes(), &req); err != nil {
			_ = enc.Encode(map[string]interface{}{"error": err.Error()})
		} else {
			_ = enc.Encode(answer(req))
		}
		out.Flush()
	}
}
