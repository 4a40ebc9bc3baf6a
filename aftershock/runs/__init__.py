"""A run beyond one pytest session: its options, shards, workers, Kubernetes versions,
the flake table, and the merge of run dirs."""
