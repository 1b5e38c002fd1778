package io.parambus.hw;

import java.util.Objects;

/**
 * The whole state of a PWM channel.
 *
 * @param periodNs the period in ns (the kernel refuses 0 for an enabled channel)
 * @param dutyCycleNs the duty cycle in ns, at most the period
 * @param polarity what the duty cycle is: high ({@link PwmPolarity#NORMAL}) or low
 * @param enabled whether the output runs
 */
public record PwmState(long periodNs, long dutyCycleNs, PwmPolarity polarity, boolean enabled) {
    /** Checks that 0 &le; duty cycle &le; period; otherwise {@link IllegalArgumentException}. */
    public PwmState {
        Objects.requireNonNull(polarity, "polarity");
        if (periodNs < 0 || dutyCycleNs < 0) {
            throw new IllegalArgumentException("negative period " + periodNs + " ns or duty cycle " + dutyCycleNs
                    + " ns");
        }
        if (dutyCycleNs > periodNs) {
            throw new IllegalArgumentException("duty cycle " + dutyCycleNs + " ns is longer than the period "
                    + periodNs + " ns");
        }
    }

    /** This state with another period (the duty cycle must still fit). */
    public PwmState withPeriod(long ns) {
        return new PwmState(ns, dutyCycleNs, polarity, enabled);
    }

    /** This state with another duty cycle. */
    public PwmState withDutyCycle(long ns) {
        return new PwmState(periodNs, ns, polarity, enabled);
    }

    /** This state with another polarity. */
    public PwmState withPolarity(PwmPolarity p) {
        return new PwmState(periodNs, dutyCycleNs, p, enabled);
    }

    /** This state enabled or disabled. */
    public PwmState withEnabled(boolean on) {
        return new PwmState(periodNs, dutyCycleNs, polarity, on);
    }
}
