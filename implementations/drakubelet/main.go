// Command drakubelet is aftershock's reference DRA kubelet plugin: a few simulated devices per
// node, published as the node's ResourceSlice, prepared and unprepared for the kubelet, each
// prepared claim given a CDI spec file. It comes in two variants:
//
//   - correct: keeps what it prepared in a file on the node's disk; prepares a known claim
//     again with the answer it gave (its CDI spec written again, since a reboot empties the
//     tmpfs it lies on); refuses a device still prepared for another claim; unprepares a
//     claim it does not know as done.
//   - faulty: keeps what it prepared on the node's disk too, but answers a known claim's second
//     preparation from that record alone: its devices twice (D9), and no CDI spec written
//     again, so after a reboot emptied the tmpfs the spec lay on the container cannot be made
//     (D8, kubernetes#141433); reads a claim from the API server to unprepare it, so a claim
//     deleted while the plugin was down is never unprepared (D10: unpreparing must work when
//     the claim is gone); prepares a device still prepared for another claim (D5); publishes
//     one device more than the node has, and once: a slice the kubelet deletes (when it
//     starts, or when the plugin unregisters) is never published again (D12).
//
// Two more are correct but for what a container sees (D13): leaky gives each claim's
// container the environment of every device of the node, other claims' too; bare gives it
// none of its devices' (only a variable saying it was prepared). And litter is correct but
// for its CDI specs (D17): it leaves a claim's spec file behind when it unprepares the claim.
//
// Three more are correct but for an upgrade of the plugin (its DaemonSet rolling out a new
// revision): amnesiac keeps what it prepared in its container, not on the node, so a new pod of
// it unprepares the old one's claims as unknown and leaves their CDI specs (D17); stale exits
// without closing its sockets when it is told to stop, so its registration socket stays on the
// node with nobody serving it (D20, kubernetes#128696); tidy deletes the node's ResourceSlices
// as it stops, which with surge are its successor's, made again (D18).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/klog/v2"
)

// prepared is what the plugin prepared for one claim.
type prepared struct {
	Namespace string   `json:"namespace"`
	Name      string   `json:"name"`
	Devices   []string `json:"devices"`
}

type driver struct {
	client   kubernetes.Interface
	name     string
	node     string
	faulty   bool
	variant  string
	count    int
	stateDir string
	cdiDir   string

	mu     sync.Mutex
	claims map[types.UID]prepared
}

func (d *driver) statePath() string { return filepath.Join(d.stateDir, "prepared.json") }

func (d *driver) load() error {
	d.claims = map[types.UID]prepared{}
	data, err := os.ReadFile(d.statePath())
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return json.Unmarshal(data, &d.claims)
}

