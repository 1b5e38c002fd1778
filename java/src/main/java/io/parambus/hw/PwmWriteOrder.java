package io.parambus.hw;

import java.util.ArrayList;
import java.util.List;

/**
 * The order in which sysfs writes take a PWM channel from one state to another so
 * that every intermediate state is one the kernel accepts: a pure function, tested
 * on the host for every kind of change.
 *
 * <p>Through sysfs each attribute write is a separate {@code pwm_apply_state()}
 * of the channel's current state with one field changed, and the core refuses
 * (EINVAL) any state whose duty cycle exceeds its period, or whose period is 0;
 * many drivers also refuse a polarity change while the output runs. Hence:
 * <ol>
 * <li>{@link Step#DISABLE} first if the output runs and must stop, or its polarity
 * changes (the output then restarts at the end);</li>
 * <li>duty cycle and period: when both change, the duty cycle first if it fits the
 * current period (a shrinking period: lower the duty, then the period), otherwise
 * the period first (a growing period: raise it, then the duty). The period also goes
 * first when the current one is 0 (a fresh channel, where any other write would be
 * refused). Either way the intermediate state is valid: with duty first it is
 * (old period, new duty), new duty &le; old period; with period first it is
 * (new period, old duty), old duty &le; old period &lt; new duty &le; new period,
 * or old duty = 0 when the old period is 0;</li>
 * <li>{@link Step#POLARITY}, once the period is not 0 any more;</li>
 * <li>{@link Step#ENABLE} last.</li>
 * </ol>
 * Unchanged values are not written.
 */
final class PwmWriteOrder {
    private PwmWriteOrder() {
    }

    /** One attribute write. */
    enum Step {
        /** Write 0 to {@code enable}. */
        DISABLE,
        /** Write the new {@code duty_cycle}. */
        DUTY_CYCLE,
        /** Write the new {@code period}. */
        PERIOD,
        /** Write the new {@code polarity}. */
        POLARITY,
        /** Write 1 to {@code enable}. */
        ENABLE
    }

    /** The writes, in order, that take a channel from current to target. */
    static List<Step> plan(PwmState current, PwmState target) {
        List<Step> steps = new ArrayList<>(5);
        boolean polarity = current.polarity() != target.polarity();
        boolean disable = current.enabled() && (!target.enabled() || polarity);
        if (disable) {
            steps.add(Step.DISABLE);
        }
        boolean duty = current.dutyCycleNs() != target.dutyCycleNs();
        boolean period = current.periodNs() != target.periodNs();
        if (duty && period) {
            if (current.periodNs() != 0 && target.dutyCycleNs() <= current.periodNs()) {
                steps.add(Step.DUTY_CYCLE);
                steps.add(Step.PERIOD);
            } else {
                steps.add(Step.PERIOD);
                steps.add(Step.DUTY_CYCLE);
            }
        } else if (duty) {
            steps.add(Step.DUTY_CYCLE);
        } else if (period) {
            steps.add(Step.PERIOD);
        }
        if (polarity) {
            steps.add(Step.POLARITY);
        }
        if (target.enabled() && (!current.enabled() || disable)) {
            steps.add(Step.ENABLE);
        }
        return steps;
    }
}
