#!/bin/bash
# build.sh - build a stand-alone Kubernetes-style API server (CRDs + custom resources, the
# real k8s.io/apiserver request pipeline: SSA, managedFields, conflicts, dry-run, ...) from
# Debian packages only. Nothing is installed into the system: every package comes from
# `apt-get download` (private sid apt configuration) and is unpacked with `dpkg -x`.
#
# Result (PREFIX defaults to ~/.cache/k8slab):
#   $PREFIX/bin/crd-apiserver             wrapper main (discovery + fake core API), use this
#   $PREFIX/bin/apiextensions-apiserver   the unmodified upstream main (k8s.io/apiextensions-apiserver)
#   $PREFIX/etcd-root/usr/bin/etcd        etcd 3.5 from sid
#   $PREFIX/kubectl-root/usr/bin/kubectl  kubectl 1.36 from sid (matches the server version)
#
# Idempotent: downloads only missing .debs, unpacks only when the set of .debs changed,
# and `go build` reuses $PREFIX/gocache. Set CLEAN=1 to wipe everything first.
set -euo pipefail

PREFIX=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/k8slab}
APTX=${APTX:-$PREFIX/apt}
GOPKG=${GOPKG:-golang-1.27}            # toolchain package prefix (sid)
ROOTPKG=golang-k8s-apiextensions-apiserver-dev
# Dir::State::status=/dev/null: ignore what dpkg has installed on this machine, otherwise an
# installed package with a higher version (e.g. kubectl 1:528.0.0-0 from the Google Cloud
# repo) becomes the candidate and `apt-get download` fails ("Can't find a source to download").
o=(-o "Dir::State::Lists=$APTX/lists" -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APTX/etc"
   -o Dir::State::status=/dev/null)

