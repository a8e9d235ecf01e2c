"""Hosts of the cluster as network namespaces on this machine, on one bridge (root only).

Each host is a namespace ``quire-<name>`` with one interface on the bridge ``quire-br`` and an address in
10.77.0.0/24; this machine's own namespace reaches them through the bridge's 10.77.0.1. Nothing leaves the
machine: the subnet has no route out.
"""

import os
import subprocess
from dataclasses import dataclass

BRIDGE = "quire-br"
BRIDGE_ADDRESS = "10.77.0.1"
PREFIX = "quire-"


@dataclass(frozen=True)
class Host:
    name: str
    address: str

    @property
    def namespace(self) -> str:
        return PREFIX + self.name

    def command(self, argv: list[str]) -> list[str]:
        """``argv`` run inside this host's namespace."""
        return ["ip", "netns", "exec", self.namespace, *argv]


def _ip(*args: str, check: bool = True) -> None:
    subprocess.run(["ip", *args], check=check, capture_output=True)


def need_root() -> str | None:
    """Why the cluster cannot be built here, or None."""
    if os.geteuid() != 0:
        return "the cluster's network namespaces need root (ip netns); run as root"
    if subprocess.run(["ip", "netns", "list"], capture_output=True).returncode != 0:
        return "`ip netns` does not work on this machine"
    return None


def build(hosts: list[Host]) -> None:
    tear_down(hosts)
    _ip("link", "add", BRIDGE, "type", "bridge")
    _ip("addr", "add", f"{BRIDGE_ADDRESS}/24", "dev", BRIDGE)
    _ip("link", "set", BRIDGE, "up")
    for host in hosts:
        outside = f"qv-{host.name}"[:15]
        _ip("netns", "add", host.namespace)
        _ip("link", "add", outside, "type", "veth", "peer", "name", "eth0", "netns", host.namespace)
        _ip("link", "set", outside, "master", BRIDGE, "up")
        inside = ["ip", "-n", host.namespace]
        subprocess.run([*inside, "addr", "add", f"{host.address}/24", "dev", "eth0"], check=True)
        subprocess.run([*inside, "link", "set", "eth0", "up"], check=True)
        subprocess.run([*inside, "link", "set", "lo", "up"], check=True)


def tear_down(hosts: list[Host]) -> None:
    """Remove the namespaces and the bridge (what a killed run left, too); their processes must be gone."""
    for host in hosts:
        _ip("netns", "del", host.namespace, check=False)
    _ip("link", "del", BRIDGE, check=False)
