"""Fleet publishing: the `Fleet...` keys of parameters, checked, with their
defaults from the update class, and the fleet file that pbus-bridge loads
(`pbus-gen --fleet OUT.fleet`, format in docs/fleet.md, "The fleet file").

params.py stores the keys as written (Parameter.fleet_keys); check() turns
them into one Publication per parameter (Parameter.fleet) and raises the
first problem at the key at fault; render() writes the file. Like every
back end, render() holds no naming logic: the topic is decided here, once.
"""

import re
from dataclasses import dataclass
from typing import Dict, Optional

from .errors import GenError, shown
from .emit_schema import number
from .model import Model, Parameter

FORMAT = "parambus-fleet"
VERSION = 1
MAX_TOPIC_BYTES = 128
LIVE_RATE_HZ = 10.0         # the default maximum rate of live measurements
_LEVEL = re.compile(r"[A-Za-z0-9_.-]+")
_NUMERIC = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
            "uint64", "float", "double"}


@dataclass
class Publication:
    """How one parameter appears on the broker."""
    topic: str                  # below <prefix>/<instance>/
    publish: bool               # its value is published
    retain: bool                # ... with the retain flag
    command: bool               # <topic>/set is applied through pbusd
    deadband: float             # 0: every change
    max_rate_hz: float          # 0: no limit


def defaults(p: Parameter) -> Publication:
    """What a parameter gets when its section writes no Fleet key: every
    readable parameter that may be subscribed is published; constants,
    rarely changed values and settings retained, live measurements not
    retained and at most LIVE_RATE_HZ (or the parameter's MaxRateHz, with
    its Deadband); nothing commanded."""
    live = p.update_class == "live"
    rate = p.max_rate_hz if p.max_rate_hz is not None else LIVE_RATE_HZ if live else 0.0
    return Publication(topic=p.name, publish=not p.no_read and not p.no_subscriptions,
                       retain=not live, command=False, deadband=p.deadband or 0.0,
                       max_rate_hz=rate)


def _topic(text: str, loc, where: str) -> str:
    size = len(text.encode("utf-8"))
    if not 1 <= size <= MAX_TOPIC_BYTES:
        raise GenError(loc, f"'FleetTopic' of {where}: the topic is {size} bytes long, "
                            f"expected 1 to {MAX_TOPIC_BYTES}")
    levels = text.split("/")
    for level in levels:
        if not _LEVEL.fullmatch(level):
            raise GenError(loc, f"'FleetTopic' of {where}: \"{shown(text)}\" has a level "
                                f"\"{shown(level)}\" that is not [A-Za-z0-9_.-]+ (no "
                                "wildcards, no empty levels, no leading or trailing '/')")
    if levels[-1] == "set":
        raise GenError(loc, f"'FleetTopic' of {where}: \"{shown(text)}\" ends in '/set', "
                            "the suffix of commands")
    return text


def check(model: Model) -> None:
    """Give every parameter its Publication; the first problem is raised at
    the key at fault."""
    topics: Dict[str, Parameter] = {}
    for p in model.parameters:
        keys = p.fleet_keys
        where = f"'{p.name}'"
        pub = defaults(p)
        loc = p.origins.get
        if "FleetPublish" in keys:
            pub.publish = keys["FleetPublish"]
            if pub.publish and p.no_read:
                raise GenError(loc("FleetPublish"), f"'FleetPublish' of {where}: a noRead "
                                                    "attribute cannot be published (nobody reads it)")
            if pub.publish and p.no_subscriptions:
                raise GenError(loc("FleetPublish"), f"'FleetPublish' of {where}: a "
                                                    "noSubscriptions attribute cannot be published "
                                                    "(the bridge subscribes to what it publishes)")
        if "FleetCommand" in keys:
            pub.command = keys["FleetCommand"]
            if pub.command and p.readonly:
                raise GenError(loc("FleetCommand"), f"'FleetCommand' of {where}: a readonly "
                                                    "attribute cannot be set from the broker")
        for key in ("FleetRetain", "FleetDeadband", "FleetMaxRateHz"):
            if key in keys and not pub.publish:
                raise GenError(loc(key), f"'{key}' of {where}: the parameter is not "
                                         "published (FleetPublish)")
        if "FleetRetain" in keys:
            pub.retain = keys["FleetRetain"]
        if "FleetDeadband" in keys:
            if p.is_array or p.element not in _NUMERIC:
                raise GenError(loc("FleetDeadband"), f"'FleetDeadband' of {where}: a deadband "
                                                     f"applies to numeric scalars, not {p.type}")
            pub.deadband = float(keys["FleetDeadband"])
        if "FleetMaxRateHz" in keys:
            pub.max_rate_hz = float(keys["FleetMaxRateHz"])
        if "FleetTopic" in keys:
            if not (pub.publish or pub.command):
                raise GenError(loc("FleetTopic"), f"'FleetTopic' of {where}: the parameter is "
                                                  "neither published nor commanded")
            pub.topic = _topic(keys["FleetTopic"], loc("FleetTopic"), where)
        if pub.publish or pub.command:
            other = topics.get(pub.topic)
            if other is not None:
                # at the FleetTopic that made the clash (this one's, else the other's)
                a, b = (p, other) if "FleetTopic" in p.origins else (other, p)
                at = a.origins.get("FleetTopic") or a.loc
                raise GenError(at, f"fleet topic \"{shown(pub.topic)}\" of '{a.name}' is also "
                                   f"the topic of '{b.name}' ({b.origins.get('FleetTopic') or b.loc})")
            topics[pub.topic] = p
        p.fleet = pub


def render(model: Model, schema_hash: int) -> str:
    """The fleet file: one `param` line per published or commanded
    parameter, in index order."""
    lines = [f"# AUTO-GENERATED by pbus-gen from {', '.join(model.source_files)}"
             " - do not edit (format: docs/fleet.md)",
             f"{FORMAT} {VERSION}",
             f"schema {schema_hash:016x}"]
    for p in model.parameters:
        pub: Optional[Publication] = p.fleet
        if pub is None or not (pub.publish or pub.command):
            continue
        lines.append(f"param {p.index} {p.name} {pub.topic} {int(pub.publish)} "
                     f"{int(pub.retain)} {int(pub.command)} {number(pub.deadband)} "
                     f"{number(pub.max_rate_hz)}")
    return "\n".join(lines) + "\n"
