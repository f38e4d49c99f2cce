"""The 14 graded kestrel facts as DESIGN.md states them: reference data shared by tests."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    """A labelled value, as the graders take them."""

    label: str
    value: str


KESTREL_GRADED = {
    "ledger service port": "62114",
    "install lock path": "/opt/kestrel/state/install.lock",
    "backup cutoff": "2026-07-14 01:26 UTC",
    "admin console port": "47031",
    "ledger shard count": "19 shards",
    "on-call handle": "@marta.v-oncall",
    "tenant UUID": "3f1c9a52-7d4e-4b8a-9e21-c5d0b7a6f413",
    "freeze start": "2026-07-18T22:45Z",
    "certificate expiry": "2026-08-02 06:10 UTC",
    "cache origin": "https://origin-7.cdn.kestrel-internal.net/assets",
    "DNS zone": "zone-b.kestrel-internal.net",
    "signing key id": "kid-7F3A9C21",
    "owning department": "Отдел расчётов-4",
    "release tag": "v4.18.2-rc3",
}

KESTREL_FACTS = [Fact(label, value) for label, value in KESTREL_GRADED.items()]
"""The same facts as objects, in DESIGN.md's order."""
