#!/bin/sh
# Pod networking for kind nodes built by aftershock (kindnetd's module is not on the Go proxy):
# this node's pods get a ptp CNI config on its podCIDR; every other node's podCIDR is routed via
# that node's address. Traffic stays inside the kind network, so nothing is masqueraded.
set -u
ACCOUNT=/var/run/secrets/kubernetes.io/serviceaccount
CONF=/etc/cni/net.d/10-aftershock.conflist

write_conf() {
  cat > "$CONF.tmp" <<CONF
{
  "cniVersion": "0.4.0",
  "name": "aftershock",
  "plugins": [
    {"type": "ptp", "ipMasq": false, "mtu": 1500,
     "ipam": {"type": "host-local", "dataDir": "/run/cni-ipam-state",
              "routes": [{"dst": "0.0.0.0/0"}], "ranges": [[{"subnet": "$1"}]]}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
CONF
  cmp -s "$CONF.tmp" "$CONF" && rm -f "$CONF.tmp" || mv "$CONF.tmp" "$CONF"
}

while :; do
  if kubectl --server="https://${CONTROL_PLANE_ENDPOINT}" --token="$(cat $ACCOUNT/token)" \
       --certificate-authority=$ACCOUNT/ca.crt get nodes -o jsonpath='{range .items[*]}{.metadata.name} {.spec.podCIDR} {.status.addresses[?(@.type=="InternalIP")].address}{"\n"}{end}' \
       > /tmp/nodes; then
    while read -r name cidr address; do
      [ -n "$cidr" ] && [ -n "$address" ] || continue
      if [ "$name" = "$NODE_NAME" ]; then
        write_conf "$cidr"
      else
        ip route replace "$cidr" via "$address"
      fi
    done < /tmp/nodes
  fi
  sleep 5
done
