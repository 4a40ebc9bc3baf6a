"""Implementations built from a source tree at one commit (``build: {git, commit, dir,
package}``): fetched shallow through git's own settings (a URL mapped to a mirror with
``insteadOf``, as a machine without GitHub does), built in the module's own directory (its
``replace`` lines hold), cached by commit; a source that cannot be reached is one line naming
the URL and how to map it; a wrong build map is file:line."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

import pytest

from aftershock.errors import UserError
from aftershock.go import builds as gobuild
from aftershock.go.builds import GoBuild, SourceBuild, SourceUnreachable
from aftershock.profile.load import load_profile

URL = "https://git.example.invalid/acme/operator"
MAIN = """package main

import (
\t"fmt"

\t"acme.example/api"
)

func main() { fmt.Println(api.Name) }
"""


def _git(cwd, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture
def repository(tmp_path, monkeypatch):
    """A repository with an operator module that needs its sibling api/ through a replace
    line (as Grove's operator needs ../scheduler/api), mapped from URL by insteadOf."""
    repo = tmp_path / "mirror"
    (repo / "operator" / "cmd").mkdir(parents=True)
    (repo / "api").mkdir()
    (repo / "api" / "go.mod").write_text("module acme.example/api\n\ngo 1.22\n")
    (repo / "api" / "api.go").write_text('package api\n\nconst Name = "from the sibling"\n')
    (repo / "operator" / "go.mod").write_text(
        "module acme.example/operator\n\ngo 1.22\n\nrequire acme.example/api v0.0.0\n\n"
        "replace acme.example/api => ../api\n")
    (repo / "operator" / "cmd" / "main.go").write_text(MAIN)
    (repo / "operator" / "crds").mkdir()
    (repo / "operator" / "crds" / "crd.yaml").write_text("{}\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", f"url.file://{repo}.insteadOf")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", URL)
    monkeypatch.setenv("GOFLAGS", "")
    return repo, _git(repo, "rev-parse", "HEAD")


def test_a_source_tree_is_fetched_through_insteadof_and_built_in_its_module(repository):
    repo, commit = repository
    build = SourceBuild.parse({"git": URL, "commit": commit, "dir": "operator",
                               "package": "./cmd", "binary": "acme-operator"})
    program = gobuild.ensure(build, progress=lambda _: None)
    assert subprocess.run([program], capture_output=True, text=True).stdout == \
        "from the sibling\n"
    tree = gobuild.source_tree(build)
    assert tree.parent.parent == gobuild.source_root() and tree.name == commit
    assert gobuild.values(build) == {"module_dir": str(tree / "operator"),
                                     "source_dir": str(tree)}
    assert _git(tree, "rev-parse", "HEAD") == commit
    # cached: the mirror may go away, the build stands
    (repo / ".git").rename(repo / "gone")
    assert gobuild.ensure(build, progress=lambda _: None) == program


def test_a_source_that_cannot_be_reached_is_one_line_naming_url_and_mirror(repository,
                                                                          monkeypatch):
    _, commit = repository
    monkeypatch.setenv("GIT_CONFIG_COUNT", "0")
    build = SourceBuild.parse({"git": URL, "commit": commit})
    with pytest.raises(UserError) as refused:
        gobuild.source_tree(build)
    message = str(refused.value)
    assert message.startswith(f"cannot fetch {URL} at {commit}: "), message
    assert f"url.<mirror>.insteadOf {URL}" in message and "\n" not in message
    # the per-process form, which the test above fetches through, is offered too
    assert ("GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=url.<mirror>.insteadOf "
            f"GIT_CONFIG_VALUE_0={URL}") in message
    assert not list(gobuild.source_root().rglob(commit))  # nothing half-fetched left


def test_a_profile_built_from_a_source_tree_fills_module_dir(repository, tmp_path):
    _, commit = repository
    path = tmp_path / "p.yaml"
    path.write_text(PROFILE.format(url=URL, commit=commit))
    profile = load_profile(path)
    assert isinstance(profile.build, SourceBuild) and profile.build.binary == "cmd"
    assert profile.resolve("{module_dir}/crds/crd.yaml").is_file()


def test_more_programs_of_a_source_tree_build_each_beside_the_first(repository, tmp_path):
    """KAI-scheduler needs its scheduler and its binder: ``build.more`` names more packages of
    the same tree, each built (and cached) as the program of that name."""
    repo, _ = repository
    (repo / "operator" / "cmd" / "binder").mkdir()
    (repo / "operator" / "cmd" / "binder" / "main.go").write_text(
        'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("binder") }\n')
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "binder")
    path = tmp_path / "p.yaml"
    path.write_text(PROFILE.format(url=URL, commit=_git(repo, "rev-parse", "HEAD")).replace(
        "  package: ./cmd\n", "  package: ./cmd\n  more: {binder: ./cmd/binder}\n"))
    profile = load_profile(path)
    [(name, build)] = profile.more_builds.items()
    assert (name, build.package, build.binary) == ("binder", "./cmd/binder", "binder")
    made = gobuild.ensure(build, progress=lambda _: None)
    assert made.name == "binder"
    assert subprocess.run([made], capture_output=True, text=True).stdout == "binder\n"


