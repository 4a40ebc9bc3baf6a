// Command draproxy stands between a node's kubelet and one DRA driver's kubelet plugin, so a
// fault can be timed inside one of the plugin's gRPC calls: aftershock runs it on the node.
//
// It asks the plugin's registration socket (in the kubelet's plugin registry) what it serves,
// and registers itself beside it as a newer instance of the same driver, with the same
// services, at an endpoint of its own that passes every call on to the plugin's, unchanged. A
// kubelet calls the newest instance of a driver it holds a connection to (or, with none
// connected, the newest), as when a plugin is upgraded with surge: so from then on its calls
// go through the proxy, if it has not called the plugin before or connects to both at once
// (the health stream of a plugin that serves one). While the file named by -arm holds a
// method and an action ("NodePrepareResources stop"), the next answer the plugin gives to
// that method is held: the proxy stops or restarts the node's kubelet (its systemd unit), and
// the kubelet never gets the answer. Every call and what was done is a line on stdout,
// stamped with the node's clock. On SIGTERM, or after -lifetime, it removes its registration
// and its endpoint; the plugin's own sockets are never touched.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

// heldFor is how long an answer is held when the kubelet's connection outlives its unit's stop.
const heldFor = 60 * time.Second

var out sync.Mutex

func say(event string, fields ...string) {
	out.Lock()
	defer out.Unlock()
	fmt.Printf("%.6f %s %s\n", float64(time.Now().UnixNano())/1e9, event, strings.Join(fields, " "))
}

func main() {
	registry := flag.String("registry", "/var/lib/kubelet/plugins_registry", "the kubelet's plugin registry")
	driver := flag.String("driver", "", "the DRA driver's name")
	arm := flag.String("arm", "", "the file that arms the proxy: a method and stop or restart")
	lifetime := flag.Duration("lifetime", 3*time.Hour, "how long it serves at most")
	systemctl := flag.String("systemctl", "systemctl", "the command that stops or restarts the kubelet's unit")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, *lifetime)
	defer cancel()
	if err := run(ctx, *registry, *driver, &proxy{arm: *arm, systemctl: *systemctl}); err != nil {
		say("error", err.Error())
		os.Exit(1)
	}
}

