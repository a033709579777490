"""RDMA profiles: ``rdma.ome.io/auto-inject: "true"`` with ``rdma.ome.io/profile``.

Docs: reference/api/labels-and-annotations.md ("Keys you set": ``rdma.ome.io/auto-inject``, ``rdma.ome.io/profile``,
``rdma.ome.io/container-name``). Values the docs leave to the source (each profile's environment, volume sources,
the order and merge of each field): ome-projects/ome v1.3 pkg/webhook/admission/pod/rdma_injector.go.
"""
from __future__ import annotations

import json
from dataclasses import dataclass

from omerender.gorules import gojson
from .pod import MAIN_CONTAINER, Pod, add_mount, shown

AUTO_INJECT, PROFILE, CONTAINER = "rdma.ome.io/auto-inject", "rdma.ome.io/profile", "rdma.ome.io/container-name"
DEFAULT_PROFILE = "oci-roce"
FLAGS = {AUTO_INJECT: "no RDMA profile is applied"}   # rdma_injector.go: autoInject == "true" (ome.flags)
NETWORKS = "k8s.v1.cni.cncf.io/networks"   # Multus' pod annotation
DSHM = {"name": "dshm", "emptyDir": {"medium": "Memory"}}
DEVINF = {"name": "devinf", "hostPath": {"path": "/dev/infiniband"}}
MOUNTS = (("dshm", "/dev/shm"), ("devinf", "/dev/infiniband"))


@dataclass(frozen=True)
class Profile:
    env: tuple[tuple[str, str], ...] = ()
    volumes: tuple[dict, ...] = ()
    mounts: tuple[tuple[str, str], ...] = ()
    capabilities: tuple[str, ...] = ()    # securityContext.capabilities.add; none: the container is left alone
    networks: tuple[tuple[str, str], ...] = ()   # Multus attachments (name, namespace)


# oci-roce: v1.3 dropped UCX_TLS and UCX_NET_DEVICES, CAP_SYS_ADMIN and privileged (docs: "On v1.2.2 ...").
_OCI_ROCE_ENV = {
    "NCCL_NET_PLUGIN": "none", "NCCL_DEBUG": "INFO", "NCCL_CROSS_NIC": "2", "NCCL_SOCKET_NTHREADS": "16",
    "NCCL_CUMEM_ENABLE": "0", "NCCL_IB_SPLIT_DATA_ON_QPS": "0", "NCCL_IB_QPS_PER_CONNECTION": "16",
    "NCCL_IB_GID_INDEX": "3",
    "NCCL_IB_HCA": "=" + ",".join(f"mlx5_{i}" for i in (0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15, 16, 17)),
    "NCCL_IB_TC": "41", "NCCL_IB_SL": "0", "NCCL_IB_TIMEOUT": "22", "HCOLL_ENABLE_MCAST_ALL": "0",
    "coll_hcoll_enable": "0", "RX_QUEUE_LEN": "8192", "IB_RX_QUEUE_LEN": "8192", "NCCL_SOCKET_IFNAME": "eth0",
    "NCCL_IGNORE_CPU_AFFINITY": "1", "GLOO_SOCKET_IFNAME": "eth0",
}
_CKS_GB_SGLANG_ENV = {
    "MC_TE_METRIC": "true", "NCCL_MNNVL_ENABLE": "1", "NCCL_CUMEM_ENABLE": "1", "NCCL_IB_ADDR_FAMILY": "AF_INET6",
    "NCCL_SOCKET_IFNAME": "eth0", "NCCL_SOCKET_FAMILY": "AF_INET6",
}
# The webhook appends a profile's variables in name order (it sorts the keys for a stable pod).
PROFILES = {
    "oci-roce": Profile(tuple(sorted(_OCI_ROCE_ENV.items())), (DSHM, DEVINF), MOUNTS, ("IPC_LOCK",)),
    "cks-gb-sglang": Profile(tuple(sorted(_CKS_GB_SGLANG_ENV.items())), (DSHM, DEVINF), MOUNTS, ("IPC_LOCK",)),
    # 4 HCAs x 4 ports of the GB200/GB300 nodes, as NetworkAttachmentDefinitions in cw-multus; nothing else
    "cks-gb-rdma": Profile(networks=tuple((f"ibs{hca}p{port}-macvlan", "cw-multus")
                                          for hca in range(4) for port in range(4))),
}
_ATTACHMENT = gojson.struct("pod.NetworkAttachment", ("name", gojson.STRING), ("namespace", gojson.STRING))
NETWORKS_TYPE = gojson.slice_of(_ATTACHMENT)


