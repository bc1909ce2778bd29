# clawseed-edge firmware: the rules of STM32 timers for PWM, on the generated pin table.
#
# A pin's PWM comes from one timer channel (PINS[name][2:] is (timer, channel)). One channel
# carries one signal, and one timer has one counter: every channel on it runs at one
# frequency. Pure: returns what is wrong, the core refuses with it.

CAP_PWM = 4  # the pin table's PWM capability bit (clawseed_core.CAP_PWM)


def conflict(table, running, name, freq):
    """(code, message) if `name` cannot run PWM at `freq` beside `running`, else None.

    Args:
        table: the pin table module (PINS, RESERVED).
        running: pin -> (freq, duty) of the pins running PWM now.
        name: the canonical pin asked for; freq: its frequency in Hz.
    """
    spec = table.PINS[name]
    for other in running:
        theirs = table.PINS[other]
        if other == name or theirs[2] != spec[2]:
            continue
        if theirs[3] == spec[3]:
            return (
                "pin_in_use",
                "%s and %s share timer %d channel %d; stop PWM on %s first"
                % (name, other, spec[2], spec[3], other),
            )
        if running[other][0] != freq:
            return (
                "timer_in_use",
                "timer TIM%d runs at %d Hz for %s; use that frequency or a pin on another "
                "timer: %s"
                % (spec[2], running[other][0], other, free_pins(table, running, spec[2], freq)),
            )
    return None


def free_pins(table, running, timer, freq):
    """PWM pins on other timers that are idle or already at `freq` (at most 8), as text."""
    busy = dict((table.PINS[p][2], running[p][0]) for p in running)
    found = [
        "%s (TIM%d)" % (p, s[2])
        for p, s in sorted(table.PINS.items())
        if s[0] & CAP_PWM
        and s[2] not in (0, timer)
        and busy.get(s[2], freq) == freq
        and p not in running
        and p not in table.RESERVED
    ]
    return ", ".join(found[:8]) or "none"