def test_more_programs_of_a_published_module_are_its_packages_at_its_version(tmp_path):
    """Kyverno's admission controller and its background controller: two packages of one
    module, each built at the build's version, as the build is (in the module's own
    directory)."""
    path = tmp_path / "p.yaml"
    path.write_text("name: k\nbuild:\n  go: x.io/k/cmd/kyverno@v1.19.1\n  own_module: true\n"
                    "  more: {background: x.io/k/cmd/background-controller}\n" + REST)
    profile = load_profile(path)
    [(name, build)] = profile.more_builds.items()
    assert isinstance(build, GoBuild)
    assert (name, build.package, build.version, build.binary, build.own_module) == (
        "background", "x.io/k/cmd/background-controller", "v1.19.1", "background", True)


PROFILE = """name: acme
build:
  git: {url}
  commit: {commit}
  dir: operator
  package: ./cmd
install:
  manifests: ["{{module_dir}}/crds/crd.yaml"]
start:
  command: ["{{binary}}"]
  ready: {{log: started}}
concepts:
  replica_group:
    resource: {{group: acme.io, version: v1, plural: groups, kind: Group}}
    replicas_path: spec.replicas
    pod_selector: {{app: "{{name}}"}}
"""


REST = """start:
  command: [x]
  ready: {log: s}
concepts:
  replica_group:
    resource: {group: a.io, version: v1, plural: gs, kind: G}
    replicas_path: spec.replicas
    pod_selector: {app: x}
"""


