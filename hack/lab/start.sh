#!/bin/bash
# start.sh - run etcd + the stand-alone API server (built by build.sh) on 127.0.0.1.
#
#   start.sh KUBECONFIG_PATH   start both in the background, write an admin kubeconfig to
#                              KUBECONFIG_PATH, wait until /readyz answers 200, print PIDs
#   start.sh stop              stop exactly the two PIDs recorded by the last start
#   start.sh status            show whether the recorded PIDs are alive and /readyz
#
# Environment (defaults):
#   PREFIX=~/.cache/k8slab  STATE=$TMPDIR/k8slab-run  API_PORT=6443  ETCD_PORT=2379  ETCD_PEER_PORT=2380
#   SERVER=crd-apiserver   (or apiextensions-apiserver = unmodified upstream main: REST only,
#                           kubectl discovery does not work with it, see README)
#   KEEP_DATA=1            keep the etcd data dir of a previous run (default: fresh, empty)
#   ETCD_UNSAFE_NO_FSYNC=1 pass --unsafe-no-fsync to etcd (faster writes, test use only)
#   READY_TIMEOUT=60       seconds to wait for /readyz
#   ETCD_BIN=...           another etcd binary (default: $PREFIX/etcd-root/usr/bin/etcd, 3.5 from sid)
#   EXTRA_ARGS="..."       extra flags for the API server
set -euo pipefail

PREFIX=${PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/k8slab}
STATE=${STATE:-${TMPDIR:-/tmp}/k8slab-run}
API_PORT=${API_PORT:-6443}
ETCD_PORT=${ETCD_PORT:-2379}
ETCD_PEER_PORT=${ETCD_PEER_PORT:-2380}
SERVER=${SERVER:-crd-apiserver}
READY_TIMEOUT=${READY_TIMEOUT:-60}
ETCD_BIN=${ETCD_BIN:-$PREFIX/etcd-root/usr/bin/etcd}
API_BIN=$PREFIX/bin/$SERVER

