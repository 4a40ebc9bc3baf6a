package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	registration "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
)

const prepare = "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources"

type pluginRegistrar struct {
	registration.UnimplementedRegistrationServer
	endpoint string
}

func (r pluginRegistrar) GetInfo(context.Context, *registration.InfoRequest) (*registration.PluginInfo, error) {
	return &registration.PluginInfo{Type: "DRAPlugin", Name: "gpu.example.com", Endpoint: r.endpoint,
		SupportedVersions: []string{"v1.DRAPlugin", "v1alpha1.DRAResourceHealth"}}, nil
}

// shortDir is a temp dir whose sockets' paths fit a unix socket's 108 bytes.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "dp")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// plugin serves a registration in registry and a DRA service that answers each call with
// "answer to " and what it was asked.
func plugin(t *testing.T, dir string) (registry, endpoint string) {
	registry, endpoint = filepath.Join(dir, "registry"), filepath.Join(dir, "plugin", "dra.sock")
	for _, folder := range []string{registry, filepath.Dir(endpoint)} {
		if err := os.Mkdir(folder, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	serve := func(socket string, server *grpc.Server) {
		listener, err := net.Listen("unix", socket)
		if err != nil {
			t.Fatal(err)
		}
		go func() { _ = server.Serve(listener) }()
		t.Cleanup(server.Stop)
	}
	registrations := grpc.NewServer()
	registration.RegisterRegistrationServer(registrations, pluginRegistrar{endpoint: endpoint})
	serve(filepath.Join(registry, "gpu.example.com-reg.sock"), registrations)
	serve(endpoint, grpc.NewServer(grpc.ForceServerCodec(raw{}), grpc.UnknownServiceHandler(
		func(_ any, stream grpc.ServerStream) error {
			f := &frame{}
			if err := stream.RecvMsg(f); err != nil {
				return err
			}
			return stream.SendMsg(&frame{payload: append([]byte("answer to "), f.payload...)})
		})))
	return registry, endpoint
}

func call(t *testing.T, endpoint, ask string, within time.Duration) (string, error) {
	conn, err := grpc.NewClient("unix:"+endpoint, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	answer := &frame{}
	err = conn.Invoke(ctx, prepare, &frame{payload: []byte(ask)}, answer, grpc.ForceCodec(raw{}))
	return string(answer.payload), err
}

func TestAnAnswerArmedForIsHeldAndTheKubeletStopped(t *testing.T) {
	dir := shortDir(t)
	registry, endpoint := plugin(t, dir)
	ours := filepath.Join(dir, "plugin", "aftershock-proxy.sock")
	socket := filepath.Join(registry, "aftershock-proxy-gpu.example.com-reg.sock")
	arm, asked := filepath.Join(dir, "arm"), filepath.Join(dir, "asked")
	systemctl := filepath.Join(dir, "systemctl")
	script := "#!/bin/sh\necho \"$@\" >> " + asked + "\n"
	if err := os.WriteFile(systemctl, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- run(ctx, registry, "gpu.example.com", &proxy{arm: arm, systemctl: systemctl}) }()
	var info *registration.PluginInfo
	for deadline := time.Now().Add(10 * time.Second); info == nil && time.Now().Before(deadline); {
		if _, err := os.Stat(socket); err == nil {
			info, _ = getInfo(socket)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if info == nil || info.Endpoint != ours || info.Name != "gpu.example.com" ||
		strings.Join(info.SupportedVersions, ",") != "v1.DRAPlugin,v1alpha1.DRAResourceHealth" {
		t.Fatalf("the proxy registered as %v", info)
	}
	if answer, err := call(t, ours, "claim-1", 5*time.Second); err != nil || answer != "answer to claim-1" {
		t.Fatalf("unarmed: %q, %v", answer, err)
	}
	if err := os.WriteFile(arm, []byte("NodePrepareResources stop\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if answer, err := call(t, ours, "claim-2", 2*time.Second); err == nil {
		t.Fatalf("armed: the answer %q came through", answer)
	}
	if said, _ := os.ReadFile(asked); string(said) != "stop kubelet\n" {
		t.Fatalf("systemctl was asked %q", said)
	}
	if _, err := os.Stat(arm); !os.IsNotExist(err) {
		t.Fatalf("the arm file is still there: %v", err)
	}
	if answer, err := call(t, ours, "claim-3", 5*time.Second); err != nil || answer != "answer to claim-3" {
		t.Fatalf("after: %q, %v", answer, err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{ours, socket} {
		if _, err := os.Stat(gone); !os.IsNotExist(err) {
			t.Fatalf("%s is still there: %v", gone, err)
		}
	}
	if answer, err := call(t, endpoint, "claim-4", 5*time.Second); err != nil || answer != "answer to claim-4" {
		t.Fatalf("the plugin itself: %q, %v", answer, err)
	}
}

func TestAnEndpointWithNoRegistrationIsRefused(t *testing.T) {
	dir := shortDir(t)
	registry, _ := plugin(t, dir)
	err := run(context.Background(), registry, "nic.example.com", &proxy{})
	if err == nil || !strings.Contains(err.Error(), "0 registrations of DRA driver nic.example.com") {
		t.Fatalf("got %v", err)
	}
}

// The binary as aftershock runs it: its lines on stdout.
func TestItSaysWhatItServes(t *testing.T) {
	dir := shortDir(t)
	registry, endpoint := plugin(t, dir)
	binary := filepath.Join(dir, "draproxy")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	var stdout bytes.Buffer
	proc := exec.Command(binary, "-registry", registry, "-driver", "gpu.example.com", "-lifetime", "1s")
	proc.Stdout = &stdout
	if err := proc.Run(); err != nil {
		t.Fatal(err)
	}
	ours := filepath.Join(filepath.Dir(endpoint), "aftershock-proxy.sock")
	for _, want := range []string{" serving endpoint=" + ours + " plugin=" + endpoint, " gone registration="} {
		if !strings.Contains(stdout.String(), want) {
			t.Fatalf("%q not in %q", want, stdout.String())
		}
	}
}
