"""The machine-facing foundation: what this machine keeps (the cache, the processes the
harness started), what it can bear (limits), and the inputs that ask it for something (YAML
sources with their lines, the declarative schema, cluster shapes, capabilities, certificates)."""