@pytest.mark.parametrize(("build", "line", "fragment"), [
    ("  git: https://x.invalid/a\n  commit: main\n", 4,
     "field 'build.commit': 'main' is not a full commit id (40 hex digits)"),
    ("  git: https://x.invalid/a\n", 2,
     "field 'build.commit' is required with 'git' (the full commit id to build)"),
    ("  go: x.io/a/cmd@v1.0.0\n  git: https://x.invalid/a\n", 2,
     "field 'build' needs one of 'go' (a published module), 'git' (a source tree at a commit) "
     "or 'path'"),
    ("  path: nowhere\n", 3, "field 'build.path': "),
    ("  path: .\n  commit: " + "a" * 40 + "\n", 4,
     "field 'build.commit' goes with 'go' or 'git', not 'path'"),
    ("  go: x.io/a/cmd@v1.0.0\n  dir: operator\n", 4,
     "field 'build.dir' goes with 'git', not 'go'"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 + "\n  dir: ../up\n", 5,
     "field 'build.dir': '../up' is not a folder inside the repository"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 + "\n  own_module: true\n", 5,
     "field 'build.own_module' goes with 'go'"),
    ("  path: .\n  more: {binder: ./cmd/binder}\n", 4,
     "field 'build.more' goes with 'go' or 'git', not 'path'"),
    ("  go: x.io/a/cmd@v1.0.0\n  more: {binder: x.io/a/cmd/binder@v1.0.0}\n", 4,
     "field 'build.more.binder' must be a package of the same module"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 + "\n  more: {Binder-2: ./b}\n", 5,
     "field 'build.more': 'Binder-2' is not a name for a placeholder"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 + "\n  more: {b: {git: https://y}}\n",
     5, "field 'build.more.b' must be a package of the same tree or a map with git and commit"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 +
     "\n  more: {b: {git: https://y, commit: main}}\n", 5,
     "field 'build.more.b.commit': 'main' is not a full commit id"),
    ("  go: x.io/a/cmd@v1.0.0\n  patches: [fix.patch]\n", 4,
     "field 'build.patches[0]': no file "),
    ("  path: .\n  patches: [fix.patch]\n", 4,
     "field 'build.patches' goes with 'go' or 'git', not 'path'"),
    ("  go: x.io/a/cmd@v1.0.0\n  toolchain: 1.27.3\n", 4,
     "field 'build.toolchain': '1.27.3' is not a Go toolchain (expected a name such as "
     "go1.27.3)"),
    ("  git: https://x.invalid/a\n  commit: " + "a" * 40 + "\n  toolchain: latest\n", 5,
     "field 'build.toolchain': 'latest' is not a Go toolchain"),
])
def test_a_wrong_build_map_names_file_line(tmp_path, build, line, fragment):
    path = tmp_path / "p.yaml"
    path.write_text("name: acme\nbuild:\n" + build + REST)
    with pytest.raises(UserError) as caught:
        load_profile(path)
    message = str(caught.value)
    assert message.startswith(f"{path}:{line}: "), message
    assert fragment in message, message


def test_a_build_that_names_a_toolchain_runs_the_go_command_with_it(tmp_path):
    """A module whose go.mod needs a newer Go than the machine's (Karpenter's) names the
    toolchain the go command is to take; every other build keeps the machine's Go alone."""
    path = tmp_path / "p.yaml"
    path.write_text("name: acme\nbuild:\n  go: x.io/a/cmd@v1.0.0\n  toolchain: go1.27.3\n"
                    + REST)
    build = load_profile(path).build
    assert build.toolchain == "go1.27.3"
    assert gobuild._env(build.toolchain)["GOTOOLCHAIN"] == "go1.27.3"
    assert gobuild._env(GoBuild.parse("x.io/a/cmd@v1.0.0").toolchain)["GOTOOLCHAIN"] == "local"


def test_a_module_of_the_project_is_built_from_its_folder_and_pinned_by_its_files(tmp_path):
    """build: {path: ...}: the reference kubelet plugin's form; an edit is another build."""
    module = tmp_path / "plugin"
    module.mkdir()
    (module / "go.mod").write_text("module acme.example/plugin\n\ngo 1.22\n")
    (module / "main.go").write_text("package main\n\nfunc main() {}\n")
    profile = tmp_path / "p.yaml"
    profile.write_text("name: acme\nbuild:\n  path: plugin\n" + REST)
    build = load_profile(profile).build
    assert build.path == module and build.binary == "plugin"
    before = build.pinned
    (module / "main.go").write_text("package main\n\nfunc main() { println() }\n")
    assert build.pinned != before and before.startswith("plugin@")


