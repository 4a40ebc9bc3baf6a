"""What aftershock builds from Go on this machine: the control-plane toolchain, kind, helm,
an implementation pinned in a profile, and a module the proxy refuses, served from a folder."""