log() { printf '[build %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }
t_start=$SECONDS

# private apt configuration for Debian sid (only used for `apt-get download`; nothing is installed)
if [[ ! -f $APTX/etc/sid.sources ]]; then
  mkdir -p "$APTX/lists/partial" "$APTX/etc"
  printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: sid\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' >"$APTX/etc/sid.sources"
fi
if [[ ! -d $APTX/lists || -z $(ls "$APTX/lists" 2>/dev/null | grep -v partial) || -n ${APT_UPDATE:-} ]]; then
  log "apt-get update of the private sid lists in $APTX"
  apt-get -o "Dir::State::Lists=$APTX/lists" -o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$APTX/etc" -q update >&2
fi
for t in apt-get apt-cache dpkg dpkg-deb; do command -v $t >/dev/null || { echo "need $t" >&2; exit 1; }; done

if [[ ${CLEAN:-0} == 1 ]]; then
  log "CLEAN=1: removing previous build state under $PREFIX"
  rm -rf "$PREFIX"/{debs,go-root,gosrc,gocache,overlay,bin,etcd-root,kubectl-root}
fi
mkdir -p "$PREFIX"/{debs/go,debs/src,debs/etcd,debs/kubectl,bin}

# download PKG... into DIR, skipping packages whose .deb is already there
download() {
  local dir=$1; shift
  local missing=() p
  for p in "$@"; do
    compgen -G "$dir/${p%%=*}_*.deb" >/dev/null || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  log "apt-get download ${#missing[@]} package(s) into $dir"
  ( cd "$dir" && apt-get "${o[@]}" -q download "${missing[@]}" 2>&1 | grep -vE 'unsandboxed|^Get:' >&2 || true )
  for p in "$@"; do
    compgen -G "$dir/${p%%=*}_*.deb" >/dev/null || { echo "download of $p failed" >&2; exit 1; }
  done
}

# unpack all .debs of DIR into ROOT, unless the same set was already unpacked there
unpack() {
  local dir=$1 root=$2 stamp sum
  stamp="$root/.unpacked-debs"
  sum=$(cd "$dir" && ls -1 *.deb | sort | sha256sum | cut -d' ' -f1)
  if [[ -f $stamp && $(cat "$stamp") == "$sum" ]]; then return 0; fi
  log "unpacking $(ls -1 "$dir"/*.deb | wc -l) .deb(s) from $dir into $root"
  rm -rf "$root"; mkdir -p "$root"
  local f; for f in "$dir"/*.deb; do dpkg -x "$f" "$root"; done
  echo "$sum" > "$stamp"
}

# recursive golang-*-dev Depends (breadth first, one apt-cache call per level;
# a virtual package is replaced by its first provider)
resolve_go_deps() {
  declare -A seen=()
  local level=("$@") next p d
  for p in "${level[@]}"; do seen[$p]=1; done
  while ((${#level[@]})); do
    next=()
    while read -r d; do
      [[ $d =~ ^golang-.*-dev$ ]] || continue
      [[ -n ${seen[$d]:-} ]] && continue
      seen[$d]=1; next+=("$d")
    done < <(apt-cache "${o[@]}" depends --no-recommends --no-suggests --no-conflicts \
               --no-breaks --no-replaces --no-enhances "${level[@]}" 2>/dev/null | awk '
         /^ *\|?(Pre)?Depends: / { name=$2; virt=0; if (name ~ /^</) { virt=1; next }; print name; next }
         /^    [^ ]/ { if (virt==1) { print $1; virt=2 } next }')
    level=("${next[@]}")
  done
  printf '%s\n' "${!seen[@]}" | sort
}

# 1. Go toolchain ----------------------------------------------------------------------
download "$PREFIX/debs/go" "$GOPKG-go" "$GOPKG-src"
unpack "$PREFIX/debs/go" "$PREFIX/go-root"
goroots=("$PREFIX"/go-root/usr/lib/go-*/); GOROOT=${goroots[0]%/}
export GOROOT PATH="$GOROOT/bin:$PATH"
log "toolchain: $(go version)"

# 2. Go library sources (GOPATH layout under usr/share/gocode) -------------------------
if [[ ! -s $PREFIX/debs/go-deps.txt || ${RESOLVE:-0} == 1 ]]; then
  log "resolving recursive golang-*-dev Depends of $ROOTPKG"
  resolve_go_deps "$ROOTPKG" > "$PREFIX/debs/go-deps.txt.new"
  mv "$PREFIX/debs/go-deps.txt.new" "$PREFIX/debs/go-deps.txt"
fi
mapfile -t GODEPS < "$PREFIX/debs/go-deps.txt"
log "${#GODEPS[@]} golang-*-dev packages"
download "$PREFIX/debs/src" "${GODEPS[@]}"
unpack "$PREFIX/debs/src" "$PREFIX/gosrc"

# 3. runtime pieces: etcd (server + etcdctl) and kubectl 1.36 ---------------------------
download "$PREFIX/debs/etcd" etcd-server etcd-client
unpack "$PREFIX/debs/etcd" "$PREFIX/etcd-root"
download "$PREFIX/debs/kubectl" kubectl
unpack "$PREFIX/debs/kubectl" "$PREFIX/kubectl-root"

# 4. the wrapper main (see the comment at its top) --------------------------------------
mkdir -p "$PREFIX/overlay/src/k8slab.local/crd-apiserver"
cat > "$PREFIX/overlay/src/k8slab.local/crd-apiserver/main.go" <<'GOEOF'
// crd-apiserver: the upstream k8s.io/apiextensions-apiserver server (same options, same
// request pipeline, same storage) started the way the upstream main does, plus the few
// things a *stand-alone* instance lacks because kube-apiserver normally provides them:
//
//  1. /apis root discovery (legacy APIGroupList and aggregated discovery v2). Upstream's
//     apiserver.Config.Complete() forces EnableDiscovery=false because inside
//     kube-apiserver the aggregator serves /apis. Without it kubectl cannot discover
//     anything ("couldn't get current server API group list").
//  2. The legacy /apis APIGroupList is kept in sync with the served CRD groups (inside
//     kube-apiserver the aggregator does this through auto-registered APIServices).
//  3. /openapi/v2 is served (OpenAPIConfig set as in upstream's pkg/cmd/server/testing).
//  4. When no --kubeconfig (core API server) is given, an in-memory, empty fake core API
//     (client-go fake clientset) backs the shared informers, API Priority and Fairness and
//     the admission plugins, so that every informer syncs and /readyz becomes healthy.
//     NamespaceLifecycle is disabled by default (there is no Namespace API to create
//     namespaces in). Delegated authentication/authorization kubeconfigs are optional:
//     use --client-ca-file for x509 client certs; the group system:masters is always
//     allowed (upstream default of --authorization-always-allow-paths/groups).
package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"sort"
	"sync"

	"github.com/spf13/cobra"
	noopoteltrace "go.opentelemetry.io/otel/trace/noop"

	"k8s.io/apiextensions-apiserver/pkg/apihelpers"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apiserver"
	crdlisters "k8s.io/apiextensions-apiserver/pkg/client/listers/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/apiserver/pkg/endpoints/discovery"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/openapi"
	"k8s.io/apiserver/pkg/util/proxy"
	"k8s.io/apiserver/pkg/util/webhook"
	discoveryclient "k8s.io/client-go/discovery"
	discoveryfake "k8s.io/client-go/discovery/fake"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/kubernetes/scheme"
	corev1listers "k8s.io/client-go/listers/core/v1"
	openapiclient "k8s.io/client-go/openapi"
	"k8s.io/client-go/tools/cache"
	"k8s.io/component-base/cli"
	"k8s.io/klog/v2"
	netutils "k8s.io/utils/net"
)