def test_a_module_the_proxy_refuses_is_an_unreachable_source_naming_the_file_proxy(
        repository):
    """Grove needs a module the proxy refuses (403): a build that stops there is an
    unreachable source (its tests are skipped, naming why), not a failure of the build."""
    repo, _ = repository
    operator = repo / "operator"
    (operator / "go.mod").write_text(
        "module acme.example/operator\n\ngo 1.22\n\nrequire golang.org/x/nonexistent-aftershock "
        "v0.0.1\n")
    fake = "h1:" + "A" * 43 + "="
    (operator / "go.sum").write_text(
        f"golang.org/x/nonexistent-aftershock v0.0.1 {fake}\n"
        f"golang.org/x/nonexistent-aftershock v0.0.1/go.mod {fake}\n")
    (operator / "cmd" / "main.go").write_text(
        'package main\n\nimport _ "golang.org/x/nonexistent-aftershock"\n\nfunc main() {}\n')
    _git(repo, "add", ".")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "two")
    build = SourceBuild.parse({"git": URL, "commit": _git(repo, "rev-parse", "HEAD"),
                               "dir": "operator", "package": "./cmd"})
    with pytest.raises(SourceUnreachable) as refused:
        gobuild.ensure(build, progress=lambda _: None)
    message = str(refused.value)
    assert "a module it needs was refused" in message and "nonexistent-aftershock" in message
    assert "GOPROXY=file:///dir" in message


def _publish(proxy, module: str, version: str, files: dict[str, str]) -> None:
    """A module version in a file proxy (GOPROXY=file://...), as the module proxy serves it."""

    where = proxy / module / "@v"
    where.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(where / f"{version}.zip", "w") as archive:
        for name, text in files.items():
            archive.writestr(f"{module}@{version}/{name}", text)
    (where / f"{version}.mod").write_text(files["go.mod"])
    (where / f"{version}.info").write_text(f'{{"Version":"{version}"}}')
    with (where / "list").open("a") as listing:
        listing.write(version + "\n")


def test_a_published_module_with_replace_lines_builds_in_its_own_module(tmp_path, monkeypatch):
    """A published module whose go.mod replaces a dependency with another version (as the
    scheduler-plugins replace every k8s.io staging module): built in a module of ours that
    requires it, its replace lines are ignored and the build fails; built in its own directory
    (build.own_module), they hold."""
    proxy = tmp_path / "proxy"
    for version, extra in (("v1.0.0", ""), ("v1.1.0", 'const New = "replaced"\n')):
        _publish(proxy, "acme.example/dep", version, {
            "go.mod": "module acme.example/dep\n\ngo 1.22\n",
            "dep.go": f"package dep\n\n{extra}"})
    for name, value in (("XDG_CACHE_HOME", tmp_path / "cache"), ("GOMODCACHE", tmp_path / "mod"),
                        ("GOPROXY", f"file://{proxy}"), ("GOSUMDB", "off"), ("GOFLAGS", "")):
        monkeypatch.setenv(name, str(value))
    sums = []
    for version in ("v1.0.0", "v1.1.0"):
        info = subprocess.run(["go", "mod", "download", "-json", f"acme.example/dep@{version}"],
                              capture_output=True, text=True, check=True, cwd=tmp_path).stdout
        got = json.loads(info)
        sums += [f"acme.example/dep {version} {got['Sum']}",
                 f"acme.example/dep {version}/go.mod {got['GoModSum']}"]
    _publish(proxy, "acme.example/tool", "v1.0.0", {
        "go.mod": "module acme.example/tool\n\ngo 1.22\n\nrequire acme.example/dep v1.0.0\n\n"
                  "replace acme.example/dep => acme.example/dep v1.1.0\n",
        "go.sum": "\n".join(sums) + "\n",
        "main.go": 'package main\n\nimport (\n\t"fmt"\n\n\t"acme.example/dep"\n)\n\n'
                   "func main() { fmt.Println(dep.New) }\n"})
    consumer = gobuild.GoBuild.parse("acme.example/tool@v1.0.0")
    with pytest.raises(UserError, match=r"undefined: dep\.New"):
        gobuild.ensure(consumer, progress=lambda _: None)
    own = gobuild.GoBuild.parse("acme.example/tool@v1.0.0", own_module=True)
    program = gobuild.ensure(own, progress=lambda _: None)
    assert subprocess.run([program], capture_output=True, text=True).stdout == "replaced\n"


