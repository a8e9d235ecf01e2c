"""Office figures for ``/metrics``, read at scrape time from the host this process uses (never started by it):
its own, or the machine's shared one (``office/host_client.py``), which every server process reports alike."""

from django.conf import settings
from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

from office import runtime
from office.exceptions import ConverterUnavailable
from office.host_client import RemoteHost


def host_reported() -> "runtime.HostRuntime | RemoteHost | None":
    """The host this process's figures and alerts are about: the one it runs, or else the machine's shared one
    (asked without being started: its service is ``manage.py office_host``); None for a host of the process's
    own that has not started."""
    current = runtime.host_runtime_current()
    if current is None and settings.OFFICE_HOST == "shared":
        return RemoteHost(settings.OFFICE_HOST_SOCKET)
    return current


def office_alerts() -> list:
    """The Overview's alert when the Office host does not answer (processing/upkeep/alerts.py)."""
    from processing import facade as processing

    host = host_reported()
    try:
        if host is not None:
            host.snapshot()
    except ConverterUnavailable:
        return [
            processing.Alert(
                "QuireOfficeHostDown",
                "The Office conversion host does not answer: previews fail until it is back (is manage.py "
                f"office_host running on {settings.OFFICE_HOST_SOCKET}?).",
            )
        ]
    return []


class OfficeCollector:
    def collect(self):
        current = host_reported()
        if current is None:
            return
        try:
            snap = current.snapshot()
        except ConverterUnavailable:  # the machine's preview service is not answering
            yield GaugeMetricFamily("quire_office_host_up", "The Office host answers", value=0)
            return
        yield GaugeMetricFamily("quire_office_host_up", "The Office host answers", value=1)
        queue = GaugeMetricFamily("quire_office_queue_length", "Queued conversions", labels=["priority"])
        queue.add_metric(["foreground"], snap.queued_foreground)
        queue.add_metric(["background"], snap.queued_background)
        yield queue
        lookups = snap.cache_hits + snap.cache_misses
        for name, text, value in [
            ("running", "Conversions holding a permit", snap.running),
            ("readers", "Readers waiting for a PDF", snap.readers),
            ("reserved_source_bytes", "Source bytes reserved by running conversions", snap.reserved_bytes),
            ("cache_entries", "Ready PDFs kept", snap.cache_entries),
            ("cache_bytes", "Bytes of ready PDFs kept", snap.cache_bytes),
            ("cache_hit_ratio", "Cache hits over all readers", snap.cache_hits / lookups if lookups else 0.0),
            ("converter_generation", "Current converter lifetime", snap.generation),
        ]:
            yield GaugeMetricFamily(f"quire_office_{name}", text, value=value)
        yield CounterMetricFamily("quire_office_cache_hits", "Cache hits", value=snap.cache_hits)
        yield CounterMetricFamily("quire_office_cache_misses", "Other readers", value=snap.cache_misses)
        outcomes = CounterMetricFamily("quire_office_conversions", "By outcome", labels=["outcome"])
        for outcome, count in sorted(snap.outcomes.items()):
            outcomes.add_metric([outcome], count)
        yield outcomes

    def describe(self):
        return []  # figures exist only once the host has started


_registered: list[OfficeCollector] = []


def collector_register() -> None:
    if not _registered:
        _registered.append(OfficeCollector())
        REGISTRY.register(_registered[0])
