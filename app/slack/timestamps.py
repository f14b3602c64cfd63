"""Whether a value can be a Slack message timestamp (`ts`), and its time.

Slack's `ts` is a string of epoch seconds with a fraction, "1355517523.000005". It is the
message's key and its time: tomo sorts by it, formats it in prompts and sets timers from it.
A value that only looks like a number ("inf", "1e300", "nan", 32 digits, Arabic-Indic
digits) or lies in the future would break each of those later, so it is refused where it
enters: at parsing, and where stored rows are read back (rows stored before this check).
"""

from __future__ import annotations

import re
import time

# ASCII digits only, at most ten before the point (until the year 2286) and six after it.
_TS = re.compile(r"[0-9]{1,10}(?:\.[0-9]{1,6})?").fullmatch
# Slack stamps a message before it sends it, and a request whose signature is more than five
# minutes off our clock is refused anyway: a ts further ahead than this is not one of Slack's.
MAX_FUTURE_SECONDS = 600.0


def slack_ts(value: object, *, now: float | None = None) -> str | None:
    """`value` when it is a plausible Slack ts (a string of epoch seconds, not in the future),
    else None."""
    if type(value) is not str or _TS(value) is None:
        return None
    if not plausible_time(float(value), now=now):
        return None
    return value


def plausible_time(epoch: float, *, now: float | None = None) -> bool:
    """Whether `epoch` (a stored message's time) is a moment Slack could have stamped: finite,
    not before 1970 and not in the future."""
    limit = (time.time() if now is None else now) + MAX_FUTURE_SECONDS
    return 0.0 <= epoch <= limit  # False for NaN as well
