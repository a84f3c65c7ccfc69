// upstream-oracle answers, with upstream's own Go code, what the appliers compute on the client
// side, so that the applier replays (tests/appliers) check kubectl_fieldown against upstream and
// not against a copy of it. Built by tests/upstream_oracle.py from the lab's Debian Go sources.
//
// One JSON request per line on stdin, one JSON answer per line on stdout:
//
//	{"op":"csaupgrade-patch","object":{...},"csaManagers":["..."],"ssaManager":"...","subresource":""}
//	  -> {"patch": <the JSON patch client-go's UpgradeManagedFieldsPatch returns, or null>}
//
// csaupgrade.UpgradeManagedFieldsPatch is what Argo CD (gitops-engine sync/sync_context.go
// performCSAUpgradeMigration), Helm 4 (pkg/kube/client.go upgradeClientSideFieldManager) and
// kubectl (apply.go's migration) send. Errors: {"error": "..."}.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/csaupgrade"
	"k8s.io/apimachinery/pkg/util/sets"
)

type request struct {
	Op          string                 `json:"op"`
	Object      map[string]interface{} `json:"object"`
	CSAManagers []string               `json:"csaManagers"`
	SSAManager  string                 `json:"ssaManager"`
	Subresource string                 `json:"subresource"`
}

func answer(req request) map[string]interface{} {
	switch req.Op {
	case "csaupgrade-patch":
		obj := &unstructured.Unstructured{Object: req.Object}
		var opts []csaupgrade.Option
		if req.Subresource != "" {
			opts = append(opts, csaupgrade.Subresource(req.Subresource))
		}
		patch, err := csaupgrade.UpgradeManagedFieldsPatch(obj, sets.New(req.CSAManagers...), req.SSAManager, opts...)
		if err != nil {
			return map[string]interface{}{"error": err.Error()}
		}
		if patch == nil {
			return map[string]interface{}{"patch": nil}
		}
		var ops interface{}
		if err := json.Unmarshal(patch, &ops); err != nil {
			return map[string]interface{}{"error": err.Error()}
		}
		return map[string]interface{}{"patch": ops}
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