def inject(pod: Pod) -> None:
    """The profile's volumes, Multus attachments, then the target container's environment, mounts and capability;
    each only where the pod lacks it, so a runtime's own value wins and nothing is added twice."""
    if pod.annotation(AUTO_INJECT) != "true":
        return
    name = pod.annotation(PROFILE) or DEFAULT_PROFILE
    profile = PROFILES.get(name)
    if profile is None:
        raise pod.denied(f"unknown RDMA profile: {shown(name)} ({PROFILE}); OME v1.3 has "
                         f"{', '.join(PROFILES)}")
    container = pod.container(pod.annotation(CONTAINER) or MAIN_CONTAINER)
    if container is None:   # the webhook skips a pod without the target container
        return
    for volume in profile.volumes:
        pod.add_volume(volume)
    _merge_networks(pod, profile.networks)
    _add_env(container, profile.env)
    for volume_name, path in profile.mounts:
        add_mount(container, volume_name, path)
    if profile.capabilities:
        _add_capabilities(container, profile.capabilities)


def _add_env(container: dict, env: tuple[tuple[str, str], ...]) -> None:
    present = {e.get("name") for e in container.get("env") or []}
    added = [{"name": k, "value": v} for k, v in env if k not in present]
    if added:
        container["env"] = list(container.get("env") or []) + added


def _add_capabilities(container: dict, capabilities: tuple[str, ...]) -> None:
    """A container without a securityContext, or without capabilities, gets the profile's; otherwise each missing
    capability is appended. ``privileged`` is never set (no v1.3 profile sets it)."""
    context = container.get("securityContext")
    if not isinstance(context, dict):
        context = container["securityContext"] = {}
    caps = context.get("capabilities")
    if not isinstance(caps, dict):
        caps = context["capabilities"] = {}
    add = list(caps.get("add") or [])
    add += [c for c in capabilities if c not in add]
    caps["add"] = add


def _merge_networks(pod: Pod, networks: tuple[tuple[str, str], ...]) -> None:
    """Attachments merged into ``k8s.v1.cni.cncf.io/networks`` by (name, namespace): the annotation is decoded as
    the webhook decodes it (a JSON array of {name, namespace}; other fields are dropped) and written back as Go's
    json.Marshal writes it."""
    if not networks:
        return
    raw = pod.annotation(NETWORKS) or ""
    merged: list[tuple[str, str]] = []
    if raw:
        try:
            decoded = gojson.decode(gojson.scan(raw), NETWORKS_TYPE) or []
        except gojson.GoJSONError as err:
            raise pod.denied(f"rdma-injector: {NETWORKS} annotation is not a valid JSON array: {err}") from None
        merged = [((d or {}).get("name", ""), (d or {}).get("namespace", "")) for d in decoded]
    seen = set(merged)
    for attachment in networks:
        if attachment not in seen:
            merged.append(attachment)
            seen.add(attachment)
    pod.annotations[NETWORKS] = go_marshal([{"name": n, **({"namespace": ns} if ns else {})} for n, ns in merged])


def go_marshal(value) -> str:
    """JSON as Go's json.Marshal writes it: compact, with <, >, & and U+2028/U+2029 escaped."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, code in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                       ("\u2029", "\\u2029")):
        text = text.replace(char, code)
    return text