func (d *driver) save() error {
	data, err := json.Marshal(d.claims)
	if err != nil {
		return err
	}
	temp := d.statePath() + ".tmp"
	if err := os.WriteFile(temp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(temp, d.statePath())
}

func (d *driver) cdiID(uid types.UID, device string) string {
	return fmt.Sprintf("aftershock.io/%s=%s-%s", d.name, uid, device)
}

func (d *driver) specPath(uid types.UID) string {
	return filepath.Join(d.cdiDir, fmt.Sprintf("aftershock.io-%s-%s.json", d.name, uid))
}

// writeSpec writes the claim's CDI spec: one CDI device per prepared device, which sets an
// environment variable naming it in the container.
func (d *driver) writeSpec(uid types.UID, devices []string) error {
	type edits struct {
		Env []string `json:"env"`
	}
	type cdiDevice struct {
		Name           string `json:"name"`
		ContainerEdits edits  `json:"containerEdits"`
	}
	spec := struct {
		Version string      `json:"cdiVersion"`
		Kind    string      `json:"kind"`
		Devices []cdiDevice `json:"devices"`
	}{Version: "0.6.0", Kind: "aftershock.io/" + d.name}
	for _, device := range devices {
		env := []string{"AFTERSHOCK_DEVICE_" + device + "=" + device}
		switch d.variant {
		case "leaky": // every device of the node, whoever holds it
			env = nil
			for i := 0; i < d.count; i++ {
				other := fmt.Sprintf("dev-%d", i)
				env = append(env, "AFTERSHOCK_DEVICE_"+other+"="+other)
			}
		case "bare": // prepared, and nothing of the device said
			env = []string{"AFTERSHOCK_PREPARED=true"}
		}
		spec.Devices = append(spec.Devices, cdiDevice{
			Name:           fmt.Sprintf("%s-%s", uid, device),
			ContainerEdits: edits{Env: env},
		})
	}
	data, err := json.Marshal(spec)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(d.cdiDir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(d.specPath(uid), data, 0o644)
}

func (d *driver) answer(uid types.UID, devices []string, requests map[string][]string) []kubeletplugin.Device {
	var found []kubeletplugin.Device
	for _, device := range devices {
		found = append(found, kubeletplugin.Device{
			Requests: requests[device], PoolName: d.node, DeviceName: device,
			CDIDeviceIDs: []string{d.cdiID(uid, device)},
		})
	}
	return found
}

// holder is the claim other than uid that device is prepared for, if any.
func (d *driver) holder(uid types.UID, device string) (prepared, bool) {
	for other, claim := range d.claims {
		if other == uid {
			continue
		}
		for _, held := range claim.Devices {
			if held == device {
				return claim, true
			}
		}
	}
	return prepared{}, false
}

func (d *driver) prepare(claim *resourceapi.ResourceClaim) kubeletplugin.PrepareResult {
	requests := map[string][]string{}
	var devices []string
	if claim.Status.Allocation != nil {
		for _, result := range claim.Status.Allocation.Devices.Results {
			if result.Driver != d.name || result.Pool != d.node {
				continue
			}
			devices = append(devices, result.Device)
			requests[result.Device] = append(requests[result.Device], result.Request)
		}
	}
	if d.variant == "refusing" {
		return kubeletplugin.PrepareResult{Err: fmt.Errorf("driver %s refuses to prepare "+
			"claim %s/%s (aftershock's refusing variant)", d.name, claim.Namespace, claim.Name)}
	}
	if known, ok := d.claims[claim.UID]; ok {
		if d.variant == "once" {
			return kubeletplugin.PrepareResult{Err: fmt.Errorf("claim %s/%s is already "+
				"prepared", known.Namespace, known.Name)}
		}
		if d.faulty { // its record's answer, twice, and the CDI spec taken to be still there
			answer := d.answer(claim.UID, known.Devices, requests)
			return kubeletplugin.PrepareResult{Devices: append(answer, answer...)}
		}
		if err := d.writeSpec(claim.UID, known.Devices); err != nil {
			return kubeletplugin.PrepareResult{Err: err}
		}
		return kubeletplugin.PrepareResult{Devices: d.answer(claim.UID, known.Devices, requests)}
	}
	if !d.faulty {
		for _, device := range devices {
			if other, held := d.holder(claim.UID, device); held {
				return kubeletplugin.PrepareResult{Err: fmt.Errorf(
					"device %s is still prepared for claim %s/%s", device, other.Namespace, other.Name)}
			}
		}
	}
	if err := d.writeSpec(claim.UID, devices); err != nil {
		return kubeletplugin.PrepareResult{Err: err}
	}
	d.claims[claim.UID] = prepared{Namespace: claim.Namespace, Name: claim.Name, Devices: devices}
	if err := d.save(); err != nil {
		return kubeletplugin.PrepareResult{Err: err}
	}
	klog.InfoS("prepared", "claim", klog.KObj(claim), "devices", devices)
	return kubeletplugin.PrepareResult{Devices: d.answer(claim.UID, devices, requests)}
}

func (d *driver) PrepareResourceClaims(_ context.Context, claims []*resourceapi.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	results := map[types.UID]kubeletplugin.PrepareResult{}
	for _, claim := range claims {
		results[claim.UID] = d.prepare(claim)
	}
	return results, nil
}

func (d *driver) UnprepareResourceClaims(ctx context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	results := map[types.UID]error{}
	for _, claim := range claims {
		// Every claim asked about is answered: the kubelet takes a claim missing from the
		// answer for one not unprepared, and keeps it in its checkpoint.
		results[claim.UID] = nil
		if d.faulty { // the claim's object read back, as if the record were not enough
			if _, err := d.client.ResourceV1().ResourceClaims(claim.Namespace).Get(ctx,
				claim.Name, metav1.GetOptions{}); err != nil {
				results[claim.UID] = fmt.Errorf("reading claim %s: %w", claim, err)
				continue
			}
		}
		if _, known := d.claims[claim.UID]; !known {
			continue // nothing of it is left to undo
		}
		if d.variant == "litter" { // the claim is forgotten, its CDI spec left on the node
			klog.InfoS("leaving the CDI spec", "claim", claim.String())
		} else if err := os.Remove(d.specPath(claim.UID)); err != nil && !errors.Is(err, os.ErrNotExist) {
			results[claim.UID] = err
			continue
		}
		delete(d.claims, claim.UID)
		if err := d.save(); err != nil {
			results[claim.UID] = err
			continue
		}
		klog.InfoS("unprepared", "claim", claim.String())
	}
	return results, nil
}

// deleteSlices deletes the node's ResourceSlices of the driver (tidy, as it stops).
func deleteSlices(client kubernetes.Interface, d *driver) {
	selector := fmt.Sprintf("spec.nodeName=%s,spec.driver=%s", d.node, d.name)
	err := client.ResourceV1().ResourceSlices().DeleteCollection(context.Background(),
		metav1.DeleteOptions{}, metav1.ListOptions{FieldSelector: selector})
	klog.InfoS("deleted the node's ResourceSlices as it stops", "err", err)
}

func (d *driver) HandleError(_ context.Context, err error, msg string) {
	klog.ErrorS(err, msg)
}

func (d *driver) WatchHealthStatus(ctx context.Context, _ chan<- kubeletplugin.DeviceHealthReport) error {
	<-ctx.Done()
	return nil
}

// publishOnce is the faulty variant's publisher: it runs a ResourceSlice controller only until
// the node's slice lists its devices, so nothing makes the slice again once it is deleted.
func publishOnce(ctx context.Context, client kubernetes.Interface, d *driver,
	resources *resourceslice.DriverResources, listed int) {
	controller, err := resourceslice.StartController(ctx, resourceslice.Options{
		DriverName: d.name, KubeClient: client, Resources: resources,
		Owner: &resourceslice.Owner{APIVersion: "v1", Kind: "Node", Name: d.node}})
	if err != nil {
		klog.Fatalf("publishing the node's devices: %v", err)
	}
	defer controller.Stop()
	selector := fmt.Sprintf("spec.nodeName=%s,spec.driver=%s", d.node, d.name)
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		slices, err := client.ResourceV1().ResourceSlices().List(ctx,
			metav1.ListOptions{FieldSelector: selector})
		if err == nil && len(slices.Items) == 1 && len(slices.Items[0].Spec.Devices) == listed {
			klog.InfoS("published the node's devices; publishing no more", "devices", listed)
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// readyFile exists once the kubelet has registered the plugin: the DaemonSet's readiness
// probe runs this program with --ready, so "Ready" means the kubelet can call it.
const readyFile = "/tmp/registered"

// awaitRegistration writes readyFile once the kubelet says the plugin is registered.
func awaitRegistration(ctx context.Context, helper *kubeletplugin.Helper) {
	ticker := time.NewTicker(200 * time.Millisecond)
	defer ticker.Stop()
	for {
		if status := helper.RegistrationStatus(); status != nil && status.PluginRegistered {
			if err := os.WriteFile(readyFile, nil, 0o644); err != nil {
				klog.ErrorS(err, "marking the plugin registered")
			}
			klog.InfoS("registered with the kubelet")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--ready" {
		if _, err := os.Stat(readyFile); err != nil {
			os.Exit(1)
		}
		os.Exit(0)
	}
	variant := flag.String("variant", "correct",
		"correct, faulty, leaky, bare, litter, amnesiac, stale, tidy, refusing or once")
	name := flag.String("driver", "gpu.aftershock.io", "the driver's name")
	node := flag.String("node", os.Getenv("NODE_NAME"), "the node it runs on")
	count := flag.Int("devices", 4, "how many devices the node has")
	cdiDir := flag.String("cdi-dir", "/var/run/cdi", "where CDI spec files go")
	klog.InitFlags(nil)
	flag.Parse()
	switch *variant {
	case "correct", "faulty", "leaky", "bare", "litter", "amnesiac", "stale", "tidy",
		"refusing", "once":
	default:
		klog.Fatalf("--variant must be correct, faulty, leaky, bare, litter, amnesiac, stale, "+
			"tidy, refusing or once, not %q", *variant)
	}
	d := &driver{name: *name, node: *node, faulty: *variant == "faulty", variant: *variant,
		count: *count, cdiDir: *cdiDir,
		stateDir: filepath.Join(kubeletplugin.KubeletPluginsDir, *name)}
	if *variant == "amnesiac" { // in the container: a new pod of it knows nothing prepared
		d.stateDir = filepath.Join(os.TempDir(), *name)
	}
	for _, dir := range []string{filepath.Join(kubeletplugin.KubeletPluginsDir, *name), d.stateDir} {
		if err := os.MkdirAll(dir, 0o750); err != nil { // its sockets go in the first
			klog.Fatal(err)
		}
	}
	if err := d.load(); err != nil {
		klog.Fatalf("reading %s: %v", d.statePath(), err)
	}
	config, err := rest.InClusterConfig()
	if err != nil {
		klog.Fatal(err)
	}
	client := kubernetes.NewForConfigOrDie(config)
	d.client = client
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Sockets named after this pod: a plugin pod that replaces another on the node (the next
	// scenario's, or the one back after a stop) never shares a socket path with the old one,
	// whose removal the kubelet could take for the new one's.
	pluginCtx := ctx
	if *variant == "stale" { // nothing closes its sockets when it is told to stop
		pluginCtx = context.WithoutCancel(ctx)
	}
	helper, err := kubeletplugin.Start(pluginCtx, d, kubeletplugin.KubeClient(client),
		kubeletplugin.NodeName(d.node), kubeletplugin.DriverName(d.name),
		kubeletplugin.HealthService(false),
		kubeletplugin.RollingUpdate(types.UID(os.Getenv("POD_UID"))))
	if err != nil {
		klog.Fatal(err)
	}
	defer helper.Stop()
	listed := *count
	if d.faulty {
		listed++ // an off-by-one: a device the node does not have
	}
	var devices []resourceapi.Device
	for i := range listed {
		devices = append(devices, resourceapi.Device{Name: fmt.Sprintf("dev-%d", i)})
	}
	resources := resourceslice.DriverResources{Pools: map[string]resourceslice.Pool{
		d.node: {Slices: []resourceslice.Slice{{Devices: devices}}}}}
	if d.faulty {
		go publishOnce(ctx, client, d, &resources, listed)
	} else if err := helper.PublishResources(ctx, resources); err != nil {
		klog.Fatal(err)
	}
	go awaitRegistration(ctx, helper)
	klog.InfoS("started drakubelet", "variant", *variant, "node", d.node, "devices", *count,
		"at", metav1.Now())
	<-ctx.Done()
	switch *variant {
	case "stale": // gone at once, its registration socket left on the node
		klog.InfoS("stopping, the sockets left where they are")
		klog.Flush()
		os.Exit(0)
	case "tidy":
		deleteSlices(client, d)
	}
}