func main() {
	ctx := genericapiserver.SetupSignalContext()
	o := options.NewCustomResourceDefinitionsServerOptions(os.Stdout, os.Stderr)

	// Stand-alone defaults; every one of them can still be overridden by its flag.
	o.RecommendedOptions.Authentication.SkipInClusterLookup = true
	o.RecommendedOptions.Authentication.RemoteKubeConfigFileOptional = true
	o.RecommendedOptions.Authorization.RemoteKubeConfigFileOptional = true
	o.RecommendedOptions.Admission.DisablePlugins = []string{"NamespaceLifecycle"}

	cmd := &cobra.Command{
		Use:   "crd-apiserver",
		Short: "Stand-alone apiextensions-apiserver (CRDs + custom resources) with discovery",
		PersistentPreRunE: func(*cobra.Command, []string) error {
			return o.ServerRunOptions.ComponentGlobalsRegistry.Set()
		},
		RunE: func(c *cobra.Command, args []string) error {
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return run(c.Context(), o)
		},
	}
	cmd.SetContext(ctx)
	o.AddFlags(cmd.Flags())
	os.Exit(cli.Run(cmd))
}

func run(ctx context.Context, o *options.CustomResourceDefinitionsServerOptions) error {
	config, err := buildConfig(o)
	if err != nil {
		return err
	}
	completed := config.Complete()
	// (1) upstream Complete() sets this to false (kube-aggregator serves /apis there).
	completed.GenericConfig.EnableDiscovery = true

	server, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}

	// (2) keep the legacy /apis group list in sync with the CRDs.
	crdInformer := server.Informers.Apiextensions().V1().CustomResourceDefinitions()
	gs := &groupSync{lister: crdInformer.Lister(), mgr: server.GenericAPIServer.DiscoveryGroupManager, known: map[string]bool{}}
	if _, err := crdInformer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(interface{}) { gs.sync() },
		UpdateFunc: func(interface{}, interface{}) { gs.sync() },
		DeleteFunc: func(interface{}) { gs.sync() },
	}); err != nil {
		return err
	}

	return server.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}

