"""The proxy between a kubelet and a DRA driver's plugin (aftershock/faults/data/draproxy): its
own Go tests (a registration and a plugin served on sockets of a temp dir: an answer passed on,
one armed for held while the kubelet's unit is stopped, the plugin's socket put back), and how
its lines are read."""

import os
import subprocess

from aftershock.faults import plugin_calls
from aftershock.go import builds

LOG = """\
1796236910.328650 serving endpoint=/var/lib/kubelet/plugins/gpu.aftershock.io/dra.sock
1796236910.337420 call method=NodePrepareResources
1796236910.339623 answered method=NodePrepareResources
1796236911.340326 call method=NodePrepareResources
1796236911.340558 held method=NodePrepareResources action=stop
1796236911.347290 kubelet action=stop
1796236913.341562 dropped method=NodePrepareResources
1796236914.100000 error systemctl start kubelet: exit status 1
"""


def test_the_proxys_own_tests_pass():
    done = subprocess.run(["go", "test", "-count=1", "./..."], cwd=plugin_calls.DRAPROXY.path,
                          capture_output=True, text=True, timeout=540,
                          env={**os.environ, "GOFLAGS": "-mod=readonly", "CGO_ENABLED": "0"})
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_proxy_is_built_from_its_own_files():
    assert builds.LocalBuild(plugin_calls.DRAPROXY.path).digest() == plugin_calls.DRAPROXY.digest()
    assert {p.name for p in plugin_calls.DRAPROXY.path.iterdir()} >= {"go.mod", "go.sum",
                                                                     "main.go"}


def test_its_lines_are_read_with_their_fields_and_an_error_whole():
    lines = plugin_calls.parse("an engine's own words\n" + LOG)
    assert [line.event for line in lines] == ["serving", "call", "answered", "call", "held",
                                              "kubelet", "dropped", "error"]
    assert lines[4].fields == {"method": "NodePrepareResources", "action": "stop"}
    assert lines[4].time == 1796236911.340558
    assert lines[-1].fields == {"error": "systemctl start kubelet: exit status 1"}


class _Proxy:
    node, driver = "node-1", "gpu.aftershock.io"

    def __init__(self, text: str):
        self.text = text

    def lines(self):
        return plugin_calls.parse(self.text)


def test_a_fault_fired_once_the_answer_was_held_and_the_kubelet_went():
    fault = plugin_calls.KubeletGoesInCall(_Proxy(LOG), "NodePrepareResources", "stop")
    assert fault.fired().time == 1796236911.347290
    assert fault.failure() == "systemctl start kubelet: exit status 1"
    assert "stopped as the plugin of gpu.aftershock.io answered a NodePrepareResources" in \
        fault.description


def test_a_fault_armed_for_another_method_has_not_fired():
    assert plugin_calls.KubeletGoesInCall(_Proxy(LOG), "NodeUnprepareResources",
                                          "restart").fired() is None
    unheld = LOG.replace(" held ", " answered ")
    assert plugin_calls.KubeletGoesInCall(_Proxy(unheld), "NodePrepareResources",
                                          "stop").fired() is None
