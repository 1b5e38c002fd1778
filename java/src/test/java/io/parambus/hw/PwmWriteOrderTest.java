package io.parambus.hw;

import static io.parambus.hw.PwmWriteOrder.Step.DISABLE;
import static io.parambus.hw.PwmWriteOrder.Step.DUTY_CYCLE;
import static io.parambus.hw.PwmWriteOrder.Step.ENABLE;
import static io.parambus.hw.PwmWriteOrder.Step.PERIOD;
import static io.parambus.hw.PwmWriteOrder.Step.POLARITY;
import static io.parambus.hw.PwmPolarity.INVERSED;
import static io.parambus.hw.PwmPolarity.NORMAL;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The sysfs write order as a pure function (PwmWriteOrder.plan), run against a model of
 * the PWM core's sysfs behaviour: every attribute write applies the channel's state with
 * one field changed, and is refused if that state has period 0 or a duty cycle longer
 * than the period, or (as many drivers do) changes the polarity of a running output.
 * The real behaviour is tested in the VM (tests/kernel/java/.../PwmTest.java) against
 * pbus-mock-pwm and the real PWM core; this checks the algorithm on far more states.
 */
class PwmWriteOrderTest {
    /** One channel as the PWM core's sysfs sees it. */
    private static final class Model {
        long period;
        long duty;
        PwmPolarity polarity;
        boolean enabled;

        Model(PwmState s) {
            period = s.periodNs();
            duty = s.dutyCycleNs();
            polarity = s.polarity();
            enabled = s.enabled();
        }

        void write(PwmWriteOrder.Step step, PwmState target) {
            long p = period;
            long d = duty;
            PwmPolarity pol = polarity;
            boolean en = enabled;
            switch (step) {
                case DISABLE -> en = false;
                case DUTY_CYCLE -> d = target.dutyCycleNs();
                case PERIOD -> p = target.periodNs();
                case POLARITY -> pol = target.polarity();
                case ENABLE -> en = true;
            }
            if (p == 0 || d > p) {
                throw new AssertionError(step + " leads to period " + p + " duty " + d + ": refused (EINVAL)");
            }
            if (step == POLARITY && enabled) {
                throw new AssertionError("polarity changed while enabled: refused by many drivers");
            }
            if (p == period && d == duty && pol == polarity && en == enabled) {
                throw new AssertionError(step + " writes what is there already");
            }
            period = p;
            duty = d;
            polarity = pol;
            enabled = en;
        }

        PwmState state() {
            return new PwmState(period, duty, polarity, enabled);
        }
    }

    /** Runs the plan from current to target on the model; the model's state at the end. */
    private static PwmState run(PwmState current, PwmState target) {
        Model m = new Model(current);
        for (PwmWriteOrder.Step s : PwmWriteOrder.plan(current, target)) {
            m.write(s, target);
        }
        return m.state();
    }

    private static PwmState on(long period, long duty) {
        return new PwmState(period, duty, NORMAL, true);
    }

    @Test
    void shrinkingPeriodLowersTheDutyCycleFirst() {
        assertEquals(List.of(DUTY_CYCLE, PERIOD), PwmWriteOrder.plan(on(1_000_000, 500_000), on(200_000, 100_000)));
    }

    @Test
    void growingPeriodRaisesThePeriodFirst() {
        assertEquals(List.of(PERIOD, DUTY_CYCLE), PwmWriteOrder.plan(on(200_000, 100_000), on(5_000_000, 4_000_000)));
    }

    @Test
    void growingPeriodWithADutyThatFitsTheOldOneLowersTheDutyFirst() {
        // new duty 300 fits the old period 500: duty first is valid, and so is period first;
        // the rule picks duty first whenever it fits.
        assertEquals(List.of(DUTY_CYCLE, PERIOD), PwmWriteOrder.plan(on(500, 400), on(900, 300)));
    }

    @Test
    void aFreshChannelGetsItsPeriodBeforeAnythingElse() {
        PwmState fresh = new PwmState(0, 0, NORMAL, false);
        PwmState target = new PwmState(1000, 250, INVERSED, true);
        assertEquals(List.of(PERIOD, DUTY_CYCLE, POLARITY, ENABLE), PwmWriteOrder.plan(fresh, target));
        assertEquals(target, run(fresh, target));
    }

    @Test
    void polarityChangesOnlyWhileStopped() {
        PwmState a = on(100_000, 25_000);
        assertEquals(List.of(DISABLE, POLARITY, ENABLE), PwmWriteOrder.plan(a, a.withPolarity(INVERSED)));
        PwmState off = a.withEnabled(false);
        assertEquals(List.of(POLARITY), PwmWriteOrder.plan(off, off.withPolarity(INVERSED)));
    }

    @Test
    void stoppingComesBeforeTheNewValues() {
        assertEquals(List.of(DISABLE, DUTY_CYCLE), PwmWriteOrder.plan(on(1000, 10), new PwmState(1000, 20, NORMAL,
                false)));
        assertEquals(List.of(DUTY_CYCLE, ENABLE), PwmWriteOrder.plan(new PwmState(1000, 10, NORMAL, false),
                on(1000, 20)));
    }

    @Test
    void nothingToChangeWritesNothing() {
        assertEquals(List.of(), PwmWriteOrder.plan(on(1000, 10), on(1000, 10)));
    }

    @Test
    void theModelRefusesTheNaiveOrder() {
        // Period then duty, always: what breaks when the period shrinks below the old duty.
        Model m = new Model(on(1_000_000, 500_000));
        PwmState target = on(200_000, 100_000);
        assertThrows(AssertionError.class, () -> m.write(PERIOD, target));
    }

    private static long value(SplittableRandom r, long max) {
        return switch (r.nextInt(6)) {
            case 0 -> 0;
            case 1 -> max;
            case 2 -> Math.min(max, 1);
            case 3 -> max / 2;
            default -> r.nextLong(max + 1);
        };
    }

    private static PwmState randomState(SplittableRandom r, boolean fresh) {
        if (fresh) {
            return new PwmState(0, 0, r.nextBoolean() ? NORMAL : INVERSED, false);
        }
        long period = 1 + value(r, r.nextBoolean() ? 20 : 10_000_000_000L);
        return new PwmState(period, value(r, period), r.nextBoolean() ? NORMAL : INVERSED, r.nextBoolean());
    }

    @Test
    void everyValidChangeSucceeds() {
        SplittableRandom r = new SplittableRandom(18);
        for (int i = 0; i < 500_000; i++) {
            PwmState current = randomState(r, r.nextInt(10) == 0);
            PwmState target = randomState(r, false);
            assertEquals(target, run(current, target), () -> current + " -> " + target);
        }
    }

    @Test
    void everySequenceOfValidChangesSucceeds() {
        SplittableRandom r = new SplittableRandom(4);
        for (int seq = 0; seq < 1000; seq++) {
            PwmState s = new PwmState(0, 0, NORMAL, false);
            for (int i = 0; i < 100; i++) {
                PwmState target = randomState(r, false);
                assertEquals(target, run(s, target));
                s = target;
            }
        }
    }
}
