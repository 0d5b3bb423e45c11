"""AWS region and zone names: which region a zone belongs to (one home for `plan`'s pasted Nodes and `explain`'s
logs)."""

from __future__ import annotations

import re

# us-east-1, us-gov-west-1, ap-southeast-4: an AWS region's name (another cloud's, "eastus2" or "us-central1", is not)
AWS_REGION = re.compile(r"[a-z]{2}(?:-gov|-iso[a-z]?)?-[a-z]+-\d+")
# A Local Zone ("us-west-2-lax-1a") or Wavelength Zone ("us-east-1-wl1-bos-wlz-1") of its parent region
LOCAL_ZONE = re.compile(r"^(?P<region>[a-z]{2}(?:-gov)?-[a-z]+-\d+)-(?:[a-z]{3}-\d[a-z]|wl\d-[a-z]+-wlz-\d)$")


def region_of_zone(zone: str) -> str | None:
    """us-west-2a -> us-west-2; a Local or Wavelength Zone -> its parent region; None for a name that is not a
    zone of this shape."""
    if (local := LOCAL_ZONE.match(zone)) is not None:
        return local.group("region")
    return zone[:-1] if zone[-1:].isalpha() and zone[-2:-1].isdigit() else None


__all__ = ["AWS_REGION", "LOCAL_ZONE", "region_of_zone"]