// buildConfig is upstream's CustomResourceDefinitionsServerOptions.Config() with (3) and (4).
func buildConfig(o *options.CustomResourceDefinitionsServerOptions) (*apiserver.Config, error) {
	if err := o.RecommendedOptions.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{netutils.ParseIPSloppy("127.0.0.1")}); err != nil {
		return nil, fmt.Errorf("error creating self-signed certificates: %v", err)
	}

	serverConfig := genericapiserver.NewRecommendedConfig(apiserver.Codecs)
	if err := o.ServerRunOptions.ApplyTo(&serverConfig.Config); err != nil {
		return nil, err
	}

	ro := o.RecommendedOptions
	var kubeClient kubernetes.Interface
	var dynamicClient dynamic.Interface
	if ro.CoreAPI != nil && ro.CoreAPI.CoreAPIKubeconfigPath != "" {
		// A real core API server was given: do exactly what upstream does.
		if err := ro.CoreAPI.ApplyTo(serverConfig); err != nil {
			return nil, err
		}
		var err error
		if kubeClient, err = kubernetes.NewForConfig(serverConfig.ClientConfig); err != nil {
			return nil, err
		}
		if dynamicClient, err = dynamic.NewForConfig(serverConfig.ClientConfig); err != nil {
			return nil, err
		}
	} else {
		// (4) in-memory, empty core API.
		klog.Info("no --kubeconfig given: using an in-memory fake core API for informers, APF and admission")
		kubeClient = newFakeCore()
		dynamicClient = dynamicfake.NewSimpleDynamicClient(runtime.NewScheme())
		serverConfig.SharedInformerFactory = informers.NewSharedInformerFactory(kubeClient, 0)
	}
	if err := applyRecommended(ro, serverConfig, kubeClient, dynamicClient); err != nil {
		return nil, err
	}
	if err := o.APIEnablement.ApplyTo(&serverConfig.Config, apiserver.DefaultAPIResourceConfigSource(), apiserver.Scheme); err != nil {
		return nil, err
	}

	getDefs := openapi.GetOpenAPIDefinitionsWithoutDisabledFeatures(generatedopenapi.GetOpenAPIDefinitions)
	serverConfig.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(getDefs, openapinamer.NewDefinitionNamer(apiserver.Scheme, scheme.Scheme))
	// (3) /openapi/v2, as upstream's test server does.
	serverConfig.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(getDefs, openapinamer.NewDefinitionNamer(apiserver.Scheme, scheme.Scheme))

	return &apiserver.Config{
		GenericConfig: serverConfig,
		ExtraConfig: apiserver.ExtraConfig{
			CRDRESTOptionsGetter: options.NewCRDRESTOptionsGetter(*ro.Etcd, serverConfig.ResourceTransformers, serverConfig.StorageObjectCountTracker),
			ServiceResolver:      &serviceResolver{serverConfig.SharedInformerFactory.Core().V1().Services().Lister()},
			AuthResolverWrapper:  webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, serverConfig.LoopbackClientConfig, noopoteltrace.NewTracerProvider()),
		},
	}, nil
}

// applyRecommended is upstream's RecommendedOptions.ApplyTo with the CoreAPI step done by
// the caller and the core clients passed in.
func applyRecommended(o *genericoptions.RecommendedOptions, config *genericapiserver.RecommendedConfig, kubeClient kubernetes.Interface, dynamicClient dynamic.Interface) error {
	if err := o.Etcd.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := o.EgressSelector.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := o.Traces.ApplyTo(config.Config.EgressSelector, &config.Config); err != nil {
		return err
	}
	if err := o.SecureServing.ApplyToConfig(&config.Config); err != nil {
		return err
	}
	if err := o.Authentication.ApplyTo(&config.Config.Authentication, config.SecureServing, config.OpenAPIConfig); err != nil {
		return err
	}
	if err := o.Authorization.ApplyTo(&config.Config.Authorization); err != nil {
		return err
	}
	if err := o.Audit.ApplyTo(&config.Config); err != nil {
		return err
	}
	if err := o.Features.ApplyTo(&config.Config, kubeClient, config.SharedInformerFactory); err != nil {
		return err
	}
	initializers, err := o.ExtraAdmissionInitializers(config)
	if err != nil {
		return err
	}
	return o.Admission.ApplyTo(&config.Config, config.SharedInformerFactory, kubeClient, dynamicClient, o.FeatureGate,
		config.EffectiveVersion, initializers...)
}

type serviceResolver struct {
	services corev1listers.ServiceLister
}

func (r *serviceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return proxy.ResolveCluster(r.services, namespace, name, port)
}

// groupSync mirrors the established, served CRD groups into the legacy /apis APIGroupList,
// using the same rules as apiextensions' DiscoveryController for /apis/<group>.
type groupSync struct {
	mu     sync.Mutex
	lister crdlisters.CustomResourceDefinitionLister
	mgr    discovery.GroupManager
	known  map[string]bool
}