// run serves until ctx is done, then goes: its registration first, so the kubelet still
// holds the plugin's own.
func run(ctx context.Context, registry, driver string, p *proxy) error {
	info, err := pluginOf(registry, driver)
	if err != nil {
		return err
	}
	endpoint := filepath.Join(filepath.Dir(info.Endpoint), "aftershock-proxy.sock")
	socket := filepath.Join(registry, "aftershock-proxy-"+driver+"-reg.sock")
	for _, path := range []string{endpoint, socket} { // a proxy killed before it went
		_ = os.Remove(path)
	}
	backend, err := grpc.NewClient("unix:"+info.Endpoint,
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	p.backend = backend
	calls := grpc.NewServer(grpc.UnknownServiceHandler(p.forward), grpc.ForceServerCodec(raw{}))
	if err := serve(calls, endpoint); err != nil {
		return err
	}
	defer func() { calls.Stop(); _ = os.Remove(endpoint) }()
	registrations := grpc.NewServer()
	registration.RegisterRegistrationServer(registrations, &registrar{info: &registration.PluginInfo{
		Type: info.Type, Name: info.Name, Endpoint: endpoint, SupportedVersions: info.SupportedVersions}})
	if err := serve(registrations, socket); err != nil {
		return err
	}
	say("serving", "endpoint="+endpoint, "plugin="+info.Endpoint, "registration="+socket)
	<-ctx.Done()
	registrations.Stop()
	_ = os.Remove(socket)
	say("gone", "registration="+socket)
	return nil
}

func serve(server *grpc.Server, path string) error {
	listener, err := net.Listen("unix", path)
	if err != nil {
		return fmt.Errorf("serve %s: %w", path, err)
	}
	go func() { _ = server.Serve(listener) }()
	return nil
}

// registrar answers the kubelet's plugin watcher for the proxy, as a plugin of the driver.
type registrar struct {
	registration.UnimplementedRegistrationServer
	info *registration.PluginInfo
}

func (r *registrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return r.info, nil
}

func (r *registrar) NotifyRegistrationStatus(_ context.Context, status *registration.RegistrationStatus) (*registration.RegistrationStatusResponse, error) {
	if status.PluginRegistered {
		say("registered")
	} else {
		say("error", "the kubelet refused the proxy's registration: "+status.Error)
	}
	return &registration.RegistrationStatusResponse{}, nil
}

// pluginOf asks each registration socket in the registry which plugin it is, and returns
// what the one DRA plugin of driver serves.
func pluginOf(registry, driver string) (*registration.PluginInfo, error) {
	sockets, _ := filepath.Glob(filepath.Join(registry, "*"))
	var found []*registration.PluginInfo
	var endpoints []string
	for _, socket := range sockets {
		if strings.HasPrefix(filepath.Base(socket), "aftershock-proxy-") {
			continue
		}
		info, err := getInfo(socket)
		if err != nil || info.Type != "DRAPlugin" || info.Name != driver {
			continue
		}
		if info.Endpoint == "" {
			return nil, fmt.Errorf("the plugin of %s registered at %s serves no endpoint of its own", driver, socket)
		}
		found = append(found, info)
		endpoints = append(endpoints, info.Endpoint)
	}
	if len(found) != 1 {
		return nil, fmt.Errorf("%d registrations of DRA driver %s answered in %s (%s): one is needed", len(found), driver, registry, strings.Join(endpoints, ", "))
	}
	return found[0], nil
}

func getInfo(socket string) (*registration.PluginInfo, error) {
	conn, err := grpc.NewClient("unix:"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return registration.NewRegistrationClient(conn).GetInfo(ctx, &registration.InfoRequest{})
}

type proxy struct {
	backend   *grpc.ClientConn
	arm       string
	systemctl string
}

// armed says what to do with this answer of method: "" to pass it on, else the action the arm
// file names (its file removed, so that one answer is held).
func (p *proxy) armed(method string) string {
	if p.arm == "" {
		return ""
	}
	text, err := os.ReadFile(p.arm)
	if err != nil {
		return ""
	}
	fields := strings.Fields(string(text))
	if len(fields) != 2 || !strings.HasSuffix(method, "/"+fields[0]) {
		return ""
	}
	if os.Remove(p.arm) != nil { // another call took it
		return ""
	}
	return fields[1]
}

func (p *proxy) forward(_ any, stream grpc.ServerStream) error {
	method, _ := grpc.MethodFromServerStream(stream)
	name := method[strings.LastIndex(method, "/")+1:]
	say("call", "method="+name)
	md, _ := metadata.FromIncomingContext(stream.Context())
	ctx := metadata.NewOutgoingContext(stream.Context(), md.Copy())
	client, err := p.backend.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true, ClientStreams: true},
		method, grpc.ForceCodec(raw{}))
	if err != nil {
		return err
	}
	go func() {
		for {
			f := &frame{}
			if stream.RecvMsg(f) != nil {
				_ = client.CloseSend()
				return
			}
			if client.SendMsg(f) != nil {
				return
			}
		}
	}()
	if header, err := client.Header(); err == nil {
		_ = stream.SendHeader(header)
	}
	for {
		f := &frame{}
		if err := client.RecvMsg(f); err != nil {
			stream.SetTrailer(client.Trailer())
			if errors.Is(err, io.EOF) {
				say("answered", "method="+name)
				return nil
			}
			say("failed", "method="+name, "error="+strings.ReplaceAll(err.Error(), " ", "_"))
			return err
		}
		if action := p.armed(method); action != "" {
			return p.hold(stream, f, name, action)
		}
		if err := stream.SendMsg(f); err != nil {
			return err
		}
	}
}

// hold keeps the answer from the kubelet while its unit is stopped or restarted: the kubelet
// goes without it. Should its connection outlive that, the answer goes after heldFor.
func (p *proxy) hold(stream grpc.ServerStream, f *frame, name, action string) error {
	say("held", "method="+name, "action="+action)
	if action != "stop" && action != "restart" {
		say("error", "unknown action "+action+": stop or restart")
	} else {
		done, err := exec.Command(p.systemctl, action, "kubelet").CombinedOutput()
		if err != nil {
			say("error", fmt.Sprintf("systemctl %s kubelet: %v %s", action, err, done))
		} else {
			say("kubelet", "action="+action)
		}
	}
	select {
	case <-stream.Context().Done():
		say("dropped", "method="+name)
		return status.Error(codes.Unavailable, "the kubelet went before its answer")
	case <-time.After(heldFor):
		say("released", "method="+name)
		return stream.SendMsg(f)
	}
}

type frame struct{ payload []byte }

// raw passes the messages through as they are.
type raw struct{}

func (raw) Marshal(v any) ([]byte, error) { return v.(*frame).payload, nil }

func (raw) Unmarshal(data []byte, v any) error {
	v.(*frame).payload = append([]byte(nil), data...)
	return nil
}

func (raw) Name() string { return "proto" }