now() { echo "${EPOCHREALTIME/,/.}"; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN{printf "%.2f", b-a}'; }

# alive PIDFILE BINARY -> prints the pid if it is running *that* binary
alive() {
  local pf=$1 bin=$2 pid
  [[ -f $pf ]] || return 1
  pid=$(cat "$pf")
  [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  local exe; exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  [[ ${exe% (deleted)} == "$(readlink -f "$bin")" ]] || return 1   # binary may have been rebuilt
  echo "$pid"
}

stop_one() {  # stop_one NAME PIDFILE BINARY
  local name=$1 pf=$2 bin=$3 pid i
  if pid=$(alive "$pf" "$bin"); then
    kill -TERM "$pid"
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then echo "$name ($pid) did not exit after 10s, sending KILL"; kill -KILL "$pid"; fi
    echo "stopped $name (PID $pid)"
  else
    echo "$name: not running (no live PID recorded in $pf)"
  fi
  rm -f "$pf"
}

do_stop() {
  local server_bin
  server_bin=$PREFIX/bin/$(cat "$STATE/server.name" 2>/dev/null || echo "$SERVER")
  stop_one "api server" "$STATE/apiserver.pid" "$server_bin"
  stop_one etcd "$STATE/etcd.pid" "$(cat "$STATE/etcd.bin" 2>/dev/null || echo "$ETCD_BIN")"
}

port_busy() { [[ -n $(ss -Hltn "sport = :$1" 2>/dev/null) ]]; }

gen_pki() {
  local d=$STATE/pki
  [[ -f $d/admin.crt ]] && return 0
  mkdir -p "$d"
  (
    cd "$d"
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 3650 -subj "/CN=k8slab-ca" 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' > server.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 3650 -extfile server.ext 2>/dev/null
    # O=system:masters: always authorized by the server's delegating authorizer (upstream default)
    openssl req -newkey rsa:2048 -nodes -keyout admin.key -out admin.csr -subj "/O=system:masters/CN=admin" 2>/dev/null
    printf 'extendedKeyUsage=clientAuth\nkeyUsage=critical,digitalSignature,keyEncipherment\n' > client.ext
    openssl x509 -req -in admin.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out admin.crt -days 3650 -extfile client.ext 2>/dev/null
    chmod 600 ./*.key
  )
}

write_kubeconfig() {
  local out=$1 d=$STATE/pki
  mkdir -p "$(dirname "$out")"
  umask 077
  cat > "$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: k8slab
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority-data: $(base64 -w0 "$d/ca.crt")
users:
- name: admin
  user:
    client-certificate-data: $(base64 -w0 "$d/admin.crt")
    client-key-data: $(base64 -w0 "$d/admin.key")
contexts:
- name: k8slab
  context:
    cluster: k8slab
    user: admin
    namespace: default
current-context: k8slab
EOF
}

do_start() {
  local kubeconfig=$1
  [[ -x $ETCD_BIN && -x $API_BIN ]] || { echo "missing $ETCD_BIN or $API_BIN: run $(dirname "$0")/build.sh first (with the same PREFIX)" >&2; exit 1; }
  mkdir -p "$STATE"
  if alive "$STATE/etcd.pid" "$ETCD_BIN" >/dev/null || alive "$STATE/apiserver.pid" "$API_BIN" >/dev/null; then
    echo "already running (see $0 status); run '$0 stop' first" >&2; exit 1
  fi
  local p; for p in "$API_PORT" "$ETCD_PORT" "$ETCD_PEER_PORT"; do
    if port_busy "$p"; then echo "port 127.0.0.1:$p is already in use" >&2; exit 1; fi
  done
  gen_pki
  [[ ${KEEP_DATA:-0} == 1 ]] || rm -rf "$STATE/etcd-data"
  echo "$SERVER" > "$STATE/server.name"; readlink -f "$ETCD_BIN" > "$STATE/etcd.bin"

  local t0 etcd_extra=()
  [[ ${ETCD_UNSAFE_NO_FSYNC:-0} == 1 ]] && etcd_extra+=(--unsafe-no-fsync)
  # etcd treats every ETCD_* environment variable as a flag (and dies on a duplicate), so
  # none of ours (ETCD_PORT, ETCD_BIN, ETCD_UNSAFE_NO_FSYNC, ...) may reach it
  local unset_env=(); local v; for v in $(compgen -e); do [[ $v == ETCD_* ]] && unset_env+=(-u "$v"); done
  t0=$(now)
  nohup env "${unset_env[@]}" "$ETCD_BIN" --name k8slab --data-dir "$STATE/etcd-data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "k8slab=http://127.0.0.1:$ETCD_PEER_PORT" "${etcd_extra[@]}" \
    > "$STATE/etcd.log" 2>&1 < /dev/null &
  echo $! > "$STATE/etcd.pid"

  local i etcd_ok=0
  for i in $(seq 1 $((READY_TIMEOUT * 20))); do
    if curl -sf --max-time 2 "http://127.0.0.1:$ETCD_PORT/health" 2>/dev/null | grep -q '"health":"true"'; then etcd_ok=1; break; fi
    kill -0 "$(cat "$STATE/etcd.pid")" 2>/dev/null || { echo "etcd died:" >&2; tail -20 "$STATE/etcd.log" >&2; do_stop; exit 1; }
    sleep 0.05
  done
  if ((!etcd_ok)); then
    echo "etcd not healthy after ${READY_TIMEOUT}s; log tail:" >&2; tail -20 "$STATE/etcd.log" >&2; do_stop; exit 1
  fi
  local t_etcd; t_etcd=$(elapsed "$t0")

  local args=(
    --etcd-servers="http://127.0.0.1:$ETCD_PORT"
    --bind-address=127.0.0.1 --secure-port="$API_PORT"
    --cert-dir="$STATE/certs"
    --tls-cert-file="$STATE/pki/server.crt" --tls-private-key-file="$STATE/pki/server.key"
    --client-ca-file="$STATE/pki/ca.crt"
  )
  local readyz=/readyz
  if [[ $SERVER == apiextensions-apiserver ]]; then
    # The upstream main insists on delegated authn/authz and a core-API kubeconfig; give it an
    # unreachable one (as upstream's integration tests do) and switch off admission plugins
    # that would wait for core-API informers. Its informer-sync readiness check never passes.
    cat > "$STATE/unreachable.kubeconfig" <<'EOF'
apiVersion: v1
kind: Config
clusters: [{name: none, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: none, user: {token: unused}}]
contexts: [{name: none, context: {cluster: none, user: none}}]
current-context: none
EOF
    args+=(--authentication-skip-lookup
      --authentication-kubeconfig="$STATE/unreachable.kubeconfig"
      --authorization-kubeconfig="$STATE/unreachable.kubeconfig"
      --kubeconfig="$STATE/unreachable.kubeconfig"
      --disable-admission-plugins=NamespaceLifecycle,MutatingAdmissionWebhook,ValidatingAdmissionWebhook,ValidatingAdmissionPolicy,MutatingAdmissionPolicy)
    readyz="/readyz?exclude=informer-sync"
  fi
  # shellcheck disable=SC2206
  args+=(${EXTRA_ARGS:-})
  nohup "$API_BIN" "${args[@]}" > "$STATE/apiserver.log" 2>&1 < /dev/null &
  echo $! > "$STATE/apiserver.pid"

  local code=000
  for i in $(seq 1 $((READY_TIMEOUT * 20))); do
    code=$(curl -s --max-time 2 -o /dev/null -w '%{http_code}' --cacert "$STATE/pki/ca.crt" "https://127.0.0.1:$API_PORT$readyz" 2>/dev/null || true)
    [[ $code == 200 ]] && break
    kill -0 "$(cat "$STATE/apiserver.pid")" 2>/dev/null || break
    sleep 0.05
  done
  if [[ $code != 200 ]]; then
    echo "API server did not become ready (last /readyz code $code); log tail:" >&2
    # the first error lines (a bad flag is followed by the whole usage text), then the tail
    grep -m5 -E '^(Error|E[0-9]{4} |F[0-9]{4} )' "$STATE/apiserver.log" >&2 || true
    echo "..." >&2
    tail -30 "$STATE/apiserver.log" >&2
    do_stop; exit 1
  fi
  local t_ready; t_ready=$(elapsed "$t0")
  write_kubeconfig "$kubeconfig"

  echo "etcd PID $(cat "$STATE/etcd.pid") (127.0.0.1:$ETCD_PORT, healthy after ${t_etcd}s)"
  echo "$SERVER PID $(cat "$STATE/apiserver.pid") (https://127.0.0.1:$API_PORT, $readyz 200 after ${t_ready}s from etcd start)"
  echo "kubeconfig: $kubeconfig    logs: $STATE/{etcd,apiserver}.log"
  echo "kubectl 1.36: $PREFIX/kubectl-root/usr/bin/kubectl --kubeconfig $kubeconfig get crd"
  echo "stop with: $0 stop   (STATE=$STATE)"
}

do_status() {
  local server_bin pid
  server_bin=$PREFIX/bin/$(cat "$STATE/server.name" 2>/dev/null || echo "$SERVER")
  if pid=$(alive "$STATE/etcd.pid" "$(cat "$STATE/etcd.bin" 2>/dev/null || echo "$ETCD_BIN")"); then echo "etcd: running, PID $pid, RSS $(awk '/VmRSS/{print $2" "$3}' /proc/$pid/status)"; else echo "etcd: not running"; fi
  if pid=$(alive "$STATE/apiserver.pid" "$server_bin"); then echo "api server: running, PID $pid, RSS $(awk '/VmRSS/{print $2" "$3}' /proc/$pid/status)"; else echo "api server: not running"; fi
  [[ -f $STATE/pki/ca.crt ]] && echo "readyz: $(curl -s --cacert "$STATE/pki/ca.crt" "https://127.0.0.1:$API_PORT/readyz" 2>/dev/null || echo unreachable)"
}

case ${1:-} in
  stop) do_stop ;;
  status) do_status ;;
  ""|-h|--help) sed -n '2,21p' "$0"; exit 2 ;;
  *) do_start "$1" ;;
esac