func (s *groupSync) sync() {
	s.mu.Lock()
	defer s.mu.Unlock()
	crds, err := s.lister.List(labels.Everything())
	if err != nil {
		klog.ErrorS(err, "listing CRDs for /apis discovery")
		return
	}
	groups := map[string]map[string]bool{}
	for _, crd := range crds {
		if crd.Spec.Group == apiextensionsv1.GroupName || !apihelpers.IsCRDConditionTrue(crd, apiextensionsv1.Established) {
			continue
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			if groups[crd.Spec.Group] == nil {
				groups[crd.Spec.Group] = map[string]bool{}
			}
			groups[crd.Spec.Group][v.Name] = true
		}
	}
	for g, vs := range groups {
		names := make([]string, 0, len(vs))
		for v := range vs {
			names = append(names, v)
		}
		sort.Slice(names, func(i, j int) bool { return version.CompareKubeAwareVersionStrings(names[i], names[j]) > 0 })
		apiGroup := metav1.APIGroup{Name: g}
		for _, v := range names {
			apiGroup.Versions = append(apiGroup.Versions, metav1.GroupVersionForDiscovery{GroupVersion: g + "/" + v, Version: v})
		}
		apiGroup.PreferredVersion = apiGroup.Versions[0]
		s.mgr.AddGroup(apiGroup)
	}
	for g := range s.known {
		if groups[g] == nil {
			s.mgr.RemoveGroup(g)
		}
	}
	s.known = map[string]bool{}
	for g := range groups {
		s.known[g] = true
	}
}

// fakeCore is client-go's fake clientset whose discovery also answers OpenAPIV3() (with an
// empty document) instead of panicking; the MutatingAdmissionPolicy plugin asks for it.
type fakeCore struct {
	*kubefake.Clientset
	disc discoveryclient.DiscoveryInterface
}

func newFakeCore() *fakeCore {
	cs := kubefake.NewSimpleClientset()
	return &fakeCore{Clientset: cs, disc: &fakeDiscovery{&discoveryfake.FakeDiscovery{Fake: &cs.Fake}}}
}

func (f *fakeCore) Discovery() discoveryclient.DiscoveryInterface { return f.disc }

type fakeDiscovery struct{ *discoveryfake.FakeDiscovery }

func (*fakeDiscovery) OpenAPIV3() openapiclient.Client { return emptyOpenAPIV3{} }

type emptyOpenAPIV3 struct{}

func (emptyOpenAPIV3) Paths() (map[string]openapiclient.GroupVersion, error) {
	return map[string]openapiclient.GroupVersion{}, nil
}
GOEOF

# 5. build (GOPATH mode, offline) --------------------------------------------------------
export GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local GOPROXY=off GOSUMDB=off GOTELEMETRY=off
export GOPATH="$PREFIX/overlay:$PREFIX/gosrc/usr/share/gocode" GOCACHE="$PREFIX/gocache"
export CGO_ENABLED=${CGO_ENABLED:-0}
k8sver=$(dpkg-deb -f "$(ls "$PREFIX"/debs/src/${ROOTPKG}_*.deb)" Version)   # e.g. 0.36.4-1
k8sver=${k8sver%%-*}; k8sver="1.${k8sver#0.}"                                 # -> 1.36.4
major=${k8sver%%.*}; minor=${k8sver#*.}; minor=${minor%%.*}
V=k8s.io/component-base/version
LDFLAGS="-X $V.gitMajor=$major -X $V.gitMinor=$minor -X $V.gitVersion=v$k8sver -X $V.gitTreeState=clean -X $V.gitCommit=debian-$ROOTPKG-$(dpkg-deb -f "$(ls "$PREFIX"/debs/src/${ROOTPKG}_*.deb)" Version)"
cd "$PREFIX"
for target in k8s.io/apiextensions-apiserver:apiextensions-apiserver k8slab.local/crd-apiserver:crd-apiserver; do
  pkg=${target%%:*}; out=${target##*:}
  log "go build $pkg -> bin/$out (version v$k8sver)"
  t0=$SECONDS
  go build -ldflags "$LDFLAGS" -o "$PREFIX/bin/$out.tmp" "$pkg"
  mv "$PREFIX/bin/$out.tmp" "$PREFIX/bin/$out"
  log "built bin/$out in $((SECONDS - t0))s ($(du -h "$PREFIX/bin/$out" | cut -f1))"
done

log "done in $((SECONDS - t_start))s"
# sed, not head: head exits after one line and the writer may die of SIGPIPE (exit 141 with
# pipefail, an intermittent build failure)
"$PREFIX/etcd-root/usr/bin/etcd" --version | sed -n 1p
"$PREFIX/kubectl-root/usr/bin/kubectl" version --client | sed -n 1p
