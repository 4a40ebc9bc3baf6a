"""Profiles: a typo or a wrong type is one message with file:line, field and expectation."""

from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.profile.load import load_profile, node_agents_apart

REPO = Path(__file__).resolve().parents[2]
GOOD = """name: demo
start:
  command: ["python", "-m", "demo", "--kubeconfig", "{kubeconfig}"]
  ready:
    log: started
concepts:
  replica_group:
    resource: {group: aftershock.io, version: v1, plural: replicagroups, kind: ReplicaGroup}
    replicas_path: spec.replicas
    pod_selector: {aftershock.io/group: "{name}"}
"""


def _write(tmp_path, text):
    path = tmp_path / "p.yaml"
    path.write_text(text)
    (tmp_path / "crd.yaml").write_text("{}\n")  # the manifests a profile names must exist
    return path


def test_a_good_profile_loads(tmp_path):
    profile = load_profile(_write(tmp_path, GOOD))
    assert profile.name == "demo" and profile.start.ready_log == "started"
    assert profile.concept("replica_group")["replicas_path"] == "spec.replicas"
    assert profile.concept("storage_cluster") is None


@pytest.mark.parametrize(("old", "new", "line", "fragment"), [
    ("  command:", "  comand:", 3,
     "unknown field 'start.comand' (did you mean 'command'?)"),
    ("    replicas_path: spec.replicas\n", "", 7, "field 'concepts.replica_group.replicas_path' "
     "is required: a dotted path like spec.replicas"),
    ('  command: ["python", "-m", "demo", "--kubeconfig", "{kubeconfig}"]', "  command: python",
     3, "field 'start.command' must be a list of strings (the command and its arguments)"),
    ("    log: started", "    log: 3", 5,
     "field 'start.ready.log' must be a line its log prints once it is ready, got int 3"),
    ("  replica_group:", "  replica_groop:", 7, "(did you mean 'replica_group'?)"),
    ("concepts:\n", "concepts:\n  node_records:\n    resource: {group: g, version: v1, plural: "
     "rs, kind: R}\n    index_path: a\n    node_path: b\n    touched_path: c\n"
     "    staleness_seconds: 5\n    poll_seconds: 1\n    slots: 3\n"
     "    node_selector: tier in (gpu)\n", 15,
     "field 'concepts.node_records.node_selector': cannot read 'tier in (gpu)' as a label "
     "requirement"),
    ("concepts:\n", "not_applicable:\n  b4: the KEP\nconcepts:\n", 7,
     "field 'not_applicable.b4': a property id like B4 was expected"),
    ("concepts:\n", "not_applicable:\n  B4: ' '\nconcepts:\n", 7,
     "field 'not_applicable.B4': say why it does not apply"),
    # an unfilled {files} made a folder named so beside the profile (the OpenTelemetry
    # operator's first profile)
    ('"{kubeconfig}"]', '"{kubeconfig}", "--dir={files}/tmp"]', 3,
     "field 'start.command' names {files}, which a start gives only with files:"),
    ('"{kubeconfig}"]', '"{kubeconfig}", "--port={port_webhook}"]', 3,
     "field 'start.command' names {port_webhook}, which a start gives only with ports: "
     "[webhook]"),
])
def test_profile_errors_name_file_line_field_and_expectation(tmp_path, old, new, line,
                                                             fragment):
    path = _write(tmp_path, GOOD.replace(old, new))
    with pytest.raises(UserError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message


IN_CLUSTER = """name: demo-in-cluster
install:
  manifests: [crd.yaml]
install_in_cluster:
  image: acme/demo:dev
  build: {context: ., dockerfile: images/demo.Dockerfile}
  manifests: [deploy/demo.yaml]
  deployment: demo
  container: manager
  ready_timeout_seconds: 90
concepts:
  replica_group:
    resource: {group: aftershock.io, version: v1, plural: replicagroups, kind: ReplicaGroup}
    replicas_path: spec.replicas
    pod_selector: {aftershock.io/group: "{name}"}
"""

HELM = """  helm:
    chart: charts/demo
    release: demo
    values: [charts/ci-values.yaml]
    set: {image.repository: acme/demo, replicas: 1}
"""


def test_an_in_cluster_profile_loads_with_manifests(tmp_path):
    profile = load_profile(_write(tmp_path, IN_CLUSTER))
    spec = profile.in_cluster
    assert profile.start is None and profile.in_cluster_only
    assert profile.manifests == ("crd.yaml",)
    assert (spec.image, spec.deployment, spec.container) == ("acme/demo:dev", "demo", "manager")
    assert spec.manifests == ("deploy/demo.yaml",) and spec.helm is None
    assert (spec.build_context, spec.dockerfile) == (".", "images/demo.Dockerfile")
    assert spec.ready_timeout == 90 and spec.service_account == "implementation"


def test_an_in_cluster_profile_loads_with_a_helm_chart_next_to_a_start_form(tmp_path):
    text = IN_CLUSTER.replace("  manifests: [deploy/demo.yaml]\n", HELM)
    text = text.replace("install_in_cluster:", GOOD.split("concepts:")[0].replace(
        "name: demo\n", "") + "install_in_cluster:")
    profile = load_profile(_write(tmp_path, text))
    assert profile.start is not None and not profile.in_cluster_only
    helm = profile.in_cluster.helm
    assert (helm.chart, helm.release, helm.values) == ("charts/demo", "demo",
                                                       ("charts/ci-values.yaml",))
    assert helm.settings == {"image.repository": "acme/demo", "replicas": "1"}
    assert profile.in_cluster.manifests == ()


@pytest.mark.parametrize(("old", "new", "line", "fragment"), [
    ("  image: acme/demo:dev", "  imgae: acme/demo:dev", 5,
     "unknown field 'install_in_cluster.imgae' (did you mean 'image'?)"),
    ("  deployment: demo\n", "", 4, "field 'install_in_cluster' needs either 'deployment' or "
     "'daemonset' (exactly one: what runs the implementation)"),
    ("  deployment: demo\n", "  deployment: demo\n  daemonset: demo\n", 4,
     "field 'install_in_cluster' needs either 'deployment' or 'daemonset'"),
    ("  manifests: [deploy/demo.yaml]\n", "", 4,
     "field 'install_in_cluster' needs either 'manifests' or 'helm' (exactly one)"),
    ("  manifests: [deploy/demo.yaml]\n", "  manifests: [deploy/demo.yaml]\n" + HELM, 4,
     "field 'install_in_cluster' needs either 'manifests' or 'helm' (exactly one)"),
    ("  build: {context: ., dockerfile: images/demo.Dockerfile}",
     "  build: {dockerfile: images/demo.Dockerfile}", 6,
     "field 'install_in_cluster.build' needs either 'context' (a directory with a Dockerfile) "
     "or 'program' (where the profile's built program goes in an image made here), exactly "
     "one"),
    ("  build: {context: ., dockerfile: images/demo.Dockerfile}",
     "  build: {program: /usr/bin/demo}", 6,
     "field 'install_in_cluster.build.program' puts the profile's built program into an "
     "image, but the profile has no 'build'"),
    ("  ready_timeout_seconds: 90", "  ready_timeout_seconds: soon", 10,
     "field 'install_in_cluster.ready_timeout_seconds' must be a whole number or a number, "
     "got str 'soon'"),
])
def test_in_cluster_errors_name_file_line_field_and_expectation(tmp_path, old, new, line,
                                                                fragment):
    assert old in IN_CLUSTER
    path = _write(tmp_path, IN_CLUSTER.replace(old, new))
    with pytest.raises(UserError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message


def test_a_node_agent_profile_loads_with_its_built_program_in_an_image(tmp_path):
    text = IN_CLUSTER.replace("  deployment: demo\n", "  daemonset: demo-agent\n").replace(
        "  build: {context: ., dockerfile: images/demo.Dockerfile}",
        "  build: {program: /usr/bin/demo}").replace(
        "install_in_cluster:", "build: {go: example.com/demo/cmd/demo@v1.0.0}\n"
                               "install_in_cluster:")
    spec = load_profile(_write(tmp_path, text)).in_cluster
    assert spec.workload == ("DaemonSet", "demo-agent")
    assert (spec.program, spec.build_context) == ("/usr/bin/demo", None)


DRIVER = """name: driver
concepts:
  device_driver:
    driver: gpu.example.com
    device_class: gpu.example.com
%s"""


@pytest.mark.parametrize("where", ["", "    prepare_log: x.jsonl\n    node_state: kubelet\n"])
def test_a_driver_is_judged_on_the_node_from_one_source(tmp_path, where):
    path = tmp_path / "driver.yaml"
    path.write_text(DRIVER % where)
    with pytest.raises(UserError) as caught:
        load_profile(path)
    assert str(caught.value).startswith(f"{path}:3: field 'concepts.device_driver' needs "
                                        "either 'prepare_log' (the driver's own log) or "
                                        "'node_state' (what the nodes show), exactly one")


def test_a_driver_node_state_is_a_known_source(tmp_path):
    path = tmp_path / "driver.yaml"
    path.write_text(DRIVER % "    node_state: kubelet\n")
    assert load_profile(path).concept("device_driver")["node_state"] == "kubelet"
    path.write_text(DRIVER % "    node_state: cdi\n")
    with pytest.raises(UserError) as caught:
        load_profile(path)
    assert "node_state" in str(caught.value) and "kubelet" in str(caught.value)


CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: rayclusters.ray.io}
spec:
  group: ray.io
  names: {kind: RayCluster, plural: rayclusters}
  versions:
    - name: v1
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                workerGroupSpecs:
                  type: array
                  items:
                    type: object
                    properties:
                      groupName: {type: string}
                      replicas: {type: integer}
"""
RAY = """name: ray
install:
  manifests: [crd.yaml]
concepts:
  replica_group:
    resource: {group: ray.io, version: v1, plural: rayclusters, kind: RayCluster}
    replicas_path: %s
    pod_selector: {ray.io/cluster: "{name}"}
"""


def test_a_path_into_a_list_element_loads_and_one_the_crd_cannot_hold_is_refused(tmp_path):
    (tmp_path / "ray.yaml").write_text(RAY % "spec.workerGroupSpecs[groupName=workers].replicas")
    (tmp_path / "crd.yaml").write_text(CRD)
    assert load_profile(tmp_path / "ray.yaml").concept("replica_group")
    (tmp_path / "ray.yaml").write_text(RAY % "spec.workerGroupSpecs.replicas")
    with pytest.raises(UserError) as refused:
        load_profile(tmp_path / "ray.yaml")
    assert str(refused.value).endswith(
        "ray.yaml:7: field 'concepts.replica_group.replicas_path' "
        "(spec.workerGroupSpecs.replicas): the CRD rayclusters.ray.io (v1) cannot hold it: "
        "'spec.workerGroupSpecs' is a list: name one element, as in "
        "spec.workerGroupSpecs[0].replicas or spec.workerGroupSpecs[<field>=<value>].replicas"
    ), str(refused.value)


def test_a_part_of_a_concept_is_asked_for_by_a_dotted_name():
    from pathlib import Path

    from aftershock.profile.load import known_concept

    repo = Path(__file__).resolve().parents[2]
    with_queues = load_profile(repo / "profiles" / "gangscheduler-correct.yaml")
    without = load_profile(repo / "profiles" / "kube-scheduler-gang.yaml")
    assert with_queues.concept("gang_scheduler.queue")["cpu_limit_path"] == "spec.limits.cpu"
    assert without.concept("gang_scheduler") and without.concept("gang_scheduler.queue") is None
    assert known_concept("gang_scheduler.queue") and known_concept("gang_scheduler")
    assert not known_concept("gang_scheduler.pod_selector")  # a field, not a part
    assert not known_concept("gang_scheduler.queues")


def test_two_profiles_of_one_dra_driver_are_refused_on_one_cluster_of_real_nodes():
    """The second would meet the first's checkpoint on every node (v0.2.1 of the example
    driver refused v0.4.0's as corrupted, and its scenarios stopped at their first wait)."""
    correct = load_profile("profiles/incluster/drakubelet-correct.yaml")
    faulty = load_profile("profiles/incluster/drakubelet-faulty.yaml")
    with pytest.raises(UserError) as refused:
        node_agents_apart([correct, faulty])
    message = str(refused.value)
    assert "drakubelet-correct" in message and "drakubelet-faulty" in message
    assert "gpu.aftershock.io" in message and "run them apart" in message
    node_agents_apart([correct, correct])  # the same profile again (--repeat) is one driver
    example = load_profile("profiles/thirdparty/dra-example-driver.yaml")
    node_agents_apart([example, correct])  # two drivers of their own names


@pytest.mark.parametrize("field, line", [("install:\n  manifests: [crd.yaml, gone.yaml]", 3),
                                         ("rbac_from: [role.yaml, gone.yaml]", 2)])
def test_a_manifest_or_rbac_file_that_is_gone_is_one_line_at_its_place(tmp_path, field, line):
    """A profile moved to another commit (or folder) whose files are not there any more is
    refused at load, naming the field, the file and its line."""
    (tmp_path / "crd.yaml").write_text("kind: List\nitems: []\n")
    (tmp_path / "role.yaml").write_text("kind: ClusterRole\nrules: []\n")
    profile = tmp_path / "p.yaml"
    profile.write_text(f"name: p\n{field}\nconcepts: {{}}\n")
    with pytest.raises(UserError) as refused:
        load_profile(str(profile))
    message = str(refused.value)
    assert message.startswith(f"{profile}:{line}: field '") and "gone.yaml, which is not a " \
        "file" in message, message


def _base(folder):
    """A profile in its own folder, with a template beside it and a start in a folder of its."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text("base: true\n")
    (folder / "role.yaml").write_text("kind: ClusterRole\nrules: []\n")
    (folder / "code").mkdir(exist_ok=True)
    path = folder / "base.yaml"
    path.write_text(GOOD.replace("name: demo\nstart:\n", "name: demo\ndescription: the base\n"
                                 "rbac_from: [role.yaml]\nstart:\n  cwd: code\n"
                                 "  files: {config.yaml: config.yaml}\n"
                                 "  env: {A: a, B: b}\n"))
    return path


def test_a_profile_that_extends_another_states_only_what_differs(tmp_path):
    """Mappings merge key by key, a list is replaced whole, null removes a key; the base's files
    are found from its folder, and its start's folder stays its own."""
    base = _base(tmp_path / "shipped")
    child = tmp_path / "elsewhere" / "mine.yaml"
    child.parent.mkdir()
    child.write_text(f"extends: {base}\nname: mine\nstart:\n  env: {{B: null, C: c}}\n"
                     "  command: [python, mine.py]\n")
    profile = load_profile(child)
    assert profile.name == "mine" and profile.start.ready_log == "started"  # from the base
    assert profile.start.env == {"A": "a", "C": "c"}
    assert profile.start.command == ("python", "mine.py")
    assert profile.concept("replica_group")["replicas_path"] == "spec.replicas"
    assert profile.resolve("config.yaml") == base.parent / "config.yaml"
    assert profile.workdir == base.parent / "code"
    assert profile.dirs == (child.parent, base.parent)
    (child.parent / "config.yaml").write_text("mine: true\n")  # its own beside it comes first
    assert profile.resolve("config.yaml") == child.parent / "config.yaml"


def test_extends_reaches_the_shipped_profiles_and_the_project(tmp_path):
    from aftershock.profile.files import shipped_profiles

    child = tmp_path / "p.yaml"
    child.write_text('extends: "{aftershock}/thirdparty/grove-d5afd169.yaml"\nname: mine\n'
                     "build: {commit: bebf8469be173678dd2849768d65b08618e1889c}\n")
    profile = load_profile(child)
    assert profile.build.commit.startswith("bebf8469") and profile.build.dir == "operator"
    assert profile.resolve("grove/webhooks.yaml") == \
        shipped_profiles() / "thirdparty" / "grove" / "webhooks.yaml"
    child.write_text('extends: "{project}/base.yaml"\nname: mine\n')
    with pytest.raises(UserError) as refused:
        load_profile(child)
    assert f"{child}:1: field 'extends'" in str(refused.value)
    assert "{project} is the project the profile is in" in str(refused.value)
    (tmp_path / "pyproject.toml").write_text('[project]\ndependencies = ["aftershock"]\n')
    _base(tmp_path)
    assert load_profile(child).start.files == {"config.yaml": "config.yaml"}


@pytest.mark.parametrize(("text", "fragment"), [
    ("extends: nowhere.yaml\nname: x\n", "field 'extends' names nowhere.yaml, which is not a "
                                         "file"),
    ("extends: p.yaml\nname: x\n", "extend each other in a circle (p.yaml → p.yaml)"),
    ("extends: base.yaml\n", "a profile that extends another states its own name"),
    ("extends: [base.yaml]\nname: x\n", "field 'extends': expected the path of a profile"),
    ("extends: base.yaml\nname: x\nstart: {comand: [x]}\n", "unknown field 'start.comand'"),
])
def test_a_wrong_extends_is_one_line_at_its_place(tmp_path, text, fragment):
    _base(tmp_path)
    child = tmp_path / "p.yaml"
    child.write_text(text)
    with pytest.raises(UserError) as refused:
        load_profile(child)
    assert str(refused.value).startswith(f"{child}:"), str(refused.value)
    assert fragment in str(refused.value), str(refused.value)


def test_a_source_tree_is_fetched_when_a_run_needs_it_not_when_the_profile_loads(
        tmp_path, monkeypatch):
    """Loading (collection, --collect-only) fetches nothing; `fetch` does, and then checks the
    files the profile names in the tree."""
    from aftershock.go.builds import SourceUnreachable

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    profile = tmp_path / "p.yaml"
    profile.write_text("name: far\nbuild: {git: 'file:///nowhere/repo', commit: "
                       f"'{'a' * 40}', package: ./cmd}}\n"
                       "install: {manifests: ['{source_dir}/crds/x.yaml']}\nconcepts: {}\n")
    loaded = load_profile(profile)
    assert not (tmp_path / "cache" / "aftershock" / "src").exists() or \
        not any((tmp_path / "cache" / "aftershock" / "src").rglob(".git"))
    with pytest.raises(SourceUnreachable):
        loaded.fetch()


def test_a_replica_group_that_cannot_be_scaled_skips_the_scaling_step():
    """JobSet refuses a change of its replicated jobs: its profile says `scalable: false`, and
    the scaling step skips the scenario (NoConcept) instead of writing a change the API would
    refuse as a harness error; a group that says nothing stays scalable."""
    from types import SimpleNamespace

    from aftershock.bdd.steps.implementation import scale_group
    from aftershock.concepts import NoConcept

    profile = load_profile(REPO / "profiles" / "thirdparty" / "jobset.yaml")
    assert profile.concept("replica_group")["scalable"] is False
    scenario = SimpleNamespace(facts={"profile": profile},
                               concept=lambda name: profile.concept(name))
    with pytest.raises(NoConcept, match=r"cannot be scaled \(replica_group.scalable: false\)"):
        scale_group(scenario, "web", 5)
    assert "scalable" not in load_profile(REPO / "profiles" / "thirdparty" /
                                          "lws.yaml").concept("replica_group")


def test_a_profile_may_only_say_a_property_of_the_catalogue_does_not_apply(tmp_path):
    """Checked before anything starts, as the run's options are: a typo would otherwise leave
    the property judged, silently."""
    from aftershock.pytest_plugin import _known_properties

    good = load_profile(_write(tmp_path, GOOD.replace(
        "concepts:\n", "not_applicable:\n  B4: the KEP says so\nconcepts:\n")))
    assert good.not_applicable == {"B4": "the KEP says so"}
    _known_properties(good)
    typo = load_profile(_write(tmp_path, GOOD.replace(
        "concepts:\n", "not_applicable:\n  B44: the KEP says so\nconcepts:\n")))
    with pytest.raises(UserError) as caught:
        _known_properties(typo)
    assert "names B44, no property of the catalogue; known: B1, B2" in str(caught.value)


def test_a_profile_of_an_operator_with_no_concept_of_ours_names_none(tmp_path):
    """An operator judged by the steps for any resource alone (a descheduler) has no replica
    group, gang or driver to map: its profile may leave `concepts` out, as `concepts: {}`."""
    profile = load_profile(_write(tmp_path, "name: plain\nstart:\n  command: [sleep, '1']\n"))
    assert profile.concepts == {}
    with pytest.raises(UserError, match="concepts"):
        load_profile(_write(tmp_path, "name: plain\nconcepts: [replica_group]\n"))