def test_a_patched_module_is_built_from_a_patched_copy_and_cached_apart(tmp_path, monkeypatch):
    """build.patches: a fix tried on the very version a bug was found in. The patch is applied
    to a copy (the module cache stays as downloaded), the patched program is cached apart from
    the unpatched one, and a patch that does not apply is one line naming it."""
    proxy = tmp_path / "proxy"
    _publish(proxy, "acme.example/tool", "v1.0.0", {
        "go.mod": "module acme.example/tool\n\ngo 1.22\n",
        "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("bug") }\n'})
    for name, value in (("XDG_CACHE_HOME", tmp_path / "cache"), ("GOMODCACHE", tmp_path / "mod"),
                        ("GOPROXY", f"file://{proxy}"), ("GOSUMDB", "off"), ("GOFLAGS", "")):
        monkeypatch.setenv(name, str(value))
    fix = tmp_path / "fix.patch"
    fix.write_text("--- a/main.go\n+++ b/main.go\n@@ -3,3 +3,3 @@\n import \"fmt\"\n \n"
                   '-func main() { fmt.Println("bug") }\n+func main() { fmt.Println("fixed") }\n')
    plain = gobuild.GoBuild.parse("acme.example/tool@v1.0.0")
    fixed = gobuild.GoBuild.parse("acme.example/tool@v1.0.0", patches=(fix,))
    assert fixed.own_module and "patched with fix.patch@" in fixed.pinned
    for build, said in ((plain, "bug\n"), (fixed, "fixed\n")):
        program = gobuild.ensure(build, progress=lambda _: None)
        assert subprocess.run([program], capture_output=True, text=True).stdout == said
    assert "fixed" not in (gobuild.module_dir(plain) / "main.go").read_text()
    fix.write_text(fix.read_text().replace("bug", "other"))
    with pytest.raises(UserError, match=r"^patch .*fix\.patch does not apply to "
                                        r"acme\.example/tool@v1\.0\.0 patched with"):
        gobuild.ensure(gobuild.GoBuild.parse("acme.example/tool@v1.0.0", patches=(fix,)),
                       progress=lambda _: None)


def test_two_runs_at_once_build_a_program_once(tmp_path, monkeypatch):
    """pytest-xdist's workers, or explore's, may need the same program at once: the second
    waits for the first's build and takes it, instead of building it again and replacing the
    directory the first may be running from."""
    import threading
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(gobuild, "go_version", lambda toolchain="": "go1.0")
    builds = []

    def compile_(build, command, cwd, say, began, env):
        builds.append(command)
        time.sleep(0.3)  # long enough for the other thread to arrive while this one builds
        Path(command[command.index("-o") + 1]).write_text("program")

    monkeypatch.setattr(gobuild, "_compile", compile_)
    monkeypatch.setattr(gobuild, "module_dir", lambda build: tmp_path)
    wanted = SourceBuild(URL, "a" * 40, binary="manager")
    found = []
    threads = [threading.Thread(target=lambda: found.append(gobuild.ensure(wanted)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1 and len(found) == 2 and found[0] == found[1]


def test_a_profile_checks_its_files_in_the_tree_once_a_run_fetches_it(repository, tmp_path):
    """Loading it (collection, --collect-only) fetches nothing; `fetch`, as a run does, fetches
    the tree and refuses a file the tree at that commit does not have, at its line."""
    from aftershock.errors import UserError
    from aftershock.profile.load import load_profile

    _, commit = repository
    profile = tmp_path / "moved.yaml"
    profile.write_text(f"name: moved\nbuild: {{git: '{URL}', commit: '{commit}', dir: operator, "
                       "package: ./cmd}\ninstall:\n  manifests:\n"
                       "    - '{module_dir}/crds/crd.yaml'\n    - '{module_dir}/crds/gone.yaml'\n"
                       "concepts: {}\n")
    loaded = load_profile(profile)
    assert not gobuild.is_fetched(loaded.build)
    with pytest.raises(UserError) as refused:
        loaded.fetch()
    assert gobuild.is_fetched(loaded.build)
    assert str(refused.value).startswith(f"{profile}:6: field 'install.manifests' names "
                                         "{module_dir}/crds/gone.yaml, which is not a file")
