"""EKS Fargate On-Demand rates per region (USD per vCPU-hour and per GB-hour), with where each comes from.

EKS Fargate runs Linux/x86 only (no Arm, no Spot; `shared/data/fargate.md` §3), so the x86 rates price every
pod; the Linux/ARM rates are recorded where a source gives them, for reference. A region without a known rate
is never priced at $0: the plan stops and names `--fargate-prices cpu=<USD>,memory=<USD>`, which supplies one.

Sources (docs/catalog.md lists them too):
- `PAGE`: AWS's published Fargate pricing page (https://aws.amazon.com/fargate/pricing/), whose per-region rates
  are rendered by script; the region table was transcribed from it into github.com/theuves/fgcalc
  `src/utils/data.js` @ 5049a5e (2021-01-10). Fargate's rates have not changed since the January 2019 price
  cut: the four regions below with later sources agree with it to the last digit.
- `VANTAGE`: vantage.sh/blog/fargate-pricing (first published 2021-04-22, still quoted 2026-03-10): us-east-1
  x86 and ARM.
- `PRICE_LIST`: public project files quoting the AWS Price List (AmazonECS) usage types and SKUs
  (`shared/data/fargate.md` §3): eu-west-1 (2026-05-01), ap-northeast-2 (2026-08-31), us-west-2 (worked back
  from a cost printout).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from types import MappingProxyType

PAGE = "aws.amazon.com/fargate/pricing via github.com/theuves/fgcalc src/utils/data.js @ 5049a5e, 2021-01-10"
VANTAGE = "vantage.sh/blog/fargate-pricing, 2021-04-22 (quoted unchanged 2026-03-10)"
PRICE_LIST = "AWS Price List (AmazonECS) SKUs quoted in public project files, 2026"
FLAG = "--fargate-prices"
FLAG_FORMAT = f"{FLAG} cpu=<USD per vCPU-hour>,memory=<USD per GB-hour>"


@dataclass(frozen=True)
class FargatePrice:
    """On-Demand Linux/x86 rates in USD, and where they come from (ARM: ECS only, for reference)."""

    per_vcpu_hour: Decimal
    per_gb_hour: Decimal
    source: str = PAGE
    arm_per_vcpu_hour: Decimal | None = None
    arm_per_gb_hour: Decimal | None = None

    def describe(self) -> str:
        text = f"${self.per_vcpu_hour} per vCPU-hour, ${self.per_gb_hour} per GB-hour (Linux/x86; {self.source})"
        if self.arm_per_vcpu_hour is not None and self.arm_per_gb_hour is not None:
            text += f"; Linux/ARM (ECS only) ${self.arm_per_vcpu_hour} / ${self.arm_per_gb_hour}"
        return text


def _rate(cpu: str, memory: str, source: str = PAGE, arm: tuple[str, str] | None = None) -> FargatePrice:
    return FargatePrice(Decimal(cpu), Decimal(memory), source,
                        Decimal(arm[0]) if arm else None, Decimal(arm[1]) if arm else None)


# Every region of the embedded catalog but ap-northeast-3 (Osaka), for which no published rate was found.
FARGATE_PRICES: Mapping[str, FargatePrice] = MappingProxyType(
    {
        "us-east-1": _rate("0.04048", "0.004445", f"{VANTAGE}; {PAGE}", ("0.03238", "0.00356")),
        "us-east-2": _rate("0.04048", "0.004445"),
        "us-west-1": _rate("0.04656", "0.00511"),
        "us-west-2": _rate("0.04048", "0.004445", f"{PRICE_LIST}; {PAGE}"),
        "ca-central-1": _rate("0.04456", "0.004865"),
        "sa-east-1": _rate("0.0696", "0.0076"),
        "eu-west-1": _rate("0.04048", "0.004445", f"{PRICE_LIST}; {PAGE}", ("0.03238", "0.00356")),
        "eu-west-2": _rate("0.04656", "0.00511"),
        "eu-west-3": _rate("0.0486", "0.0053"),
        "eu-central-1": _rate("0.04656", "0.00511"),
        "eu-north-1": _rate("0.0445", "0.0049"),
        "eu-south-1": _rate("0.0486", "0.0053"),
        "af-south-1": _rate("0.0546", "0.006"),
        "me-south-1": _rate("0.0526", "0.0058"),
        "ap-east-1": _rate("0.0556", "0.0061"),
        "ap-south-1": _rate("0.04256", "0.004655"),
        "ap-northeast-1": _rate("0.05056", "0.00553"),
        "ap-northeast-2": _rate("0.04656", "0.00511", f"{PRICE_LIST}; {PAGE}", ("0.03725", "0.00409")),
        "ap-southeast-1": _rate("0.05056", "0.00553"),
        "ap-southeast-2": _rate("0.04856", "0.00532"),
    }
)


def parse_fargate_prices(text: str) -> FargatePrice:
    """`--fargate-prices cpu=0.05,memory=0.0055` (USD per vCPU-hour and per GB-hour, both required).

    Raises ValueError with a message fit for the user.
    """
    values: dict[str, Decimal] = {}
    for item in (part.strip() for part in text.split(",")):
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or key not in ("cpu", "memory"):
            raise ValueError(f"{item!r} is not cpu=<USD> or memory=<USD>; expected {FLAG_FORMAT}")
        try:
            value = Decimal(raw.strip())
        except InvalidOperation:
            raise ValueError(f"{key} {raw.strip()!r} is not a number of US dollars") from None
        if not value.is_finite() or value <= 0:
            raise ValueError(f"{key} must be a positive number of US dollars, got {raw.strip()!r}")
        values[key] = value
    missing = [k for k in ("cpu", "memory") if k not in values]
    if missing:
        raise ValueError(f"{' and '.join(missing)} missing; expected {FLAG_FORMAT}")
    return FargatePrice(values["cpu"], values["memory"], f"{FLAG} cpu={values['cpu']},memory={values['memory']}")


def fargate_rate(region: str, supplied: FargatePrice | None = None) -> FargatePrice | None:
    """The rate to price Fargate pods with: the one supplied (`--fargate-prices`), else the region's."""
    return supplied if supplied is not None else FARGATE_PRICES.get(region)


def missing_rate_message(region: str) -> str:
    return (f"no Fargate price is known for region {region}, and the plan puts pods on Fargate; "
            f"supply the region's rates with {FLAG_FORMAT} (from https://aws.amazon.com/fargate/pricing/)")
